// The Node reference server of gorender's benchmarks (bench/README.md).
//
// A small Fastify + node:vm render server with the hot path of a React on
// Rails Node renderer, written here from the public protocol description
// (docs/PROTOCOL.md) and the fixture recorder (tests/testdata/js/
// record.mjs): it is not, and copies nothing of, any commercial renderer.
//
//   - node:cluster with RENDERER_WORKERS_COUNT worker processes sharing the
//     port; each worker has its own vm context per bundle.
//   - One protocol per process, like the Node renderer: h2c with prior
//     knowledge (RENDERER_PROTOCOL=h2c, the default) or HTTP/1.1 (http1).
//   - POST /bundles/:id/render/:digest in each encoding the gems send
//     (PROTOCOL.md §3.1): the raw-JS body (gems 17.1+; metadata in the
//     x-react-on-rails-pro-* headers, Authorization: Bearer), form-urlencoded
//     (gems up to 17.0; @fastify/formbody), JSON, or multipart with bundle
//     files (the gem's answer to a 410).
//   - The same prechecks as gorender, in the same order: protocol version
//     (412), password (401, SHA-256 + timingSafeEqual), renderingRequest
//     (400), bundle present in the cache (410 No bundle uploaded).
//   - Bundles are read from the renderer's cache layout
//     <cache>/<id>/<id>.js and stored there by a multipart render (staged in
//     <cache>/uploads/<uuid>/, renamed, first writer wins).
//   - The plain-script environment (PROTOCOL.md §7, the one gorender offers
//     with RENDERER_SUPPORT_MODULES off): global, console whose calls are
//     recorded into console.history, getStackTrace, no-op timers, and per
//     render renderingRequest and sharedExecutionContext.
//   - Per request the rendering request is compiled as a new vm.Script and
//     run in the bundle's context; a thenable is awaited; a string is sent
//     verbatim, anything else JSON.stringify'd; a falsy value or a throw is a
//     400 with the same diagnostic text as gorender.
//
// Environment: RENDERER_PORT (3900), RENDERER_HOST (localhost),
// RENDERER_PROTOCOL (h2c | http1), RENDERER_WORKERS_COUNT (1),
// RENDERER_PASSWORD (unset: no check), RENDERER_SERVER_BUNDLE_CACHE_PATH
// (/tmp/gorender-bench-node-bundles).
import cluster from 'node:cluster';
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { access, link, mkdir, readFile, rm, unlink } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import vm from 'node:vm';

const PROTOCOL_VERSION = '2.0.0';
const RAW_JS = 'application/vnd.react-on-rails.render-request+javascript';
const port = Number(process.env.RENDERER_PORT || 3900);
const host = process.env.RENDERER_HOST || 'localhost';
const protocol = process.env.RENDERER_PROTOCOL || 'h2c';
const workers = Number(process.env.RENDERER_WORKERS_COUNT || 1);
const password = process.env.RENDERER_PASSWORD;
const cacheDir = process.env.RENDERER_SERVER_BUNDLE_CACHE_PATH || '/tmp/gorender-bench-node-bundles';
const ID = /^[A-Za-z0-9_][A-Za-z0-9._-]*$/;

if (!['h2c', 'http1'].includes(protocol)) throw new Error(`RENDERER_PROTOCOL must be h2c or http1, not ${protocol}`);

if (cluster.isPrimary) {
  for (let i = 0; i < workers; i += 1) cluster.fork();
  let listening = 0;
  cluster.on('listening', () => {
    listening += 1;
    if (listening === workers) console.log(`node reference listening on ${host}:${port} (${protocol}, ${workers} workers)`);
  });
  cluster.on('exit', (w, code, signal) => {
    console.error(`worker ${w.process.pid} exited (${signal || code}); stopping`);
    process.exit(1);
  });
  for (const sig of ['SIGTERM', 'SIGINT']) {
    process.on(sig, () => {
      for (const w of Object.values(cluster.workers)) w.process.kill('SIGTERM');
      process.exit(0);
    });
  }
} else {
  await startWorker();
}

