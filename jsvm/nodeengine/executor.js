'use strict';
// The executor of gorender's node engine (package jsvm/nodeengine): the
// program every Node.js process gorender supervises runs. It holds one vm
// context per bundle loaded in the process and runs one render at a time,
// as gorender asks. gorender embeds this file and writes it next to nothing
// else, so that Node's permission model can allow reading it and the bundle
// cache only.
//
// Frames travel over two pipes, fd 3 (in) and fd 4 (out): a little-endian
// u32 header length, a u32 body length, the JSON header, the body bytes
// (frame.go is the Go half and documents every message). Anything this
// process cannot read as a frame is a bug: it says so on stderr and exits,
// and gorender answers the render in progress and replaces the process.
//
// The render environment itself (console capture, timers, the per-render
// globals, result kinds, streams) is env.js, the same file every engine
// evaluates in each bundle's global environment; it arrives in the init
// frame. What this file adds is what the Go engines do in Go: the host
// functions env.js calls, the render flow around them, and with
// RENDERER_SUPPORT_MODULES Node's real built-ins for the CommonJS loader
// every engine shares (fs confined to the bundle's directory, process
// without secrets, timers owned by the render). That loader,
// jsvm/jsenv/node/src/modules.js (makeModules), is appended to this file
// when gorender writes it.

const vm = require('node:vm');
const net = require('node:net');
const fs = require('node:fs');
const nodePath = require('node:path');
const { AsyncLocalStorage, AsyncResource } = require('node:async_hooks');

const IN_FD = 3;
const OUT_FD = 4;

// ---- Frames out ----------------------------------------------------------

// writeAll writes buf to the answer pipe. The pipe is blocking here (Go's
// os/exec hands the child a blocking descriptor, and nothing in this
// process changes its mode): a write returns once all of buf is in the
// pipe, waiting while gorender reads what filled it; this process has
// nothing else to do meanwhile (TestExecutorPipeModes).
function writeAll(buf) {
  let off = 0;
  while (off < buf.length) {
    try {
      off += fs.writeSync(OUT_FD, buf, off, buf.length - off);
    } catch (e) {
      // gorender is gone (EPIPE): nothing is left to serve.
      process.exit(0);
    }
  }
}

// Frames are built in, and read into, buffers kept from one frame to the
// next up to keptBuffer bytes each (grown as needed, dropped back after a
// larger frame): a fresh buffer for every page's request and answer cost
// the process its pages' faults each time, which on a virtual machine are
// slow.
const keptBuffer = 4 << 20;
const firstBuffer = 64 << 10;

// grown is a buffer for size bytes: twice as large as buf as often as
// needed (a frame that arrives in parts copies what came so far a few
// times, not once a part).
function grown(buf, size) {
  let n = buf.length;
  while (n < size) n *= 2;
  return Buffer.allocUnsafeSlow(n);
}

let outBuf = Buffer.allocUnsafeSlow(firstBuffer);

// send writes one frame; body is a string, a Buffer, a typed array or an
// ArrayBuffer (or absent). The frame goes out in one write, so that
// gorender wakes once for it: the header alone would wake it for nothing.
function send(header, body) {
  const h = JSON.stringify(header);
  const hlen = Buffer.byteLength(h);
  let bodyBuf = null;
  let blen = 0;
  if (typeof body === 'string') {
    blen = Buffer.byteLength(body);
  } else if (body && ArrayBuffer.isView(body)) {
    bodyBuf = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
    blen = bodyBuf.length;
  } else if (body) {
    // An ArrayBuffer, of any realm.
    bodyBuf = Buffer.from(body);
    blen = bodyBuf.length;
  }
  const size = 8 + hlen + blen;
  let buf = outBuf;
  if (size > keptBuffer) buf = Buffer.allocUnsafeSlow(size); // this frame's alone
  else if (size > outBuf.length) buf = outBuf = grown(outBuf, size);
  buf.writeUInt32LE(hlen, 0);
  buf.writeUInt32LE(blen, 4);
  buf.write(h, 8);
  if (typeof body === 'string') buf.write(body, 8 + hlen);
  else if (bodyBuf) bodyBuf.copy(buf, 8 + hlen);
  writeAll(buf.subarray(0, size));
}

// bug reports an executor fault and exits: gorender logs the line, answers
// the render in progress and replaces this process.
function bug(what, err) {
  const detail = err && err.stack ? err.stack : String(err);
  try {
    fs.writeSync(2, 'gorender node executor bug: ' + what + ': ' + detail + '\n');
  } catch (e) {
    // stderr is gone too.
  }
  process.exit(70);
}

// ---- Frames in -----------------------------------------------------------

// Reads land in one buffer kept for the process's life (onread), as large
// as the request pipe (process.go), and onData copies them out: a stream's
// 'data' chunks are fresh 64 KiB buffers, whose pages the kernel faulted
// in again on every read (about 20 faults per 137 KB request measured).
const readBuf = Buffer.allocUnsafeSlow(256 << 10);
const input = new net.Socket({
  fd: IN_FD,
  readable: true,
  writable: false,
  onread: { buffer: readBuf, callback: (n, buf) => onData(buf.subarray(0, n)) },
});
let inBuf = Buffer.allocUnsafeSlow(firstBuffer);
let inLen = 0;

// onData takes what arrived and dispatches every whole frame in it. A
// frame's body is a view into inBuf: dispatch reads it before returning.
function onData(chunk) {
  if (inLen + chunk.length > inBuf.length) {
    const bigger = grown(inBuf, inLen + chunk.length);
    inBuf.copy(bigger, 0, 0, inLen);
    inBuf = bigger;
  }
  chunk.copy(inBuf, inLen);
  inLen += chunk.length;
  let off = 0;
  while (inLen - off >= 8) {
    const hlen = inBuf.readUInt32LE(off);
    const blen = inBuf.readUInt32LE(off + 4);
    const total = 8 + hlen + blen;
    if (inLen - off < total) break;
    let header;
    try {
      header = JSON.parse(inBuf.toString('utf8', off + 8, off + 8 + hlen));
    } catch (e) {
      bug('unreadable frame header', e);
    }
    const body = inBuf.subarray(off + 8 + hlen, off + total);
    off += total;
    dispatch(header, body);
  }
  if (off > 0) {
    inBuf.copy(inBuf, 0, off, inLen);
    inLen -= off;
  }
  if (inBuf.length > keptBuffer && inLen <= firstBuffer) {
    const small = Buffer.allocUnsafeSlow(firstBuffer);
    inBuf.copy(small, 0, 0, inLen);
    inBuf = small;
  }
}
input.on('end', () => process.exit(0));

// pollInput reads what gorender sent without waiting for the event loop:
// a stream whose chunks come from promise jobs alone never yields to it,
// and must still see its client leave. At most every 10 ms, from the chunk
// path. The request pipe is non-blocking (libuv made it so when input
// opened it; TestExecutorPipeModes), so an empty one answers EAGAIN.
// It reads into readBuf too: onData has copied what libuv read there.
let lastPoll = 0;
function pollInput() {
  const now = Date.now();
  if (now - lastPoll < 10) return;
  lastPoll = now;
  for (;;) {
    let n;
    try {
      n = fs.readSync(IN_FD, readBuf, 0, readBuf.length, null);
    } catch (e) {
      return; // EAGAIN: nothing more now
    }
    if (n === 0) process.exit(0);
    onData(readBuf.subarray(0, n));
  }
}
input.on('error', () => process.exit(0));

// ---- State ---------------------------------------------------------------

let options = null; // {stubTimers, supportModules, replayAsyncLogs, consoleMaxLines, consoleMaxBytes, errorTextMax, sourceMapLimit, maxResult, callArgsMax, runOnOtherMaxDepth, runOnOtherTooDeep, crossingStreamsMax, crossingStreams} from init
let envScript = null; // env.js compiled once, run in every context
const bundles = new Map(); // program key -> Bundle
let current = null; // the render in progress
let loading = null; // the load in progress, for errors thrown meanwhile
// Renders sent while another ran (pipelining), in the order they came:
// {h, code, after: the updates and close that came for it, {h, code}}.
// One runs at a time; the next starts once the last answered. A frame's
// body is a view into inBuf, which the next frames overwrite: what waits
// keeps its code, decoded now (it was copied, then decoded at its start).
const queued = [];

