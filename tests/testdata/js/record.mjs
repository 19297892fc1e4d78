// Records tests/testdata/golden/*.html: what Node produces for each
// (bundle, rendering request) pair in an emulation of the renderer's
// plain-script environment (PROTOCOL.md §7, RENDERER_SUPPORT_MODULES off,
// RENDERER_STUB_TIMERS on), using plain node:vm.
//
// Environment of the context (nothing else: a vm context has only the
// ECMAScript built-ins, no Node or Web globals):
//   global          = the context's global object
//   console         log/info/warn/error/debug push {level, arguments} into the
//                   current render's history, '[SERVER] ' prefixed to a string
//                   first argument; console.history is that array (writable:
//                   react-on-rails assigns console.history = [] after a render)
//   getStackTrace() = new Error().stack
//   setTimeout, setInterval, setImmediate, clearTimeout, clearInterval,
//   clearImmediate, queueMicrotask: no-ops
// Per render: renderingRequest (the code) and sharedExecutionContext (a Map)
// are set while the request runs, then deleted.
import { createHash } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';

const here = path.dirname(fileURLToPath(import.meta.url));
const testdata = path.resolve(here, '..');
const goldenDir = path.join(testdata, 'golden');

// Recorded in this order, all in one loaded bundle (module state persists).
const GOLDENS = [
  { bundle: 'react-app.js', request: 'hello-world.js' },
  { bundle: 'react-app.js', request: 'small-page.js' },
  { bundle: 'react-app.js', request: 'list-page.js' },
  { bundle: 'react-app.js', request: 'throws-error.js' },
  { bundle: 'react-app.js', request: 'async-greeting.js' },
  { bundle: 'react-app.js', request: 'hello.js' },
];

// Evaluated inside the context so every object (console, arrays, Map) belongs
// to the context's realm. Its completion value is a private control object
// for this script; nothing of it is left on the global.
const SETUP = `(function () {
  var g = globalThis;
  g.global = g;
  var history = [];
  function recorder(level) {
    return function () {
      var args = Array.prototype.slice.call(arguments);
      if (typeof args[0] === 'string') args[0] = '[SERVER] ' + args[0];
      history.push({ level: level, arguments: args });
    };
  }
  g.console = {
    log: recorder('log'),
    info: recorder('info'),
    warn: recorder('warn'),
    error: recorder('error'),
    debug: recorder('debug'),
    history: history,
  };
  g.getStackTrace = function () { return new Error().stack; };
  function noop() {}
  ['setTimeout', 'setInterval', 'setImmediate', 'clearTimeout', 'clearInterval',
   'clearImmediate', 'queueMicrotask'].forEach(function (name) { g[name] = noop; });
  return {
    beginRender: function (code) {
      history = [];
      g.console.history = history;
      g.renderingRequest = code;
      g.sharedExecutionContext = new Map();
    },
    endRender: function () {
      delete g.renderingRequest;
      delete g.sharedExecutionContext;
      history = [];
      g.console.history = history;
    },
  };
})()`;

const isThenable = (v) => v !== null && (typeof v === 'object' || typeof v === 'function') && typeof v.then === 'function';

function loadBundle(code, filename) {
  const context = vm.createContext({}, { name: filename });
  const control = vm.runInContext(SETUP, context, { filename: 'renderer-environment.js' });
  vm.runInContext(code, context, { filename });
  return { context, control };
}

async function render(env, code) {
  env.control.beginRender(code);
  try {
    let value = vm.runInContext(code, env.context);
    if (isThenable(value)) value = await value;
    if (typeof value === 'string') return value;
    return JSON.stringify(value);
  } finally {
    env.control.endRender();
  }
}

const sha256 = (buf) => createHash('sha256').update(buf).digest('hex');

async function packageVersion(name) {
  const pkg = JSON.parse(await readFile(path.join(here, 'node_modules', name, 'package.json'), 'utf8'));
  return pkg.version;
}

async function main() {
  await rm(goldenDir, { recursive: true, force: true });
  await mkdir(goldenDir, { recursive: true });

  const envs = new Map();
  const entries = [];
  for (const { bundle, request } of GOLDENS) {
    const bundleBytes = await readFile(path.join(testdata, 'bundles', bundle));
    if (!envs.has(bundle)) envs.set(bundle, loadBundle(bundleBytes.toString('utf8'), bundle));
    const requestBytes = await readFile(path.join(testdata, 'requests', request));
    const out = await render(envs.get(bundle), requestBytes.toString('utf8'));
    if (typeof out !== 'string' || out.length === 0) throw new Error(`${request}: empty result`);
    const golden = request.replace(/\.js$/, '.html');
    const outBytes = Buffer.from(out, 'utf8');
    await writeFile(path.join(goldenDir, golden), outBytes);
    entries.push({
      golden,
      bundle: `bundles/${bundle}`,
      request: `requests/${request}`,
      bytes: outBytes.length,
      sha256: { bundle: sha256(bundleBytes), request: sha256(requestBytes), golden: sha256(outBytes) },
    });
    console.log(`golden/${golden}: ${outBytes.length} bytes`);
  }

  const manifest = {
    description:
      'Node-recorded golden outputs: each golden is the completion value of evaluating the request in a node:vm ' +
      'context emulating the renderer plain-script environment (see tests/testdata/README.md), with the bundle ' +
      'loaded once. Strings verbatim, other values JSON.stringify, promises awaited.',
    recordedWith: {
      node: process.version,
      packages: {
        react: await packageVersion('react'),
        'react-dom': await packageVersion('react-dom'),
        'react-on-rails': await packageVersion('react-on-rails'),
        esbuild: await packageVersion('esbuild'),
      },
    },
    environment: {
      mode: 'plain-script (RENDERER_SUPPORT_MODULES=false, RENDERER_STUB_TIMERS=true)',
      globals: ['global', 'console (log, info, warn, error, debug, history)', 'getStackTrace',
        'setTimeout', 'setInterval', 'setImmediate', 'clearTimeout', 'clearInterval', 'clearImmediate',
        'queueMicrotask', 'renderingRequest (per render)', 'sharedExecutionContext (per render)'],
      bundleFilename: 'the bundle file name (e.g. react-app.js); requests are evaluated without a file name',
    },
    goldens: entries,
  };
  await writeFile(path.join(goldenDir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
}

await main();
