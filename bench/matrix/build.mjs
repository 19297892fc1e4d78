// Builds the rewrite matrix into OUTDIR (argv[2]): for React 18 and 19, in
// development and production, the entry bundled by esbuild as a browser iife
// (the plain-script shape) and left unminified, minified by esbuild, or
// minified by terser (as webpack's production mode does). Then records what
// Node returns for each request in the renderer's plain-script environment
// (as tests/testdata/js/record.mjs). Deterministic.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';
import * as esbuild from 'esbuild';
import { minify } from 'terser';

const here = path.dirname(fileURLToPath(import.meta.url));
const out = path.resolve(process.argv[2] || path.join(here, 'out'));
await mkdir(out, { recursive: true });

// Deterministic list items (32-bit LCG).
function items(n) {
  let s = 12345;
  const rnd = () => { s = (Math.imul(s, 1664525) + 1013904223) >>> 0; return s; };
  const words = 'alpha beta gamma delta <epsilon> & zeta "eta" theta iota kappa café 🚀 lambda mu'.split(' ');
  const text = (k) => Array.from({ length: k }, () => words[rnd() % words.length]).join(' ');
  return Array.from({ length: n }, (_, i) => ({ id: i + 1, title: `Item ${i + 1}: ${text(3)}`, body: text(25) }));
}

const small = {
  title: 'Small <page> & "friends"',
  links: [{ href: '/', label: 'Home' }, { href: '/a?b=1&c=2', label: 'A & B' }],
  paragraphs: ['Plain text, naïve café, 日本語, 🚀.', 'Separators \u2028 \u2029 and <script>x</script>.', '<em>raw</em> html'],
};
export const REQUESTS = {
  small: `renderPage("SmallPage", ${JSON.stringify(small)})`,
  'small-static': `renderPage("SmallPage", ${JSON.stringify(small)}, true)`,
  suspense: `renderPage("SmallPage", ${JSON.stringify({ ...small, withSuspense: true })})`,
  list: `renderPage("ListPage", ${JSON.stringify({ items: items(500) })})`,
};

const SETUP = `(function () {
  var g = globalThis; g.global = g; var history = [];
  function recorder(level) { return function () { var args = Array.prototype.slice.call(arguments);
    if (typeof args[0] === 'string') args[0] = '[SERVER] ' + args[0]; history.push({ level: level, arguments: args }); }; }
  g.console = { log: recorder('log'), info: recorder('info'), warn: recorder('warn'), error: recorder('error'), debug: recorder('debug'), history: history };
  g.getStackTrace = function () { return new Error().stack; };
  ['setTimeout', 'setInterval', 'setImmediate', 'clearTimeout', 'clearInterval', 'clearImmediate', 'queueMicrotask']
    .forEach(function (name) { g[name] = function () {}; });
})()`;

const manifest = [];
for (const version of ['18', '19']) {
  for (const mode of ['development', 'production']) {
    const built = await esbuild.build({
      entryPoints: [path.join(here, 'src/entry.js')],
      bundle: true,
      write: false,
      format: 'iife',
      platform: 'browser',
      target: 'es2020',
      charset: 'utf8',
      legalComments: 'none',
      alias: { react: `react${version}`, 'react-dom': `react-dom${version}` },
      define: { 'process.env.NODE_ENV': JSON.stringify(mode) },
      logLevel: 'error',
    });
    const plain = built.outputFiles[0].text;
    const minified = (await esbuild.transform(plain, { minify: true, target: 'es2020', charset: 'utf8', legalComments: 'none' })).code;
    const tersed = (await minify(plain, { compress: { passes: 2 }, mangle: true, format: { comments: false } })).code;
    for (const [minifier, code] of [['none', plain], ['esbuild', minified], ['terser', tersed]]) {
      const name = `react${version}-${mode}-${minifier}`;
      await writeFile(path.join(out, `${name}.js`), code);
      const context = vm.createContext({});
      vm.runInContext(SETUP, context);
      vm.runInContext(code, context, { filename: `${name}.js` });
      for (const [req, src] of Object.entries(REQUESTS)) {
        await writeFile(path.join(out, `${req}.request.js`), src);
        const html = vm.runInContext(src, context);
        await writeFile(path.join(out, `${name}.${req}.html`), html);
      }
      manifest.push({ bundle: `${name}.js`, bytes: Buffer.byteLength(code) });
      console.log(`${name}.js: ${Buffer.byteLength(code)} bytes`);
    }
  }
}
const versions = {};
for (const p of ['react18', 'react-dom18', 'react19', 'react-dom19', 'esbuild', 'terser']) {
  versions[p] = JSON.parse(await readFile(path.join(here, 'node_modules', p, 'package.json'), 'utf8')).version;
}
await writeFile(path.join(out, 'manifest.json'), JSON.stringify({ node: process.version, versions, requests: Object.keys(REQUESTS), bundles: manifest }, null, 2) + '\n');
