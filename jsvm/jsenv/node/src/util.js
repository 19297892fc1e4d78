'use strict';
// util: the util package (format, inspect, promisify, inherits, types…)
// with Node's TextEncoder/TextDecoder and quiet deprecations.

var u = require('util/');
var text = require('./text');

var util = {};
Object.keys(u).forEach(function (k) { util[k] = u[k]; });
util.TextEncoder = text.TextEncoder;
util.TextDecoder = text.TextDecoder;
if (!util.inspect.custom) util.inspect.custom = Symbol.for('nodejs.util.inspect.custom');
// Deprecation warnings go to process 'warning' events, as in Node, never to
// the console history that is replayed in the browser.
util.deprecate = function deprecate(fn, msg, code) {
  var warned = false;
  function deprecated() {
    if (!warned) {
      warned = true;
      globalThis.process.emitWarning(msg, 'DeprecationWarning', code);
    }
    if (new.target) return Reflect.construct(fn, arguments, new.target);
    return fn.apply(this, arguments);
  }
  Object.setPrototypeOf(deprecated, fn);
  if (fn.prototype) deprecated.prototype = fn.prototype;
  return deprecated;
};
util.debuglog = util.debug = function debuglog() {
  var logger = function () {};
  logger.enabled = false;
  return logger;
};
util.isDeepStrictEqual = function isDeepStrictEqual(a, b) { return deepEqual(a, b, new Map()); };
util.stripVTControlCharacters = function (s) {
  // eslint-disable-next-line no-control-regex
  return String(s).replace(/[\u001B\u009B][[\]()#;?]*(?:(?:(?:(?:;[-a-zA-Z\d/#&.:=?%@~_]+)*|[a-zA-Z\d]+(?:;[-a-zA-Z\d/#&.:=?%@~_]*)*)?\u0007)|(?:(?:\d{1,4}(?:;\d{0,4})*)?[\dA-PR-TZcf-ntqry=><~]))/g, '');
};
util.toUSVString = function (s) { return String(s).replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(^|[^\uD800-\uDBFF])[\uDC00-\uDFFF]/g, function (m, p) { return (p || '') + '\uFFFD'; }); };
util.aborted = function (signal) {
  return new Promise(function (resolve) {
    if (signal.aborted) resolve(); else signal.addEventListener('abort', function () { resolve(); }, { once: true });
  });
};
util.types = Object.assign({}, u.types);

// format as Node 20's (%s %d %i %f %j %o %O %c %%); objects are shown with
// the util package's inspect.
function formatWithOptions(inspectOptions, args) {
  var inspect = function (v, extra) { return u.inspect(v, Object.assign({}, inspectOptions, extra)); };
  var first = args[0];
  var a = 0;
  var str = '';
  var join = '';
  if (typeof first === 'string') {
    if (args.length === 1) return first;
    var last = 0;
    for (var i = 0; i < first.length - 1; i++) {
      if (first.charCodeAt(i) !== 37) continue; // '%'
      var c = first.charCodeAt(++i);
      if (a + 1 !== args.length) {
        var tmp;
        switch (c) {
          case 115: { // s
            var arg = args[++a];
            if (typeof arg === 'number') tmp = Object.is(arg, -0) ? '-0' : String(arg);
            else if (typeof arg === 'bigint') tmp = arg + 'n';
            else if (typeof arg !== 'object' || arg === null || hasOwnToString(arg)) tmp = String(arg);
            else tmp = inspect(arg, { depth: 0 });
            break;
          }
          case 106: tmp = tryStringify(args[++a]); break; // j
          case 100: { // d
            var n = args[++a];
            if (typeof n === 'bigint') tmp = n + 'n';
            else if (typeof n === 'symbol') tmp = 'NaN';
            else { var num = Number(n); tmp = Object.is(num, -0) ? '-0' : String(num); }
            break;
          }
          case 79: tmp = inspect(args[++a]); break; // O
          case 111: tmp = inspect(args[++a], { showHidden: true, depth: 4 }); break; // o
          case 105: { // i
            var ni = args[++a];
            if (typeof ni === 'bigint') tmp = ni + 'n';
            else if (typeof ni === 'symbol') tmp = 'NaN';
            else tmp = String(parseInt(ni));
            break;
          }
          case 102: { // f
            var nf = args[++a];
            tmp = typeof nf === 'symbol' ? 'NaN' : String(parseFloat(nf));
            break;
          }
          case 99: a++; tmp = ''; break; // c
          case 37: str += first.slice(last, i); last = i + 1; continue; // %
          default: continue;
        }
        if (last !== i - 1) str += first.slice(last, i - 1);
        str += tmp;
        last = i + 1;
      } else if (c === 37) {
        str += first.slice(last, i);
        last = i + 1;
      }
    }
    if (last !== 0) {
      a++;
      join = ' ';
      if (last < first.length) str += first.slice(last);
    }
  }
  while (a < args.length) {
    var value = args[a];
    str += join;
    str += typeof value !== 'string' ? inspect(value) : value;
    join = ' ';
    a++;
  }
  return str;
}
function hasOwnToString(obj) {
  for (var p = obj; p && p !== Object.prototype && p !== Error.prototype; p = Object.getPrototypeOf(p)) {
    if (Object.prototype.hasOwnProperty.call(p, 'toString')) return true;
  }
  return obj instanceof Error;
}
function tryStringify(v) {
  try { return JSON.stringify(v); } catch (e) {
    if (e && /circular/i.test(e.message)) return '[Circular]';
    throw e;
  }
}
util.format = function format() { return formatWithOptions(undefined, Array.prototype.slice.call(arguments)); };
util.formatWithOptions = function (opts) { return formatWithOptions(opts, Array.prototype.slice.call(arguments, 1)); };

function deepEqual(a, b, seen) {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  var ta = Object.prototype.toString.call(a);
  if (ta !== Object.prototype.toString.call(b)) return false;
  if (seen.get(a) === b) return true;
  seen.set(a, b);
  if (a instanceof Date) return a.getTime() === b.getTime();
  if (a instanceof RegExp) return a.source === b.source && a.flags === b.flags;
  if (a instanceof Map) {
    if (a.size !== b.size) return false;
    var ok = true;
    a.forEach(function (v, k) { if (ok && (!b.has(k) || !deepEqual(v, b.get(k), seen))) ok = false; });
    return ok;
  }
  if (a instanceof Set) {
    if (a.size !== b.size) return false;
    var all = true;
    a.forEach(function (v) { if (all && !b.has(v)) all = false; });
    return all;
  }
  var ka = Object.keys(a), kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (var i = 0; i < ka.length; i++) {
    if (!Object.prototype.hasOwnProperty.call(b, ka[i]) || !deepEqual(a[ka[i]], b[ka[i]], seen)) return false;
  }
  return true;
}

module.exports = util;
