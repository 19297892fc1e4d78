'use strict';
// TextEncoder and TextDecoder. UTF-8 runs in the host (Go): exact WHATWG
// decoding with replacement or fatal errors, and streaming that holds a
// partial sequence until the next chunk. utf-16le and latin1 are decoded here.

var state = require('./state');
var withCode = require('./errors').withCode;
var invalidArgType = require('./errors').invalidArgType;

var LABELS = {
  'unicode-1-1-utf-8': 'utf-8', 'unicode11utf8': 'utf-8', 'unicode20utf8': 'utf-8', 'utf-8': 'utf-8',
  'utf8': 'utf-8', 'x-unicode20utf8': 'utf-8',
  'csunicode': 'utf-16le', 'iso-10646-ucs-2': 'utf-16le', 'ucs-2': 'utf-16le', 'unicode': 'utf-16le',
  'unicodefeff': 'utf-16le', 'utf-16': 'utf-16le', 'utf-16le': 'utf-16le',
  'ansi_x3.4-1968': 'windows-1252', 'ascii': 'windows-1252', 'cp1252': 'windows-1252', 'cp819': 'windows-1252',
  'csisolatin1': 'windows-1252', 'ibm819': 'windows-1252', 'iso-8859-1': 'windows-1252', 'iso-ir-100': 'windows-1252',
  'iso8859-1': 'windows-1252', 'iso88591': 'windows-1252', 'iso_8859-1': 'windows-1252', 'iso_8859-1:1987': 'windows-1252',
  'l1': 'windows-1252', 'latin1': 'windows-1252', 'us-ascii': 'windows-1252', 'windows-1252': 'windows-1252',
  'x-cp1252': 'windows-1252',
};

function bytesOf(input) {
  if (input === undefined) return null;
  if (input instanceof ArrayBuffer) return { buffer: input, offset: 0, length: input.byteLength };
  if (ArrayBuffer.isView(input)) return { buffer: input.buffer, offset: input.byteOffset, length: input.byteLength };
  if (typeof SharedArrayBuffer === 'function' && input instanceof SharedArrayBuffer) {
    return { buffer: input, offset: 0, length: input.byteLength };
  }
  throw invalidArgType('input', 'an instance of ArrayBuffer or ArrayBufferView', input);
}

class TextEncoder {
  get encoding() { return 'utf-8'; }
  encode(input) {
    var s = input === undefined ? '' : String(input);
    return new Uint8Array(state.host.utf8Encode(s));
  }
  encodeInto(src, dest) {
    if (!(dest instanceof Uint8Array)) throw invalidArgType('dest', 'an instance of Uint8Array', dest);
    var r = state.host.utf8EncodeInto(String(src), dest);
    return { read: r[0], written: r[1] };
  }
}
Object.defineProperty(TextEncoder.prototype, Symbol.toStringTag, { value: 'TextEncoder', configurable: true });

class TextDecoder {
  constructor(label, options) {
    var name = label === undefined ? 'utf-8' : LABELS[String(label).trim().toLowerCase()];
    if (!name) {
      throw withCode(new RangeError('The "' + String(label) + '" encoding is not supported'), 'ERR_ENCODING_NOT_SUPPORTED');
    }
    if (options !== undefined && options !== null && typeof options !== 'object') {
      throw invalidArgType('options', 'of type object', options);
    }
    this._encoding = name;
    this._fatal = !!(options && options.fatal);
    this._ignoreBOM = !!(options && options.ignoreBOM);
    this._pending = null;
    this._bomDone = false;
  }
  get encoding() { return this._encoding; }
  get fatal() { return this._fatal; }
  get ignoreBOM() { return this._ignoreBOM; }
  decode(input, options) {
    var stream = !!(options && options.stream);
    var b = bytesOf(input);
    var text;
    if (this._encoding === 'utf-8') {
      var r = state.host.utf8Decode(b ? b.buffer : null, b ? b.offset : 0, b ? b.length : 0, this._pending, stream, this._fatal);
      if (r === null) {
        this._pending = null;
        this._bomDone = false;
        throw withCode(new TypeError('The encoded data was not valid for encoding utf-8'), 'ERR_ENCODING_INVALID_ENCODED_DATA');
      }
      text = r[0];
      this._pending = r[1];
    } else if (this._encoding === 'utf-16le') {
      text = this._utf16(b, stream);
    } else {
      text = '';
      if (b) {
        var u8 = new Uint8Array(b.buffer, b.offset, b.length);
        for (var i = 0; i < u8.length; i += 8192) {
          text += String.fromCharCode.apply(null, Array.prototype.map.call(u8.subarray(i, i + 8192), w1252));
        }
      }
    }
    if (!this._bomDone && text.length > 0) {
      if (!this._ignoreBOM && text.charCodeAt(0) === 0xFEFF) text = text.slice(1);
      this._bomDone = true;
    }
    if (!stream) {
      this._pending = null;
      this._bomDone = false;
    }
    return text;
  }
  _utf16(b, stream) {
    var bytes = [];
    if (this._pending) bytes = this._pending;
    if (b) {
      var u8 = new Uint8Array(b.buffer, b.offset, b.length);
      for (var i = 0; i < u8.length; i++) bytes.push(u8[i]);
    }
    var units = [];
    var n = bytes.length - (bytes.length % 2);
    for (var j = 0; j < n; j += 2) units.push(bytes[j] | (bytes[j + 1] << 8));
    var rest = bytes.slice(n);
    // Hold a trailing high surrogate while streaming.
    if (stream && units.length && units[units.length - 1] >= 0xD800 && units[units.length - 1] <= 0xDBFF) {
      var last = units.pop();
      rest = [last & 0xFF, last >> 8].concat(rest);
    }
    this._pending = stream && rest.length ? rest : null;
    var out = '';
    for (var k = 0; k < units.length; k++) {
      var u = units[k];
      if (u >= 0xD800 && u <= 0xDBFF && k + 1 < units.length && units[k + 1] >= 0xDC00 && units[k + 1] <= 0xDFFF) {
        out += String.fromCharCode(u, units[++k]);
      } else if (u >= 0xD800 && u <= 0xDFFF) {
        if (this._fatal) throw withCode(new TypeError('The encoded data was not valid for encoding utf-16le'), 'ERR_ENCODING_INVALID_ENCODED_DATA');
        out += '\uFFFD';
      } else {
        out += String.fromCharCode(u);
      }
    }
    if (!stream && rest.length) {
      if (this._fatal) throw withCode(new TypeError('The encoded data was not valid for encoding utf-16le'), 'ERR_ENCODING_INVALID_ENCODED_DATA');
      out += '\uFFFD';
    }
    return out;
  }
}
Object.defineProperty(TextDecoder.prototype, Symbol.toStringTag, { value: 'TextDecoder', configurable: true });

var W1252 = [0x20AC, 0x81, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x8D,
  0x017D, 0x8F, 0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153,
  0x9D, 0x017E, 0x0178];
function w1252(byte) { return byte >= 0x80 && byte < 0xA0 ? W1252[byte - 0x80] : byte; }

module.exports = { TextEncoder: TextEncoder, TextDecoder: TextDecoder };
