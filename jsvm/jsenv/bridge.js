// The bridge between the in-process render flow (package jsvm/inproc) and
// the environment (env.js, the Node-compatible environment), the same for
// every in-process engine. It is evaluated once per runtime, after the
// engine's own layer, as a function of:
//
//   raw     the host functions (inproc.Functions), bound by the engine: each
//           takes its arguments as listed there and returns a value or throws;
//   engine  what only the engine can do: name, getAsyncContext(),
//           setAsyncContext(v), inAsyncJob(), and optionally stackText(e,
//           message, stack), which normalises an error's stack text;
//   options the environment's options (JSON: stubTimers, replayAsyncLogs,
//           maxAllocation);
//   envFactory   env.js's function; nodeFactory  the Node environment's
//           factory, or undefined without RENDERER_SUPPORT_MODULES.
//
// It builds the host object env.js and the Node environment expect (their
// host contracts are at the top of env.js and node/src/index.js): every raw
// function is on it as it is, and the ones below adapt arguments and results
// where the contract wants another shape. It returns the ops the render flow
// calls (inproc.OpNames), plus parts, the [message, stack] of a thrown value.
//
// What lives here and not in Go: timer callbacks (Go schedules ids and fires
// them by id), the values a runtime put into its request's
// sharedExecutionContext, the stream being pumped, the copies of values
// that cross runtimes (as JSON descriptions), and the two ends of the
// streams that cross runtimes (their chunks cross as bytes and text). So Go holds no per-render
// JavaScript value: nothing can leak when a render fails halfway, and values
// cross runtimes the same way on every engine.
(function (raw, engine, optionsJSON, envFactory, nodeFactory) {
  'use strict';
  var options = JSON.parse(optionsJSON);
  var env = null; // env.js's hooks
  var node = null; // the Node environment's hooks

  // parts is [message, stack] of a thrown value, as env.js extracts them; a
  // value whose message cannot even be read still gets a diagnostic.
  function parts(e) {
    var p;
    try {
      p = env ? env.errorParts(e) : [String(e), ''];
    } catch (x) {
      return ['(an exception whose message cannot be read)', ''];
    }
    if (typeof engine.stackText === 'function') p = [p[0], engine.stackText(e, p[0], p[1])];
    return p;
  }

  // ---- The host object ---------------------------------------------------

  var callbacks = new Map(); // timer and immediate id -> function
  // hostString is s as a string, refused (RangeError) when it is longer
  // than one allocation may be (options.maxAllocation, inproc.AllocLimit)
  // before the host copies it.
  var maxAllocation = options.maxAllocation;
  function hostString(s, what) {
    s = String(s);
    if (s.length > maxAllocation) {
      throw new RangeError(what + ': ' + s.length + ' bytes are more than the ' + maxAllocation +
        ' bytes one allocation may take (RENDERER_MAX_ALLOCATION)');
    }
    return s;
  }
  var host = {};
  Object.keys(raw).forEach(function (name) { host[name] = raw[name]; });
  Object.assign(host, {
    engine: engine.name,
    getAsyncContext: engine.getAsyncContext,
    setAsyncContext: engine.setAsyncContext,
    inAsyncJob: engine.inAsyncJob,
    reportError: function (e) {
      var p = parts(e);
      raw.report(p[0], p[1]);
    },
    setTimer: function (fn, ms, repeat) {
      var id = raw.setTimer(Number(ms), !!repeat);
      callbacks.set(id, fn);
      return id;
    },
    setImmediate: function (fn) {
      var id = raw.setImmediate();
      callbacks.set(id, fn);
      return id;
    },
    clearTimer: function (id) {
      id = Number(id);
      raw.clearTimer(id);
      callbacks.delete(id);
    },
    timerRef: function (id, on) { raw.timerRef(Number(id), !!on); },
    timerHasRef: function (id) { return raw.timerHasRef(Number(id)); },
    timerRefresh: function (id) { raw.timerRefresh(Number(id)); },
    timeOrigin: raw.timeOrigin(),
    fsRead: function (p) { return raw.fsRead(String(p)); },
    fsReadText: function (p) { return raw.fsReadText(String(p)); },
    fsStat: function (p) { return raw.fsStat(String(p)); },
    fsReaddir: function (p) { return raw.fsReaddir(String(p)); },
    fsRealpath: function (p) { return raw.fsRealpath(String(p)); },
    compileModule: function (source, filename) { return raw.compileModule(hostString(source, 'compileModule'), String(filename)); },
    randomBytes: function (n) { return raw.randomBytes(Number(n)); },
    hash: function (alg, key, data) {
      return raw.hash(String(alg), key === null ? undefined : key, data === null ? undefined : data);
    },
    utf8Encode: function (s) { return raw.utf8Encode(hostString(s, 'UTF-8 encoding')); },
    utf8Length: function (s) { return raw.utf8Length(hostString(s, 'UTF-8 length')); },
    utf8EncodeInto: function (s, u8) { return raw.utf8EncodeInto(hostString(s, 'UTF-8 encoding'), u8); },
    utf8Decode: function (buf, off, n, pending, stream, fatal) {
      var p = pending && pending.length ? String.fromCharCode.apply(null, pending) : '';
      return raw.utf8Decode(buf === null ? undefined : buf, Number(off), Number(n), p, !!stream, !!fatal);
    },
    intlLocaleData: function (kind, file) { return raw.intlLocaleData(String(kind), String(file)); },
    intlLocaleKeys: function (kind, file, path) { return raw.intlLocaleKeys(String(kind), String(file), String(path)); },
    intlLocaleEntry: function (kind, file, path, key) {
      return raw.intlLocaleEntry(String(kind), String(file), String(path), String(key));
    },
    intlZoneOffset: function (zone, ms) { return raw.intlZoneOffset(String(zone), Number(ms)); },
    intlCollate: function (locale, sensitivity, caseFirst, numeric, ignorePunctuation, a, b) {
      return raw.intlCollate(String(locale), String(sensitivity), String(caseFirst), !!numeric, !!ignorePunctuation, String(a), String(b));
    },
    intlCaseMap: function (language, text, upper) { return raw.intlCaseMap(String(language), String(text), !!upper); },
  });

  // ---- Values that cross runtimes ---------------------------------------

  // exportValue describes a value for another runtime of the request:
  // primitives as they are, objects through JSON (undefined when JSON has
  // nothing for them).
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
    if ('st' in d) return incomingStream(d.st, d.k);
    if ('j' in d) return d.j;
    if ('n' in d) return d.n === '-0' ? -0 : Number(d.n);
    if ('b' in d) return BigInt(d.b);
    if ('s' in d) return new Set(d.s);
    if ('f' in d) {
      var idx = d.f;
      return function () {
        var args = [];
        for (var i = 0; i < arguments.length; i++) args.push(String(arguments[i]));
        raw.hostFunc(idx, JSON.stringify(args));
      };
    }
    return undefined;
  }
  // Streams that cross runtimes (inproc/crossstream.go). incoming are the
  // streams this runtime received, by id: Go queues their chunks and runs
  // the op crossFlow, which feeds them in as fast as each stream wants
  // them. outgoing are the pumps of this runtime's streams that another
  // runtime receives.
  var incoming = new Map();
  var outgoing = new Map();
  function incomingStream(id, kind) {
    var classes = node.crossingClasses();
    var s = env.incoming(kind, classes,
      function () { raw.crossWant(id); },
      function () {
        incoming.delete(id);
        raw.crossCancel(id);
      });
    incoming.set(id, s);
    return s.stream;
  }
  function crossFlow(id) {
    var s = incoming.get(id);
    while (s && s.wants()) {
      var c = raw.crossTake(id);
      if (c === null) return;
      if (typeof c === 'string' || c instanceof ArrayBuffer) {
        s.push(c);
        continue;
      }
      incoming.delete(id);
      if (c[0] === 'end') s.end();
      else s.fail(c[1]);
      return;
    }
  }
  function crossPump(stream, id) {
    var ended = false;
    var p = env.pump(stream,
      // A text chunk is copied into Go: no longer than one allocation may
      // be (RENDERER_MAX_ALLOCATION), else the stream fails (env.js pump).
      function (chunk) { return raw.crossChunk(id, typeof chunk === 'string' ? hostString(chunk, 'runOnOtherBundle stream chunk') : chunk); },
      function () {
        ended = true;
        outgoing.delete(id);
        raw.crossEnd(id);
      },
      function (e) {
        ended = true;
        outgoing.delete(id);
        raw.crossError(id, parts(e)[0]);
      });
    if (!ended) outgoing.set(id, p);
    return p.web ? 'web' : 'node';
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
  // Go keeps which runtime owns which key, and clears this map (resetShared)
  // when the runtime starts serving another request.
  var localShared = new Map();
  function sharedKey(k) {
    if (typeof k === 'string' || typeof k === 'boolean') return k;
    if (typeof k === 'number') return k !== k ? 'NaN' : k;
    throw new TypeError('sharedExecutionContext keys must be strings, numbers or booleans');
  }
  var sharedOps = {
    get: function (k) {
      k = sharedKey(k);
      var r = raw.sharedGet(k);
      if (r === true) return localShared.get(k);
      return r === undefined ? undefined : importValue(JSON.parse(r));
    },
    set: function (k, v) {
      k = sharedKey(k);
      localShared.set(k, v);
      raw.sharedSet(k);
    },
    has: function (k) { return raw.sharedHas(sharedKey(k)); },
    remove: function (k) {
      k = sharedKey(k);
      localShared.delete(k);
      return raw.sharedRemove(k);
    },
    clear: function () {
      localShared.clear();
      raw.sharedClear();
    },
    keys: function () { return raw.sharedKeys(); },
  };
  // runOnOtherBundle evaluates code in the runtime of another bundle of the
  // request; raw.runOnOther answers null when that is this runtime itself,
  // which evaluates it here and hands back the value itself (the call's
  // end is counted then: jsvm.MaxRunOnOtherDepth).
  function runOnOtherBundle(bundleId, code) {
    code = String(code);
    var d = raw.runOnOther(String(bundleId), code);
    if (d !== null) return importResult(d);
    try {
      return raw.runHere(code);
    } finally {
      raw.runOnOtherDone();
    }
  }

  // Intl, built on first use (jsvm/intl/install.js): the in-process engines
  // have none of their own.
  raw.intlInstaller()(host);
  env = envFactory(options, host);
  if (nodeFactory !== undefined) node = nodeFactory()(host, env);

  // ---- Ops the render flow calls (inproc.OpNames) -------------------------

  var streamCancel = null;
  return {
    // begin(code): the per-render globals.
    begin: function (code) { env.begin(code, env.makeShared(sharedOps), runOnOtherBundle); },
    afterSync: function () { env.afterSync(); },
    end: function () { env.end(); },
    // fire(id, last): a timer or immediate is due.
    fire: function (id, last) {
      var fn = callbacks.get(id);
      if (last) callbacks.delete(id);
      if (fn) fn();
    },
    kind: function (v) { return env.kind(v); },
    toPromise: function (v) { return env.toPromise(v); },
    stringify: function (v) { return env.stringify(v); },
    errorParts: function (e) { return JSON.stringify(parts(e)); },
    // pump(stream): forward the stream to the host's sink.
    pump: function (stream) {
      streamCancel = env.pump(stream,
        // A text chunk is copied into Go: no longer than one allocation may
        // be (RENDERER_MAX_ALLOCATION), else the stream fails (env.js
        // pump), as one crossing bundles does (crossPump).
        function (chunk) { raw.streamChunk(typeof chunk === 'string' ? hostString(chunk, 'stream chunk') : chunk); },
        function () { raw.streamEnd(); },
        function (e) {
          var p = parts(e);
          raw.streamError(p[0], p[1]);
        }).cancel;
    },
    abortStream: function (reason) {
      var cancel = streamCancel;
      streamCancel = null;
      if (typeof cancel === 'function') cancel(new Error(reason));
    },
    crossPump: crossPump,
    crossResume: function (id) {
      var p = outgoing.get(id);
      if (p) p.resume();
    },
    crossAbort: function (id, reason) {
      var p = outgoing.get(id);
      outgoing.delete(id);
      if (p) p.cancel(new Error(reason));
    },
    crossFlow: crossFlow,
    exportValue: exportValue,
    exportShared: function (k) { return exportValue(localShared.get(k)); },
    resetShared: function () { localShared.clear(); },
    // reset: nothing of one render is kept for the next.
    reset: function () {
      callbacks.clear();
      streamCancel = null;
      incoming.clear();
      outgoing.clear();
    },
    runModule: function (fn, filename, dirname) { return node.runModule(fn, filename, dirname); },
    patchRegExp: function () { env.patchRegExp(); },
    parts: parts,
  };
})