function unqueue(id) {
  const i = queued.findIndex((q) => q.h.r === id);
  if (i < 0) return false;
  queued.splice(i, 1);
  return true;
}

// finishing is the render whose answer waits for its leftover work to
// drain (Render.answer): no other render starts meanwhile.
let finishing = null;

// startQueued starts the next queued render once the last one's answer
// went out (its promise jobs and ticks have drained by then).
function startQueued() {
  if (current || finishing || queued.length === 0) return;
  const q = queued.shift();
  startRender(q.h, q.code);
  for (const f of q.after) toRender(f.h, f.code);
}

function startRender(h, code) {
  current = new Render(h);
  // A render starts from a promise job, as in a Node server's async
  // handler: the request's own promise jobs run before process.nextTick
  // callbacks it queues.
  queueMicrotask(() => current && current.id === h.r && current.start(code));
}

// toRender hands an update (code) or the close of the updates (null code)
// to the render in progress, or to the queued render it came for.
function toRender(h, code) {
  const waiting = queued.find((q) => q.h.r === h.r);
  if (waiting) waiting.after.push({ h, code });
  else if (current && current.id === h.r) current.queueUpdate(h.t === 'close' ? null : { h, code });
}

function dispatch(h, body) {
  switch (h.t) {
    case 'init':
      options = h.options;
      envScript = new vm.Script(body.toString('utf8'), { filename: 'gorender-env.js' });
      send({ t: 'ready', node: process.versions.node, pid: process.pid });
      return;
    case 'load': {
      if (current || loading) bug('load while busy', h.b);
      const source = body.toString('utf8');
      queueMicrotask(() => load(h, source));
      return;
    }
    case 'unload': {
      bundles.delete(h.b);
      const kept = parsedMaps.get(h.b);
      if (kept) forgetSourceMap(h.b, kept);
      return;
    }
    case 'render': {
      if (loading) bug('render while loading', h.r);
      const code = body.toString('utf8');
      // Pipelined (gorender queues a render into a busy process only
      // when none is idle): it starts once the current one answered, and
      // after those queued before it. One read between an answer and its
      // startQueued (the poll phase after an answer from a timer) finds
      // none current but others waiting: it waits behind them, and the
      // startQueued that answer scheduled starts the first.
      if (current || finishing || queued.length > 0) queued.push({ h, code, after: [] });
      else startRender(h, code);
      return;
    }
    case 'update':
    case 'close':
      // gorender sends a render's updates once the render before it
      // answered; it may not have started yet (startQueued): they wait
      // with it.
      toRender(h, h.t === 'close' ? null : body.toString('utf8'));
      return;
    case 'cancel':
      // A queued render is dropped unstarted.
      if (unqueue(h.r)) {
        send({ t: 'done', r: h.r, kind: 'canceled' });
        return;
      }
      // The running render sends no chunk from now on, even one whose
      // JavaScript never yields to the stop below: gorender's grace runs
      // from the last chunk it reads (runtime.go, cancelGrace).
      if (current && current.id === h.r) current.canceled = true;
      // After the render's start (a promise job queued before this one).
      queueMicrotask(() => current && current.id === h.r && current.cancel(h.why));
      return;
    case 'withdraw':
      // gorender moves a queued render to a process that became idle: it
      // goes if it has not started here (else it runs here, as sent).
      if (unqueue(h.r)) send({ t: 'done', r: h.r, kind: 'withdrawn' });
      return;
    default:
      bug('unknown frame', JSON.stringify(h));
  }
}

// ---- Timers owned by renders ---------------------------------------------

// env.js schedules through these host functions: every timer and immediate
// belongs to the load or render that made it and is cancelled when that
// ends (only one runs at a time in this process).
const timers = new Map(); // id -> Node Timeout or Immediate
let nextTimer = 1;

function reportError(e) {
  if (current) current.fail(e);
  else if (loading) loading.uncaught = loading.uncaught || { e };
}

function guarded(fn) {
  try {
    fn();
  } catch (e) {
    reportError(e);
  }
}

function clearAllTimers() {
  for (const t of timers.values()) {
    if (t.kind === 'immediate') clearImmediate(t.handle);
    else clearTimeout(t.handle);
  }
  timers.clear();
}

// The async context env.js keeps (the render a piece of work belongs to,
// for console history) follows promise jobs and timers here through
// AsyncLocalStorage, as the Go engines' trackers do.
const frames = new AsyncLocalStorage();

function makeHost() {
  return {
    engine: 'node',
    getAsyncContext: () => frames.getStore(),
    setAsyncContext: (v) => frames.enterWith(v),
    // afterSync marks the end of a render's synchronous part before any
    // promise job runs: no job needs telling apart.
    inAsyncJob: () => false,
    reportError,
    mapStack,
    setTimer(fn, ms, repeat) {
      const id = nextTimer++;
      const run = () => {
        if (!repeat) timers.delete(id);
        guarded(fn);
      };
      const handle = repeat ? setInterval(run, ms) : setTimeout(run, ms);
      timers.set(id, { handle, kind: 'timeout' });
      return id;
    },
    setImmediate(fn) {
      const id = nextTimer++;
      const handle = setImmediate(() => {
        timers.delete(id);
        guarded(fn);
      });
      timers.set(id, { handle, kind: 'immediate' });
      return id;
    },
    clearTimer(id) {
      const t = timers.get(id);
      if (!t) return;
      timers.delete(id);
      if (t.kind === 'immediate') clearImmediate(t.handle);
      else clearTimeout(t.handle);
    },
    timerRef(id, on) {
      const t = timers.get(id);
      if (t) {
        if (on) t.handle.ref();
        else t.handle.unref();
      }
    },
    timerHasRef(id) {
      const t = timers.get(id);
      return t ? t.handle.hasRef() : false;
    },
    timerRefresh(id) {
      const t = timers.get(id);
      if (t && t.kind === 'timeout') t.handle.refresh();
    },
  };
}

// ---- Bundles -------------------------------------------------------------

// Helpers evaluated in each context: values that must belong to the
// bundle's realm (arrays, sets, errors, parsed JSON).
const REALM = `({
  array: (items) => Array.from(items),
  set: (items) => new Set(items),
  object: () => ({}),
  parse: (s) => JSON.parse(s),
  typeError: (m) => new TypeError(m),
  error: (m) => new Error(m),
  promise: () => { let resolve, reject; const p = new Promise((a, b) => { resolve = a; reject = b; }); return { p, resolve, reject }; },
  rangeError: (m) => new RangeError(m),
})`;

class Bundle {
  constructor(h) {
    this.key = h.b;
    this.name = h.name;
    this.filename = h.file || h.name + '.js';
    this.dirname = h.dir || '';
    // Stack frames name the bundle <id>.js, not its path on the server
    // (__filename, with RENDERER_SUPPORT_MODULES, is the path).
    this.shownName = nodePath.basename(this.filename);
    this.mapFile = h.map || ''; // its source map, for getStackTrace
    this.mapUnusable = false;
    this.context = vm.createContext({}, { name: h.name });
    this.realm = vm.runInContext(REALM, this.context);
    this.global = vm.runInContext('globalThis', this.context);
    const setup = envScript.runInContext(this.context);
    this.hooks = setup(
      {
        stubTimers: options.stubTimers, replayAsyncLogs: options.replayAsyncLogs,
        consoleMaxLines: options.consoleMaxLines, consoleMaxBytes: options.consoleMaxBytes, errorTextMax: options.errorTextMax,
      },
      makeHost(),
    );
    this.sharedOps = sharedOps(this);
    this.runOnOther = (id, code) => runOnOtherBundle(this, id, code);
  }

  run(code, filename) {
    return new vm.Script(code, { filename, displayErrors: false }).runInContext(this.context, { displayErrors: false });
  }

