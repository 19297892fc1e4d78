// Lists goja's built-in functions as JavaScript expressions that reach them
// in a fresh runtime: every function reachable from the global object and
// from the intrinsics that are not (iterator and generator prototypes,
// %TypedArray%), through prototypes, own properties, getters and setters.
// Run once per process in a scratch runtime; guard.go compiles the
// expressions into one program that every goja runtime runs first, before
// the environment is installed, to wrap what it returns. It reads property
// descriptors, so it runs no getter.
(function () {
  'use strict';
  var seen = new Set();
  var out = [];
  var queue = [
    [globalThis, 'globalThis'],
    [Object.getPrototypeOf(function* () {}), 'Object.getPrototypeOf(function* () {})'],
    [Object.getPrototypeOf((function* () {})()), 'Object.getPrototypeOf((function* () {})())'],
    [Object.getPrototypeOf(async function () {}), 'Object.getPrototypeOf(async function () {})'],
    [Object.getPrototypeOf([][Symbol.iterator]()), 'Object.getPrototypeOf([][Symbol.iterator]())'],
    [Object.getPrototypeOf(new Map()[Symbol.iterator]()), 'Object.getPrototypeOf(new Map()[Symbol.iterator]())'],
    [Object.getPrototypeOf(new Set()[Symbol.iterator]()), 'Object.getPrototypeOf(new Set()[Symbol.iterator]())'],
    [Object.getPrototypeOf(''[Symbol.iterator]()), "Object.getPrototypeOf(''[Symbol.iterator]())"],
    [Object.getPrototypeOf(/a/[Symbol.matchAll]('')), "Object.getPrototypeOf(/a/[Symbol.matchAll](''))"],
    [Object.getPrototypeOf(Int8Array), 'Object.getPrototypeOf(Int8Array)'],
  ];
  function keyExpr(k) {
    if (typeof k === 'symbol') {
      var d = k.description;
      if (/^Symbol\.[A-Za-z]+$/.test(d) && Symbol[d.slice(7)] === k) return d;
      return null; // not a well-known symbol: not reachable by name
    }
    return JSON.stringify(k);
  }
  for (var q = 0; q < queue.length; q++) {
    var o = queue[q][0], expr = queue[q][1];
    if (o === null || (typeof o !== 'object' && typeof o !== 'function') || seen.has(o)) continue;
    seen.add(o);
    if (typeof o === 'function') out.push(expr);
    queue.push([Object.getPrototypeOf(o), 'Object.getPrototypeOf(' + expr + ')']);
    var keys = Reflect.ownKeys(o);
    for (var i = 0; i < keys.length; i++) {
      var key = keyExpr(keys[i]);
      var d = Object.getOwnPropertyDescriptor(o, keys[i]);
      if (key === null || d === undefined) continue;
      if ('value' in d) {
        queue.push([d.value, expr + '[' + key + ']']);
      } else {
        var desc = 'Object.getOwnPropertyDescriptor(' + expr + ', ' + key + ')';
        queue.push([d.get, desc + '.get'], [d.set, desc + '.set']);
      }
    }
  }
  return out;
})()
