// V8's side of BenchmarkCompileRequest and BenchmarkRequestProps
// (bench/render_test.go): the time to compile a rendering request
// (new vm.Script) and to compile and run it up to building its props,
// for the requests given as arguments (files written by benchctl, or
// tests/testdata/requests/*.js).
//
//   node bench/node/compile-bench.mjs bench/results/<run>/medium.js bench/results/<run>/large.js
//
// Each compile gets a unique source (a trailing comment), as different
// requests do: V8 caches compiled scripts of byte-identical sources, which a
// load test that repeats one request would hit (that number is printed too).
import { readFileSync } from 'node:fs';
import vm from 'node:vm';

const runs = Number(process.env.RUNS || 30);
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };

// propsOnly returns the request with its render call replaced by a function
// of the props (the same replacement as bench/render_test.go's propsOnly).
function propsOnly(code) {
  const i = code.indexOf('  return ReactOnRails[');
  return i < 0 ? code : code.slice(0, i) + '  return String(usedProps.items ? usedProps.items.length : 0);\n})()\n';
}

const context = vm.createContext({});
for (const file of process.argv.slice(2)) {
  const code = readFileSync(file, 'utf8');
  const props = propsOnly(code);
  const unique = [], cached = [], evalProps = [];
  for (let i = 0; i < runs; i += 1) {
    const src = `${code}\n// ${i} ${Math.random()}`;
    let t = performance.now();
    new vm.Script(src);
    unique.push(performance.now() - t);
    t = performance.now();
    new vm.Script(code);
    cached.push(performance.now() - t);
    t = performance.now();
    new vm.Script(`${props}\n// ${i} ${Math.random()}`).runInContext(context);
    evalProps.push(performance.now() - t);
  }
  console.log(`${file}: ${(code.length / 1e6).toFixed(2)} MB; compile ${median(unique).toFixed(2)} ms ` +
    `(identical source, V8 cache hit: ${median(cached).toFixed(3)} ms); compile + build props ${median(evalProps).toFixed(2)} ms`);
}
