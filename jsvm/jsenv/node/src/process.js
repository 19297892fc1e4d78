'use strict';
// process: the real environment (minus secrets, NODE_ENV defaulting to
// production), version and platform facts, nextTick, hrtime, cwd (the
// bundle's directory) and warnings (emitted as 'warning' events, not logged).

var state = require('./state');
var EventEmitter = require('events');
var errors = require('./errors');

var host = state.host;
var ctx = state.env.asyncContext;
var process = Object.create(EventEmitter.prototype);
EventEmitter.call(process);

var env = null;
Object.defineProperty(process, 'env', {
  enumerable: true,
  configurable: true,
  get: function () { return env || (env = host.processEnv()); },
  set: function (v) { env = v; },
});

var info = host.processInfo(); // [version, platform, arch, pid, engine]
process.title = 'node';
process.version = 'v' + info[0];
process.versions = { node: info[0], gorender: '1', engine: info[4] };
process.platform = info[1];
process.arch = info[2];
process.pid = info[3];
process.ppid = 0;
process.release = { name: 'node' };
process.argv = ['node', state.filename];
process.argv0 = 'node';
process.execArgv = [];
process.execPath = 'node';
process.exitCode = undefined;
process.features = {};
process.config = { variables: {} };
process.allowedNodeEnvironmentFlags = new Set();
process.noDeprecation = false;
process.throwDeprecation = false;
process.traceDeprecation = false;

process.cwd = function cwd() { return state.dirname || '/'; };
process.chdir = function chdir() {
  throw errors.withCode(new Error('process.chdir() is not supported by gorender'), 'ERR_WORKER_UNSUPPORTED_OPERATION');
};
process.umask = function umask() { return 18; };
function refuse(name) {
  return function () {
    throw errors.withCode(new Error('process.' + name + '() is not available to bundles in gorender'), 'ERR_WORKER_UNSUPPORTED_OPERATION');
  };
}
process.exit = refuse('exit');
process.reallyExit = refuse('reallyExit');
process.abort = refuse('abort');
process.kill = refuse('kill');
process.dlopen = refuse('dlopen');
process.binding = refuse('binding');
process._linkedBinding = refuse('_linkedBinding');

process.hrtime = function hrtime(prev) {
  var t = host.hrtime(); // [seconds, nanoseconds]
  if (prev !== undefined) {
    if (!Array.isArray(prev)) throw errors.invalidArgType('time', 'an instance of Array', prev);
    var s = t[0] - prev[0], ns = t[1] - prev[1];
    if (ns < 0) { s--; ns += 1e9; }
    return [s, ns];
  }
  return t;
};
process.hrtime.bigint = function bigint() {
  var t = host.hrtime();
  return BigInt(t[0]) * BigInt(1e9) + BigInt(t[1]);
};
process.uptime = function uptime() { return host.now() / 1000; };
process.memoryUsage = function memoryUsage() {
  return { rss: 0, heapTotal: 0, heapUsed: 0, external: 0, arrayBuffers: 0 };
};
process.memoryUsage.rss = function rss() { return 0; };
process.cpuUsage = function cpuUsage() { return { user: 0, system: 0 }; };
process.resourceUsage = function resourceUsage() { return {}; };
process.getuid = function () { return 0; };
process.getgid = function () { return 0; };
process.geteuid = function () { return 0; };
process.getegid = function () { return 0; };

function sink(fd) {
  return {
    fd: fd, isTTY: false, writable: true,
    write: function () { var cb = arguments[arguments.length - 1]; if (typeof cb === 'function') process.nextTick(cb); return true; },
    end: function () {}, on: function () { return this; }, once: function () { return this; },
    off: function () { return this; }, removeListener: function () { return this; }, emit: function () { return false; },
    cork: function () {}, uncork: function () {}, getColorDepth: function () { return 1; }, hasColors: function () { return false; },
  };
}
process.stdout = sink(1);
process.stderr = sink(2);
process.stdin = { fd: 0, isTTY: false, on: function () { return this; }, once: function () { return this; } };

// nextTick callbacks run before promise jobs queued after them, in order, in
// the async context they were queued in.
var ticks = [];
var draining = false;
var resolved = Promise.resolve();
function drainTicks() {
  draining = false;
  while (ticks.length) {
    var batch = ticks;
    ticks = [];
    for (var i = 0; i < batch.length; i++) {
      var t = batch[i];
      var prev = ctx.get();
      ctx.set(t.ctx);
      try {
        t.fn.apply(undefined, t.args);
      } catch (e) {
        host.reportError(e);
      } finally {
        ctx.set(prev);
      }
    }
  }
}
process.nextTick = function nextTick(fn) {
  if (typeof fn !== 'function') throw errors.invalidArgType('callback', 'of type function', fn);
  var args = Array.prototype.slice.call(arguments, 1);
  ticks.push({ fn: fn, args: args, ctx: ctx.get() });
  if (!draining) {
    draining = true;
    resolved.then(drainTicks);
  }
};

var warned = Object.create(null);
process.emitWarning = function emitWarning(warning, type, code) {
  var opts = type && typeof type === 'object' ? type : { type: type, code: code };
  var w = warning;
  if (typeof w === 'string') {
    w = new Error(w);
    w.name = opts.type || 'Warning';
    if (opts.code !== undefined) w.code = opts.code;
    if (opts.detail !== undefined) w.detail = opts.detail;
  }
  if (w.name === 'DeprecationWarning') {
    if (process.noDeprecation) return;
    if (process.throwDeprecation) throw w;
  }
  process.nextTick(function () { process.emit('warning', w); });
};
process._deprecated = warned;

module.exports = process;