  // begin sets the per-render globals for code of render r.
  begin(code) {
    this.hooks.begin(code, this.hooks.makeShared(this.sharedOps), this.runOnOther);
  }
}

async function load(h, source) {
  const state = { uncaught: null };
  loading = state;
  let bundle;
  try {
    bundle = new Bundle(h);
    if (options.supportModules) {
      installNode(bundle);
      bundle.node.runMain(source);
    } else {
      bundle.run(source, bundle.shownName);
    }
    // Work the bundle scheduled while loading runs if it is due now
    // (immediates, 0 ms timers); later timers are cancelled, as every
    // render's are: nothing of the load runs inside a render.
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setTimeout(resolve, 1));
    if (state.uncaught) throw state.uncaught.e;
  } catch (e) {
    clearAllTimers();
    loading = null;
    const [message, stack] = bundle ? bundle.hooks.errorParts(e) : errorParts(e);
    send({ t: 'loadFailed', b: h.b }, errorBody(message, trimStack(stack)));
    return;
  }
  clearAllTimers();
  loading = null;
  bundles.set(h.b, bundle);
  send({ t: 'loaded', b: h.b });
}

function errorParts(e) {
  if (e && typeof e === 'object') {
    return [e.message !== undefined ? String(e.message) : String(e), typeof e.stack === 'string' ? e.stack : ''];
  }
  return [String(e), ''];
}

// ---- Shared execution context --------------------------------------------

// The shared context of the render in progress: entries live here (the
// whole request runs in this process); a bundle reading its own value gets
// it back unchanged, another bundle a copy through JSON, as in the Go
// engines. Values gorender put in (pull mode) arrive with the render.
function sharedKey(bundle, k) {
  switch (typeof k) {
    case 'string':
    case 'boolean':
      return k;
    case 'number':
      return k !== k ? 'NaN' : k;
    default:
      throw bundle.realm.typeError('sharedExecutionContext keys must be strings, numbers or booleans');
  }
}

function copyInto(bundle, owner, value) {
  if (value === null || value === undefined) return value;
  if (typeof value !== 'object' && typeof value !== 'function') return value;
  const s = owner.hooks.stringify(value);
  return s === undefined ? undefined : bundle.realm.parse(s);
}

function hostValue(bundle, r, e) {
  switch (e.kind) {
    case 'set':
      return bundle.realm.set(e.value);
    case 'func':
      return (...args) => {
        // A call past callArgsMax bytes of arguments is not sent: gorender
        // takes a header that large for a protocol fault.
        const a = args.map(String);
        if (Buffer.byteLength(JSON.stringify(a)) > options.callArgsMax) return;
        send({ t: 'call', r: r.id, k: e.key, args: a });
      };
    default:
      return e.value;
  }
}

function sharedOps(bundle) {
  const entries = () => (current ? current.shared : null);
  return {
    get(k) {
      const m = entries();
      const key = sharedKey(bundle, k);
      if (!m || !m.has(key)) return undefined;
      const e = m.get(key);
      if (e.host) return hostValue(bundle, current, e);
      if (e.owner === bundle) return e.value;
      return copyInto(bundle, e.owner, e.value);
    },
    set(k, v) {
      const m = entries();
      const key = sharedKey(bundle, k);
      if (m) m.set(key, { owner: bundle, value: v });
    },
    has(k) {
      const m = entries();
      return !!m && m.has(sharedKey(bundle, k));
    },
    remove(k) {
      const m = entries();
      return !!m && m.delete(sharedKey(bundle, k));
    },
    clear() {
      const m = entries();
      if (m) m.clear();
    },
    keys() {
      const m = entries();
      return bundle.realm.array(m ? m.keys() : []);
    },
  };
}

// ---- runOnOtherBundle ----------------------------------------------------

function runOnOtherBundle(caller, id, code) {
  const r = current;
  if (!r) throw caller.realm.typeError('runOnOtherBundle: called outside a render');
  id = String(id);
  code = String(code);
  const other = r.set.get(id);
  if (!other) throw caller.realm.typeError('runOnOtherBundle: bundle ' + JSON.stringify(id) + " is not in this request's bundle set");
  // The nesting bound of the in-process engines (jsvm.MaxRunOnOtherDepth).
  if (r.nested >= options.runOnOtherMaxDepth) throw caller.realm.rangeError(options.runOnOtherTooDeep);
  r.nested++;
  // Where the caller left its render, should the call come back to it.
  const left = r.calling.has(caller);
  const leftFrom = r.calling.get(caller);
  r.calling.set(caller, frames.getStore());
  try {
    return runOnOther(r, caller, other, code);
  } finally {
    r.nested--;
    if (left) r.calling.set(caller, leftFrom);
    else r.calling.delete(caller);
  }
}

function runOnOther(r, caller, other, code) {
  if (other === caller) return caller.run(code, 'runOnOtherBundle');
  r.touched.add(other);
  // back: other's own code is running, waiting on this call (the render's
  // entry, a bundle called before, or other's own code that called out: a
  // timer callback of it, a stream event): its stream cannot cross back,
  // as on the Go engines (crossstream.go takeStream), which cannot drive
  // other's loop from within its own callback.
  const back = other === r.entry || r.active.has(other) || r.calling.has(other);
  r.active.set(other, (r.active.get(other) || 0) + 1);
  try {
    return runOnOtherActive(r, caller, other, code, back);
  } finally {
    const n = r.active.get(other) - 1;
    if (n === 0) r.active.delete(other);
    else r.active.set(other, n);
  }
}

function runOnOtherActive(r, caller, other, code, back) {
  let value;
  try {
    value = inBundle(r, other, code, () => other.run(code, 'runOnOtherBundle'));
  } catch (e) {
    throw caller.realm.error(runOnOtherMessage(other.hooks.errorParts(e)[0]));
  }
  // What other's value does when it is inspected or copied (a getter that
  // throws, a reader that lies) is an error of the caller's realm,
  // prefixed, as on the Go engines: never other's own thrown value, and a
  // promise that always settles.
  const failure = (e) => runOnOtherMessage(other.hooks.errorParts(e)[0]);
  let kind;
  try {
    kind = other.hooks.kind(value);
  } catch (e) {
    throw caller.realm.error(failure(e));
  }
  switch (kind) {
    case 'promise':
    case 'thenable': {
      const d = caller.realm.promise();
      other.hooks.toPromise(value).then(
        (v) => {
          try {
            d.resolve(other.hooks.kind(v) === 'stream' ? crossStream(r, caller, other, v, back) : copyInto(caller, other, v));
          } catch (e) {
            d.reject(caller.realm.error(failure(e)));
          }
        },
        (e) => d.reject(caller.realm.error(failure(e))),
      );
      return d.p;
    }
    case 'stream':
      try {
        return crossStream(r, caller, other, value, back);
      } catch (e) {
        throw caller.realm.typeError(failure(e));
      }
    default:
      try {
        return copyInto(caller, other, value);
      } catch (e) {
        throw caller.realm.error(failure(e));
      }
  }
}

// runOnOtherMessage is the message of an error that crossed
// runOnOtherBundle, prefixed once however many calls it crossed (as
// jsvm.RunOnOtherMessage).
function runOnOtherMessage(message) {
  return message.startsWith('runOnOtherBundle: ') ? message : 'runOnOtherBundle: ' + message;
}

const CROSS_BACK = 'runOnOtherBundle: a stream cannot cross from a bundle that is itself waiting on this call (a recursion through bundles)';

