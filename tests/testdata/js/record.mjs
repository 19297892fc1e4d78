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
//
// The support-modules bundles (node-app-*.js, stream-app.js, async-app.js,
// async-props.js, payload-stream.js) are recorded in the emulation of support-modules.mjs
// (RENDERER_SUPPORT_MODULES on, real timers): see recordSupportModules below.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';
import { SUPPORT_GLOBALS, SUPPORT_MODULES, SupportModulesEnv, Usage } from './support-modules.mjs';

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

  const sm = await recordSupportModules({ instrument: false });
  for (const [name, bytes] of sm.files) await writeFile(path.join(goldenDir, name), bytes);
  // The same recording again, instrumented: must give the same bytes.
  const probe = await recordSupportModules({ instrument: true });
  for (const [name, bytes] of sm.files) {
    if (name.endsWith('.chunks.json')) continue; // arrival times are informational
    assert.ok(probe.files.has(name) && probe.files.get(name).equals(bytes), `instrumented run changed golden/${name}`);
  }
  for (const [name, chunks] of sm.chunkLengths) {
    assert.deepEqual(probe.chunkLengths.get(name), chunks, `instrumented run changed the chunks of ${name}`);
  }
  const usageBytes = Buffer.from(`${JSON.stringify(probe.usage, null, 2)}\n`, 'utf8');
  await writeFile(path.join(goldenDir, USAGE_FILE), usageBytes);
  for (const entry of sm.entries) {
    entries.push(entry);
    console.log(`golden/${entry.golden}: ${entry.bytes} bytes (support-modules)`);
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
        ...Object.fromEntries(
          await Promise.all(SUPPORT_PACKAGES.map(async (name) => [name, await packageVersion(name)])),
        ),
      },
    },
    environment: {
      mode: 'plain-script (RENDERER_SUPPORT_MODULES=false, RENDERER_STUB_TIMERS=true)',
      globals: ['global', 'console (log, info, warn, error, debug, history)', 'getStackTrace',
        'setTimeout', 'setInterval', 'setImmediate', 'clearTimeout', 'clearInterval', 'clearImmediate',
        'queueMicrotask', 'renderingRequest (per render)', 'sharedExecutionContext (per render)'],
      bundleFilename: 'the bundle file name (e.g. react-app.js); requests are evaluated without a file name',
    },
    supportModulesEnvironment: {
      mode: 'support-modules (RENDERER_SUPPORT_MODULES=true, RENDERER_STUB_TIMERS=false), emulated by js/support-modules.mjs',
      globals: ['the plain-script globals above (timers real, not no-ops)', ...SUPPORT_GLOBALS,
        'runOnOtherBundle (per render)'],
      process: 'env = {NODE_ENV: "production"} only; version, versions, platform, arch, nextTick, cwd() = bundle directory, emitWarning (silent), hrtime',
      modules: SUPPORT_MODULES,
      fs: 'read-only, confined to the bundle directory (bundles/, which holds loadable-stats.json)',
      bundleEvaluation: 'CommonJS: function (exports, require, module, __filename, __dirname), __filename = the bundle path',
      streams: 'golden = the concatenated bytes; <name>.chunks.json = chunk lengths and byte offsets in arrival order, atMs = arrival time rounded down to the fixture schedule',
      usage: `${USAGE_FILE}: Node globals, missing globals, modules and members each bundle touched at load and per request`,
      usageSha256: sha256(usageBytes),
    },
    goldens: entries,
  };
  await writeFile(path.join(goldenDir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
}

// ---------------------------------------------------------------------------
// Support-modules goldens.

const USAGE_FILE = 'support-modules-usage.json';
const SUPPORT_PACKAGES = ['react-redux', '@reduxjs/toolkit', 'react-router', 'react-helmet-async', 'webpack', 'esbuild-loader'];

const PROP_REQUEST = (name) => `{"messageType":"propRequest","propName":${JSON.stringify(name)}}\t00000000\n`;
const RENDER_COMPLETE = '{"messageType":"renderComplete"}\t00000000\n';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const isNodeStream = (v) => v !== null && typeof v === 'object' && typeof v.pipe === 'function' && typeof v.read === 'function';
const isWebStream = (v) => v !== null && typeof v === 'object' && typeof v.getReader === 'function';

// Collects a stream's chunks into sink with their arrival time (ms since t0).
function collect(stream, t0, sink = [], tag = () => ({})) {
  const push = (chunk) => sink.push({ bytes: Buffer.from(chunk), ms: performance.now() - t0, ...tag() });
  let done;
  if (isNodeStream(stream)) {
    done = new Promise((resolve, reject) => {
      stream.on('data', push);
      stream.on('end', resolve);
      stream.on('error', reject);
    });
  } else if (isWebStream(stream)) {
    done = (async () => {
      const reader = stream.getReader();
      for (;;) {
        const { value, done: finished } = await reader.read();
        if (finished) return;
        push(typeof value === 'string' ? Buffer.from(value, 'utf8') : value);
      }
    })();
  } else {
    throw new Error(`not a stream: ${Object.prototype.toString.call(stream)}`);
  }
  return { chunks: sink, done };
}

async function withTimeout(promise, ms, what) {
  let timer;
  try {
    return await Promise.race([
      promise,
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: no end after ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

// Rounds an arrival time down to the fixture's timer schedule (with 5 ms of
// slack for timers that fire a little early): stable across runs.
const quantize = (ms, schedule) => schedule.filter((s) => s <= ms + 5).pop() ?? 0;

function chunksJson(golden, schedule, chunks, extra = {}) {
  let offset = 0;
  const list = chunks.map((c, index) => {
    const item = { index, offset, bytes: c.bytes.length, ...(c.injected ? { injectedBy: 'renderer' } : {}) };
    if (c.step !== undefined) item.step = c.step;
    else item.atMs = quantize(c.ms, schedule);
    offset += c.bytes.length;
    return item;
  });
  return Buffer.from(
    `${JSON.stringify({ golden, ...extra, ...(schedule ? { scheduleMs: schedule } : {}), totalBytes: offset, chunks: list }, null, 2)}\n`,
    'utf8',
  );
}

const completionBytes = (value) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value), 'utf8');

async function recordSupportModules({ instrument }) {
  const files = new Map(); // golden file name -> bytes
  const chunkLengths = new Map(); // stream golden -> chunk lengths (instrumentation check)
  const entries = [];
  const usageByBundle = {};
  const registry = new Map();
  const fileBytes = new Map();
  const read = async (rel) => {
    if (!fileBytes.has(rel)) fileBytes.set(rel, await readFile(path.join(testdata, rel)));
    return fileBytes.get(rel);
  };
  const load = async (bundle) => {
    const usage = instrument ? new Usage() : null;
    const env = new SupportModulesEnv({
      name: bundle,
      code: (await read(`bundles/${bundle}`)).toString('utf8'),
      filename: path.join(testdata, 'bundles', bundle),
      setup: SETUP,
      usage,
      registry,
    });
    registry.set(bundle, env);
    if (usage) usageByBundle[bundle] = usage;
    return env;
  };
  const entry = async (golden, bundle, requests, bytes, extra = {}) => {
    const requestShas = {};
    for (const r of requests) requestShas[r] = sha256(await read(`requests/${r}`));
    entries.push({
      golden,
      environment: 'support-modules',
      bundle: `bundles/${bundle}`,
      ...(requests.length === 1 ? { request: `requests/${requests[0]}` } : { requests: requests.map((r) => `requests/${r}`) }),
      bytes: bytes.length,
      ...extra,
      sha256: {
        bundle: sha256(await read(`bundles/${bundle}`)),
        ...(requests.length === 1 ? { request: requestShas[requests[0]] } : { requests: requestShas }),
        golden: sha256(bytes),
      },
    });
  };

  // Buffered renders: a string or a promise of one.
  const renderValue = async (env, request) => {
    const code = (await read(`requests/${request}`)).toString('utf8');
    try {
      let value = env.evaluate(code, env.newMap(), request);
      if (isThenable(value)) value = await value;
      if (value === undefined || value === null || value === '') throw new Error(`${request}: empty result`);
      return completionBytes(value);
    } finally {
      env.endRender();
    }
  };

  // 1. NodeApp, built twice: both bundles must give the same bytes.
  const nodeAppEsbuild = await load('node-app-esbuild.js');
  const nodeAppWebpack = await load('node-app-webpack.js');
  await read('bundles/loadable-stats.json');
  for (const request of ['node-app-home.js', 'node-app-about.js']) {
    const golden = request.replace(/\.js$/, '.html');
    const fromEsbuild = await renderValue(nodeAppEsbuild, request);
    const fromWebpack = await renderValue(nodeAppWebpack, request);
    assert.ok(fromEsbuild.equals(fromWebpack), `${golden}: node-app-esbuild.js and node-app-webpack.js differ`);
    files.set(golden, fromEsbuild);
    const companion = { companion: 'bundles/loadable-stats.json', companionSha256: sha256(await read('bundles/loadable-stats.json')) };
    await entry(golden, 'node-app-esbuild.js', [request], fromEsbuild, companion);
    await entry(golden, 'node-app-webpack.js', [request], fromWebpack, companion);
  }

  // 2. Streams: renderStream (Node PassThrough) and renderWebStream (web
  // ReadableStream); renderCrossStream on the payload that payload-stream.js
  // streams through runOnOtherBundle (its bundle id "payload-stream"), where
  // the stream crosses natively: both contexts live in this process.
  const streamApp = await load('stream-app.js');
  registry.set('payload-stream', await load('payload-stream.js'));
  // Each chunk must arrive in its own slot of the schedule (the shell before
  // the first timer, then one chunk per timer). A run disturbed by machine
  // load (late shell, two boundaries in one flush) is recorded again, so the
  // committed .chunks.json files do not depend on timing.
  for (const { request, schedule, dependency } of [
    { request: 'stream-pipeable.js', schedule: [0, 50, 100, 150] },
    { request: 'stream-web.js', schedule: [0, 50] },
    { request: 'stream-cross.js', schedule: [0, 50, 100, 150], dependency: 'payload-stream.js' },
    { request: 'stream-cross-web.js', schedule: [0, 50, 100, 150], dependency: 'payload-stream.js' },
  ]) {
    const code = (await read(`requests/${request}`)).toString('utf8');
    let chunks;
    let stream;
    for (let attempt = 1; ; attempt += 1) {
      const t0 = performance.now();
      try {
        stream = streamApp.evaluate(code, streamApp.newMap(), request);
      } finally {
        streamApp.endRender();
      }
      const collected = collect(stream, t0);
      await withTimeout(collected.done, 5000, request);
      chunks = collected.chunks;
      const slots = chunks.map((c) => quantize(c.ms, schedule));
      if (slots.length === schedule.length && slots.every((slot, i) => slot === schedule[i])) break;
      const seen = chunks.map((c) => `${c.bytes.length} B at ${c.ms.toFixed(1)} ms`).join(', ');
      if (attempt === 3) throw new Error(`${request}: chunks do not follow the ${schedule.join('/')} ms schedule: ${seen}`);
      console.warn(`${request}: timing disturbed (${seen}), recording again`);
    }
    const golden = request.replace(/\.js$/, '.html');
    const bytes = Buffer.concat(chunks.map((c) => c.bytes));
    const chunksFile = request.replace(/\.js$/, '.chunks.json');
    files.set(golden, bytes);
    files.set(chunksFile, chunksJson(golden, schedule, chunks, { kind: isWebStream(stream) ? 'web ReadableStream' : 'Node stream' }));
    chunkLengths.set(golden, chunks.map((c) => c.bytes.length));
    const dep = dependency ? { dependency: `bundles/${dependency}`, dependencyId: 'payload-stream', dependencySha256: sha256(await read(`bundles/${dependency}`)) } : {};
    await entry(golden, 'stream-app.js', [request], bytes, { stream: true, chunks: chunksFile, chunkCount: chunks.length, ...dep });
  }

  // 3. AsyncLocalStorage, timers and async generators.
  const asyncApp = await load('async-app.js');
  {
    const bytes = await renderValue(asyncApp, 'async-als.js');
    assert.ok(!bytes.includes('LOST'), 'async-als.html: the AsyncLocalStorage store was lost');
    files.set('async-als.html', bytes);
    await entry('async-als.html', 'async-app.js', ['async-als.js'], bytes);
  }

  // 4. Async props (incremental render): one HTTP request, one
  // sharedExecutionContext; the initial request, two update chunks and the
  // onRequestClosedUpdateChunk, evaluated in order, the event loop running
  // 25 ms between them. In pull mode the emulated renderer injects a
  // propRequest frame when the bundle calls propRequestEmitter, and a
  // renderComplete frame after the stream ends.
  const asyncProps = await load('async-props.js');
  const STEPS = ['async-props-initial.js', 'async-props-update-1.js', 'async-props-update-2.js', 'async-props-close.js'];
  for (const pull of [false, true]) {
    const shared = asyncProps.newMap();
    if (pull) {
      shared.set('pullEnabled', true);
      shared.set('pushProps', asyncProps.newSet(['user']));
    }
    // Bundle chunks and injected frames, in arrival order.
    const output = [];
    let step = 0;
    let done;
    if (pull) {
      shared.set('propRequestEmitter', (name) => {
        if (typeof name === 'string' && name.length <= 256) {
          output.push({ bytes: Buffer.from(PROP_REQUEST(name), 'utf8'), injected: true, step });
        }
      });
    }
    for (; step < STEPS.length; step += 1) {
      const request = STEPS[step];
      const code = (await read(`requests/${request}`)).toString('utf8');
      try {
        const value = asyncProps.evaluate(code, shared, pull ? `${request} (pull)` : request);
        if (step === 0) ({ done } = collect(value, performance.now(), output, () => ({ step })));
      } finally {
        asyncProps.endRender();
      }
      await sleep(25);
      if (step === STEPS.length - 1) await withTimeout(done, 2000, 'async-props');
      if (!pull) {
        const golden = request.replace(/\.js$/, '.html');
        const bytes = Buffer.concat(output.map((c) => c.bytes));
        files.set(golden, bytes);
        await entry(golden, 'async-props.js', STEPS.slice(0, step + 1), bytes, {
          incremental: true,
          afterStep: step,
          ...(step === STEPS.length - 1 ? { chunks: 'async-props.chunks.json' } : {}),
        });
      }
    }
    step = STEPS.length - 1;
    if (pull) output.push({ bytes: Buffer.from(RENDER_COMPLETE, 'utf8'), injected: true, step: STEPS.length - 1 });
    const golden = pull ? 'async-props-pull.html' : 'async-props.html';
    const chunksFile = golden.replace(/\.html$/, '.chunks.json');
    const bytes = Buffer.concat(output.map((c) => c.bytes));
    if (pull) {
      files.set(golden, bytes);
      await entry(golden, 'async-props.js', STEPS, bytes, {
        incremental: true,
        pull: { pullEnabled: true, pushProps: ['user'] },
        chunks: chunksFile,
      });
    }
    files.set(chunksFile, chunksJson(golden === 'async-props.html' ? 'async-props-close.html' : golden, null, output, {
      kind: pull ? 'incremental render, pull mode' : 'incremental render, push mode',
      steps: STEPS,
    }));
    chunkLengths.set(golden, output.map((c) => c.bytes.length));
  }

  const usage = {};
  for (const [bundle, u] of Object.entries(usageByBundle)) usage[bundle] = u.toJSON();
  return { files, entries, chunkLengths, usage };
}

await main();
