// Minimal polyfills carried by the plain-script-mode fixture bundle.
//
// The renderer's plain-script environment (RENDERER_SUPPORT_MODULES off) has
// no TextEncoder and no MessageChannel, but React 19's browser build of
// react-dom/server creates one of each while it loads. Real Rails apps that
// stay in plain mode ship polyfills like these; so does this fixture.
// Each polyfill is installed only when the global is missing.
/* eslint-disable no-restricted-globals */

if (typeof globalThis.TextEncoder === 'undefined') {
  // UTF-8 only, as in the WHATWG spec. Lone surrogates become U+FFFD.
  const utf8 = (str) => {
    const s = String(str);
    const out = [];
    for (let i = 0; i < s.length; i += 1) {
      let c = s.charCodeAt(i);
      if (c >= 0xd800 && c <= 0xdfff) {
        const d = i + 1 < s.length ? s.charCodeAt(i + 1) : 0;
        if (c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff) {
          c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
          i += 1;
        } else {
          c = 0xfffd;
        }
      }
      if (c < 0x80) {
        out.push(c);
      } else if (c < 0x800) {
        out.push(0xc0 | (c >> 6), 0x80 | (c & 0x3f));
      } else if (c < 0x10000) {
        out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f));
      } else {
        out.push(
          0xf0 | (c >> 18),
          0x80 | ((c >> 12) & 0x3f),
          0x80 | ((c >> 6) & 0x3f),
          0x80 | (c & 0x3f),
        );
      }
    }
    return out;
  };

  class TextEncoder {
    get encoding() {
      return 'utf-8';
    }

    encode(input = '') {
      return new Uint8Array(utf8(input));
    }

    encodeInto(input, dest) {
      // Simplified: writes whole code points while they fit.
      const s = String(input);
      let read = 0;
      let written = 0;
      for (let i = 0; i < s.length; ) {
        const c = s.charCodeAt(i);
        const units = c >= 0xd800 && c <= 0xdbff && i + 1 < s.length ? 2 : 1;
        const bytes = utf8(s.slice(i, i + units));
        if (written + bytes.length > dest.length) break;
        for (let k = 0; k < bytes.length; k += 1) dest[written + k] = bytes[k];
        written += bytes.length;
        read += units;
        i += units;
      }
      return { read, written };
    }
  }

  globalThis.TextEncoder = TextEncoder;
}

if (typeof globalThis.MessageChannel === 'undefined') {
  // Delivery is deferred with a resolved Promise (a microtask), not a timer:
  // the renderer's timers may be stubbed as no-ops.
  class MessagePort {
    constructor() {
      this.onmessage = null;
      this.other = null;
    }

    postMessage(data) {
      const target = this.other;
      Promise.resolve().then(() => {
        if (target && typeof target.onmessage === 'function') {
          target.onmessage({ data, target });
        }
      });
    }

    start() {}

    close() {
      this.other = null;
    }
  }

  class MessageChannel {
    constructor() {
      this.port1 = new MessagePort();
      this.port2 = new MessagePort();
      this.port1.other = this.port2;
      this.port2.other = this.port1;
    }
  }

  globalThis.MessageChannel = MessageChannel;
}
