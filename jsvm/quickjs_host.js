// The JavaScript half of the QuickJS host layer (quickjs_host.go has the Go
// half). It is evaluated once per runtime, before env.js, and builds from one
// Go function (the dispatcher) the host object that env.js and the Node
// environment expect (see the host contracts at the top of env.js and
// node/src/index.js), so that the shared JavaScript runs unchanged on QuickJS.
//
// What lives here and not in Go: the async context (a JavaScript value,
// carried across promise reactions by a wrapped Promise.prototype.then, as
// goja's tracker does), timer callbacks (by id: Go only schedules ids), the
// values a runtime put into its request's sharedExecutionContext, and the
// stream being pumped. So Go holds no per-render JavaScript value: nothing
// can leak when a render fails halfway.
//
// It returns the one function Go calls into: js(op, a, b, c), whose ops are
// listed in quickjs.go. A JavaScript exception inside an op is handed to
// Go as text (message, stack) and the op returns the FAIL sentinel; so is a
// failed host call, the other way round (hostError()).
(function (opNames) {
  'use strict';
  var g = globalThis;
  var h = g.__gorender_host;
  delete g.__gorender_host;
  var OP = {};
  JSON.parse(opNames).forEach(function (name, i) { OP[name] = i; });
  var FAIL = Object.freeze(Object.create(null));
  var indirectEval = g.eval;
  var env = null; // env.js's hooks
  var node = null; // the Node environment's hooks

  // ---- Errors ------------------------------------------------------------

  // hostError rebuilds the error of a failed host call.
  function hostError() {
    var d = JSON.parse(h(OP.takeError));
    var C = typeof g[d.name] === 'function' ? g[d.name] : Error;
    var e = new C(d.message);
    if (d.props) {
      Object.keys(d.props).forEach(function (k) { e[k] = d.props[k]; });
    }
    return e;
  }
  function check(r) {
    if (r === FAIL) throw hostError();
    return r;
  }

  // parts is [message, stack] of a thrown value, as env.js extracts them.
  // QuickJS's stack lists only the frames; V8's and goja's start with the
  // error's own text, and so does the stack of a diagnostic here.
  function parts(e) {
    var p;
    try {
      p = env ? env.errorParts(e) : [String(e), ''];
    } catch (x) {
      return ['(an exception whose message cannot be read)', ''];
    }
    var stack = p[1];
    if (stack && /^\s+at /.test(stack) && e !== null && typeof e === 'object') {
      var head = p[0];
      try {
        head = String(e);
      } catch (x) {
        // keep the message
      }
      stack = head + '\n' + stack;
    }
    return [p[0], stack.replace(/\n$/, '')];
  }

  // Errors made by JavaScript code (new Error(...), a subclass's super(...))
  // get a stack in V8's form, as on goja: their own text first (QuickJS's
  // lists only the frames), and anonymous frames as just their place.
  // Bundles show error.stack in their error reports. (Errors the engine
  // itself throws, such as a TypeError for null.x, keep QuickJS's form;
  // diagnostics add the text, see parts.)
  var ownFrame = /\(native\)|gorender-quickjs-host\.js/;
  var anonymousFrame = /^(\s+at )<(?:anonymous|eval)> \((.*)\)$/;
  function withHeader(e) {
    var stack = e.stack;
    if (typeof stack !== 'string' || !/^\s+at /.test(stack)) return;
    var lines = stack.split('\n');
    while (lines.length && ownFrame.test(lines[0])) lines.shift();
    if (lines.length && lines[lines.length - 1] === '') lines.pop();
    for (var i = 0; i < lines.length; i++) lines[i] = lines[i].replace(anonymousFrame, '$1$2');
    var head;
    try {
      head = String(e);
    } catch (x) {
      return;
    }
    Object.defineProperty(e, 'stack', { value: head + '\n' + lines.join('\n'), writable: true, configurable: true });
  }
  ['Error', 'TypeError', 'RangeError', 'SyntaxError', 'ReferenceError', 'EvalError', 'URIError', 'AggregateError', 'InternalError']
    .forEach(function (name) {
      var Native = g[name];
      if (typeof Native !== 'function') return;
      var Wrapped = function () {
        var e = Reflect.construct(Native, arguments, new.target || Wrapped);
        withHeader(e);
        return e;
      };
      Object.defineProperty(Wrapped, 'name', { value: name });
      Object.defineProperty(Wrapped, 'length', { value: Native.length });
      Object.defineProperty(Wrapped, 'prototype', { value: Native.prototype });
      Object.setPrototypeOf(Wrapped, name === 'Error' ? Object.getPrototypeOf(Native) : g.Error);
      Object.defineProperty(Native.prototype, 'constructor', { value: Wrapped, writable: true, configurable: true });
      Object.defineProperty(g, name, { value: Wrapped, writable: true, configurable: true });
    });

  // ---- Async context -----------------------------------------------------

  // The async context is captured when a reaction is registered (then) and
  // restored while the reaction runs, then cleared: what goja's
  // AsyncContextTracker does natively. await is lowered to then when a
  // program is compiled (see quickjs.go), so it follows the same rule.
  var ctx;
  var nativeThen = Promise.prototype.then;
  function inContext(fn, c) {
    return function (v) {
      ctx = c;
      try {
        return fn(v);
      } finally {
        ctx = undefined;
      }
    };
  }
  Object.defineProperty(Promise.prototype, 'then', {
    value: function then(onFulfilled, onRejected) {
      var c = ctx;
      return nativeThen.call(this,
        typeof onFulfilled === 'function' ? inContext(onFulfilled, c) : onFulfilled,
        typeof onRejected === 'function' ? inContext(onRejected, c) : onRejected);
    },
    writable: true,
    configurable: true,
  });

  // new Function(...) code that awaits is lowered like a bundle, so that its
  // awaits keep the async context too.
  var NativeFunction = Function;
  var awaits = /\bawait\b/;
  var PatchedFunction = function Function() {
    var n = arguments.length;
    var body = n ? String(arguments[n - 1]) : '';
    if (!awaits.test(body)) return NativeFunction.apply(undefined, arguments);
    var params = [];
    for (var i = 0; i < n - 1; i++) params.push(String(arguments[i]));
    var src = '(function anonymous(' + params.join(',') + '\n) {\n' + body + '\n})';
    return indirectEval(check(h(OP.lowerAsync, src)));
  };
  Object.defineProperty(PatchedFunction, 'prototype', { value: NativeFunction.prototype });
  Object.defineProperty(NativeFunction.prototype, 'constructor', { value: PatchedFunction, writable: true, configurable: true });
  Object.defineProperty(g, 'Function', { value: PatchedFunction, writable: true, configurable: true });

  // ---- The host object ---------------------------------------------------

  var callbacks = new Map(); // timer and immediate id -> function
  var host = {
    engine: 'quickjs',
    getAsyncContext: function () { return ctx; },
    setAsyncContext: function (v) { ctx = v; },
    inAsyncJob: function () { return h(OP.draining); },
    reportError: function (e) {
      var p = parts(e);
      h(OP.report, p[0], p[1]);
    },
    setTimer: function (fn, ms, repeat) {
      var id = h(OP.setTimer, Number(ms), !!repeat);
      callbacks.set(id, fn);
      return id;
    },
    setImmediate: function (fn) {
      var id = h(OP.setImmediate);
      callbacks.set(id, fn);
      return id;
    },
    clearTimer: function (id) {
      id = Number(id);
      h(OP.clearTimer, id);
      callbacks.delete(id);
    },
    timerRef: function (id, on) { h(OP.timerRef, Number(id), !!on); },
    timerHasRef: function (id) { return h(OP.timerHasRef, Number(id)); },
    timerRefresh: function (id) { h(OP.timerRefresh, Number(id)); },

    // Intl's (env.js, jsvm/intl).
    intlLoad: function () { return check(h(OP.intlLoad)); },
    intlLocaleData: function (kind, file) { return check(h(OP.intlLocaleData, String(kind), String(file))); },
    intlZoneOffset: function (zone, ms) { return JSON.parse(h(OP.intlZoneOffset, String(zone), Number(ms))); },
    intlDefaultTimeZone: function () { return h(OP.intlDefaultTimeZone); },
    intlDefaultLocale: function () { return h(OP.intlDefaultLocale); },
    intlCollate: function (locale, sensitivity, caseFirst, numeric, ignorePunctuation, a, b) {
      return h(OP.intlCollate, String(locale), String(sensitivity), String(caseFirst), !!numeric, !!ignorePunctuation, String(a), String(b));
    },
    intlCaseMap: function (lang, text, upper) { return h(OP.intlCaseMap, String(lang), String(text), !!upper); },

    // The Node environment's (RENDERER_SUPPORT_MODULES).
    processEnv: function () { return JSON.parse(h(OP.processEnv)); },
    processInfo: function () { return JSON.parse(h(OP.processInfo)); },
    hrtime: function () { return JSON.parse(h(OP.hrtime)); },
    now: function () { return h(OP.now); },
    timeOrigin: h(OP.timeOrigin),
    fsRead: function (p) { return check(h(OP.fsRead, String(p))); },
    fsReadText: function (p) { return check(h(OP.fsReadText, String(p))); },
    fsStat: function (p) { return JSON.parse(check(h(OP.fsStat, String(p)))); },
    fsReaddir: function (p) { return JSON.parse(check(h(OP.fsReaddir, String(p)))); },
    fsRealpath: function (p) { return check(h(OP.fsRealpath, String(p))); },
    compileModule: function (source, filename) { return check(h(OP.compileModule, String(source), String(filename))); },
    randomBytes: function (n) { return h(OP.randomBytes, Number(n)); },
    randomUUID: function () { return h(OP.randomUUID); },
    hash: function (alg, key, data) {
      return check(h(OP.hash, String(alg), key === null ? undefined : key, data === null ? undefined : data));
    },
    utf8Encode: function (s) { return h(OP.utf8Encode, String(s)); },
    utf8Length: function (s) { return h(OP.utf8Length, String(s)); },
    utf8EncodeInto: function (s, u8) {
      return JSON.parse(check(h(OP.utf8EncodeInto, String(s), u8.buffer, u8.byteOffset, u8.byteLength)));
    },
    utf8Decode: function (buf, off, n, pending, stream, fatal) {
      var p = pending && pending.length ? String.fromCharCode.apply(null, pending) : '';
      var text = check(h(OP.utf8Decode, buf === null ? undefined : buf, Number(off), Number(n), p, !!stream, !!fatal));
      if (text === null) return null;
      var rest = null;
      if (stream) {
        var r = h(OP.utf8Rest);
        if (r.length) {
          rest = [];
          for (var i = 0; i < r.length; i++) rest.push(r.charCodeAt(i));
        }
      }
      return [text, rest];
    },
  };

  // ---- Values that cross runtimes ---------------------------------------

  // exportValue describes a value for another runtime of the request:
  // primitives as they are, objects through JSON (undefined when JSON has
  // nothing for them), as goja's host copies them.
  function exportValue(v) {
    switch (typeof v) {
      case 'undefined':
        return '{"u":1}';
      case 'number':
        if (v !== v || v === Infinity || v === -Infinity || (v === 0 && 1 / v < 0)) {
          return JSON.stringify({ n: Object.is(v, -0) ? '-0' : String(v) });
        }
        return JSON.stringify({ p: v });
      case 'string':
      case 'boolean':
        return JSON.stringify({ p: v });
      case 'bigint':
        return JSON.stringify({ b: String(v) });
      case 'symbol':
        return '{"u":1}';
    }
    if (v === null) return '{"p":null}';
    var s = JSON.stringify(v);
    return s === undefined ? '{"u":1}' : '{"j":' + s + '}';
  }
  function importValue(d) {
    if ('p' in d) return d.p;
    if ('j' in d) return d.j;
    if ('n' in d) return d.n === '-0' ? -0 : Number(d.n);
    if ('b' in d) return BigInt(d.b);
    if ('s' in d) return new Set(d.s);
    if ('f' in d) {
      var idx = d.f;
      return function () {
        var args = [];
        for (var i = 0; i < arguments.length; i++) args.push(String(arguments[i]));
        h(OP.hostFunc, idx, JSON.stringify(args));
      };
    }
    return undefined;
  }
  // importResult is a runOnOtherBundle result: a value, or a promise the
  // other runtime settled.
  function importResult(text) {
    var d = JSON.parse(text);
    if (d.m === 'fulfilled') return Promise.resolve(importValue(d.v));
    if (d.m === 'rejected') return Promise.reject(new Error(d.e));
    return importValue(d.v);
  }

  // ---- sharedExecutionContext and runOnOtherBundle ------------------------

  // The values this runtime put into its current request's shared context;
  // Go keeps which runtime owns which key, and clears this map when the
  // runtime starts serving another request.
  var localShared = new Map();
  function sharedKey(k) {
    if (typeof k === 'string' || typeof k === 'boolean') return k;
    if (typeof k === 'number') return k !== k ? 'NaN' : k;
    throw new TypeError('sharedExecutionContext keys must be strings, numbers or booleans');
  }
  var sharedOps = {
    get: function (k) {
      k = sharedKey(k);
      var r = h(OP.sharedGet, k);
      if (r === true) return localShared.get(k);
      return r === undefined ? undefined : importValue(JSON.parse(r));
    },
    set: function (k, v) {
      k = sharedKey(k);
      localShared.set(k, v);
      h(OP.sharedSet, k);
    },
    has: function (k) { return h(OP.sharedHas, sharedKey(k)); },
    remove: function (k) {
      k = sharedKey(k);
      localShared.delete(k);
      return h(OP.sharedRemove, k);
    },
    clear: function () {
      localShared.clear();
      h(OP.sharedClear);
    },
    keys: function () { return JSON.parse(h(OP.sharedKeys)); },
  };
  function runOnOtherBundle(bundleId, code) {
    return check(h(OP.runOnOther, String(bundleId), String(code)));
  }

  // ---- Ops Go calls ------------------------------------------------------

  var streamCancel = null;
  var ops = [
    // begin(code): per-render globals, as env.js sets them.
    function (code) { env.begin(code, env.makeShared(sharedOps), runOnOtherBundle); },
    function () { env.afterSync(); },
    function () { env.end(); },
    // fire(id, last): a timer or immediate is due.
    function (id, last) {
      var fn = callbacks.get(id);
      if (last) callbacks.delete(id);
      if (fn) fn();
    },
    function (v) { return env.kind(v); },
    function (v) { return env.toPromise(v); },
    function (v) { return env.stringify(v); },
    function (e) { return JSON.stringify(parts(e)); },
    // pump(stream): forward the stream to the host's sink.
    function (stream) {
      streamCancel = env.pump(stream,
        function (chunk) { h(OP.streamChunk, chunk); },
        function () { h(OP.streamEnd); },
        function (e) {
          var p = parts(e);
          h(OP.streamError, p[0], p[1]);
        });
    },
    function (reason) {
      var cancel = streamCancel;
      streamCancel = null;
      if (typeof cancel === 'function') cancel(new Error(reason));
    },
    exportValue,
    importResult,
    function (k) { return exportValue(localShared.get(k)); },
    function () { localShared.clear(); },
    // reset: nothing of one render is kept for the next.
    function () {
      callbacks.clear();
      streamCancel = null;
    },
    function (fn, filename, dirname) { return node.runModule(fn, filename, dirname); },
    function (envFn, options) { env = envFn(JSON.parse(options), host); },
    function (factory) { node = factory()(host, env); },
  ];

  // js(-1) is FAIL, for Go to recognise.
  return function js(op, a, b, c) {
    if (op < 0) return FAIL;
    try {
      return ops[op](a, b, c);
    } catch (e) {
      var p = parts(e);
      h(OP.thrown, p[0], p[1]);
      return FAIL;
    }
  };
})
