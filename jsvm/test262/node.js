// The reference host: Node.js runs each test in a fresh vm context (a new
// V8 realm, as the node engine gives each bundle), one test at a time.
// stdin: one JSON test a line ({source, negativePhase, negativeType, async,
// timeoutMs}); stdout: one JSON outcome a line ({pass, message}).
'use strict';
const vm = require('node:vm');
const readline = require('node:readline');

// A test's stray rejections and errors are its own outcome, never the
// runner's end.
process.on('unhandledRejection', () => {});
process.on('uncaughtException', () => {});

// realm makes a vm context with $262 (INTERPRETING.md "Host-Defined
// Functions") and print, which async tests' $DONE calls.
function realm() {
  const context = vm.createContext();
  const state = { message: undefined, settle: undefined };
  const host = {
    createRealm: () => realm().$262,
    evalScript: (source) => new vm.Script(String(source)).runInContext(context),
    detachArrayBuffer: (buffer) => { structuredClone(buffer, { transfer: [buffer] }); return null; },
    print: (message) => {
      message = String(message);
      if (state.message === undefined && message.startsWith('Test262:Async')) {
        state.message = message;
        if (state.settle) state.settle(message);
      }
    },
  };
  // As the engines' prelude: var declarations of the realm's script.
  context.__test262Host = host;
  vm.runInContext(`
    var $262 = (function (host) {
      return {
        global: globalThis,
        createRealm: function () { return host.createRealm(); },
        evalScript: function (source) { return host.evalScript(source); },
        detachArrayBuffer: function (buffer) { return host.detachArrayBuffer(buffer); },
        gc: function () { throw new Test262Error('$262.gc is not available to the runner'); },
      };
    })(__test262Host);
    var print = (function (host) { return function print(message) { host.print(message); }; })(__test262Host);
    delete globalThis.__test262Host;`, context);
  const $262 = vm.runInContext('$262', context);
  return { context, $262, state };
}

function errorName(e) {
  if (e && typeof e === 'object') {
    try {
      if (typeof e.name === 'string') return e.name;
      if (e.constructor && e.constructor.name) return e.constructor.name;
    } catch { /* a hostile getter */ }
  }
  return typeof e;
}

function describe(e) {
  try {
    return e && typeof e === 'object' ? `${errorName(e)}: ${e.message}` : String(e);
  } catch {
    return 'an error that cannot be described';
  }
}

async function run(test) {
  const { context, state } = realm();
  let script;
  try {
    script = new vm.Script(test.source, { filename: 'test262.js' });
  } catch (e) {
    if (test.negativePhase === 'parse' && errorName(e) === 'SyntaxError') return { pass: true };
    return { pass: false, message: 'compile: ' + describe(e) };
  }
  if (test.negativePhase === 'parse') return { pass: false, message: 'parsed; want a SyntaxError' };
  try {
    script.runInContext(context, { timeout: test.timeoutMs });
  } catch (e) {
    if (test.negativePhase === 'runtime' && errorName(e) === test.negativeType) return { pass: true };
    return { pass: false, message: describe(e) };
  }
  if (test.negativePhase === 'runtime') return { pass: false, message: `want a ${test.negativeType} at runtime` };
  if (!test.async) return { pass: true };
  const message = state.message !== undefined ? state.message : await new Promise((resolve) => {
    state.settle = resolve;
    setTimeout(() => resolve('async: $DONE never called'), test.timeoutMs).unref();
  });
  return message === 'Test262:AsyncTestComplete' ? { pass: true } : { pass: false, message: 'async: ' + message };
}

const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
(async () => {
  for await (const line of lines) {
    let outcome;
    try {
      outcome = await run(JSON.parse(line));
    } catch (e) {
      outcome = { pass: false, message: 'runner: ' + describe(e) };
    }
    process.stdout.write(JSON.stringify(outcome) + '\n');
  }
})();
