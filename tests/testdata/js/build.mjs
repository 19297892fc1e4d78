// Builds tests/testdata/bundles/*.js, tests/testdata/requests/*.js and the demo
// copies in cmd/gorender/demo/. Deterministic: same inputs, same bytes.
import { build, version as esbuildVersion } from 'esbuild';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import webpack from 'webpack';
import { buildRequests } from './requests.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const testdata = path.resolve(here, '..');
const repoRoot = path.resolve(testdata, '..', '..');
const bundlesDir = path.join(testdata, 'bundles');
const requestsDir = path.join(testdata, 'requests');
const demoDir = path.join(repoRoot, 'cmd', 'gorender', 'demo');

async function resetDir(dir) {
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
}

async function buildReactApp() {
  const result = await build({
    absWorkingDir: here,
    entryPoints: ['src/server-bundle.js'],
    bundle: true,
    write: false,
    outfile: 'react-app.js',
    format: 'iife',
    platform: 'browser',
    target: 'es2020',
    minify: true,
    jsx: 'automatic',
    loader: { '.js': 'jsx' },
    define: { 'process.env.NODE_ENV': '"production"' },
    legalComments: 'eof',
    charset: 'ascii',
    sourcemap: false,
    logLevel: 'warning',
    banner: {
      js: `/* gorender test fixture react-app.js: plain-script-mode React on Rails server bundle (esbuild ${esbuildVersion}); rebuild with tests/testdata/build.sh */`,
    },
  });
  if (result.outputFiles.length !== 1) throw new Error('expected exactly one output file');
  return result.outputFiles[0].contents;
}

// Support-modules bundles (PROTOCOL.md §7, RENDERER_SUPPORT_MODULES on): esbuild
// for Node, CommonJS, so Node built-ins stay require(...) calls and __dirname /
// __filename are the CommonJS wrapper's.
async function buildNodeBundle({ entry, outfile, description, supported }) {
  const result = await build({
    absWorkingDir: here,
    entryPoints: [entry],
    bundle: true,
    write: false,
    outfile,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    supported,
    minify: true,
    jsx: 'automatic',
    loader: { '.js': 'jsx' },
    define: { 'process.env.NODE_ENV': '"production"' },
    legalComments: 'eof',
    charset: 'ascii',
    sourcemap: false,
    logLevel: 'warning',
    banner: {
      js: `/* gorender test fixture ${outfile}: ${description} (esbuild ${esbuildVersion}); rebuild with tests/testdata/build.sh */`,
    },
  });
  if (result.outputFiles.length !== 1) throw new Error(`${outfile}: expected exactly one output file`);
  return result.outputFiles[0].contents;
}

// The NodeApp source again, built the way a Rails app's server bundle usually
// is: webpack 5, target node, commonjs2, externalsPresets.node (built-ins stay
// require(...) calls), node: false (__dirname left to the CommonJS wrapper),
// one chunk. JSX goes through esbuild-loader. Written to a temporary directory,
// then read back. The minifier moves the bundled packages' license comments to
// node-app-webpack.js.LICENSE.txt, which is kept beside the bundle.
async function buildNodeAppWebpack() {
  const outDir = await mkdtemp(path.join(os.tmpdir(), 'gorender-webpack-'));
  const outfile = 'node-app-webpack.js';
  try {
    const compiler = webpack({
      mode: 'production',
      target: 'node',
      context: here,
      entry: './src/node-app/entry.js',
      output: {
        path: outDir,
        filename: outfile,
        library: { type: 'commonjs2' },
      },
      externalsPresets: { node: true },
      node: false,
      devtool: false,
      cache: false,
      performance: { hints: false },
      resolve: { extensions: ['.js', '.jsx'] },
      module: {
        rules: [
          {
            test: /\.jsx?$/,
            include: path.join(here, 'src'),
            loader: 'esbuild-loader',
            options: { loader: 'jsx', jsx: 'automatic', target: 'node20' },
          },
        ],
      },
      plugins: [
        new webpack.optimize.LimitChunkCountPlugin({ maxChunks: 1 }),
        new webpack.BannerPlugin({
          banner: `/* gorender test fixture ${outfile}: the NodeApp source built by webpack ${webpack.version} (target node, commonjs2); rebuild with tests/testdata/build.sh */`,
          raw: true,
          entryOnly: true,
          // After minification, which would drop it.
          stage: webpack.Compilation.PROCESS_ASSETS_STAGE_REPORT,
        }),
      ],
    });
    const stats = await new Promise((resolve, reject) => {
      compiler.run((err, result) => {
        compiler.close(() => {});
        if (err) reject(err);
        else resolve(result);
      });
    });
    if (stats.hasErrors() || stats.hasWarnings()) {
      throw new Error(`webpack: ${stats.toString({ all: false, errors: true, warnings: true })}`);
    }
    const files = (await readdir(outDir)).sort();
    const js = files.filter((f) => f.endsWith('.js'));
    if (js.length !== 1 || js[0] !== outfile) throw new Error(`webpack: expected only ${outfile}, got ${files.join(', ')}`);
    const licenses = files.filter((f) => f !== outfile);
    if (licenses.length > 1 || (licenses.length === 1 && licenses[0] !== `${outfile}.LICENSE.txt`)) {
      throw new Error(`webpack: unexpected output files ${licenses.join(', ')}`);
    }
    return {
      bundle: await readFile(path.join(outDir, outfile)),
      license: licenses.length ? await readFile(path.join(outDir, licenses[0])) : null,
    };
  } finally {
    await rm(outDir, { recursive: true, force: true });
  }
}

