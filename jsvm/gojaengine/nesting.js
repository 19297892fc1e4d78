// The bounds on goja's own recursions, run in every goja runtime before the
// environment (env.js); the other engines need none of it. A function of the
// host object installJSONBounds makes (guard.go): maxNesting,
// jsonStringify(value, replacer, space), jsonNestingExceeds(text).
(function (host) {
  'use strict';
  var g = globalThis;

  // goja's JSON.stringify, JSON.parse, Array.prototype.flat and Proxy
  // recurse in Go, one level per level of the data, with no bound: data
  // nested a few hundred thousand deep ends the process (a Go stack
  // overflow cannot be caught). They are bounded here at host.maxNesting
  // levels with a RangeError, as V8 throws when its stack runs out. (QuickJS
  // checks its own stack.)
  installNestingBounds(host.maxNesting);

  function installNestingBounds(limit) {
    var tooDeep = function (what) {
      return new RangeError('Maximum call stack size exceeded (' + what + ' nested deeper than ' + limit + ' levels)');
    };
    function define(obj, name, fn) {
      Object.defineProperty(obj, name, { value: fn, writable: true, configurable: true });
    }
    var nativeStringify = JSON.stringify;
    var nativeParse = JSON.parse;
    var nativeFlat = Array.prototype.flat;
    var NativeProxy = g.Proxy;

    // The host runs goja's own stringify with a replacer of its own that
    // follows the nesting (and calls a replacer function given here first).
    // A replacer array has no room for that: its stringify is here.
    define(JSON, 'stringify', function stringify(value, replacer, space) {
      if (Array.isArray(replacer)) return stringifyWithKeys(value, replacer, space);
      return host.jsonStringify(value, replacer, space);
    });
    function stringifyWithKeys(value, list, space) {
      var keys = [], seen = new Set();
      for (var i = 0; i < list.length; i++) {
        var item = list[i], tag = Object.prototype.toString.call(item);
        if (typeof item === 'string' || typeof item === 'number' ||
          (typeof item === 'object' && item !== null && (tag === '[object String]' || tag === '[object Number]'))) {
          item = String(item);
          if (!seen.has(item)) {
            seen.add(item);
            keys.push(item);
          }
        }
      }
      // goja's stringify knows the gap (space clamped, boxed values
      // unwrapped): take it from a one-element array.
      var gap = nativeStringify([0], null, space).slice(2, -3);
      var stack = [];
      function serialize(holder, key, indent) {
        var v = holder[key];
        if ((typeof v === 'object' && v !== null) || typeof v === 'bigint') {
          var toJSON = v.toJSON;
          if (typeof toJSON === 'function') v = toJSON.call(v, key);
        }
        if (typeof v !== 'object' || v === null || typeof v === 'function') return nativeStringify(v);
        var tag = Object.prototype.toString.call(v);
        if (tag === '[object Number]' || tag === '[object String]' || tag === '[object Boolean]' ||
          tag === '[object BigInt]' || (typeof JSON.isRawJSON === 'function' && JSON.isRawJSON(v))) {
          return nativeStringify(v);
        }
        if (stack.indexOf(v) >= 0) throw new TypeError('Converting circular structure to JSON');
        if (stack.length >= limit) throw tooDeep('JSON.stringify: data');
        stack.push(v);
        var inner = indent + gap, parts = [], i, s;
        if (Array.isArray(v)) {
          for (i = 0; i < v.length; i++) {
            s = serialize(v, String(i), inner);
            parts.push(s === undefined ? 'null' : s);
          }
        } else {
          for (i = 0; i < keys.length; i++) {
            s = serialize(v, keys[i], inner);
            if (s !== undefined) parts.push(nativeStringify(keys[i]) + (gap ? ': ' : ':') + s);
          }
        }
        stack.pop();
        var open = Array.isArray(v) ? '[' : '{', close = Array.isArray(v) ? ']' : '}';
        if (parts.length === 0) return open + close;
        if (!gap) return open + parts.join(',') + close;
        return open + '\n' + inner + parts.join(',\n' + inner) + '\n' + indent + close;
      }
      return serialize({ '': value }, '', '');
    }

    // JSON.parse nests at most half as deep as its text is long: only long
    // texts are scanned (by the host) before goja parses them.
    define(JSON, 'parse', function parse(text, reviver) {
      var s = `${text}`;
      if (s.length > 2 * limit && host.jsonNestingExceeds(s)) throw tooDeep('JSON.parse: text');
      return nativeParse(s, reviver);
    });

    // flat(depth) recurses depth levels at most: beyond the limit it
    // flattens that far, and arrays left in the result were nested deeper.
    define(Array.prototype, 'flat', function flat() {
      var depth = arguments.length > 0 ? arguments[0] : undefined;
      var n = depth === undefined ? 1 : Number(depth);
      n = n !== n ? 0 : Math.trunc(n);
      if (n <= limit) return nativeFlat.call(this, n);
      var out = nativeFlat.call(this, limit);
      for (var i = 0; i < out.length; i++) {
        if (Array.isArray(out[i])) throw tooDeep('Array.prototype.flat: array');
      }
      return out;
    });

    // A proxy's operations go down its chain of targets (and handlers) in
    // Go: each proxy knows its depth, and a chain longer than the limit is
    // refused. Bound, the constructor has no prototype property, as
    // Proxy has none.
    var depths = new WeakMap();
    function depthOf(o) {
      return ((typeof o === 'object' && o !== null) || typeof o === 'function') ? (depths.get(o) || 0) : 0;
    }
    function proxyDepth(target, handler) {
      var d = Math.max(depthOf(target), depthOf(handler)) + 1;
      if (d > limit) throw tooDeep('Proxy: proxies');
      return d;
    }
    var Proxy = function Proxy(target, handler) {
      if (new.target === undefined) throw new TypeError("Constructor Proxy requires 'new'");
      var d = proxyDepth(target, handler);
      var p = new NativeProxy(target, handler);
      depths.set(p, d);
      return p;
    }.bind(null);
    Object.defineProperty(Proxy, 'name', { value: 'Proxy', configurable: true });
    define(Proxy, 'revocable', function revocable(target, handler) {
      var d = proxyDepth(target, handler);
      var r = NativeProxy.revocable(target, handler);
      depths.set(r.proxy, d);
      return r;
    });
    define(g, 'Proxy', Proxy);
  }
})
