'use strict';
// The Node-compatible environment of RENDERER_SUPPORT_MODULES (PROTOCOL.md
// §7), shared by every engine. The asset built from this file is compiled
// once per process and evaluated once per runtime; install() then defines
// the Node and Web globals as lazy getters and returns the hooks that
// evaluate the bundle as a CommonJS module. Built-ins are created on first
// use, so a runtime that never touches URL never pays for it.
//
// host (the engine's thin layer, Go functions):
//   engine; processEnv() -> object; processInfo() -> [version, platform, arch, pid, engine];
//   hrtime() -> [s, ns]; now() -> ms since timeOrigin; timeOrigin;
//   fsRead(path) -> ArrayBuffer; fsReadText(path) -> string; fsStat(path) -> [isDir, size, mode, mtimeMs];
//   fsReaddir(path) -> [[name, isDir]]; fsRealpath(path) -> string (fs functions throw Node-style errors);
//   compileModule(source, filename) -> function (exports, require, module, __filename, __dirname);
//   randomBytes(n) -> ArrayBuffer; randomUUID() -> string; hash(alg, key|null, data|null) -> ArrayBuffer;
//   utf8Encode(s) -> ArrayBuffer; utf8EncodeInto(s, uint8Array) -> [read, written]; utf8Length(s) -> bytes;
//   utf8Decode(buffer|null, offset, length, pending, stream, fatal) -> [text, pending] | null;
//   reportError(e) plus the async context and timer functions env.js uses.

var state = require('./state');

var makeModules = require('./modules');

function factories() {
  return {
    assert: function () { return require('./assert'); },
    async_hooks: function () { return require('./async-hooks'); },
    buffer: function () { return require('./buffer'); },
    crypto: function () { return require('./crypto'); },
    events: function () { return require('./events'); },
    fs: function () { return require('./fs'); },
    'fs/promises': function () { return require('./fs').promises; },
    path: function () { return require('path-browserify'); },
    'path/posix': function () { return require('path-browserify'); },
    perf_hooks: function () { return { performance: require('./performance'), PerformanceObserver: function () {} }; },
    process: function () { return require('./process'); },
    querystring: function () { return require('querystring-es3'); },
    stream: function () { return require('./stream'); },
    'stream/promises': function () { return require('./stream').promises; },
    'stream/web': function () { return require('./stream-web'); },
    string_decoder: function () { return require('string_decoder/'); },
    timers: function () { return require('./timers'); },
    'timers/promises': function () { return require('./timers').promises; },
    url: function () { return require('./url'); },
    util: function () { return require('./util'); },
    'util/types': function () { return require('./util').types; },
  };
}

function defineLazy(g, name, get) {
  Object.defineProperty(g, name, {
    configurable: true,
    enumerable: false,
    get: function () {
      var value = get();
      Object.defineProperty(g, name, { value: value, writable: true, configurable: true, enumerable: false });
      return value;
    },
    set: function (value) {
      Object.defineProperty(g, name, { value: value, writable: true, configurable: true, enumerable: false });
    },
  });
}

module.exports = function install(host, env) {
  state.host = host;
  state.env = env;
  var g = globalThis;

  var lazy = {
    process: function () { return require('./process'); },
    Buffer: function () { return require('./buffer').Buffer; },
    atob: function () { return require('./buffer').atob; },
    btoa: function () { return require('./buffer').btoa; },
    TextEncoder: function () { return require('./text').TextEncoder; },
    TextDecoder: function () { return require('./text').TextDecoder; },
    URL: function () { return require('./url').URL; },
    URLSearchParams: function () { return require('./url').URLSearchParams; },
    AbortController: function () { return require('./events-target').AbortController; },
    AbortSignal: function () { return require('./events-target').AbortSignal; },
    Event: function () { return require('./events-target').Event; },
    EventTarget: function () { return require('./events-target').EventTarget; },
    CustomEvent: function () { return require('./events-target').CustomEvent; },
    DOMException: function () { return require('./events-target').DOMException; },
    MessageChannel: function () { return require('./message-channel').MessageChannel; },
    MessagePort: function () { return require('./message-channel').MessagePort; },
    structuredClone: function () { return require('./structured-clone'); },
    performance: function () { return require('./performance'); },
    crypto: function () { return require('./crypto').webcrypto; },
  };
  ['ReadableStream', 'ReadableStreamDefaultReader', 'ReadableStreamBYOBReader', 'ReadableStreamBYOBRequest',
    'ReadableByteStreamController', 'ReadableStreamDefaultController', 'TransformStream',
    'TransformStreamDefaultController', 'WritableStream', 'WritableStreamDefaultWriter',
    'WritableStreamDefaultController', 'ByteLengthQueuingStrategy', 'CountQueuingStrategy', 'TextEncoderStream',
    'TextDecoderStream'].forEach(function (name) {
    lazy[name] = function () { return require('./stream-web')[name]; };
  });
  Object.keys(lazy).forEach(function (name) {
    if (!(name in g)) defineLazy(g, name, lazy[name]);
  });

  var pathMod = null;
  function path() { return pathMod || (pathMod = require('path-browserify')); }
  var modules = makeModules({
    builtins: factories(),
    isFile: function (p) {
      try {
        return !host.fsStat(p)[0];
      } catch (e) {
        return false;
      }
    },
    readText: function (p) { return host.fsReadText(p); },
    compile: function (source, filename) { return host.compileModule(source, filename); },
    parseJSON: function (text) { return JSON.parse(text); },
    newExports: function () { return {}; },
    path: {
      resolve: function (a, b) { return path().resolve(a, b); },
      join: function (a, b) { return path().join(a, b); },
      dirname: function (p) { return path().dirname(p); },
    },
    invalidArgType: function (id) { return require('./errors').invalidArgType('id', 'of type string', id); },
    invalidArgValue: function (id) { return require('./errors').invalidArgValue('id', id, 'must be a non-empty string'); },
  });

  return {
    builtins: makeModules.BUILTINS,
    // crossingClasses are what a stream that crosses runtimes is made of
    // on the receiving side (env.js incoming).
    crossingClasses: function () {
      return {
        Readable: require('./stream').Readable,
        ReadableStream: require('./stream-web').ReadableStream,
        Buffer: require('./buffer').Buffer,
      };
    },
    // runModule evaluates the compiled bundle wrapper as the main module.
    runModule: function (fn, filename, dirname) {
      state.filename = filename;
      state.dirname = dirname;
      var mod = modules.mainModule(filename, dirname);
      var pd = Object.getOwnPropertyDescriptor(g, 'process');
      if (pd && pd.value) pd.value.mainModule = mod;
      return modules.runMain(mod, fn);
    },
  };
};