// async-app.js must keep its async generators and for-await loops: goja
// cannot parse them, the renderer lowers them at load, and this fixture is
// how that is tested.
function assertUnlowered(name, bytes) {
  const code = Buffer.from(bytes).toString('utf8');
  if (!/async function\*/.test(code)) throw new Error(`${name}: "async function*" was lowered`);
  if (!/for await\s*\(/.test(code)) throw new Error(`${name}: "for await" was lowered`);
}

function assertNoLocalPaths(name, bytes) {
  const code = Buffer.from(bytes).toString('utf8');
  if (code.includes(here) || code.includes(os.tmpdir() + path.sep + 'gorender-')) {
    throw new Error(`${name}: contains a local file-system path`);
  }
}

async function main() {
  await resetDir(bundlesDir);
  await resetDir(requestsDir);
  await mkdir(demoDir, { recursive: true });

  const reactApp = await buildReactApp();
  await writeFile(path.join(bundlesDir, 'react-app.js'), reactApp);
  await writeFile(path.join(bundlesDir, 'rsc-stub.js'), await readFile(path.join(here, 'src', 'rsc-stub.js')));

  const nodeAppWebpack = await buildNodeAppWebpack();
  const nodeBundles = {
    'node-app-esbuild.js': await buildNodeBundle({
      entry: 'src/node-app/entry.js',
      outfile: 'node-app-esbuild.js',
      description: 'support-modules React on Rails app (router, redux, helmet, fs companion file)',
    }),
    'node-app-webpack.js': nodeAppWebpack.bundle,
    'stream-app.js': await buildNodeBundle({
      entry: 'src/stream-app/entry.jsx',
      outfile: 'stream-app.js',
      description: 'support-modules streaming helpers (renderToPipeableStream, renderToReadableStream)',
    }),
    'async-app.js': await buildNodeBundle({
      entry: 'src/async-app/entry.jsx',
      outfile: 'async-app.js',
      description: 'support-modules AsyncLocalStorage, timers and async generators (not lowered)',
      supported: { 'async-generator': true, 'for-await': true },
    }),
  };
  assertUnlowered('async-app.js', nodeBundles['async-app.js']);
  for (const [name, bytes] of Object.entries(nodeBundles)) {
    assertNoLocalPaths(name, bytes);
    await writeFile(path.join(bundlesDir, name), bytes);
  }
  if (nodeAppWebpack.license) {
    await writeFile(path.join(bundlesDir, 'node-app-webpack.js.LICENSE.txt'), nodeAppWebpack.license);
  }
  await writeFile(path.join(bundlesDir, 'async-props.js'), await readFile(path.join(here, 'src', 'async-props.js')));
  await writeFile(path.join(bundlesDir, 'payload-stream.js'), await readFile(path.join(here, 'src', 'payload-stream.js')));
  await writeFile(
    path.join(bundlesDir, 'loadable-stats.json'),
    await readFile(path.join(here, 'src', 'node-app', 'loadable-stats.json')),
  );

  const requests = buildRequests();
  for (const [name, code] of Object.entries(requests)) {
    await writeFile(path.join(requestsDir, name), code);
  }

  await writeFile(path.join(demoDir, 'bundle.js'), reactApp);
  await writeFile(path.join(demoDir, 'request.js'), requests['hello-world.js']);

  console.log(`built react-app.js (${reactApp.length} bytes), rsc-stub.js, ${Object.keys(requests).length} requests`);
  for (const [name, bytes] of Object.entries(nodeBundles)) console.log(`built ${name} (${bytes.length} bytes)`);
}

await main();
