// Builds bundles/<name>.js: one script per library of the Intl matrix (see
// src/matrix.js), each defining globalThis.intlMatrix[name](locale). The
// bundles touch Intl only when run. Deterministic: same inputs, same bytes.
import { build, version as esbuildVersion } from 'esbuild';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const NAMES = ['env', 'direct', 'react-intl', 'luxon', 'i18next', 'date-fns'];

const out = path.join(here, 'bundles');
await rm(out, { recursive: true, force: true });
await mkdir(out, { recursive: true });
for (const name of NAMES) {
  const result = await build({
    absWorkingDir: here,
    entryPoints: [`src/${name}.js`],
    bundle: true,
    write: false,
    outfile: `${name}.js`,
    format: 'iife',
    platform: 'browser',
    target: 'es2020',
    minify: true,
    define: { 'process.env.NODE_ENV': '"production"' },
    legalComments: 'eof',
    charset: 'ascii',
    logLevel: 'warning',
    banner: { js: `/* gorender Intl matrix fixture ${name}.js (esbuild ${esbuildVersion}); rebuild with tests/testdata/intl/build.sh */` },
  });
  await writeFile(path.join(out, `${name}.js`), result.outputFiles[0].contents);
}
console.log(`built ${NAMES.length} bundles`);
