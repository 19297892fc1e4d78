// An emulation, in node:vm, of the renderer's support-modules environment
// (PROTOCOL.md §7, RENDERER_SUPPORT_MODULES on, RENDERER_STUB_TIMERS off),
// used by record.mjs to record the goldens of the support-modules bundles.
//
// The context starts with the plain-script globals (record.mjs's SETUP:
// global, console with history, getStackTrace, and the per-render
// renderingRequest and sharedExecutionContext), then gets these Node globals,
// taken from Node itself (SUPPORT_GLOBALS):
//   Buffer, TextEncoder, TextDecoder, URL, URLSearchParams, ReadableStream,
//   WritableStream, TransformStream, AbortController, AbortSignal,
//   performance, queueMicrotask, structuredClone, and real timers
//   (setTimeout, setInterval, setImmediate and their clear* functions);
//   process: a small copy (env = { NODE_ENV: 'production' } only, version,
//   versions, platform, arch, nextTick, cwd() = the bundle's directory,
//   emitWarning (records, prints nothing), hrtime, hrtime.bigint).
// Per render, runOnOtherBundle(bundleId, code) evaluates code in another
// loaded bundle of the same emulation with the same sharedExecutionContext.
//
// The bundle is evaluated as a CommonJS module: compiled as the body of
// function (exports, require, module, __filename, __dirname), with
// __filename = the bundle's path and __dirname = its directory. require serves
// only the built-ins of SUPPORT_MODULES, from Node itself (`node:` prefix
// accepted); `fs` is a read-only facade confined to the bundle's directory.
// Anything else throws `Cannot find module 'x'` (code MODULE_NOT_FOUND).
//
// With { instrument: true } the environment also logs what the bundle touches
// (see Usage below): which provided globals, which globals it looks up that do
// not exist, which modules it requires and which of their members it reads.
// record.mjs runs the whole recording a second time instrumented and checks
// that the outputs are the same bytes.
import nodeFs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import vm from 'node:vm';

const nodeRequire = createRequire(import.meta.url);

export const SUPPORT_MODULES = [
  'fs', 'path', 'stream', 'events', 'util', 'buffer', 'string_decoder', 'url', 'querystring',
  'crypto', 'async_hooks', 'timers', 'stream/web', 'util/types',
];

const HOST_GLOBALS = {
  Buffer,
  TextEncoder,
  TextDecoder,
  URL,
  URLSearchParams,
  ReadableStream,
  WritableStream,
  TransformStream,
  AbortController,
  AbortSignal,
  performance,
  queueMicrotask,
  structuredClone,
  setTimeout,
  setInterval,
  setImmediate,
  clearTimeout,
  clearInterval,
  clearImmediate,
};

export const SUPPORT_GLOBALS = [...Object.keys(HOST_GLOBALS), 'process'];

// What a bundle touches, per phase ('load', or the request being rendered,
// including everything its async work does until the render has finished).
export class Usage {
  constructor() {
    this.phases = new Map();
    this.phase = 'load';
  }

  add(kind, name) {
    if (!this.phases.has(this.phase)) this.phases.set(this.phase, {});
    const phase = this.phases.get(this.phase);
    (phase[kind] ||= new Set()).add(name);
  }

  toJSON() {
    const out = {};
    for (const [phase, kinds] of this.phases) {
      out[phase] = {};
      for (const kind of ['globals', 'missingGlobals', 'require', 'members']) {
        if (kinds[kind]) out[phase][kind] = [...kinds[kind]].sort();
      }
    }
    return out;
  }
}

function errnoError(code, syscall, p, message) {
  const err = new Error(`${code}: ${message}, ${syscall} '${p}'`);
  err.code = code;
  err.syscall = syscall;
  err.path = p;
  return err;
}

// fs, read-only, confined to dir (the bundle's directory).
function confinedFs(dir) {
  const inside = (p, syscall) => {
    const abs = path.resolve(dir, String(p));
    if (abs !== dir && !abs.startsWith(dir + path.sep)) {
      throw errnoError('EACCES', syscall, String(p), 'permission denied');
    }
    return abs;
  };
  const readOnly = (syscall) => (p) => {
    throw errnoError('EROFS', syscall, String(p), 'read-only file system');
  };
  const fs = {
    readFileSync: (p, options) => nodeFs.readFileSync(inside(p, 'open'), options),
    existsSync: (p) => {
      try {
        return nodeFs.existsSync(inside(p, 'access'));
      } catch {
        return false;
      }
    },
    statSync: (p, options) => nodeFs.statSync(inside(p, 'stat'), options),
    readdirSync: (p, options) => nodeFs.readdirSync(inside(p, 'scandir'), options),
    readFile: (p, options, callback) => {
      const cb = typeof options === 'function' ? options : callback;
      const opts = typeof options === 'function' ? undefined : options;
      let abs;
      try {
        abs = inside(p, 'open');
      } catch (err) {
        process.nextTick(cb, err);
        return;
      }
      nodeFs.readFile(abs, opts, cb);
    },
    writeFileSync: readOnly('open'),
    appendFileSync: readOnly('open'),
    mkdirSync: readOnly('mkdir'),
    unlinkSync: readOnly('unlink'),
    rmSync: readOnly('rm'),
    promises: {
      readFile: async (p, options) => nodeFs.promises.readFile(inside(p, 'open'), options),
      stat: async (p, options) => nodeFs.promises.stat(inside(p, 'stat'), options),
      readdir: async (p, options) => nodeFs.promises.readdir(inside(p, 'scandir'), options),
    },
  };
  return fs;
}