// crossStream hands other's stream over to caller by the rules of the Go
// engines (docs/compatibility.md "Streams across bundles"; jsvm/inproc/crossstream.go):
// both ends live in this one process, but the caller gets a stream of its
// own (env.js incoming) that other's stream is pumped into (env.js pump),
// paused while the caller's stream is full. The caller's render ending
// cancels it (Render.answer).
function crossStream(r, caller, other, value, back) {
  if (!options.supportModules) {
    throw new Error('runOnOtherBundle: a stream result crosses bundles only in the Node-compatible environment (RENDERER_SUPPORT_MODULES)');
  }
  if (back) throw new Error(CROSS_BACK);
  if (r.done) throw new Error("runOnOtherBundle: the caller's render ended");
  // The bound of the in-process engines (jsvm.MaxCrossingStreams).
  let received = 0;
  for (const c of r.crossings) if (c.caller === caller) received++;
  if (received >= options.crossingStreamsMax) throw new Error(options.crossingStreams);
  const crossing = { caller, other, pump: null, inc: null };
  const done = () => r.crossings.delete(crossing);
  // pump's events come from the stream's own jobs, never while pump runs:
  // inc exists before the first chunk.
  crossing.pump = other.hooks.pump(
    value,
    (chunk) => {
      if (r.done) return false;
      // Text crosses as UTF-8, as on the Go engines: a lone surrogate
      // becomes U+FFFD. Bytes cross as a copy.
      crossing.inc.push(typeof chunk === 'string' ? chunk.toWellFormed() : chunk.slice(0));
      return crossing.inc.wants();
    },
    () => {
      done();
      crossing.inc.end();
    },
    (e) => {
      done();
      crossing.inc.fail(other.hooks.errorParts(e)[0]);
    },
  );
  crossing.inc = caller.hooks.incoming(
    crossing.pump.web ? 'web' : 'node',
    { Readable: require('node:stream').Readable, ReadableStream: globalThis.ReadableStream, Buffer },
    () => crossing.pump.resume(),
    () => {
      if (done()) crossing.pump.cancel(other.realm.error('runOnOtherBundle: the caller cancelled the stream'));
    },
  );
  r.crossings.add(crossing);
  return crossing.inc.stream;
}

// inBundle runs fn with other's per-render globals set and its async
// context current (its console history, for the work fn starts), then
// gives the caller its own async context back: every bundle's env.js
// shares this process's one AsyncLocalStorage. A bundle called back (it
// called out, and the calls came back to it) goes on in its render as it
// left it, as the in-process engines do: begun again, it lost its console
// history. So does the render's entry, whose render goes on until it ends
// (a timer of a bundle an earlier call left work in calls it while it
// awaits): begun again, it lost its renderingRequest and console history.
function inBundle(r, other, code, fn) {
  const prev = frames.getStore();
  try {
    if (r.calling.has(other)) frames.enterWith(r.calling.get(other));
    else if (other === r.entry) frames.enterWith(r.entryFrame);
    else other.begin(code);
    return fn();
  } finally {
    frames.enterWith(prev);
  }
}

// ---- Renders -------------------------------------------------------------

// The answer kinds the Go side turns into answers with jsvm's texts.
class Render {
  constructor(h) {
    this.id = h.r;
    this.entry = bundles.get(h.b);
    if (!this.entry) bug('render of a bundle not loaded', h.b);
    this.set = new Map(); // bundle id -> Bundle
    for (const [id, key] of Object.entries(h.set || {})) {
      const b = bundles.get(key);
      if (!b) bug('render with a bundle not loaded', key);
      this.set.set(id, b);
    }
    this.sink = !!h.sink;
    this.hasUpdates = !!h.updates;
    this.shared = new Map();
    for (const e of h.host || []) this.shared.set(e.key, { host: true, key: e.key, kind: e.kind, value: e.value });
    this.touched = new Set([this.entry]);
    this.nested = 0; // runOnOtherBundle calls in progress
    this.active = new Map(); // bundle -> its runOnOtherBundle calls in progress (runOnOther)
    this.calling = new Map(); // bundle -> the async context it made a runOnOtherBundle call from
    this.entryFrame = undefined; // the entry's async context for its render (run)
    this.done = false;
    // canceled: gorender asked it to stop; it sends no more chunks.
    this.canceled = false;
    this.abortStream = null;
    this.crossings = new Set(); // the streams of other bundles crossing into this render (crossStream)
    this.scope = new AsyncResource('gorender.render');
    // pending counts the render's operations on Node's thread pool whose
    // callback or promise has not come back (ownCallback, ownPromise).
    this.pending = 0;
  }

  start(code) {
    this.code = code;
    // Updates are pending work: until they close, the render waits on
    // gorender (a referenced pipe); without any, an event loop with nothing
    // left to do means the render can never finish (beforeExit below).
    if (!this.hasUpdates) input.unref();
    // Each render runs in its own async resource, so that what it stores
    // with AsyncLocalStorage.enterWith stays with it.
    this.scope.runInAsyncScope(() => frames.run(undefined, () => this.run()));
  }

  run() {
    const b = this.entry;
    b.begin(this.code);
    this.entryFrame = frames.getStore();
    let value;
    try {
      value = b.run(this.code, 'renderingRequest');
    } catch (e) {
      this.fail(e);
      return;
    }
    b.hooks.afterSync();
    this.settle(value, true);
  }

  // settle answers a completion value (PROTOCOL.md §5): a string verbatim,
  // a stream streamed, a promise or thenable once settled (its value is
  // answered the same way, but never awaited again), anything else
  // JSON-stringified. What needs no waiting is answered at once.
  settle(value, awaitable) {
    const b = this.entry;
    try {
      switch (b.hooks.kind(value)) {
        case 'string':
          this.answer({ kind: 'body', body: value });
          return;
        case 'nil':
          this.answer({ kind: 'nil' });
          return;
        case 'stream':
          this.stream(value);
          return;
        case 'promise':
        case 'thenable':
          if (awaitable) {
            this.await(b.hooks.toPromise(value));
            return;
          }
          break;
        default:
          break;
      }
      const s = b.hooks.stringify(value);
      this.answer(s === undefined ? { kind: 'nil' } : { kind: 'body', body: s });
    } catch (e) {
      this.fail(e);
    }
  }

  await(p) {
    let settled = false;
    p.then((v) => {
      settled = true;
      this.settle(v, false);
    }, (e) => {
      settled = true;
      this.fail(e);
    });
    if (options.stubTimers && !this.hasUpdates) {
      // Stub timers: once the promise jobs queued now have run, nothing
      // else could settle it.
      setImmediate(() => {
        if (!settled) this.answer({ kind: 'stubPending' });
      });
    }
  }

  stream(value) {
    if (!this.sink) {
      this.answer({ kind: 'unsupported' });
      return;
    }
    send({ t: 'start', r: this.id });
    this.abortStream = this.entry.hooks.pump(
      value,
      (chunk) => {
        if (this.done || this.canceled) return;
        send({ t: 'chunk', r: this.id }, chunk);
        pollInput();
      },
      () => this.answer({ kind: 'streamed' }),
      (e) => this.fail(e),
    ).cancel;
  }

  // queueUpdate queues an update chunk (null: the updates closed). They run
  // one per turn of the event loop, after the render's start, so that what
  // each one sets off (promise jobs, ticks) runs before the next, as a
  // client sending them one by one would see.
  queueUpdate(u) {
    this.updates = this.updates || [];
    this.updates.push(u);
    if (this.updates.length === 1) setImmediate(() => this.nextUpdate());
  }

  nextUpdate() {
    if (this.done) return;
    const u = this.updates[0];
    if (u === null) this.closeUpdates();
    else this.update(u.h, u.code);
    this.updates.shift();
    if (this.updates.length > 0) setImmediate(() => this.nextUpdate());
  }

  update(h, code) {
    const target = this.set.get(h.id);
    if (!target) {
      send({ t: 'updateFailed', r: this.id, n: h.n }, errorBody('bundle ' + JSON.stringify(h.id) + " is not in this request's bundle set", ''));
      return;
    }
    this.scope.runInAsyncScope(() => {
      try {
        if (target === this.entry) {
          target.run(code, 'updateChunk');
        } else {
          this.touched.add(target);
          inBundle(this, target, code, () => target.run(code, 'updateChunk'));
        }
      } catch (e) {
        send({ t: 'updateFailed', r: this.id, n: h.n }, errorBody(target.hooks.errorParts(e)[0], ''));
        return;
      }
      send({ t: 'updated', r: this.id, n: h.n });
    });
  }

  closeUpdates() {
    this.hasUpdates = false;
    if (!this.done) input.unref();
  }

