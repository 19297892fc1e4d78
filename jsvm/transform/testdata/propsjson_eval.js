// Evaluates programs for propsjson_test.go: one JSON line {"code": "..."} in,
// one JSON line {"out": "..."} out, describing the program's completion value
// (or its error) exactly enough to tell two programs apart: prototypes, own
// keys in order with their descriptors, -0, lone surrogates, and an error's
// message and stack with its positions. Each program runs in a fresh context,
// named and run as the node engine's executor runs a rendering request.
'use strict';
const vm = require('vm');
const readline = require('readline');

function describe(v, ctx) {
  const intrinsics = new Map(['Object.prototype', 'Array.prototype', 'Function.prototype', 'Error.prototype']
    .map((name) => [vm.runInContext(name, ctx), name]));
  const seen = new Map();
  let budget = 100000;
  const walk = (v) => {
    if (--budget < 0) return '…';
    switch (typeof v) {
      case 'number': return Object.is(v, -0) ? '-0' : String(v);
      case 'string': return JSON.stringify(v);
      case 'bigint': return v + 'n';
      // Not its source text: that of a function enclosing a rewritten
      // literal shows the rewrite (the one difference propsjson.go lists).
      case 'function': return 'function ' + JSON.stringify(v.name) + '/' + v.length;
      case 'object': break;
      default: return String(v);
    }
    if (v === null) return 'null';
    if (intrinsics.has(v)) return intrinsics.get(v);
    if (seen.has(v)) return '#' + seen.get(v);
    seen.set(v, seen.size);
    const parts = [];
    for (const k of Reflect.ownKeys(v)) {
      const d = Object.getOwnPropertyDescriptor(v, k);
      const flags = (d.enumerable ? 'e' : '') + (d.configurable ? 'c' : '') + (d.writable ? 'w' : '');
      const val = 'value' in d ? walk(d.value) : 'get/set';
      parts.push(String(k) + '(' + flags + ')=' + val);
    }
    return '{proto ' + walk(Object.getPrototypeOf(v)) + ' | ' + parts.join(', ') + '}';
  };
  return walk(v);
}

const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on('line', (line) => {
  const { code } = JSON.parse(line);
  const ctx = vm.createContext({});
  let out;
  try {
    const value = new vm.Script(code, { filename: 'renderingRequest', displayErrors: false })
      .runInContext(ctx, { timeout: 200, displayErrors: false });
    out = 'value ' + describe(value, ctx);
  } catch (e) {
    if (e && e.code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') out = 'timeout';
    else if (e && typeof e === 'object') out = 'throw ' + String(e.name) + ': ' + String(e.message) + '\n' + String(e.stack);
    else out = 'throw ' + describe(e, ctx);
  }
  process.stdout.write(JSON.stringify({ out }) + '\n');
});