function makeProcess(dir) {
  const warnings = [];
  const hrtime = (prev) => process.hrtime(prev);
  hrtime.bigint = () => process.hrtime.bigint();
  return {
    env: { NODE_ENV: 'production' },
    version: process.version,
    versions: { ...process.versions },
    platform: process.platform,
    arch: process.arch,
    nextTick: (fn, ...args) => process.nextTick(fn, ...args),
    cwd: () => dir,
    emitWarning: (warning, ...rest) => {
      warnings.push([String(warning), ...rest.map(String)]);
    },
    hrtime,
    warnings,
  };
}

// A Proxy that logs reads of target's properties as `${label}.${name}`.
// Objects whose methods check their receiver (performance) get their methods
// bound to the real object.
function logged(target, label, usage, { bindMethods = false, nested = {} } = {}) {
  const bound = new Map();
  return new Proxy(target, {
    get(t, key, receiver) {
      if (typeof key === 'symbol' || key === 'prototype') return Reflect.get(t, key, receiver === undefined ? t : receiver);
      const value = Reflect.get(t, key, t);
      usage.add('members', `${label}.${key}${value === undefined && !(key in t) ? ' (undefined)' : ''}`);
      if (nested[key] && value && typeof value === 'object') return nested[key](value);
      if (bindMethods && typeof value === 'function') {
        if (!bound.has(key)) bound.set(key, value.bind(t));
        return bound.get(key);
      }
      return value;
    },
  });
}

export class SupportModulesEnv {
  // setup: record.mjs's SETUP source (the plain-script globals).
  constructor({ name, code, filename, setup, usage = null, registry = null }) {
    this.name = name;
    this.usage = usage;
    this.registry = registry;
    this.dir = path.dirname(filename);
    this.context = vm.createContext({}, { name });
    this.control = vm.runInContext(setup, this.context, { filename: 'renderer-environment.js' });
    this.global = vm.runInContext('globalThis', this.context);
    this.process = makeProcess(this.dir);
    this.installGlobals();
    this.require = this.makeRequire();

    const module = vm.runInContext('({ exports: {} })', this.context);
    module.id = '.';
    module.filename = filename;
    const fn = vm.compileFunction(code, ['exports', 'require', 'module', '__filename', '__dirname'], {
      parsingContext: this.context,
      filename: name,
    });
    if (usage) usage.phase = 'load';
    fn.call(module.exports, module.exports, this.require, module, filename, this.dir);
    this.module = module;
  }

  installGlobals() {
    const g = this.global;
    const values = { ...HOST_GLOBALS, process: this.process };
    const usage = this.usage;
    for (const [name, value] of Object.entries(values)) {
      if (!usage) {
        Object.defineProperty(g, name, { value, writable: true, configurable: true, enumerable: false });
        continue;
      }
      let exposed;
      if (name === 'process') {
        exposed = logged(value, 'process', usage, {
          nested: { env: (env) => logged(env, 'process.env', usage) },
        });
      } else if (typeof value === 'function' || (value && typeof value === 'object')) {
        exposed = logged(value, name, usage, { bindMethods: name === 'performance' });
      } else {
        exposed = value;
      }
      let current = exposed;
      Object.defineProperty(g, name, {
        get() {
          usage.add('globals', name);
          return current;
        },
        set(v) {
          current = v;
        },
        configurable: true,
        enumerable: false,
      });
    }
    if (usage) {
      // Free identifiers and globalThis.x reads that find nothing on the
      // global object fall through to its prototype: log them there.
      const proto = Object.getPrototypeOf(g);
      const probe = new Proxy(Object.create(proto), {
        get(t, key, receiver) {
          if (typeof key === 'string' && !(key in t)) usage.add('missingGlobals', key);
          return Reflect.get(t, key, receiver);
        },
      });
      Object.setPrototypeOf(g, probe);
    }
  }

  makeRequire() {
    const cache = new Map();
    const usage = this.usage;
    const dir = this.dir;
    return (id) => {
      const spec = String(id);
      const name = spec.startsWith('node:') ? spec.slice(5) : spec;
      if (usage) usage.add('require', spec);
      if (!SUPPORT_MODULES.includes(name)) {
        const err = new Error(`Cannot find module '${spec}'`);
        err.code = 'MODULE_NOT_FOUND';
        throw err;
      }
      if (!cache.has(name)) {
        const mod = name === 'fs' ? confinedFs(dir) : nodeRequire(`node:${name}`);
        cache.set(name, usage ? logged(mod, name, usage) : mod);
      }
      return cache.get(name);
    };
  }

  newMap() {
    return vm.runInContext('new Map()', this.context);
  }

  newSet(values) {
    const set = vm.runInContext('new Set()', this.context);
    for (const v of values) set.add(v);
    return set;
  }

  // Evaluates code (a rendering request or an update chunk) with the
  // per-render globals set, and returns its completion value. The globals are
  // cleared when the synchronous evaluation ends; the caller settles promises
  // and drains streams.
  evaluate(code, sharedExecutionContext, phase) {
    if (this.usage) this.usage.phase = phase;
    this.control.beginRender(code);
    const g = this.global;
    g.sharedExecutionContext = sharedExecutionContext;
    g.runOnOtherBundle = (bundleId, otherCode) => {
      const other = this.registry && this.registry.get(String(bundleId));
      if (!other) throw new Error(`runOnOtherBundle: bundle ${bundleId} is not loaded`);
      other.global.sharedExecutionContext = sharedExecutionContext;
      try {
        return vm.runInContext(String(otherCode), other.context);
      } finally {
        delete other.global.sharedExecutionContext;
      }
    };
    try {
      return vm.runInContext(code, this.context);
    } finally {
      delete g.runOnOtherBundle;
    }
  }

  endRender() {
    this.control.endRender();
  }
}
