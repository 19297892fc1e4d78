'use strict';
// structuredClone as Node's: the HTML structured clone algorithm for the
// types plain data uses, with DataCloneError for the rest.

var TYPED = ['Int8Array', 'Uint8Array', 'Uint8ClampedArray', 'Int16Array', 'Uint16Array', 'Int32Array', 'Uint32Array',
  'Float32Array', 'Float64Array', 'BigInt64Array', 'BigUint64Array'];
var ERRORS = { Error: Error, EvalError: EvalError, RangeError: RangeError, ReferenceError: ReferenceError,
  SyntaxError: SyntaxError, TypeError: TypeError, URIError: URIError };

function cloneError(value) {
  var DOMException = require('./events-target').DOMException;
  var shown;
  if (typeof value === 'function') shown = String(value);
  else if (typeof value === 'symbol') shown = value.toString();
  else shown = '#<' + ((value && value.constructor && value.constructor.name) || 'Object') + '>';
  return new DOMException(shown + ' could not be cloned.', 'DataCloneError');
}

function structuredClone(value) {
  if (arguments.length === 0) {
    var e = new TypeError('The "value" argument must be specified');
    e.code = 'ERR_MISSING_ARGS';
    throw e;
  }
  var memory = new Map();
  function clone(v) {
    if (v === null) return v;
    var t = typeof v;
    if (t === 'function' || t === 'symbol') throw cloneError(v);
    if (t !== 'object') return v;
    if (memory.has(v)) return memory.get(v);
    var tag = Object.prototype.toString.call(v).slice(8, -1);
    var out, keys, i;
    switch (tag) {
      case 'Array':
        out = new Array(v.length);
        memory.set(v, out);
        keys = Object.keys(v);
        for (i = 0; i < keys.length; i++) out[keys[i]] = clone(v[keys[i]]);
        return out;
      case 'Date':
        out = new Date(v.getTime());
        break;
      case 'RegExp':
        out = new RegExp(v.source, v.flags);
        break;
      case 'Boolean': out = Object(Boolean.prototype.valueOf.call(v)); break;
      case 'Number': out = Object(Number.prototype.valueOf.call(v)); break;
      case 'String': out = Object(String.prototype.valueOf.call(v)); break;
      case 'BigInt': out = Object(BigInt.prototype.valueOf.call(v)); break;
      case 'Map':
        out = new Map();
        memory.set(v, out);
        v.forEach(function (val, key) { out.set(clone(key), clone(val)); });
        return out;
      case 'Set':
        out = new Set();
        memory.set(v, out);
        v.forEach(function (val) { out.add(clone(val)); });
        return out;
      case 'ArrayBuffer':
        out = v.slice(0);
        break;
      case 'DataView':
        out = new DataView(clone(v.buffer), v.byteOffset, v.byteLength);
        break;
      case 'Error':
        var name = ERRORS[v.name] ? v.name : 'Error';
        out = new ERRORS[name](v.message);
        if (typeof v.stack === 'string') Object.defineProperty(out, 'stack', { value: v.stack, writable: true, configurable: true });
        if ('cause' in v) Object.defineProperty(out, 'cause', { value: clone(v.cause), writable: true, configurable: true });
        break;
      default:
        if (TYPED.indexOf(tag) >= 0 && ArrayBuffer.isView(v)) {
          out = new globalThis[tag](clone(v.buffer), v.byteOffset, v.length);
          break;
        }
        if (tag !== 'Object' || v instanceof Promise || v instanceof WeakMap || v instanceof WeakSet) throw cloneError(v);
        out = {};
        memory.set(v, out);
        keys = Object.keys(v);
        for (i = 0; i < keys.length; i++) out[keys[i]] = clone(v[keys[i]]);
        return out;
    }
    memory.set(v, out);
    return out;
  }
  return clone(value);
}

module.exports = structuredClone;