  // fail ends the render with an exception nothing caught (a timer
  // callback, a microtask, an error event).
  fail(e) {
    this.answer(jsError(this, e));
  }

  // idle: nothing is left that could finish the render.
  idle() {
    const streaming = this.abortStream !== null;
    if (streaming) this.abort('the stream stalled');
    this.answer({ kind: streaming ? 'stalled' : 'neverSettled' });
  }

  cancel(why) {
    this.abort(why === 'idle' ? 'the stream was idle too long' : 'the client went away');
    this.answer({ kind: 'canceled' });
  }

  abort(reason) {
    const abort = this.abortStream;
    this.abortStream = null;
    if (abort && !this.done) {
      try {
        abort(this.entry.realm.error(reason));
      } catch (e) {
        // The stream's own abort failed: it is being dropped anyway.
      }
    }
  }

  // answer sends the render's one answer and ends it: its timers are
  // cancelled and the per-render globals cleared before anything else runs.
  answer(a) {
    if (this.done) return;
    if (a.kind !== 'streamed' && a.kind !== 'canceled' && a.kind !== 'stalled') this.abort('the render failed');
    this.done = true;
    for (const c of this.crossings) {
      try {
        c.pump.cancel(c.other.realm.error("runOnOtherBundle: the caller's render ended"));
      } catch (e) {
        // The stream's own cancel failed: it is being dropped anyway.
      }
    }
    this.crossings.clear();
    clearAllTimers();
    for (const b of this.touched) {
      try {
        b.hooks.end();
      } catch (e) {
        // end only deletes globals.
      }
    }
    current = null;
    input.ref();
    // The promise jobs, ticks and microtasks still queued are the render's
    // own work: the answer goes out once they have drained, from the next
    // immediate (Node runs one only when both queues are empty). Work that
    // never drains keeps the answer until gorender kills the process at
    // the render's deadline, answering this render, not the next one.
    // So are its operations on Node's thread pool (crypto's callbacks and
    // promises): Node runs their callbacks after the immediates, so the
    // answer waits for them too (release sends it once the last is back),
    // as the in-process engines run such a callback as one of the render's
    // jobs.
    finishing = this;
    this.answered = a;
    setImmediate(() => this.sendAnswer());
  }

  sendAnswer() {
    if (!this.answered || this.pending > 0) return; // sent, or release sends it
    // Timers the drained work set belong to this render too.
    clearAllTimers();
    finishing = null;
    const a = this.answered;
    this.answered = null;
    const body = a.body;
    delete a.body;
    // A result past gorender's bound (RENDERER_MAX_RESULT_SIZE) does not
    // cross the pipe: its size does (a string's UTF-8 length is between
    // its length and three times it: measured only past a third of it).
    if (a.kind === 'body' && typeof body === 'string' && body.length * 3 > options.maxResult) {
      const size = Buffer.byteLength(body);
      if (size > options.maxResult) {
        send({ t: 'done', r: this.id, kind: 'tooLarge', n: size });
        startQueued();
        return;
      }
    }
    a.t = 'done';
    a.r = this.id;
    send(a, body);
    startQueued();
  }
}

// ---- The render's work on Node's thread pool --------------------------
//
// Node runs the callback of work it did on its thread pool (crypto.pbkdf2,
// scrypt, randomBytes, crypto.subtle.*) from the event loop's poll phase,
// after the immediate a render's answer waits for (Render.answer). So the
// async APIs of the crypto a bundle reaches (require('crypto'), the global
// crypto: the same objects as the executor's) count what each render has
// out, and its answer waits until all of it is back and its callbacks ran.
// Wrapped once, before any bundle runs; the cost is one closure a call.
// Work started with no render in progress (a bundle's top level while it
// loads) is not counted.

function owner() {
  return current || finishing;
}

// release: an operation of r came back; if r's answer waits on it, it
// goes once the jobs the callback left have drained.
function release(r) {
  r.pending--;
  if (r.pending === 0 && r.answered) setImmediate(() => r.sendAnswer());
}

// ownCallback wraps an API whose last argument, when a function, is called
// back from the thread pool.
function ownCallback(fn) {
  return function (...args) {
    const r = owner();
    const last = args.length - 1;
    if (!r || typeof args[last] !== 'function') return Reflect.apply(fn, this, args);
    const cb = args[last];
    args[last] = function (...res) {
      release(r);
      return Reflect.apply(cb, this, res);
    };
    r.pending++;
    try {
      return Reflect.apply(fn, this, args);
    } catch (e) {
      r.pending--; // refused before it started: no callback comes
      throw e;
    }
  };
}

// ownPromise wraps an API whose promise settles from the thread pool.
function ownPromise(fn) {
  return function (...args) {
    const r = owner();
    const p = Reflect.apply(fn, this, args);
    if (!r) return p;
    r.pending++;
    return p.then(
      (v) => {
        release(r);
        return v;
      },
      (e) => {
        release(r);
        throw e;
      },
    );
  };
}

{
  const crypto = require('node:crypto');
  for (const name of ['pbkdf2', 'scrypt', 'randomBytes', 'pseudoRandomBytes', 'prng', 'rng', 'randomFill', 'randomInt',
    'generateKeyPair', 'generateKey', 'generatePrime', 'checkPrime', 'hkdf', 'sign', 'verify']) {
    if (typeof crypto[name] === 'function') crypto[name] = ownCallback(crypto[name]);
  }
  const subtle = Object.getPrototypeOf(crypto.webcrypto.subtle);
  for (const name of Object.getOwnPropertyNames(subtle)) {
    const d = Object.getOwnPropertyDescriptor(subtle, name);
    if (name !== 'constructor' && typeof d.value === 'function') {
      Object.defineProperty(subtle, name, { ...d, value: ownPromise(d.value) });
    }
  }
}

function jsError(r, e) {
  const [message, stack] = r.entry.hooks.errorParts(e);
  return { kind: 'js', body: errorBody(message, trimStack(stack)) };
}

// errorBody is the body of a frame that carries an error: its message and
// stack as JSON. A body, not the header: a bundle's error may be megabytes
// (gorender caps what it answers), and a header is small.
function errorBody(message, stack) {
  return JSON.stringify({ message: String(message), stack: String(stack) });
}

// trimStack drops this executor's frames, which say nothing about the
// render and name its path on the server, and the frames below the render's
// own code (the vm call, timers and promise jobs as Node runs them, this
// executor's): a stack shows the bundle's, the environment's and the
// request's frames, as on the in-process engines.
function trimStack(stack) {
  const lines = stack.split('\n');
  const isFrame = (line) => line.startsWith('    at ');
  const executors = (line) => line.includes(__filename + ':');
  const runsIt = (line) => executors(line) || /[( ]node:[a-z_/]+:\d+:\d+\)?$/.test(line);
  let end = lines.length;
  while (end > 0 && isFrame(lines[end - 1]) && runsIt(lines[end - 1])) end--;
  return lines.slice(0, end).filter((line) => !(isFrame(line) && executors(line))).join('\n');
}

// ---- Source maps for getStackTrace ---------------------------------------

// getStackTrace maps its frames here, as the in-process engines do through
// gorender's host function (jsvm/sourcemap): a frame in a loaded bundle
// (<id>.js:line:column) whose bundle has a source map shows the original
// source, line and column. gorender names the map file at load (the same
// rule as for error answers); it is read and parsed the first time a stack
// names the bundle, without its sourcesContent, and parsed maps stay within
// options.sourceMapLimit (this process's share of
// RENDERER_SOURCE_MAP_CACHE_SIZE), least recently used first out.