// ---- The plain-script environment (as tests/testdata/js/record.mjs) -----

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
  g.console = { log: recorder('log'), info: recorder('info'), warn: recorder('warn'),
    error: recorder('error'), debug: recorder('debug'), history: history };
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

const loaded = new Map(); // bundle id -> Promise<{context, control}>

const bundlePath = (id) => path.join(cacheDir, id, `${id}.js`);

async function loadBundle(id) {
  let p = loaded.get(id);
  if (!p) {
    p = (async () => {
      const code = await readFile(bundlePath(id), 'utf8');
      const context = vm.createContext({});
      const control = vm.runInContext(SETUP, context, { filename: 'renderer-environment.js' });
      new vm.Script(code, { filename: `${id}.js` }).runInContext(context);
      return { context, control };
    })();
    loaded.set(id, p);
    p.catch(() => loaded.delete(id));
  }
  return p;
}

async function bundleExists(id) {
  if (loaded.has(id)) return true;
  try {
    await access(bundlePath(id));
    return true;
  } catch {
    return false;
  }
}

// Store a staged bundle file: first writer wins (link fails if it exists).
async function storeBundle(id, staged) {
  await mkdir(path.join(cacheDir, id), { recursive: true });
  try {
    await link(staged, bundlePath(id));
  } catch (err) {
    if (err.code !== 'EEXIST') throw err;
  }
}

const isThenable = (v) => v !== null && (typeof v === 'object' || typeof v === 'function') && typeof v.then === 'function';

function truncate(s, max = 1000) {
  if (s.length <= max) return s;
  const filler = '... TRUNCATED ...';
  const keep = max - filler.length;
  return s.slice(0, Math.ceil(keep / 2)) + filler + s.slice(s.length - Math.floor(keep / 2));
}

async function render(id, code) {
  const env = await loadBundle(id);
  env.control.beginRender(code);
  try {
    let value = new vm.Script(code).runInContext(env.context);
    if (isThenable(value)) value = await value;
    if (!value) return { status: 400, body: `INVALID NIL or NULL result for rendering: ${value}` };
    return { status: 200, body: typeof value === 'string' ? value : JSON.stringify(value) };
  } catch (err) {
    const message = err && err.message !== undefined ? err.message : String(err);
    const stack = err && err.stack !== undefined ? err.stack : '';
    return {
      status: 400,
      body: `JS code for rendering request was:\n${truncate(code)}\n\nEXCEPTION MESSAGE:\n${message}\n\nSTACK:\n${stack}`,
    };
  } finally {
    env.control.endRender();
  }
}

// ---- HTTP -------------------------------------------------------------

const noCache = 'no-cache, no-store, max-age=0, must-revalidate';

function sendText(reply, status, body, cache = noCache) {
  return reply
    .code(status)
    .header('Content-Type', 'text/plain; charset=utf-8')
    .header('X-Content-Type-Options', 'nosniff')
    .header('Cache-Control', cache)
    .send(body);
}

const sha256 = (s) => createHash('sha256').update(s ?? '', 'utf8').digest();

function precheck(fields) {
  if (fields.protocolVersion !== PROTOCOL_VERSION) {
    const got = fields.protocolVersion === undefined ? 'MISSING' : `request protocol ${fields.protocolVersion}`;
    return [412, `Unsupported renderer protocol version ${got} does not match installed renderer protocol ${PROTOCOL_VERSION} for version bench-reference.\nUpdate either the renderer or the Rails application.`];
  }
  if (password !== undefined && !timingSafeEqual(sha256(password), sha256(fields.password))) {
    return [401, 'Wrong password'];
  }
  return null;
}

function rawFields(headers) {
  const f = {
    protocolVersion: headers['x-react-on-rails-pro-protocol-version'],
    gemVersion: headers['x-react-on-rails-pro-gem-version'],
    railsEnv: headers['x-react-on-rails-pro-rails-env'],
  };
  const auth = headers.authorization;
  if (auth !== undefined) f.password = auth.startsWith('Bearer ') ? auth.slice(7) : undefined;
  const deps = headers['x-react-on-rails-pro-dependency-bundle-timestamps'];
  if (deps !== undefined) f.dependencyBundleTimestamps = JSON.parse(deps);
  return f;
}

