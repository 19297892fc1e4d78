// ---- The Node environment (RENDERER_SUPPORT_MODULES) ---------------------

const GLOBALS = ['Buffer', 'atob', 'btoa', 'TextEncoder', 'TextDecoder', 'URL', 'URLSearchParams', 'AbortController',
  'AbortSignal', 'Event', 'EventTarget', 'CustomEvent', 'DOMException', 'MessageChannel', 'MessagePort',
  'structuredClone', 'performance', 'crypto', 'ReadableStream', 'ReadableStreamDefaultReader',
  'ReadableStreamBYOBReader', 'ReadableStreamBYOBRequest', 'ReadableByteStreamController',
  'ReadableStreamDefaultController', 'TransformStream', 'TransformStreamDefaultController', 'WritableStream',
  'WritableStreamDefaultWriter', 'WritableStreamDefaultController', 'ByteLengthQueuingStrategy',
  'CountQueuingStrategy', 'TextEncoderStream', 'TextDecoderStream'];

function installNode(bundle) {
  const g = bundle.global;
  for (const name of GLOBALS) {
    if (globalThis[name] !== undefined && !Object.prototype.hasOwnProperty.call(g, name)) {
      Object.defineProperty(g, name, { value: globalThis[name], writable: true, configurable: true, enumerable: false });
    }
  }
  const proc = processFacade(bundle);
  Object.defineProperty(g, 'process', { value: proc, writable: true, configurable: true, enumerable: false });
  const envTimers = bundle.hooks.timers;
  // The built-ins a bundle may require (makeModules.BUILTINS), Node's own,
  // except fs (read-only, confined to the bundle's directory), process (no
  // secrets, no exit) and timers (owned by the render, through env.js).
  const builtins = {
    assert: () => require('node:assert'),
    async_hooks: () => require('node:async_hooks'),
    buffer: () => require('node:buffer'),
    crypto: () => require('node:crypto'),
    events: () => require('node:events'),
    fs: () => confinedFS(bundle),
    'fs/promises': () => confinedFS(bundle).promises,
    path: () => nodePath,
    'path/posix': () => nodePath.posix,
    perf_hooks: () => require('node:perf_hooks'),
    process: () => proc,
    querystring: () => require('node:querystring'),
    stream: () => require('node:stream'),
    'stream/promises': () => require('node:stream/promises'),
    'stream/web': () => require('node:stream/web'),
    string_decoder: () => require('node:string_decoder'),
    timers: () => timersModule(envTimers),
    'timers/promises': () => timersModule(envTimers).promises,
    url: () => require('node:url'),
    util: () => require('node:util'),
    'util/types': () => require('node:util/types'),
  };
  const fsys = () => confinedFS(bundle);
  // A module's wrapper; its stack frames name the file without its
  // directory, as on the in-process engines.
  const compile = (source, filename) => vm.compileFunction(source, ['exports', 'require', 'module', '__filename', '__dirname'], {
    filename: nodePath.basename(filename),
    parsingContext: bundle.context,
  });
  // The CommonJS loader every engine shares (jsvm/jsenv/node/src/modules.js,
  // appended to the executor by gorender), over Node's own modules.
  const modules = makeModules({
    builtins,
    isFile(p) {
      try {
        return fsys().statSync(p).isFile();
      } catch (e) {
        return false;
      }
    },
    readText: (p) => fsys().readFileSync(p, 'utf8'),
    compile,
    parseJSON: (text) => bundle.realm.parse(text),
    newExports: () => bundle.realm.object(),
    path: nodePath,
    invalidArgType(id) {
      const err = new TypeError('The "id" argument must be of type string. Received ' + typeof id);
      err.code = 'ERR_INVALID_ARG_TYPE';
      return err;
    },
    invalidArgValue() {
      const err = new TypeError("The argument 'id' must be a non-empty string. Received ''");
      err.code = 'ERR_INVALID_ARG_VALUE';
      return err;
    },
  });

  bundle.node = {
    runMain(source) {
      const filename = bundle.dirname ? bundle.filename : bundle.name + '.js';
      const mod = modules.mainModule(filename, bundle.dirname || '.');
      proc.mainModule = mod;
      modules.runMain(mod, compile(source, filename));
    },
  };
}

