'use strict';
// The executor of gorender's node engine (package jsvm/nodeengine): the
// program every Node.js process gorender supervises runs. It holds one vm
// context per bundle loaded in the process and runs one render at a time,
// as gorender asks. gorender embeds it and writes it, one file
// (executor.js), next to nothing else, so that Node's permission model can
// allow reading it and the bundle cache only. Its source is split along its
// sections into the files of jsvm/nodeengine/executor/, joined in their
// names' order: 10-host.js (frames, state, the render's timers),
// 20-bundles.js, 30-render.js, 40-source-maps.js, 50-node-environment.js,
// 60-confined-fs.js. They share one scope: a file uses what an earlier one
// declared, and a function what any declared.
//
// Frames travel over two pipes, fd 3 (in) and fd 4 (out): a little-endian
// u32 header length, a u32 body length, the JSON header, the body bytes
// (frame.go is the Go half and documents every frame). Anything this
// process cannot read as a frame is a bug: it says so on stderr and exits,
// and gorender answers the render in progress and replaces the process.
//
// The render environment itself (console capture, timers, the per-render
// globals, result kinds, streams) is env.js, the same file every engine
// evaluates in each bundle's global environment; it arrives in the init
// frame. What the executor adds is what the Go engines do in Go: the host
// functions env.js calls, the render flow around them, and with
// RENDERER_SUPPORT_MODULES Node's real built-ins for the CommonJS loader
// every engine shares (fs confined to the bundle's directory, process
// without secrets, timers owned by the render). That loader,
// jsvm/jsenv/node/src/modules.js (makeModules), is appended to the executor
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
      // Latin-1 when gorender found no character past U+00FF (latin1.go):
      // decoded at a copy's speed, where UTF-8 with non-ASCII is not.
      const code = h.latin1 ? body.latin1Slice(0, body.length) : body.toString('utf8');
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
const asyncContext = new AsyncLocalStorage();

function makeHost() {
  return {
    engine: 'node',
    getAsyncContext: () => asyncContext.getStore(),
    setAsyncContext: (v) => asyncContext.enterWith(v),
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