async function startWorker() {
  const { default: Fastify } = await import('fastify');
  const { default: multipart } = await import('@fastify/multipart');
  const { default: formbody } = await import('@fastify/formbody');
  const app = Fastify({ http2: protocol === 'h2c', bodyLimit: 100 * 1024 * 1024, logger: false });
  app.addContentTypeParser(RAW_JS, { parseAs: 'string', bodyLimit: 100 * 1024 * 1024 }, (req, body, done) => done(null, body));
  await app.register(formbody, { bodyLimit: 100 * 1024 * 1024 });
  await app.register(multipart, { limits: { fieldSize: 10 * 1024 * 1024, fileSize: 100 * 1024 * 1024, parts: 1000 } });

  app.get('/health', async () => ({ status: 'ok' }));
  app.get('/info', async () => ({ node_version: process.version, renderer_version: 'bench-reference', protocol_version: PROTOCOL_VERSION, engine: 'v8' }));

  app.post('/bundles/:bundleId/render/:digest', async (request, reply) => {
    const { bundleId } = request.params;
    if (!ID.test(bundleId)) return sendText(reply, 400, `Invalid bundle id ${JSON.stringify(bundleId)}`);
    let fields;
    const staged = new Map(); // bundle id -> staged file
    let stagingDir;
    try {
      if (request.isMultipart()) {
        fields = {};
        for await (const part of request.parts()) {
          if (part.type === 'file') {
            const checked = precheck(fields); // authenticate before a file touches the disk
            if (checked) {
              await part.toBuffer();
              return sendText(reply, checked[0], checked[1]);
            }
            const id = part.fieldname === 'bundle' ? bundleId : part.fieldname.replace(/^bundle_/, '');
            if (!part.fieldname.startsWith('bundle') || !ID.test(id)) {
              await part.toBuffer();
              continue;
            }
            stagingDir ??= path.join(cacheDir, 'uploads', randomUUID());
            await mkdir(stagingDir, { recursive: true });
            const file = path.join(stagingDir, `${staged.size}.js`);
            await pipeline(part.file, createWriteStream(file));
            staged.set(id, file);
          } else if (part.fieldname.endsWith('[]')) {
            (fields[part.fieldname.slice(0, -2)] ??= []).push(part.value);
          } else {
            fields[part.fieldname] = part.value;
          }
        }
      } else if (typeof request.body === 'string') {
        fields = rawFields(request.headers);
        fields.renderingRequest = request.body;
      } else if (request.body && typeof request.body === 'object') {
        // JSON, or a form: a form's array field arrives as repeated k[]
        // (PROTOCOL.md §3.2).
        fields = { ...request.body };
        if (fields.dependencyBundleTimestamps === undefined && fields['dependencyBundleTimestamps[]'] !== undefined) {
          const deps = fields['dependencyBundleTimestamps[]'];
          fields.dependencyBundleTimestamps = Array.isArray(deps) ? deps : [deps];
        }
      } else {
        return sendText(reply, 415, 'Unsupported Content-Type');
      }
      const checked = precheck(fields);
      if (checked) return sendText(reply, checked[0], checked[1]);
      const code = fields.renderingRequest;
      if (typeof code !== 'string' || code === '') {
        return sendText(reply, 400, 'Invalid "renderingRequest" field in render request.');
      }
      for (const [id, file] of staged) await storeBundle(id, file);
      const ids = new Set([bundleId, ...(fields.dependencyBundleTimestamps || [])]);
      for (const id of ids) {
        if (!(await bundleExists(id))) return sendText(reply, 410, 'No bundle uploaded');
      }
      const result = await render(bundleId, code);
      if (result.status !== 200) return sendText(reply, result.status, result.body);
      return sendText(reply, 200, result.body, 'public, max-age=31536000');
    } finally {
      if (stagingDir) {
        for (const file of staged.values()) await unlink(file).catch(() => {});
        await rm(stagingDir, { recursive: true, force: true });
      }
    }
  });

  await app.listen({ port, host });
  const stop = () => app.close().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
