// Builds tests/testdata/bundles/*.js, tests/testdata/requests/*.js and the demo
// copies in cmd/gorender/demo/. Deterministic: same inputs, same bytes.
import { build, version as esbuildVersion } from 'esbuild';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
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

async function main() {
  await resetDir(bundlesDir);
  await resetDir(requestsDir);
  await mkdir(demoDir, { recursive: true });

  const reactApp = await buildReactApp();
  await writeFile(path.join(bundlesDir, 'react-app.js'), reactApp);
  await writeFile(path.join(bundlesDir, 'rsc-stub.js'), await readFile(path.join(here, 'src', 'rsc-stub.js')));

  const requests = buildRequests();
  for (const [name, code] of Object.entries(requests)) {
    await writeFile(path.join(requestsDir, name), code);
  }

  await writeFile(path.join(demoDir, 'bundle.js'), reactApp);
  await writeFile(path.join(demoDir, 'request.js'), requests['hello-world.js']);

  console.log(`built react-app.js (${reactApp.length} bytes), rsc-stub.js, ${Object.keys(requests).length} requests`);
}

await main();