// parsedMapCost is the memory of a map parsed by Node's SourceMap per byte
// of its JSON without sourcesContent (18.5 measured on esbuild's map of the
// 450 KB React fixture: an array per mapping).
const parsedMapCost = 19;
const parsedMaps = new Map(); // bundle key -> { map, cost }, least recent first
let parsedMapsCost = 0;
const stackFrame = /(?:[^\s()@'"]*\/)?([A-Za-z0-9_][A-Za-z0-9._-]*\.js):(\d+):(\d+)/g;

function mapStack(stack) {
  stack = trimStack(stack);
  if (!options.sourceMapLimit) return stack;
  return stack.replace(stackFrame, (match, file, line, column) => {
    let bundle = null;
    for (const b of bundles.values()) {
      if (b.mapFile && b.shownName === file) bundle = b;
    }
    const map = bundle && sourceMapOf(bundle);
    if (!map) return match;
    const entry = map.findEntry(Number(line) - 1, Number(column) - 1);
    if (!entry || entry.originalSource === undefined || entry.generatedLine !== Number(line) - 1) return match;
    return shownSource(entry.originalSource) + ':' + (entry.originalLine + 1) + ':' + (entry.originalColumn + 1);
  });
}

// sourceMapOf is bundle's parsed map, read on first use; null when it has
// none or it cannot be used (not looked for again).
function sourceMapOf(bundle) {
  const kept = parsedMaps.get(bundle.key);
  if (kept) {
    parsedMaps.delete(bundle.key);
    parsedMaps.set(bundle.key, kept);
    return kept.map;
  }
  if (bundle.mapUnusable) return null;
  bundle.mapUnusable = true;
  let payload;
  try {
    if (fs.statSync(bundle.mapFile).size > options.sourceMapLimit) throw new Error('larger than this process\'s share of RENDERER_SOURCE_MAP_CACHE_SIZE');
    payload = JSON.parse(fs.readFileSync(bundle.mapFile, 'utf8'));
    delete payload.sourcesContent;
    for (const s of payload.sections || []) if (s && s.map) delete s.map.sourcesContent;
  } catch (e) {
    if (e.code !== 'ENOENT') process.stderr.write('getStackTrace: the source map of bundle ' + bundle.name + ' is not used: ' + e.message + '\n');
    return null;
  }
  const cost = JSON.stringify(payload).length * parsedMapCost;
  if (cost > options.sourceMapLimit) {
    process.stderr.write('getStackTrace: the source map of bundle ' + bundle.name + ' would take about ' + cost +
      ' bytes parsed, more than this process\'s share of RENDERER_SOURCE_MAP_CACHE_SIZE (' + options.sourceMapLimit + ')\n');
    return null;
  }
  let map;
  try {
    map = new (require('node:module').SourceMap)(payload);
  } catch (e) {
    process.stderr.write('getStackTrace: the source map of bundle ' + bundle.name + ' is not used: ' + e.message + '\n');
    return null;
  }
  bundle.mapUnusable = false;
  parsedMaps.set(bundle.key, { map, cost });
  parsedMapsCost += cost;
  for (const [key, old] of parsedMaps) {
    if (parsedMapsCost <= options.sourceMapLimit) break;
    forgetSourceMap(key, old);
  }
  return map;
}

function forgetSourceMap(key, kept) {
  parsedMaps.delete(key);
  parsedMapsCost -= kept.cost;
  const bundle = bundles.get(key);
  if (bundle) bundle.mapUnusable = false; // read again when a stack names it
}

// shownSource is a map's source as jsvm/sourcemap shows it: without a
// bundler's scheme and namespace (webpack://app/) and the ../ that lead
// from the map's directory back to the sources.
function shownSource(source) {
  if (source.startsWith('webpack://')) {
    const i = source.indexOf('/', 'webpack://'.length);
    if (i >= 0) source = source.slice(i + 1);
  }
  source = nodePath.posix.normalize(source);
  while (source.startsWith('../')) source = source.slice(3);
  return source;
}

// The event loop ran out of work while a render waited: no timer,
// immediate, I/O or update is left that could finish it.
process.on('beforeExit', () => {
  if (current && !current.done) current.idle();
  input.ref();
});

process.on('uncaughtException', (e) => {
  if (current || loading) {
    reportError(e);
    return;
  }
  // Work a render left behind (an error event nobody listens to, say)
  // after its answer was decided cannot change it: gorender logs it.
  const [message] = errorParts(e);
  const when = finishing ? 'after render ' + finishing.id + ' was answered' : 'outside any render';
  try {
    fs.writeSync(2, 'uncaught exception ' + when + ': ' + message + '\n');
  } catch (x) {
    // stderr is gone.
  }
});
process.on('unhandledRejection', () => {
  // As in the Go engines: a rejection nobody handles is not an error of
  // its own; a render that awaited it has failed already.
});

// ---- The Node environment (RENDERER_SUPPORT_MODULES) ---------------------

const GLOBALS = ['Buffer', 'atob', 'btoa', 'TextEncoder', 'TextDecoder', 'URL', 'URLSearchParams', 'AbortController',
  'AbortSignal', 'Event', 'EventTarget', 'CustomEvent', 'DOMException', 'MessageChannel', 'MessagePort',
  'structuredClone', 'performance', 'crypto', 'ReadableStream', 'ReadableStreamDefaultReader',
  'ReadableStreamBYOBReader', 'ReadableStreamBYOBRequest', 'ReadableByteStreamController',
  'ReadableStreamDefaultController', 'TransformStream', 'TransformStreamDefaultController', 'WritableStream',
  'WritableStreamDefaultWriter', 'WritableStreamDefaultController', 'ByteLengthQueuingStrategy',
  'CountQueuingStrategy', 'TextEncoderStream', 'TextDecoderStream'];

function installNode(bundle) {
  const g = bundle.global;
  for (const name of GLOBALS) {
    if (globalThis[name] !== undefined && !Object.prototype.hasOwnProperty.call(g, name)) {
      Object.defineProperty(g, name, { value: globalThis[name], writable: true, configurable: true, enumerable: false });
    }
  }
  const proc = processFacade(bundle);
  Object.defineProperty(g, 'process', { value: proc, writable: true, configurable: true, enumerable: false });
  const envTimers = bundle.hooks.timers;
  // The built-ins a bundle may require (makeModules.BUILTINS), Node's own,
  // except fs (read-only, confined to the bundle's directory), process (no
  // secrets, no exit) and timers (owned by the render, through env.js).
  const builtins = {
    assert: () => require('node:assert'),
    async_hooks: () => require('node:async_hooks'),
    buffer: () => require('node:buffer'),
    crypto: () => require('node:crypto'),
    events: () => require('node:events'),
    fs: () => confinedFS(bundle),
    'fs/promises': () => confinedFS(bundle).promises,
    path: () => nodePath,
    'path/posix': () => nodePath.posix,
    perf_hooks: () => require('node:perf_hooks'),
    process: () => proc,
    querystring: () => require('node:querystring'),
    stream: () => require('node:stream'),
    'stream/promises': () => require('node:stream/promises'),
    'stream/web': () => require('node:stream/web'),
    string_decoder: () => require('node:string_decoder'),
    timers: () => timersModule(envTimers),
    'timers/promises': () => timersModule(envTimers).promises,
    url: () => require('node:url'),
    util: () => require('node:util'),
    'util/types': () => require('node:util/types'),
  };
  const fsys = () => confinedFS(bundle);
  // A module's wrapper; its frames name the file without its directory, as
  // on the in-process engines.
  const compile = (source, filename) => vm.compileFunction(source, ['exports', 'require', 'module', '__filename', '__dirname'], {
    filename: nodePath.basename(filename),
    parsingContext: bundle.context,
  });
  // The CommonJS loader every engine shares (jsvm/jsenv/node/src/modules.js,
  // appended to this file by gorender), over Node's own modules.
  const modules = makeModules({
    builtins,
    isFile(p) {
      try {
        return fsys().statSync(p).isFile();
      } catch (e) {
        return false;
      }
    },
    readText: (p) => fsys().readFileSync(p, 'utf8'),
    compile,
    parseJSON: (text) => bundle.realm.parse(text),
    newExports: () => bundle.realm.object(),
    path: nodePath,
    invalidArgType(id) {
      const err = new TypeError('The "id" argument must be of type string. Received ' + typeof id);
      err.code = 'ERR_INVALID_ARG_TYPE';
      return err;
    },
    invalidArgValue() {
      const err = new TypeError("The argument 'id' must be a non-empty string. Received ''");
      err.code = 'ERR_INVALID_ARG_VALUE';
      return err;
    },
  });

  bundle.node = {
    runMain(source) {
      const filename = bundle.dirname ? bundle.filename : bundle.name + '.js';
      const mod = modules.mainModule(filename, bundle.dirname || '.');
      proc.mainModule = mod;
      modules.runMain(mod, compile(source, filename));
    },
  };
}

// timersModule is timers and timers/promises over the render-owned timers.
function timersModule(t) {
  function abortError(signal) {
    const err = new DOMException('The operation was aborted', 'AbortError');
    err.cause = signal && signal.reason;
    return err;
  }
  function delayed(schedule, clear) {
    return (delay, value, opts) => new Promise((resolve, reject) => {
      const signal = opts && opts.signal;
      if (signal && signal.aborted) {
        reject(abortError(signal));
        return;
      }
      let onAbort;
      const handle = schedule(() => {
        if (signal) signal.removeEventListener('abort', onAbort);
        resolve(value);
      }, delay);
      if (opts && opts.ref === false && handle && handle.unref) handle.unref();
      if (signal) {
        onAbort = () => {
          clear(handle);
          reject(abortError(signal));
        };
        signal.addEventListener('abort', onAbort, { once: true });
      }
    });
  }
  const promises = {
    setTimeout: delayed((fn, d) => t.setTimeout(fn, d), t.clearTimeout),
    setImmediate: (value, opts) => delayed((fn) => t.setImmediate(fn), t.clearImmediate)(0, value, opts),
  };
  promises.scheduler = {
    wait: (delay, opts) => promises.setTimeout(delay, undefined, opts),
    yield: () => promises.setImmediate(),
  };
  return {
    setTimeout: t.setTimeout,
    clearTimeout: t.clearTimeout,
    setInterval: t.setInterval,
    clearInterval: t.clearInterval,
    setImmediate: t.setImmediate,
    clearImmediate: t.clearImmediate,
    promises,
  };
}

// processFacade is the bundle's process: the real one's facts and clocks,
// the environment without secrets (the executor's own environment has none:
// gorender leaves RENDERER_PASSWORD out), cwd the bundle's directory, and
// nothing that reaches outside (exit, kill, binding, stdio).
function processFacade(bundle) {
  const EventEmitter = require('node:events');
  const p = new EventEmitter();
  const env = Object.assign(Object.create(null), process.env);
  if (env.NODE_ENV === undefined) env.NODE_ENV = 'production';
  p.env = env;
  p.title = 'node';
  p.version = process.version;
  p.versions = Object.assign({}, process.versions);
  p.platform = process.platform;
  p.arch = process.arch;
  p.pid = process.pid;
  p.ppid = process.ppid;
  p.release = process.release;
  p.argv = ['node', bundle.filename];
  p.argv0 = 'node';
  p.execArgv = [];
  p.execPath = 'node';
  p.exitCode = undefined;
  p.features = process.features;
  p.config = { variables: {} };
  p.allowedNodeEnvironmentFlags = new Set();
  p.noDeprecation = false;
  p.throwDeprecation = false;
  p.traceDeprecation = false;
  p.cwd = () => bundle.dirname || '/';
  const refuse = (name) => () => {
    const err = new Error('process.' + name + '() is not available to bundles in gorender');
    err.code = 'ERR_WORKER_UNSUPPORTED_OPERATION';
    throw err;
  };
  for (const name of ['chdir', 'exit', 'reallyExit', 'abort', 'kill', 'dlopen', 'binding', '_linkedBinding']) p[name] = refuse(name);
  p.umask = () => 18;
  p.hrtime = process.hrtime;
  p.uptime = process.uptime;
  p.memoryUsage = process.memoryUsage;
  p.cpuUsage = process.cpuUsage;
  p.resourceUsage = process.resourceUsage;
  p.getuid = process.getuid;
  p.getgid = process.getgid;
  p.geteuid = process.geteuid;
  p.getegid = process.getegid;
  p.nextTick = process.nextTick;
  const sink = (fd) => ({
    fd, isTTY: false, writable: true,
    write() { const cb = arguments[arguments.length - 1]; if (typeof cb === 'function') process.nextTick(cb); return true; },
    end() {}, on() { return this; }, once() { return this; }, off() { return this; }, removeListener() { return this; },
    emit() { return false; }, cork() {}, uncork() {}, getColorDepth() { return 1; }, hasColors() { return false; },
  });
  p.stdout = sink(1);
  p.stderr = sink(2);
  p.stdin = { fd: 0, isTTY: false, on() { return this; }, once() { return this; } };
  p.emitWarning = function emitWarning(warning, type, code) {
    const opts = type && typeof type === 'object' ? type : { type, code };
    let w = warning;
    if (typeof w === 'string') {
      w = new Error(w);
      w.name = opts.type || 'Warning';
      if (opts.code !== undefined) w.code = opts.code;
      if (opts.detail !== undefined) w.detail = opts.detail;
    }
    if (w.name === 'DeprecationWarning') {
      if (p.noDeprecation) return;
      if (p.throwDeprecation) throw w;
    }
    process.nextTick(() => p.emit('warning', w));
  };
  return p;
}

// confinedFS is the bundle's fs: Node's own, read-only and confined to the
// bundle's directory (companion files such as loadable-stats.json). A path
// is resolved lexically first, then with its symlinks, and must stay inside
// the directory both times (the bundle file itself may be a symlink into a
// snapshot directory); anything else is ENOENT, as if absent. Node's
// permission model bounds what the process may read at all (the bundle
// cache), whatever this layer says.
function confinedFS(bundle) {
  if (bundle.fs) return bundle.fs;
  const dir = bundle.dirname ? nodePath.resolve(bundle.dirname) : '';
  let realDir = '';
  let bundleReal = '';
  if (dir) {
    try { realDir = fs.realpathSync(dir); } catch (e) { /* absent */ }
    try { bundleReal = fs.realpathSync(nodePath.resolve(bundle.filename)); } catch (e) { /* absent */ }
  }
  const within = (p, d) => d !== '' && (p === d || p.startsWith(d.endsWith('/') ? d : d + '/'));
  const ERRNO = { ENOENT: [-2, 'no such file or directory'], EISDIR: [-21, 'illegal operation on a directory'],
    ENOTDIR: [-20, 'not a directory'], EROFS: [-30, 'read-only file system'], EACCES: [-13, 'permission denied'] };
  // shown is a path as an error names it, as the other engines do: an
  // absolute path relative to the bundle's directory (process.cwd(), so it
  // names the same file), so that a 400 answer carrying the error never
  // names the server's cache path (PROTOCOL.md §5).
  function shown(p) {
    if (!dir || !nodePath.isAbsolute(p)) return p;
    const abs = nodePath.resolve(p);
    return nodePath.relative(!within(abs, dir) && within(abs, realDir) ? realDir : dir, abs) || '.';
  }
  function fsError(code, syscall, given) {
    const [errno, text] = ERRNO[code];
    const p = shown(given);
    const msg = code === 'EISDIR' && syscall === 'read' ? 'EISDIR: illegal operation on a directory, read'
      : code + ': ' + text + ', ' + syscall + " '" + p + "'";
    const err = new Error(msg);
    err.errno = errno;
    err.code = code;
    err.syscall = syscall;
    if (!(code === 'EISDIR' && syscall === 'read')) err.path = p;
    return err;
  }
  function toPath(p, name) {
    name = name || 'path';
    if (typeof p === 'string') {
      // ok
    } else if (p && typeof p === 'object' && typeof p.href === 'string' && p.protocol !== undefined) {
      p = require('node:url').fileURLToPath(p);
    } else if (p instanceof Uint8Array || (p && ArrayBuffer.isView(p))) {
      p = Buffer.from(p.buffer, p.byteOffset, p.byteLength).toString('utf8');
    } else {
      const err = new TypeError('The "' + name + '" argument must be of type string or an instance of Buffer or URL. Received ' +
        (p === null ? 'null' : typeof p));
      err.code = 'ERR_INVALID_ARG_TYPE';
      throw err;
    }
    if (p.indexOf('\u0000') !== -1) {
      const err = new TypeError("The argument '" + name + "' must be a string, Uint8Array, or URL without null bytes. Received " +
        JSON.stringify(p).replace(/^"|"$/g, "'"));
      err.code = 'ERR_INVALID_ARG_VALUE';
      throw err;
    }
    return p;
  }
  function resolve(given, syscall) {
    if (!dir) throw fsError('ENOENT', syscall, given);
    const abs = nodePath.resolve(dir, given);
    if (!within(abs, dir) && !within(abs, realDir)) throw fsError('ENOENT', syscall, given);
    let real;
    try {
      real = fs.realpathSync(abs);
    } catch (e) {
      throw fsError(e.code === 'ENOTDIR' ? 'ENOTDIR' : 'ENOENT', syscall, given);
    }
    if (!within(real, realDir) && real !== bundleReal) throw fsError('ENOENT', syscall, given);
    return real;
  }
  const encodingOf = (o) => (typeof o === 'string' ? o : o && typeof o === 'object' ? o.encoding || null : null);
  const flagOf = (o) => (o && typeof o === 'object' && o.flag ? String(o.flag) : 'r');

  function readFileSync(path, opts) {
    if (typeof path === 'number') throw fsError('EROFS', 'read', 'fd ' + path);
    const p = toPath(path);
    const flag = flagOf(opts);
    if (flag !== 'r' && flag !== 'rs' && flag !== 'sr') throw fsError('EROFS', 'open', p);
    const real = resolve(p, 'open');
    let st;
    try { st = fs.statSync(real); } catch (e) { throw fsError('ENOENT', 'open', p); }
    if (st.isDirectory()) throw fsError('EISDIR', 'read', p);
    let data;
    try {
      data = fs.readFileSync(real);
    } catch (e) {
      throw fsError(e.code === 'EACCES' || e.code === 'ERR_ACCESS_DENIED' ? 'EACCES' : 'ENOENT', 'open', p);
    }
    const enc = encodingOf(opts);
    return enc ? data.toString(enc) : data;
  }
  function statSync(path, opts) {
    const p = toPath(path);
    try {
      return fs.statSync(resolve(p, 'stat'));
    } catch (e) {
      if (opts && opts.throwIfNoEntry === false && e && e.code === 'ENOENT') return undefined;
      if (e && e.syscall === 'stat' && e.path === shown(p)) throw e;
      throw fsError('ENOENT', 'stat', p);
    }
  }
  function existsSync(path) {
    try {
      resolve(toPath(path), 'stat');
      return true;
    } catch (e) {
      return false;
    }
  }
  function readdirSync(path, opts) {
    const p = toPath(path);
    const real = resolve(p, 'scandir');
    let entries;
    try {
      entries = fs.readdirSync(real, { withFileTypes: true });
    } catch (e) {
      throw fsError(e.code === 'ENOTDIR' ? 'ENOTDIR' : 'ENOENT', 'scandir', p);
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    if (opts && typeof opts === 'object' && opts.withFileTypes) {
      return entries.map((e) => {
        const isDir = e.isSymbolicLink() ? (() => { try { return fs.statSync(nodePath.join(real, e.name)).isDirectory(); } catch (x) { return false; } })() : e.isDirectory();
        return new Dirent(e.name, isDir, p);
      });
    }
    return entries.map((e) => e.name);
  }
  function Dirent(name, isDir, parent) {
    this.name = name;
    this.parentPath = parent;
    this.path = parent;
    this._dir = isDir;
  }
  Dirent.prototype.isFile = function isFile() { return !this._dir; };
  Dirent.prototype.isDirectory = function isDirectory() { return this._dir; };
  for (const m of ['isSymbolicLink', 'isBlockDevice', 'isCharacterDevice', 'isFIFO', 'isSocket']) Dirent.prototype[m] = () => false;
  function realpathSync(path) {
    const p = toPath(path);
    const real = resolve(p, 'realpath');
    if (real === bundleReal) return nodePath.join(dir, nodePath.basename(real));
    return nodePath.join(dir, nodePath.relative(realDir, real));
  }
  realpathSync.native = realpathSync;
  const constants = fs.constants;
  function accessSync(path, mode) {
    const p = toPath(path);
    resolve(p, 'access');
    if (mode & constants.W_OK) throw fsError('EROFS', 'access', p);
  }
  const out = {
    constants,
    F_OK: 0, R_OK: 4, W_OK: 2, X_OK: 1,
    Stats: fs.Stats,
    Dirent,
    readFileSync,
    statSync,
    lstatSync: statSync,
    existsSync,
    readdirSync,
    realpathSync,
    accessSync,
  };
  [['writeFileSync', 'open'], ['appendFileSync', 'open'], ['mkdirSync', 'mkdir'], ['mkdtempSync', 'mkdtemp'],
    ['rmSync', 'rm'], ['rmdirSync', 'rmdir'], ['unlinkSync', 'unlink'], ['renameSync', 'rename'],
    ['copyFileSync', 'copyfile'], ['cpSync', 'cp'], ['symlinkSync', 'symlink'], ['linkSync', 'link'],
    ['chmodSync', 'chmod'], ['chownSync', 'chown'], ['utimesSync', 'utime'], ['truncateSync', 'open'],
    ['openSync', 'open'], ['writeSync', 'write'], ['createWriteStream', 'open']].forEach(([name, syscall]) => {
    out[name] = function refused(path) {
      const p = typeof path === 'string' ? path : String(path);
      if (name === 'openSync' && (arguments[1] === undefined || arguments[1] === 'r')) {
        throw fsError('EROFS', 'open', p + "' (gorender: file descriptors are not supported; use readFileSync");
      }
      throw fsError('EROFS', syscall, p);
    };
  });
  function callbackify(syncFn) {
    return function () {
      const args = Array.prototype.slice.call(arguments);
      const cb = args.pop();
      if (typeof cb !== 'function') {
        const err = new TypeError('The "cb" argument must be of type function. Received ' + typeof cb);
        err.code = 'ERR_INVALID_ARG_TYPE';
        throw err;
      }
      let value;
      let err = null;
      try {
        value = syncFn.apply(null, args);
      } catch (e) {
        if (e && e.code && /^ERR_INVALID_ARG/.test(e.code)) throw e;
        err = e;
      }
      process.nextTick(() => cb(err, value));
    };
  }
  const promisify = (syncFn) => function () {
    const args = arguments;
    return new Promise((resolve) => resolve(syncFn.apply(null, args)));
  };
  const promises = {};
  for (const name of ['readFile', 'stat', 'lstat', 'readdir', 'realpath', 'access', 'writeFile', 'appendFile', 'mkdir',
    'mkdtemp', 'rm', 'rmdir', 'unlink', 'rename', 'copyFile', 'cp', 'symlink', 'link', 'chmod', 'chown', 'utimes',
    'truncate', 'open']) {
    out[name] = callbackify(out[name + 'Sync']);
    promises[name] = promisify(out[name + 'Sync']);
  }
  out.realpath.native = out.realpath;
  out.exists = (path, cb) => process.nextTick(() => cb(existsSync(path)));
  promises.constants = constants;
  out.promises = promises;
  out.createReadStream = function createReadStream(path, opts) {
    const { Readable } = require('node:stream');
    const p = toPath(path);
    const encoding = encodingOf(opts);
    const start = opts && typeof opts === 'object' && opts.start !== undefined ? opts.start : 0;
    const end = opts && typeof opts === 'object' && opts.end !== undefined ? opts.end + 1 : undefined;
    const hwm = (opts && opts.highWaterMark) || 65536;
    let data = null;
    let pos = 0;
    const stream = new Readable({
      encoding: encoding || undefined,
      highWaterMark: hwm,
      read() {
        try {
          if (data === null) data = readFileSync(p).subarray(start, end);
        } catch (e) {
          this.destroy(e);
          return;
        }
        if (pos >= data.length) {
          this.push(null);
          return;
        }
        const chunk = data.subarray(pos, pos + hwm);
        pos += chunk.length;
        this.push(chunk);
      },
    });
    stream.path = p;
    return stream;
  };
  bundle.fs = out;
  return out;
}
