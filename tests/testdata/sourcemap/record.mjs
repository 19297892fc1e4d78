// Records what Node prints for the calls of the non-ASCII fixture
// (bundles/sourcemap-unicode.js) into golden/unicode.json: per call, the
// frames in the bundle (node without source maps: UTF-16 columns of its one
// line) and in the original sources (node --enable-source-maps). Run from
// the repository root after build.go:
//
//	node tests/testdata/sourcemap/record.mjs
//
// With a file name argument it writes there instead (the Go test that
// checks the golden against the node on PATH).
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const bundle = join(here, 'bundles', 'sourcemap-unicode.js');
const calls = [
  'SourceMapUnicode.greet(null)',
  'SourceMapUnicode.name("1")',
  'SourceMapUnicode.later(null)',
  'SourceMapUnicode.where()',
  'SourceMapUnicode.missing({})',
];

// The child requires the bundle and prints each call's stack (a thrown
// error's, a rejection's, getStackTrace's answer).
const child = `globalThis.getStackTrace = () => new Error().stack;
require(process.argv[1]);
(async () => {
  const out = {};
  for (const code of JSON.parse(process.argv[2])) {
    try { out[code] = String(await eval(code)); } catch (e) { out[code] = e.stack; }
  }
  process.stdout.write(JSON.stringify(out));
})();`;

function stacks(flags) {
  return JSON.parse(execFileSync(process.execPath, [...flags, '-e', child, bundle, JSON.stringify(calls)], { encoding: 'utf8' }));
}

const plain = stacks([]);
const mapped = stacks(['--enable-source-maps']);
const golden = { node: process.version, calls: {} };
for (const code of calls) {
  golden.calls[code] = {
    bundle: plain[code].match(/sourcemap-unicode\.js:\d+:\d+/g) || [],
    mapped: mapped[code].match(/src\/[a-z]+\.js:\d+:\d+/g) || [],
  };
}
writeFileSync(process.argv[2] || join(here, 'golden', 'unicode.json'), JSON.stringify(golden, null, 2) + '\n');
