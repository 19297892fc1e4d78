// The JavaScript half of the QuickJS engine's layer (host.go has the Go
// half). It is evaluated once per runtime, before anything else, and makes
// QuickJS look to jsenv's bridge as goja does:
//
//   - the host functions: one Go function (the dispatcher, which the
//     wrapper's table of Go functions makes necessary) becomes one
//     JavaScript function per host function (raw, for the bridge); a failed
//     host call comes back as the FAIL sentinel and is thrown here;
//   - the async context: carried across promise reactions by a wrapped
//     Promise.prototype.then, as goja's tracker does (await is lowered to
//     then when code is compiled, see engine.go);
//   - error stacks in V8's form (QuickJS's list only the frames);
//   - js(op, a, b, c), the one function Go calls: the bridge's ops by
//     number, a JavaScript exception handed to Go as text (message, stack)
//     with FAIL as the result, since Go cannot see a thrown value.
//
// It is a function of the host function names and the op names (JSON); it
// returns install(bridge, options, envFactory, nodeFactory), which returns js.
(function (functionNames, opNames) {
  'use strict';
  var g = globalThis;
  var h = g.__gorender_host;
  delete g.__gorender_host;
  // The dispatcher's own ops (host.go), below the host functions' indexes.
  var TAKE_ERROR = -1, THROWN = -2, DRAINING = -3;
  var FAIL = Object.freeze(Object.create(null));
  var indirectEval = g.eval;

  // ---- Errors ------------------------------------------------------------

  // hostError rebuilds the error of a failed host call.
  function hostError() {
    var d = JSON.parse(h(TAKE_ERROR));
    var C = typeof g[d.name] === 'function' ? g[d.name] : Error;
    var e = new C(d.message);
    if (d.props) {
      d.props.forEach(function (p) { e[p[0]] = p[1]; });
    }
    return e;
  }

  // Errors made by JavaScript code (new Error(...), a subclass's super(...))
  // get a stack in V8's form, as on goja: their own text first (QuickJS's
  // lists only the frames), and anonymous frames as just their place.
  // Bundles show error.stack in their error reports. (Errors the engine
  // itself throws, such as a TypeError for null.x, keep QuickJS's form;
  // diagnostics add the text, see stackText.)
  var ownFrame = /\(native\)|gorender-quickjs\.js|gorender-bridge\.js/;
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
      // Error.captureStackTrace (jsvm/jsenv/builtins.js) stays on Error.
      var capture = Object.getOwnPropertyDescriptor(Native, 'captureStackTrace');
      if (capture) Object.defineProperty(Wrapped, 'captureStackTrace', capture);
      Object.defineProperty(Native.prototype, 'constructor', { value: Wrapped, writable: true, configurable: true });
      Object.defineProperty(g, name, { value: Wrapped, writable: true, configurable: true });
    });

  // stackText is the stack of a diagnostic: QuickJS's stack lists only the
  // frames; V8's and goja's start with the error's own text, and so does
  // the stack here.
  function stackText(e, message, stack) {
    if (stack && /^\s+at /.test(stack) && e !== null && typeof e === 'object') {
      var head = message;
      try {
        head = String(e);
      } catch (x) {
        // keep the message
      }
      stack = head + '\n' + stack;
    }
    return stack.replace(/\n$/, '');
  }

  // ---- The host functions ------------------------------------------------

  // A host function takes at most seven arguments (intlCollate's).
  var raw = {};
  JSON.parse(functionNames).forEach(function (name, i) {
    raw[name] = function (a, b, c, d, e, f, g) {
      var r = h(i, a, b, c, d, e, f, g);
      if (r === FAIL) throw hostError();
      return r;
    };
  });

  // ---- Async context -----------------------------------------------------

  // The async context is captured when a reaction is registered (then) and
  // restored while the reaction runs, then cleared: what goja's
  // AsyncContextTracker does natively. await is lowered to then when a
  // program is compiled (see engine.go), so it follows the same rule.
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
    return indirectEval(raw.lowerAwait(src));
  };
  Object.defineProperty(PatchedFunction, 'prototype', { value: NativeFunction.prototype });
  Object.defineProperty(NativeFunction.prototype, 'constructor', { value: PatchedFunction, writable: true, configurable: true });
  Object.defineProperty(g, 'Function', { value: PatchedFunction, writable: true, configurable: true });

  var engine = {
    name: 'quickjs',
    getAsyncContext: function () { return ctx; },
    setAsyncContext: function (v) { ctx = v; },
    inAsyncJob: function () { return h(DRAINING); },
    stackText: stackText,
  };

  return function install(bridge, options, envFactory, nodeFactory) {
    var b = bridge(raw, engine, options, envFactory, nodeFactory);
    var ops = JSON.parse(opNames).map(function (name) { return b[name]; });
    // js(-1) is FAIL, for Go to recognise.
    return function js(op, a, b2, c) {
      if (op < 0) return FAIL;
      try {
        return ops[op](a, b2, c);
      } catch (e) {
        var p = b.parts(e);
        h(THROWN, p[0], p[1]);
        return FAIL;
      }
    };
  };
})
