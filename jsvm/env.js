// The JavaScript half of the render environment (PROTOCOL.md §7), shared by
// every engine. It is evaluated once per runtime, before the bundle, as a
// function of the host's options; it returns the hooks the host calls.
(function (options) {
  'use strict';
  var g = globalThis;
  g.global = g;

  // console records into the current render's history; react-on-rails
  // builds consoleReplayScript from console.history.
  var history = [];
  function recorder(level) {
    return function () {
      var args = Array.prototype.slice.call(arguments);
      if (typeof args[0] === 'string') {
        args[0] = '[SERVER] ' + args[0];
      }
      history.push({ level: level, arguments: args });
    };
  }
  var console = {
    log: recorder('log'),
    info: recorder('info'),
    warn: recorder('warn'),
    error: recorder('error'),
    debug: recorder('debug'),
    trace: recorder('debug'),
    dir: recorder('log'),
    history: history,
  };
  g.console = console;

  g.getStackTrace = function getStackTrace() {
    try {
      throw new Error('');
    } catch (e) {
      return e.stack;
    }
  };

  if (options.stubTimers) {
    var noop = function () {};
    ['setTimeout', 'setInterval', 'setImmediate', 'clearTimeout', 'clearInterval', 'clearImmediate', 'queueMicrotask']
      .forEach(function (name) { g[name] = noop; });
  }

  function isStream(value) {
    return (typeof value.pipe === 'function' && typeof value.read === 'function') ||
      typeof value.getReader === 'function';
  }

  // SharedExecutionContext is a Map whose entries live in the host, so that
  // every runtime of one HTTP request sees the same entries.
  function makeShared(ops) {
    class SharedExecutionContext extends Map {
      get(key) { return ops.get(key); }
      set(key, value) { ops.set(key, value); return this; }
      has(key) { return ops.has(key); }
      delete(key) { return ops.remove(key); }
      clear() { ops.clear(); }
      get size() { return ops.keys().length; }
      keys() { return ops.keys()[Symbol.iterator](); }
      values() {
        var self = this;
        return ops.keys().map(function (k) { return self.get(k); })[Symbol.iterator]();
      }
      entries() {
        var self = this;
        return ops.keys().map(function (k) { return [k, self.get(k)]; })[Symbol.iterator]();
      }
      forEach(callback, thisArg) {
        var self = this;
        ops.keys().forEach(function (k) { callback.call(thisArg, self.get(k), k, self); });
      }
      [Symbol.iterator]() { return this.entries(); }
    }
    return new SharedExecutionContext();
  }

  var stringify = JSON.stringify;

  return {
    // begin sets the per-render globals and starts a fresh console history.
    begin: function (code, shared, runOnOtherBundle) {
      history = [];
      console.history = history;
      g.renderingRequest = code;
      g.sharedExecutionContext = shared;
      g.runOnOtherBundle = runOnOtherBundle;
    },
    // end clears the per-render globals.
    end: function () {
      delete g.renderingRequest;
      delete g.sharedExecutionContext;
      delete g.runOnOtherBundle;
    },
    makeShared: makeShared,
    // kind classifies a completion value for the host.
    kind: function (value) {
      if (typeof value === 'string') return value === '' ? 'nil' : 'string';
      if (!value) return 'nil';
      if (typeof value === 'object' || typeof value === 'function') {
        if (value instanceof Promise) return 'promise';
        if (typeof value.then === 'function') return 'thenable';
        if (isStream(value)) return 'stream';
      }
      return 'other';
    },
    // toPromise adopts a thenable into a real promise.
    toPromise: function (value) { return Promise.resolve(value); },
    stringify: function (value) { return stringify(value); },
    // errorParts extracts message and stack of a thrown value.
    errorParts: function (e) {
      if (e && typeof e === 'object') {
        var message = e.message !== undefined ? String(e.message) : String(e);
        var stack = typeof e.stack === 'string' ? e.stack : '';
        return [message, stack];
      }
      return [String(e), ''];
    },
  };
})
