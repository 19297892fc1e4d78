// Records golden/<name>.json: what Node 20 (its ICU and CLDR) answers for
// every case of every bundle in every locale of the matrix, each bundle run
// in a fresh node:vm context (the ECMAScript built-ins and Intl, nothing
// else), as gorender runs a bundle. Run with LANG=C.UTF-8 and TZ unset on a
// machine whose /etc/localtime is UTC (build.sh checks), so the defaults
// (en-US, UTC) are what CI's machines have; golden/env-tokyo-de.json is the
// env bundle again with TZ=Asia/Tokyo LANG=de_DE.UTF-8 (a child process:
// Node reads both at start).
import { execFileSync } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';

const here = path.dirname(fileURLToPath(import.meta.url));
const NAMES = ['env', 'direct', 'react-intl', 'luxon', 'i18next', 'date-fns'];

async function run(name, locales) {
  const ctx = vm.createContext({});
  vm.runInContext(await readFile(path.join(here, 'bundles', `${name}.js`), 'utf8'), ctx, { filename: `${name}.js` });
  const locs = locales || JSON.parse(vm.runInContext('JSON.stringify(globalThis.intlMatrixLocales || null)', ctx));
  const out = {};
  for (const L of locs) out[L] = JSON.parse(vm.runInContext(`globalThis.intlMatrix[${JSON.stringify(name)}](${JSON.stringify(L)})`, ctx));
  return out;
}

if (process.argv[2] === '--env-only') {
  process.stdout.write(JSON.stringify(await run('env', ['und'])));
  process.exit(0);
}

const { LOCALES } = await import('./src/matrix.js');
await mkdir(path.join(here, 'golden'), { recursive: true });
const write = (name, value) => writeFile(path.join(here, 'golden', `${name}.json`), JSON.stringify(value, null, 1) + '\n');
for (const name of NAMES) await write(name, await run(name, name === 'env' ? ['und'] : LOCALES));
const other = execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--env-only'], {
  env: { PATH: process.env.PATH, TZ: 'Asia/Tokyo', LANG: 'de_DE.UTF-8' },
});
await write('env-tokyo-de', JSON.parse(other));
const versions = { node: process.versions.node, icu: process.versions.icu, cldr: process.versions.cldr, tz: process.versions.tz, unicode: process.versions.unicode };
await write('versions', versions);
console.log(`recorded ${NAMES.length + 1} goldens with Node ${versions.node} (ICU ${versions.icu}, CLDR ${versions.cldr}, tz ${versions.tz})`);
