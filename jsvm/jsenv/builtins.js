// Built-ins that Node 20 has and an in-process engine lacks or gets wrong
// (docs/compatibility.md "Built-ins against Node 20"), for goja and
// quickjs, each installed only where the engine needs it, before anything
// else runs.
// Every one looks like V8's: a non-enumerable property, a method without a
// prototype, V8's name, length and Symbol.toStringTag, a TypeError where
// V8 throws one. A function of the engine's name and of the long name of
// the process's time zone when it is known without Intl (UTC), else ''.
(function (engine, zoneName) {
  'use strict';
  var g = globalThis;
  function define(o, name, value) {
    Object.defineProperty(o, name, { value: value, writable: true, enumerable: false, configurable: true });
  }
  function methods(o, m) {
    Object.getOwnPropertyNames(m).forEach(function (name) { define(o, name, m[name]); });
  }
  function tag(o, name) {
    Object.defineProperty(o, Symbol.toStringTag, { value: name, writable: false, enumerable: false, configurable: true });
  }
  // lazy defines the global name as make's value, made the first time the
  // global is read or written: a runtime whose pages never touch it pays
  // one accessor (it reads as a data property once touched, as V8's).
  function lazy(name, make) {
    Object.defineProperty(g, name, {
      get: function () { var v = make(); define(g, name, v); return v; },
      set: function (v) { define(g, name, v); },
      enumerable: false, configurable: true,
    });
  }
  // CanBeHeldWeakly: an object, or a symbol not in the global registry.
  function weakly(v) {
    return (typeof v === 'object' && v !== null) || typeof v === 'function' ||
      (typeof v === 'symbol' && Symbol.keyFor(v) === undefined);
  }

  // ---- `**` as V8 computes it -------------------------------------------
  // goja (its AST, jsvm/gojaengine/pow.go) and quickjs (esbuild's lowering,
  // jsvm/transform.LowerForQuickJS) turn `x ** y` into a call of this: both
  // operands through ToNumber once, in order, and numbers to V8's pow
  // (Math.pow, already V8's when this runs, captured before any bundle can
  // replace it); BigInts to the engine's own operator, which also throws
  // the TypeError of a mixed pair. (An object whose valueOf answers a
  // BigInt throws a TypeError here: unary plus, not ToNumeric, which goja's
  // unary minus runs twice on an object.) Not writable, enumerable or
  // configurable: no bundle replaces it, no clearing of globals removes it.
  var pow = Math.pow;
  Object.defineProperty(g, '__gorender_pow', {
    value: function (x, y) {
      if (typeof x !== 'number' && typeof x !== 'bigint') x = +x;
      if (typeof y !== 'number' && typeof y !== 'bigint') y = +y;
      return typeof x === 'number' && typeof y === 'number' ? pow(x, y) : x ** y;
    },
  });

  // ---- String.prototype.isWellFormed / toWellFormed (ES2024) ------------
  if (typeof String.prototype.isWellFormed !== 'function') {
    var thisString = function (v, name) {
      if (v === null || v === undefined) throw new TypeError('String.prototype.' + name + ' called on null or undefined');
      return String(v);
    };
    // The index of the first lone surrogate of s from i, or -1.
    var loneSurrogate = function (s, i) {
      for (; i < s.length; i++) {
        var c = s.charCodeAt(i);
        if (c < 0xD800 || c > 0xDFFF) continue;
        if (c <= 0xDBFF && i + 1 < s.length) {
          var d = s.charCodeAt(i + 1);
          if (d >= 0xDC00 && d <= 0xDFFF) { i++; continue; }
        }
        return i;
      }
      return -1;
    };
    methods(String.prototype, {
      isWellFormed() { return loneSurrogate(thisString(this, 'isWellFormed'), 0) < 0; },
      toWellFormed() {
        var s = thisString(this, 'toWellFormed'), out = '', from = 0, i;
        while ((i = loneSurrogate(s, from)) >= 0) {
          out += s.slice(from, i) + '\uFFFD';
          from = i + 1;
        }
        return from === 0 ? s : out + s.slice(from);
      },
    });
  }

  // ---- Error.captureStackTrace (V8's own) ---------------------------------
  // Libraries written for Node call it unguarded in their error classes. It
  // gives error a non-enumerable, writable stack: V8's header (the error's
  // toString) over the engine's frames, less this function's own (the
  // frames are the engine's, as in every stack, and constructorOpt does not
  // cut them).
  if (typeof Error.captureStackTrace !== 'function') {
    var errorToString = Error.prototype.toString;
    methods(Error, {
      captureStackTrace(error, constructorOpt) {
        if (Object(error) !== error) throw new TypeError('invalid_argument');
        var frames = String(new Error().stack || '').split('\n').slice(2);
        Object.defineProperty(error, 'stack', {
          value: [errorToString.call(error)].concat(frames).join('\n'), writable: true, enumerable: false, configurable: true,
        });
      },
    });
  }

  // ---- WeakRef and FinalizationRegistry (ES2021) --------------------------
  // A WeakRef holds its target for as long as the WeakRef itself lives, and
  // a FinalizationRegistry never calls its cleanup callback: both are what
  // V8 does for any target still reachable, which is all a render can tell
  // (the specification lets an engine never collect a target). quickjs has
  // both, but its WeakRef loses a target no one else holds within the job
  // that made it (V8 keeps it until the job ends), and its cleanup
  // callbacks run as soon as a count drops to zero, where V8's wait for a
  // collection that a render seldom sees: it gets these too.
  if (typeof g.WeakRef !== 'function' || engine === 'quickjs') lazy('WeakRef', function () {
    var WeakRef = class WeakRef {
      #target;
      constructor(target) {
        if (!weakly(target)) throw new TypeError('WeakRef: target must be an object');
        this.#target = target;
      }
      deref() { return this.#target; }
    };
    tag(WeakRef.prototype, 'WeakRef');
    return WeakRef;
  });
  if (typeof g.FinalizationRegistry !== 'function' || engine === 'quickjs') lazy('FinalizationRegistry', function () {
    // Only the unregister tokens are kept (weakly where a WeakMap can key
    // them), to answer unregister: no callback ever runs.
    var FinalizationRegistry = class FinalizationRegistry {
      #tokens = new WeakMap();
      #symbols = new Map();
      constructor(cleanupCallback) {
        if (typeof cleanupCallback !== 'function') throw new TypeError('FinalizationRegistry: cleanup must be callable');
      }
      register(target, heldValue, unregisterToken) {
        if (!weakly(target)) throw new TypeError('FinalizationRegistry.prototype.register: invalid target');
        if (Object.is(target, heldValue)) throw new TypeError('FinalizationRegistry.prototype.register: target and holdings must not be same');
        if (unregisterToken !== undefined) {
          if (!weakly(unregisterToken)) throw new TypeError('FinalizationRegistry.prototype.register: invalid unregister token');
          var m = typeof unregisterToken === 'symbol' ? this.#symbols : this.#tokens;
          m.set(unregisterToken, (m.get(unregisterToken) || 0) + 1);
        }
        return undefined;
      }
      unregister(unregisterToken) {
        if (!weakly(unregisterToken)) throw new TypeError('Invalid unregisterToken (\'' + String(unregisterToken) + '\')');
        return (typeof unregisterToken === 'symbol' ? this.#symbols : this.#tokens).delete(unregisterToken);
      }
    };
    tag(FinalizationRegistry.prototype, 'FinalizationRegistry');
    return FinalizationRegistry;
  });

  // ---- SharedArrayBuffer and Atomics (ES2017) -----------------------------
  // A runtime has one thread, so a SharedArrayBuffer is an ArrayBuffer that
  // says it is shared (typed arrays take it as they take any buffer), and
  // Atomics are the plain operations; Atomics.wait, which could only wait
  // for its whole timeout, throws as on a browser's main thread.
  if (typeof g.SharedArrayBuffer !== 'function') lazy('SharedArrayBuffer', function () {
    var byteLength = Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, 'byteLength').get;
    var shared = new WeakSet();
    var thisShared = function (v, name) {
      if (!shared.has(v)) throw new TypeError('Method SharedArrayBuffer.prototype.' + name + ' called on incompatible receiver ' + String(v));
      return v;
    };
    var SharedArrayBuffer = function SharedArrayBuffer(length) {
      if (new.target === undefined) throw new TypeError("Constructor SharedArrayBuffer requires 'new'");
      var b = Reflect.construct(ArrayBuffer, [length], new.target);
      shared.add(b);
      return b;
    };
    var sproto = SharedArrayBuffer.prototype;
    Object.defineProperty(SharedArrayBuffer, 'prototype', { writable: false });
    Object.defineProperty(sproto, 'byteLength', {
      get: function byteLength_() { return byteLength.call(thisShared(this, 'byteLength')); }, enumerable: false, configurable: true,
    });
    Object.defineProperty(Object.getOwnPropertyDescriptor(sproto, 'byteLength').get, 'name', { value: 'get byteLength' });
    methods(sproto, {
      slice(start, end) {
        var len = byteLength.call(thisShared(this, 'slice'));
        var from = start === undefined ? 0 : Math.trunc(+start) || 0, to = end === undefined ? len : Math.trunc(+end) || 0;
        from = from < 0 ? Math.max(len + from, 0) : Math.min(from, len);
        to = to < 0 ? Math.max(len + to, 0) : Math.min(to, len);
        var out = new SharedArrayBuffer(Math.max(to - from, 0));
        new Uint8Array(out).set(new Uint8Array(this, from, Math.max(to - from, 0)));
        return out;
      },
    });
    tag(sproto, 'SharedArrayBuffer');
    return SharedArrayBuffer;
  });
  if (typeof g.Atomics !== 'object') lazy('Atomics', function () {
    var integer = ['Int8Array', 'Uint8Array', 'Int16Array', 'Uint16Array', 'Int32Array', 'Uint32Array', 'BigInt64Array', 'BigUint64Array'];
    var typedTag = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(Int8Array.prototype), Symbol.toStringTag).get;
    var check = function (ta, i, waitable) {
      var kind = typedTag.call(ta);
      if (waitable ? kind !== 'Int32Array' && kind !== 'BigInt64Array' : integer.indexOf(kind) < 0) {
        throw new TypeError('[object Array] is not an integer shared typed array.');
      }
      // ToIndex: NaN (undefined) is 0, a fraction is truncated.
      var index = Math.trunc(+i) || 0;
      if (index < 0 || index >= ta.length) throw new RangeError('Invalid atomic access index');
      return index;
    };
    var coerce = function (ta, v) {
      var kind = typedTag.call(ta);
      return kind === 'BigInt64Array' || kind === 'BigUint64Array' ? BigInt(v) : Math.trunc(+v) || 0;
    };
    var rmw = function (op) {
      return function (ta, i, v) {
        var index = check(ta, i), value = coerce(ta, v), old = ta[index];
        ta[index] = op(old, value);
        return old;
      };
    };
    var Atomics = {};
    methods(Atomics, {
      add: rmw(function (a, b) { return a + b; }),
      and: rmw(function (a, b) { return a & b; }),
      compareExchange(ta, i, expected, replacement) {
        var index = check(ta, i), e = coerce(ta, expected), r = coerce(ta, replacement), old = ta[index];
        var probe = new ta.constructor(1);
        probe[0] = e;
        if (old === probe[0]) ta[index] = r;
        return old;
      },
      exchange: rmw(function (a, b) { return b; }),
      isLockFree(size) { size = Math.trunc(+size) || 0; return size === 1 || size === 2 || size === 4 || size === 8; },
      load(ta, i) { return ta[check(ta, i)]; },
      notify(ta, i, count) { check(ta, i, true); return 0; },
      or: rmw(function (a, b) { return a | b; }),
      store(ta, i, v) { var index = check(ta, i), value = coerce(ta, v); ta[index] = value; return typeof value === 'number' ? (Object.is(value, -0) ? 0 : value) : value; },
      sub: rmw(function (a, b) { return a - b; }),
      wait(ta, i, value, timeout) {
        var index = check(ta, i, true);
        if (!(ta.buffer instanceof g.SharedArrayBuffer)) throw new TypeError('[object Array] is not a shared typed array.');
        if (ta[index] !== coerce(ta, value)) return 'not-equal';
        if (+timeout === 0) return 'timed-out';
        throw new TypeError('Atomics.wait cannot be called in this context');
      },
      xor: rmw(function (a, b) { return a ^ b; }),
    });
    ['add', 'and', 'exchange', 'or', 'sub', 'xor'].forEach(function (name) {
      Object.defineProperty(Atomics[name], 'name', { value: name });
    });
    tag(Atomics, 'Atomics');
    return Atomics;
  });

  // ---- Date's zone name ---------------------------------------------------
  // V8 ends toString and toTimeString with the zone's long English name,
  // "(Coordinated Universal Time)", where goja writes an abbreviation and
  // quickjs nothing. Outside UTC the name comes from Intl (gorender's, from
  // CLDR, as V8's from ICU), built on the first such call.
  var zoneFormat;
  var zoneOf = function (d) {
    if (zoneName) return zoneName;
    if (!zoneFormat) zoneFormat = new Intl.DateTimeFormat('en-US', { timeZoneName: 'long' });
    var parts = zoneFormat.formatToParts(d);
    for (var i = 0; i < parts.length; i++) if (parts[i].type === 'timeZoneName') return parts[i].value;
    return '';
  };
  var getTime = Date.prototype.getTime;
  [['toString', Date.prototype.toString], ['toTimeString', Date.prototype.toTimeString]].forEach(function (m) {
    var own = m[1];
    var f = {
      [m[0]]() {
        var s = own.call(this);
        if (s === 'Invalid Date') return s;
        var open = s.lastIndexOf(' (');
        if (open >= 0 && s.charCodeAt(s.length - 1) === 41) s = s.slice(0, open);
        return s + ' (' + zoneOf(new Date(getTime.call(this))) + ')';
      },
    }[m[0]];
    define(Date.prototype, m[0], f);
  });
  if (engine === 'quickjs') {
    // Node 20 has none of these (quickjs has them from later editions).
    delete Object.groupBy;
    delete Map.groupBy;
    delete Promise.withResolvers;
    // V8 lays JSON.stringify's output out on lines for any number above 0
    // as its indent, even one that gives no spaces (0.5): quickjs does not.
    var stringify = JSON.stringify;
    define(JSON, 'stringify', {
      stringify(value, replacer, space) {
        var n = typeof space === 'number' ? space : typeof space === 'object' && space !== null && Object.prototype.toString.call(space) === '[object Number]' ? +space : NaN;
        if (!(n > 0 && n < 1)) return stringify(value, replacer, space);
        var s = stringify(value, replacer, 1);
        return typeof s === 'string' ? s.replace(/\n +/g, '\n') : s;
      },
    }.stringify);
  }
})
