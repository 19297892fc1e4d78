'use strict';
// The CommonJS loader of RENDERER_SUPPORT_MODULES (PROTOCOL.md §7), one for
// every engine: require() of the built-ins (also as node:<name>) and of
// .js/.json files inside the bundle's directory, module objects, the
// module cache and the errors Node gives. The engine supplies what differs
// (d):
//   builtins: name -> factory of the built-in (created on first require);
//   isFile(path), readText(path): the bundle's confined fs;
//   compile(source, filename) -> function (exports, require, module, __filename, __dirname);
//   parseJSON(text), newExports(): values of the bundle's realm;
//   path: { resolve, join, dirname };
//   invalidArgType(value), invalidArgValue(value): require's TypeErrors.
// goja and quickjs get it bundled into node-env.js (src/index.js); the node
// engine's executor gets this file appended to its own (jsvm/nodeengine), so
// it is written as one function declaration that needs nothing else.
function makeModules(d) {
  var BUILTINS = makeModules.BUILTINS;
  var builtinCache = Object.create(null);
  var moduleCache = Object.create(null);
  var mainModule = null;

  function notFound(request, parentFile) {
    var err = new Error("Cannot find module '" + request + "'\nRequire stack:\n- " + parentFile +
      "\ngorender's Node environment (RENDERER_SUPPORT_MODULES) serves these built-ins (also as node:<name>): " +
      BUILTINS.join(', ') + '; and .js/.json files inside the bundle\'s directory.');
    err.code = 'MODULE_NOT_FOUND';
    err.requireStack = [parentFile];
    return err;
  }

  function isBuiltin(name) {
    return Object.prototype.hasOwnProperty.call(d.builtins, name);
  }

  function resolveFile(request, dir, parentFile) {
    var base = d.path.resolve(dir, request);
    var candidates = [base, base + '.js', base + '.json', base + '.cjs', d.path.join(base, 'index.js'), d.path.join(base, 'index.json')];
    for (var i = 0; i < candidates.length; i++) {
      if (d.isFile(candidates[i])) return candidates[i];
    }
    throw notFound(request, parentFile);
  }

  function makeRequire(mod) {
    function req(id) {
      if (typeof id !== 'string') throw d.invalidArgType(id);
      if (id === '') throw d.invalidArgValue(id);
      var name = id.slice(0, 5) === 'node:' ? id.slice(5) : id;
      if (isBuiltin(name)) return builtinCache[name] || (builtinCache[name] = d.builtins[name]());
      if (name.charAt(0) === '.' || name.charAt(0) === '/') return loadFile(resolveFile(name, mod.path, mod.filename), mod).exports;
      throw notFound(id, mod.filename);
    }
    req.resolve = function resolve(id) {
      var name = id.slice(0, 5) === 'node:' ? id.slice(5) : id;
      if (isBuiltin(name)) return id;
      if (name.charAt(0) === '.' || name.charAt(0) === '/') return resolveFile(name, mod.path, mod.filename);
      throw notFound(id, mod.filename);
    };
    req.resolve.paths = function () { return null; };
    req.cache = moduleCache;
    req.main = mainModule;
    req.extensions = Object.create(null);
    return req;
  }

  function Module(filename, parent) {
    this.id = parent ? filename : '.';
    this.path = d.path.dirname(filename);
    this.exports = d.newExports();
    this.filename = filename;
    this.loaded = false;
    this.children = [];
    this.paths = [];
    this.parent = parent || null;
    this.require = makeRequire(this);
  }

  function loadFile(file, parent) {
    if (moduleCache[file]) return moduleCache[file];
    var mod = new Module(file, parent);
    moduleCache[file] = mod;
    parent.children.push(mod);
    try {
      var text = d.readText(file);
      if (/\.json$/.test(file)) {
        mod.exports = d.parseJSON(text);
      } else {
        d.compile(text, file).call(mod.exports, mod.exports, mod.require, mod, file, mod.path);
      }
    } catch (e) {
      delete moduleCache[file];
      throw e;
    }
    mod.loaded = true;
    return mod;
  }

  return {
    // mainModule makes the bundle's module (its directory dirname), before
    // its wrapper runs: process.mainModule is it.
    mainModule: function (filename, dirname) {
      var mod = new Module(filename, null);
      mod.path = dirname;
      mainModule = mod;
      mod.require.main = mod;
      moduleCache[filename] = mod;
      return mod;
    },
    // runMain runs the bundle's compiled wrapper fn as mod.
    runMain: function (mod, fn) {
      fn.call(mod.exports, mod.exports, mod.require, mod, mod.filename, mod.path);
      mod.loaded = true;
      return mod.exports;
    },
  };
}

makeModules.BUILTINS = ['assert', 'async_hooks', 'buffer', 'crypto', 'events', 'fs', 'fs/promises', 'path',
  'path/posix', 'perf_hooks', 'process', 'querystring', 'stream', 'stream/promises', 'stream/web', 'string_decoder',
  'timers', 'timers/promises', 'url', 'util', 'util/types'];

// As a CommonJS module (esbuild's bundle of src/index.js; in the executor
// this only sets its own unused exports).
if (typeof module === 'object' && module !== null) module.exports = makeModules;
