'use strict';
// async_hooks: AsyncLocalStorage and AsyncResource over the async context
// the engine carries across promise jobs (and env.js across timers).

var state = require('./state');

var ctx = state.env.asyncContext;

function withStore(frame, als, store, remove) {
  var stores = new Map(frame && frame.stores ? frame.stores : undefined);
  if (remove) stores.delete(als); else stores.set(als, store);
  return { render: frame ? frame.render : undefined, stores: stores };
}

function runIn(frame, fn, thisArg, args) {
  var prev = ctx.get();
  ctx.set(frame);
  try {
    return fn.apply(thisArg, args);
  } finally {
    ctx.set(prev);
  }
}

class AsyncLocalStorage {
  constructor() { this._enabled = true; }
  getStore() {
    var frame = ctx.get();
    return frame && frame.stores ? frame.stores.get(this) : undefined;
  }
  run(store, fn) {
    this._enabled = true;
    return runIn(withStore(ctx.get(), this, store, false), fn, undefined, Array.prototype.slice.call(arguments, 2));
  }
  exit(fn) {
    return runIn(withStore(ctx.get(), this, undefined, true), fn, undefined, Array.prototype.slice.call(arguments, 1));
  }
  enterWith(store) {
    this._enabled = true;
    ctx.set(withStore(ctx.get(), this, store, false));
  }
  disable() {
    this._enabled = false;
    var frame = ctx.get();
    if (frame && frame.stores && frame.stores.has(this)) ctx.set(withStore(frame, this, undefined, true));
  }
  static bind(fn) { return ctx.bind(fn); }
  static snapshot() {
    var frame = ctx.get();
    return function runInAsyncScope(fn) {
      return runIn(frame, fn, this, Array.prototype.slice.call(arguments, 1));
    };
  }
}

var nextId = 1;
class AsyncResource {
  constructor(type) {
    this._type = type;
    this._frame = ctx.get();
    this._id = ++nextId;
  }
  runInAsyncScope(fn, thisArg) {
    return runIn(this._frame, fn, thisArg, Array.prototype.slice.call(arguments, 2));
  }
  bind(fn, thisArg) {
    var self = this;
    var bound = function () {
      return self.runInAsyncScope.apply(self, [fn, thisArg === undefined ? this : thisArg].concat(Array.prototype.slice.call(arguments)));
    };
    Object.defineProperty(bound, 'length', { value: fn.length, configurable: true });
    bound.asyncResource = this;
    return bound;
  }
  emitDestroy() { return this; }
  asyncId() { return this._id; }
  triggerAsyncId() { return 0; }
  static bind(fn, type, thisArg) { return new AsyncResource(type || 'bound-anonymous-fn').bind(fn, thisArg); }
}

function createHook() {
  return { enable: function () { return this; }, disable: function () { return this; } };
}

module.exports = {
  AsyncLocalStorage: AsyncLocalStorage,
  AsyncResource: AsyncResource,
  createHook: createHook,
  executionAsyncId: function () { return 1; },
  triggerAsyncId: function () { return 0; },
  executionAsyncResource: function () { return {}; },
  asyncWrapProviders: {},
};