// timersModule is timers and timers/promises over the render-owned timers.
function timersModule(t) {
  function abortError(signal) {
    const err = new DOMException('The operation was aborted', 'AbortError');
    err.cause = signal && signal.reason;
    return err;
  }
  function delayed(schedule, clear) {
    return (delay, value, opts) => new Promise((resolve, reject) => {
      const signal = opts && opts.signal;
      if (signal && signal.aborted) {
        reject(abortError(signal));
        return;
      }
      let onAbort;
      const handle = schedule(() => {
        if (signal) signal.removeEventListener('abort', onAbort);
        resolve(value);
      }, delay);
      if (opts && opts.ref === false && handle && handle.unref) handle.unref();
      if (signal) {
        onAbort = () => {
          clear(handle);
          reject(abortError(signal));
        };
        signal.addEventListener('abort', onAbort, { once: true });
      }
    });
  }
  const promises = {
    setTimeout: delayed((fn, d) => t.setTimeout(fn, d), t.clearTimeout),
    setImmediate: (value, opts) => delayed((fn) => t.setImmediate(fn), t.clearImmediate)(0, value, opts),
  };
  promises.scheduler = {
    wait: (delay, opts) => promises.setTimeout(delay, undefined, opts),
    yield: () => promises.setImmediate(),
  };
  return {
    setTimeout: t.setTimeout,
    clearTimeout: t.clearTimeout,
    setInterval: t.setInterval,
    clearInterval: t.clearInterval,
    setImmediate: t.setImmediate,
    clearImmediate: t.clearImmediate,
    promises,
  };
}

// processFacade is the bundle's process: the real one's facts and clocks,
// the environment without secrets (the executor's own environment has none:
// gorender leaves RENDERER_PASSWORD out), cwd the bundle's directory, and
// nothing that reaches outside (exit, kill, binding, stdio).
function processFacade(bundle) {
  const EventEmitter = require('node:events');
  const p = new EventEmitter();
  const env = Object.assign(Object.create(null), process.env);
  if (env.NODE_ENV === undefined) env.NODE_ENV = 'production';
  p.env = env;
  p.title = 'node';
  p.version = process.version;
  p.versions = Object.assign({}, process.versions);
  p.platform = process.platform;
  p.arch = process.arch;
  p.pid = process.pid;
  p.ppid = process.ppid;
  p.release = process.release;
  p.argv = ['node', bundle.filename];
  p.argv0 = 'node';
  p.execArgv = [];
  p.execPath = 'node';
  p.exitCode = undefined;
  p.features = process.features;
  p.config = { variables: {} };
  p.allowedNodeEnvironmentFlags = new Set();
  p.noDeprecation = false;
  p.throwDeprecation = false;
  p.traceDeprecation = false;
  p.cwd = () => bundle.dirname || '/';
  const refuse = (name) => () => {
    const err = new Error('process.' + name + '() is not available to bundles in gorender');
    err.code = 'ERR_WORKER_UNSUPPORTED_OPERATION';
    throw err;
  };
  for (const name of ['chdir', 'exit', 'reallyExit', 'abort', 'kill', 'dlopen', 'binding', '_linkedBinding']) p[name] = refuse(name);
  p.umask = () => 18;
  p.hrtime = process.hrtime;
  p.uptime = process.uptime;
  p.memoryUsage = process.memoryUsage;
  p.cpuUsage = process.cpuUsage;
  p.resourceUsage = process.resourceUsage;
  p.getuid = process.getuid;
  p.getgid = process.getgid;
  p.geteuid = process.geteuid;
  p.getegid = process.getegid;
  p.nextTick = process.nextTick;
  const sink = (fd) => ({
    fd, isTTY: false, writable: true,
    write() { const cb = arguments[arguments.length - 1]; if (typeof cb === 'function') process.nextTick(cb); return true; },
    end() {}, on() { return this; }, once() { return this; }, off() { return this; }, removeListener() { return this; },
    emit() { return false; }, cork() {}, uncork() {}, getColorDepth() { return 1; }, hasColors() { return false; },
  });
  p.stdout = sink(1);
  p.stderr = sink(2);
  p.stdin = { fd: 0, isTTY: false, on() { return this; }, once() { return this; } };
  p.emitWarning = function emitWarning(warning, type, code) {
    const opts = type && typeof type === 'object' ? type : { type, code };
    let w = warning;
    if (typeof w === 'string') {
      w = new Error(w);
      w.name = opts.type || 'Warning';
      if (opts.code !== undefined) w.code = opts.code;
      if (opts.detail !== undefined) w.detail = opts.detail;
    }
    if (w.name === 'DeprecationWarning') {
      if (p.noDeprecation) return;
      if (p.throwDeprecation) throw w;
    }
    process.nextTick(() => p.emit('warning', w));
  };
  return p;
}

