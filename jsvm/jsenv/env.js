// The JavaScript half of the render environment (PROTOCOL.md §7), shared by
// every in-process engine. It is evaluated once per runtime, before the
// bundle, as a function of the options and of the host object (built by
// bridge.js over the host functions); it returns the hooks the render flow
// calls through the bridge.
//
// host: engine (name), getAsyncContext(), setAsyncContext(v), inAsyncJob(),
// reportError(e), rewriteRegExp(pattern), mapStack(stack), and with real timers
// setTimer(fn, ms, repeat), setImmediate(fn), clearTimer(id),
// timerRef(id, on), timerHasRef(id), timerRefresh(id).
(function (options, host) {
  'use strict';
  var g = globalThis;
  g.global = g;
  // Captured before the bundle runs, which may replace it.
  var defineProperty = Object.defineProperty;

  // ---- Engine gaps -------------------------------------------------------

  // goja has no Symbol.asyncIterator; esbuild's lowered async iteration
  // falls back to Symbol.for('Symbol.asyncIterator'), so use the same symbol.
  if (typeof Symbol.asyncIterator !== 'symbol') {
    Object.defineProperty(Symbol, 'asyncIterator', { value: Symbol.for('Symbol.asyncIterator') });
  }

  // \p{…} Unicode property escapes silently never match in goja. The host
  // rewrites them into explicit classes where its Unicode tables know the
  // property and throws a SyntaxError naming the gap otherwise. Regex
  // literals reach the constructor because bundles that contain them are
  // lowered at load (they become new RegExp(...) calls). The host patches
  // RegExp only for such bundles (patchRegExp below).
  function patchRegExp() {
    if (typeof host.rewriteRegExp !== 'function' || nativePropertyEscapes() || Object.prototype.hasOwnProperty.call(g.RegExp, '__gorenderPatched')) return;
    var NativeRegExp = g.RegExp;
    var rewrite = host.rewriteRegExp;
    var fix = function (args) {
      var pattern = args[0], flags = args[1];
      if (typeof pattern === 'string' && typeof flags === 'string' && flags.indexOf('u') >= 0 &&
        (pattern.indexOf('\\p{') >= 0 || pattern.indexOf('\\P{') >= 0)) {
        args = Array.prototype.slice.call(args);
        args[0] = rewrite(pattern, flags);
      }
      return args;
    };
    // A plain function, not a Proxy: goja's instanceof rejects proxies.
    var Patched = function RegExp(pattern, flags) {
      var args = fix(arguments);
      if (new.target) {
        return Reflect.construct(NativeRegExp, args, new.target === Patched ? NativeRegExp : new.target);
      }
      return NativeRegExp.apply(undefined, args);
    };
    Object.setPrototypeOf(Patched, NativeRegExp);
    Object.defineProperty(Patched, 'prototype', { value: NativeRegExp.prototype });
    Object.defineProperty(Patched, '__gorenderPatched', { value: true });
    Object.defineProperty(NativeRegExp.prototype, 'constructor', { value: Patched, writable: true, configurable: true });
    g.RegExp = Patched;
  }
  function nativePropertyEscapes() {
    try { return new RegExp('\\p{Lu}', 'u').test('A'); } catch (e) { return false; }
  }

  // ---- Async context -----------------------------------------------------

  // The async context is an opaque frame {render, stores} that the engine
  // carries across promise jobs (captured when a reaction is scheduled,
  // restored while it runs); timers carry it below. render is the state of
  // the render that started the work; stores holds AsyncLocalStorage values.
  var ctxGet = host.getAsyncContext;
  var ctxSet = host.setAsyncContext;
  var loadState = { history: [], late: null, afterSync: false };
  var current = loadState;

  function renderState() {
    var c = ctxGet();
    return (c && c.render) || current;
  }

  // bind returns fn running in the async context current now.
  function bind(fn) {
    var captured = ctxGet();
    return function () {
      var prev = ctxGet();
      ctxSet(captured);
      try {
        return fn.apply(this, arguments);
      } finally {
        ctxSet(prev);
      }
    };
  }

  // ---- console -----------------------------------------------------------

  // console records into the current render's history; react-on-rails
  // builds consoleReplayScript from console.history. Work of a render that
  // outlives it records into that render's (finished) history, never into
  // another's. Without replayAsyncLogs (REPLAY_SERVER_ASYNC_OPERATION_LOGS
  // off), what runs after the render's synchronous part goes nowhere, as
  // upstream resets console.history then.
  function recorder(level) {
    return function () {
      var args = Array.prototype.slice.call(arguments);
      if (typeof args[0] === 'string') {
        args[0] = '[SERVER] ' + args[0];
      }
      var st = renderState();
      var target = st.history;
      if (!options.replayAsyncLogs && st !== loadState && (st.afterSync || host.inAsyncJob())) {
        target = st.late || (st.late = []);
      }
      record(target, { level: level, arguments: args });
    };
  }
  // A history keeps at most options.consoleMaxLines lines and
  // options.consoleMaxBytes of their string arguments (UTF-16 units; 8 for
  // any other argument), 0 being no bound: it is replayed into the page,
  // and 2 million console.log calls took 1.67 GB. Past either, one last
  // line counts what was left out.
  var maxLines = options.consoleMaxLines || Infinity;
  var maxBytes = options.consoleMaxBytes || Infinity;
  var historyUse = new WeakMap(); // history -> { bytes, dropped, marker }
  function record(target, entry) {
    var use = historyUse.get(target);
    if (!use) {
      use = { bytes: 0, dropped: 0, marker: null };
      historyUse.set(target, use);
    }
    if (!use.marker) {
      var bytes = 0;
      for (var i = 0; i < entry.arguments.length; i++) {
        var a = entry.arguments[i];
        bytes += typeof a === 'string' ? a.length : 8;
      }
      if (target.length < maxLines && use.bytes + bytes <= maxBytes) {
        use.bytes += bytes;
        target.push(entry);
        return;
      }
      use.marker = { level: 'warn', arguments: [''] };
      target.push(use.marker);
    }
    use.dropped++;
    use.marker.arguments[0] = '[SERVER] gorender: ' + use.dropped + ' more console lines of this render were not kept' +
      ' (RENDERER_CONSOLE_MAX_LINES ' + options.consoleMaxLines + ', RENDERER_CONSOLE_MAX_BYTES ' + options.consoleMaxBytes + ')';
  }
  var console = {
    log: recorder('log'),
    info: recorder('info'),
    warn: recorder('warn'),
    error: recorder('error'),
    debug: recorder('debug'),
    trace: recorder('debug'),
    dir: recorder('log'),
    history: loadState.history,
  };
  ['assert', 'count', 'countReset', 'group', 'groupCollapsed', 'groupEnd', 'table', 'time', 'timeEnd', 'timeLog', 'dirxml']
    .forEach(function (name) { console[name] = function () {}; });
  console.assert = function (ok) {
    if (!ok) {
      var args = Array.prototype.slice.call(arguments, 1);
      args[0] = 'Assertion failed' + (args.length ? ': ' + args[0] : '');
      console.error.apply(console, args);
    }
  };
  g.console = console;

  // In original sources where the bundle has a source map (host.mapStack:
  // a Go host function of the in-process engines, the executor's own on
  // the node engine).
  g.getStackTrace = function getStackTrace() {
    try {
      throw new Error('');
    } catch (e) {
      return typeof e.stack === 'string' && typeof host.mapStack === 'function' ? host.mapStack(e.stack) : e.stack;
    }
  };

  // ---- Timers ------------------------------------------------------------

  // Timers are real (driven by the host's per-render event loop) or stubbed
  // as no-ops; the host decides (options.stubTimers): the Node-compatible
  // environment always has real ones.
  var timers = {};
  function invalidCallback(value) {
    var err = new TypeError('The "callback" argument must be of type function. Received ' +
      (value === null ? 'null' : typeof value === 'object' ? 'an instance of ' + ((value.constructor && value.constructor.name) || 'Object') : 'type ' + typeof value + ' (' + String(value) + ')'));
    err.code = 'ERR_INVALID_ARG_TYPE';
    return err;
  }
  if (options.stubTimers) {
    var noop = function () {};
    ['setTimeout', 'setInterval', 'setImmediate', 'clearTimeout', 'clearInterval', 'clearImmediate', 'queueMicrotask']
      .forEach(function (name) { g[name] = noop; timers[name] = noop; });
  } else {
    var Timeout = function Timeout(id, delay, repeat) {
      this._id = id;
      this._idleTimeout = delay;
      this._repeat = repeat ? delay : null;
      this._destroyed = false;
    };
    Timeout.prototype.ref = function () { host.timerRef(this._id, true); return this; };
    Timeout.prototype.unref = function () { host.timerRef(this._id, false); return this; };
    Timeout.prototype.hasRef = function () { return host.timerHasRef(this._id); };
    Timeout.prototype.refresh = function () { host.timerRefresh(this._id); return this; };
    Timeout.prototype.close = function () { host.clearTimer(this._id); this._destroyed = true; return this; };
    Timeout.prototype[Symbol.toPrimitive] = function () { return this._id; };
    var Immediate = function Immediate(id) { this._id = id; };
    Immediate.prototype.ref = function () { host.timerRef(this._id, true); return this; };
    Immediate.prototype.unref = function () { host.timerRef(this._id, false); return this; };
    Immediate.prototype.hasRef = function () { return host.timerHasRef(this._id); };

    var schedule = function (fn, args, delay, repeat) {
      if (typeof fn !== 'function') throw invalidCallback(fn);
      var ms = Number(delay);
      if (!(ms >= 1 && ms <= 2147483647)) ms = 1;
      var captured = ctxGet();
      var t;
      var id = host.setTimer(function () {
        var prev = ctxGet();
        ctxSet(captured);
        try {
          fn.apply(t, args);
        } finally {
          ctxSet(prev);
        }
      }, ms, repeat);
      t = new Timeout(id, ms, repeat);
      return t;
    };
    var clear = function (t) {
      if (t === undefined || t === null) return;
      if (typeof t === 'object') {
        if (typeof t._id === 'number') host.clearTimer(t._id);
        if (t instanceof Timeout) t._destroyed = true;
        return;
      }
      var id = Number(t);
      if (id === id) host.clearTimer(id);
    };
    timers.setTimeout = function setTimeout(fn, delay) {
      return schedule(fn, Array.prototype.slice.call(arguments, 2), delay, false);
    };
    timers.setInterval = function setInterval(fn, delay) {
      return schedule(fn, Array.prototype.slice.call(arguments, 2), delay, true);
    };
    timers.setImmediate = function setImmediate(fn) {
      if (typeof fn !== 'function') throw invalidCallback(fn);
      var args = Array.prototype.slice.call(arguments, 1);
      var captured = ctxGet();
      var im;
      var id = host.setImmediate(function () {
        var prev = ctxGet();
        ctxSet(captured);
        try {
          fn.apply(im, args);
        } finally {
          ctxSet(prev);
        }
      });
      im = new Immediate(id);
      return im;
    };
    timers.clearTimeout = function clearTimeout(t) { clear(t); };
    timers.clearInterval = function clearInterval(t) { clear(t); };
    timers.clearImmediate = function clearImmediate(t) { clear(t); };
    var resolved = Promise.resolve();
    timers.queueMicrotask = function queueMicrotask(fn) {
      if (typeof fn !== 'function') throw invalidCallback(fn);
      resolved.then(function () {
        try {
          fn();
        } catch (e) {
          host.reportError(e);
        }
      });
    };
    timers.Timeout = Timeout;
    timers.Immediate = Immediate;
    ['setTimeout', 'setInterval', 'setImmediate', 'clearTimeout', 'clearInterval', 'clearImmediate', 'queueMicrotask']
      .forEach(function (name) { g[name] = timers[name]; });
  }

  var pumpHolds = new WeakMap(); // a Node stream -> how many of its pumps hold it paused
  function isStream(value) {
    return (typeof value.pipe === 'function' && typeof value.read === 'function') ||
      typeof value.getReader === 'function';
  }

  // SharedExecutionContext is a Map whose entries live in the host, so that
  // every runtime of one HTTP request sees the same entries.
  // makeShared returns a render's sharedExecutionContext over the host's
  // ops. Each engine passes the same ops object every time (it serves the
  // render being evaluated), so the class is defined once per runtime: a
  // class per render cost goja a fifth of a trivial render.
  var SharedExecutionContext = null, sharedClassOps = null;
  function makeShared(ops) {
    if (ops !== sharedClassOps) {
      SharedExecutionContext = sharedContextClass(ops);
      sharedClassOps = ops;
    }
    return new SharedExecutionContext();
  }
  function sharedContextClass(ops) {
    return class SharedExecutionContext extends Map {
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
    };
  }

  var stringify = JSON.stringify;

  // clipText keeps the head and the tail of a long text, each as long as an
  // answer echoes of it (jsvm.MaxErrorTextLength, which cuts the middle out
  // where the two meet): a 50 MB message need not cross into Go first.
  function clipText(s) {
    var max = options.errorTextMax;
    return max && s.length > 2 * max ? s.slice(0, max) + s.slice(s.length - max) : s;
  }

  // unreadable describes a thrown value whose message cannot be read.
  function unreadable(e) {
    try {
      return Object.prototype.toString.call(e) + ' (thrown; its message cannot be read)';
    } catch (x) {
      return '(an exception whose message cannot be read)';
    }
  }

  return {
    // begin sets the per-render globals, starts a fresh console history and
    // a fresh async context for the render. code is the request's text, or
    // (the node engine, whose process compiles the request rewritten) a
    // function that returns it: renderingRequest is then made from it when
    // first read (an accessor until then, a plain property after).
    begin: function (code, shared, runOnOtherBundle) {
      var st = { history: [], late: null, afterSync: false };
      current = st;
      console.history = st.history;
      ctxSet({ render: st, stores: null });
      if (typeof code === 'function') {
        var settle = function (v) {
          defineProperty(g, 'renderingRequest', { value: v, writable: true, enumerable: true, configurable: true });
          return v;
        };
        defineProperty(g, 'renderingRequest', {
          get: function () { return settle(code()); },
          set: settle,
          enumerable: true,
          configurable: true,
        });
      } else {
        g.renderingRequest = code;
      }
      g.sharedExecutionContext = shared;
      g.runOnOtherBundle = runOnOtherBundle;
    },
    // afterSync marks the end of the render's synchronous part: with
    // replayAsyncLogs off, console.history starts afresh (as upstream).
    afterSync: function () {
      current.afterSync = true;
      if (!options.replayAsyncLogs && current !== loadState) {
        current.late = current.late || [];
        console.history = current.late;
      }
    },
    // end clears the per-render globals.
    end: function () {
      current = loadState;
      ctxSet(undefined);
      delete g.renderingRequest;
      delete g.sharedExecutionContext;
      delete g.runOnOtherBundle;
    },
    makeShared: makeShared,
    patchRegExp: patchRegExp,
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
    // pump forwards a Node-style or web stream's chunks to the host as
    // strings or ArrayBuffers, then its end or error. onChunk answering
    // false pauses the stream until resume. It returns the pump: cancel
    // (reason) aborts the stream (the client went away), resume() resumes
    // it, web tells a web ReadableStream.
    pump: function (stream, onChunk, onEnd, onError) {
      var finished = false, paused = false, pump;
      var holds = pumpHolds;
      function finish(fn, arg) {
        if (!finished) {
          finished = true;
          fn(arg);
        }
      }
      // A stream that goes on producing while paused would have the host
      // hold its chunks without bound: it fails, and is cancelled.
      function deaf() {
        if (!paused || finished) return false;
        fail(new Error('the stream produced a chunk while paused (it ignores back-pressure)'));
        return true;
      }
      // fail ends the pump with error e and cancels the stream.
      function fail(e) {
        finish(onError, e);
        try {
          pump.cancel();
        } catch (ce) {
          // The stream's own cancel failed: it is dropped anyway.
        }
      }
      // deliver forwards a chunk and reports whether the stream may go on;
      // a chunk the host cannot take (too large for the engine's memory)
      // fails the stream.
      function deliver(chunk) {
        try {
          return forward(chunk);
        } catch (e) {
          fail(e);
          return false;
        }
      }
      function forward(chunk) {
        if (typeof chunk === 'string') return onChunk(chunk) !== false;
        if (chunk instanceof ArrayBuffer) return onChunk(chunk) !== false;
        if (chunk && ArrayBuffer.isView(chunk)) {
          var whole = chunk.byteOffset === 0 && chunk.byteLength === chunk.buffer.byteLength;
          return onChunk(whole ? chunk.buffer : chunk.buffer.slice(chunk.byteOffset, chunk.byteOffset + chunk.byteLength)) !== false;
        }
        if (chunk !== null && chunk !== undefined) return onChunk(String(chunk)) !== false;
        return true;
      }
      if (typeof stream.getReader === 'function') {
        var reader = stream.getReader();
        var step = function () {
          reader.read().then(function (r) {
            if (finished || deaf()) return;
            if (r.done) {
              finish(onEnd);
              return;
            }
            paused = !deliver(r.value);
            if (!finished && !paused) step();
          }, function (e) { finish(onError, e); });
        };
        pump = {
          web: true,
          cancel: function (reason) {
            finished = true;
            reader.cancel(reason).then(undefined, function () {});
          },
          resume: function () {
            if (paused && !finished) {
              paused = false;
              step();
            }
          },
        };
        step();
        return pump;
      }
      // One stream object may be pumped more than once (a bundle hands the
      // same stream to two callers): it stays paused while any of its
      // pumps holds it paused, as a Node stream piped to two destinations
      // waits for the slower, so that a chunk while paused still means the
      // stream ignores pause.
      var hold = function () {
        holds.set(stream, (holds.get(stream) || 0) + 1);
        if (typeof stream.pause === 'function') stream.pause();
      };
      var unhold = function () {
        var n = (holds.get(stream) || 1) - 1;
        if (n > 0) holds.set(stream, n);
        else holds.delete(stream);
        return n === 0;
      };
      var release = function () {
        if (paused) {
          paused = false;
          unhold();
        }
      };
      stream.on('data', function (chunk) {
        if (finished || deaf()) return;
        paused = !deliver(chunk);
        if (paused && !finished) hold();
      });
      stream.on('end', function () { release(); finish(onEnd); });
      stream.on('error', function (e) { release(); finish(onError, e); });
      stream.on('close', function () {
        release();
        finish(onError, new Error('the stream closed before it ended'));
      });
      pump = {
        web: false,
        cancel: function (reason) {
          finished = true;
          release();
          if (typeof stream.destroy === 'function') stream.destroy(reason);
        },
        resume: function () {
          if (!paused) return;
          paused = false;
          if (unhold() && !finished && typeof stream.resume === 'function') stream.resume();
        },
      };
      // Held paused by another of its pumps: it flows when that one resumes.
      if (!holds.has(stream) && typeof stream.resume === 'function') stream.resume();
      return pump;
    },
    // incoming makes the stream a runOnOtherBundle caller receives for
    // another bundle's stream (docs/compatibility.md "Streams across bundles"): a web
    // ReadableStream for one ('web'), else an object-mode Node Readable, of
    // classes {Readable, ReadableStream, Buffer}; string chunks stay
    // strings, byte chunks (ArrayBuffers) arrive as Buffers (Readable) or
    // Uint8Arrays (ReadableStream). want() is called when the stream wants
    // more chunks, cancel() when its reader cancels or destroys it. It
    // returns the stream and how to feed it: push(chunk), wants() (false
    // once it holds its highWaterMark unread), end(), fail(message).
    incoming: function (kind, classes, want, cancel) {
      var open = true;
      function failure(message) {
        return new Error("runOnOtherBundle: the other bundle's stream failed: " + message);
      }
      if (kind === 'web') {
        var controller;
        var web = new classes.ReadableStream({
          start: function (c) { controller = c; },
          pull: function () { want(); },
          cancel: function () {
            if (open) {
              open = false;
              cancel();
            }
          },
        });
        return {
          stream: web,
          push: function (chunk) {
            if (open) controller.enqueue(typeof chunk === 'string' ? chunk : new Uint8Array(chunk));
          },
          wants: function () { return open && controller.desiredSize > 0; },
          end: function () {
            if (open) {
              open = false;
              controller.close();
            }
          },
          fail: function (message) {
            if (open) {
              open = false;
              controller.error(failure(message));
            }
          },
        };
      }
      var wanting = true;
      var readable = new classes.Readable({
        objectMode: true,
        read: function () {
          wanting = true;
          want();
        },
        destroy: function (err, cb) {
          if (open) {
            open = false;
            cancel();
          }
          cb(err);
        },
      });
      return {
        stream: readable,
        push: function (chunk) {
          if (open) wanting = readable.push(typeof chunk === 'string' ? chunk : classes.Buffer.from(chunk));
        },
        wants: function () { return open && wanting; },
        end: function () {
          if (open) {
            open = false;
            readable.push(null);
          }
        },
        fail: function (message) {
          if (open) {
            open = false;
            readable.destroy(failure(message));
          }
        },
      };
    },
    stringify: function (value) { return stringify(value); },
    // errorParts extracts message and stack of a thrown value. Reading
    // them runs the value's own code (getters, toString), which may throw
    // in turn: then the message says what the value is.
    errorParts: function (e) {
      var message, stack = '';
      try {
        if (e && typeof e === 'object') {
          message = e.message !== undefined ? String(e.message) : String(e);
        } else {
          message = String(e);
        }
      } catch (x) {
        message = unreadable(e);
      }
      try {
        if (e && typeof e === 'object' && typeof e.stack === 'string') stack = e.stack;
      } catch (x) {
        // no stack
      }
      return [clipText(message), clipText(stack)];
    },
    // What the Node-compatible environment builds on.
    timers: timers,
    asyncContext: { get: ctxGet, set: ctxSet, bind: bind },
  };
})
