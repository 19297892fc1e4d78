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
    this.parsed = h.parsed || null; // the JSON.parse calls of a rewritten request
    this.sink = !!h.sink;
    this.hasUpdates = !!h.updates;
    this.shared = new Map();
    for (const e of h.host || []) this.shared.set(e.key, { host: true, key: e.key, kind: e.kind, value: e.value });
    this.touched = new Set([this.entry]);
    this.nested = 0; // runOnOtherBundle calls in progress
    this.active = new Map(); // bundle -> its runOnOtherBundle calls in progress (runOnOther)
    this.calling = new Map(); // bundle -> the async context it made a runOnOtherBundle call from
    this.entryContext = undefined; // the entry's async context for its render (run)
    this.done = false;
    // canceled: gorender asked it to stop; it sends no more chunks.
    this.canceled = false;
    this.abortStream = null;
    this.crossings = new Set(); // the streams of other bundles crossing into this render (crossStream)
    this.scope = new AsyncResource('gorender.render');
    // pending counts the render's operations on Node's thread pool whose
    // callback or promise has not come back (ownCallback, ownPromise) and
    // the messages it posted not delivered yet (PortState).
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
    this.scope.runInAsyncScope(() => asyncContext.run(undefined, () => this.run()));
  }

  run() {
    const b = this.entry;
    b.begin(this.parsed ? () => asSent(this.code, this.parsed) : this.code);
    this.entryContext = asyncContext.getStore();
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
    // promises) and the MessagePort messages it posted: Node runs their
    // callbacks and handlers after the immediates, so the answer waits for
    // them too (release sends it once the last is back), as the in-process
    // engines run such a callback as one of the render's jobs.
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

// asSent is the request's text as sent, from the text the process compiled
// with its large JSON literals as JSON.parse('…') calls (parsed: their
// start and end, two a call; transform.AppendPropsAsJSON): each call back
// to its string's content, each \uXXXX escape (a non-ASCII character) as
// its code unit and the backslash before any other escaped character
// dropped. Made only when the render reads renderingRequest.
function asSent(code, parsed) {
  const unescape = (m, hex, c) => (hex ? String.fromCharCode(parseInt(hex, 16)) : c);
  let out = '';
  let at = 0;
  for (let i = 0; i < parsed.length; i += 2) {
    const start = parsed[i];
    const end = parsed[i + 1];
    out += code.slice(at, start) + code.slice(start + "JSON.parse('".length, end - 2).replace(/\\(?:u([0-9a-f]{4})|([\s\S]))/g, unescape);
    at = end;
  }
  return out + code.slice(at);
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

// ---- The render's messages ---------------------------------------------
//
// Node delivers a MessagePort message from the event loop's poll phase,
// after the immediate a render's answer waits for (Render.answer). So a
// message counts as a render's thread-pool work does (pending, release):
// the answer waits until it is delivered and its handlers ran (the messages
// they post in turn are the render's too). Every message posted to a port
// of a MessageChannel a bundle made (its MessageChannel is the executor's,
// wrapped here), or to a port that came out of one through a transfer
// (structuredClone's or postMessage's), is queued here per receiving port,
// in order (Node delivers a port's messages in the order they were posted),
// until the port delivers it. While the port has a 'message' handler, its
// queued messages are charged to the render in progress (or finishing):
// one posted then, and those queued before when a handler starts the port.
// Removing its last handler stops the port (Node keeps what arrives) and
// uncharges them; closing it releases them. A message to a port without a
// handler, or posted with no render in progress (a bundle's top level while
// it loads) to a port with one, is never waited for.
//
// A delivery is seen at Node's dispatch of it to the port (its hybrid
// dispatch, called with no event object only by a delivery), so the
// executor adds no listener: the bundle's handlers are the port's own, as
// in Node. A transferred port's queue moves to the port the transfer
// creates, which is found by sending the transferred ports along with the
// value and taking them off on the other side.

const portStates = new WeakMap(); // port -> PortState

// Node's own, kept before any bundle could replace them.
const { addEventListener } = EventTarget.prototype;
const { listenerCount } = MessagePort.prototype;
const protoSymbol = (description) => Object.getOwnPropertySymbols(EventTarget.prototype).find((s) => s.description === description);
const kHybridDispatch = protoSymbol('nodejs.internal.kHybridDispatch');
const kNewListener = protoSymbol('kNewListener');
const kRemoveListener = protoSymbol('kRemoveListener');
if (!kHybridDispatch || !kNewListener || !kRemoveListener) throw new Error('executor: this Node has no EventTarget dispatch symbols');

class PortState {
  constructor(port, queue) {
    this.port = port;
    this.peer = null; // the other port's PortState
    // queue has an entry per message posted to port and not yet delivered,
    // in order: { r: the render charged, or null; ports: the PortStates it
    // transfers, sent along with its value, or null }.
    this.queue = queue;
    this.gone = false; // closed or arrived elsewhere: nothing more is delivered here
    this.moving = false; // transferred, not yet arrived: what is posted waits for the port it becomes
    const st = this;
    const own = (sym, fn) => Object.defineProperty(port, sym, { value: fn, writable: true, configurable: true, enumerable: false });
    const dispatch = port[kHybridDispatch];
    own(kHybridDispatch, function (value, type, event) {
      if (event !== undefined || this !== port) return Reflect.apply(dispatch, this, arguments);
      const m = st.queue.shift();
      if (m && m.ports) {
        if (type === 'message' && Array.isArray(value) && value.length === 2) {
          arrived(m.ports, value[1]);
          value = value[0];
        } else for (const t of m.ports) t.forget(); // not deserialized
      }
      try {
        return Reflect.apply(dispatch, this, [value, type, event]);
      } finally {
        if (m && m.r) release(m.r);
      }
    });
    const added = port[kNewListener];
    own(kNewListener, function (size, type) {
      const result = Reflect.apply(added, this, arguments);
      if (type === 'message') st.charge();
      return result;
    });
    const removed = port[kRemoveListener];
    own(kRemoveListener, function (size, type) {
      const result = Reflect.apply(removed, this, arguments);
      if (type === 'message' && size === 0) st.uncharge();
      return result;
    });
    Reflect.apply(addEventListener, port, ['close', () => st.moving || st.forget()]);
    portStates.set(port, st);
  }

  // posted: a message was posted to port, transferring ports.
  posted(ports) {
    if (this.gone) return;
    const m = { r: null, ports };
    this.queue.push(m);
    if (!this.moving && Reflect.apply(listenerCount, this.port, ['message']) > 0) this.chargeTo(m);
  }

  chargeTo(m) {
    m.r = owner();
    if (m.r) m.r.pending++;
  }

  // charge: a handler started port; what is queued for it comes now.
  charge() {
    if (this.moving) return;
    for (const m of this.queue) if (!m.r) this.chargeTo(m);
  }

  uncharge() {
    for (const m of this.queue) {
      if (m.r) release(m.r);
      m.r = null;
    }
  }

  // move: port was transferred; what is queued goes with it, to be
  // charged when the port it becomes is started.
  move() {
    this.moving = true;
    this.uncharge();
  }

  // forget: port was closed or arrived elsewhere; what is queued is no
  // longer delivered here.
  forget() {
    this.moving = false;
    this.gone = true;
    this.uncharge();
    const q = this.queue;
    this.queue = [];
    return q;
  }
}

// transferList: the PortStates of the ports a transfer list (postMessage's
// second argument, an array or {transfer}) moves, in its order, or null.
function transferList(t) {
  const list = Array.isArray(t) ? t : t && typeof t === 'object' && Array.isArray(t.transfer) ? t.transfer : null;
  if (!list) return null;
  const moved = [];
  for (let i = 0; i < list.length; i++) {
    const st = portStates.get(list[i]);
    if (st && !st.gone) moved.push(st);
  }
  return moved.length ? moved : null;
}

// arrived: the ports that moved (PortStates) are now the ports created
// (in the same order); each takes over its queue and its peer.
function arrived(moved, created) {
  for (let i = 0; i < moved.length; i++) {
    const from = moved[i];
    const queue = from.forget();
    const to = created && created[i] instanceof MessagePort && !portStates.has(created[i]) ? new PortState(created[i], queue) : null;
    if (!to) continue;
    to.peer = from.peer;
    if (from.peer) from.peer.peer = to;
  }
}

{
  const NodeMessageChannel = MessageChannel;
  Object.defineProperty(globalThis, 'MessageChannel', {
    value: new Proxy(NodeMessageChannel, {
      construct(target, args, newTarget) {
        const c = Reflect.construct(target, args, newTarget);
        const a = new PortState(Object.getOwnPropertyDescriptor(c, 'port1').value, []);
        const b = new PortState(Object.getOwnPropertyDescriptor(c, 'port2').value, []);
        a.peer = b;
        b.peer = a;
        return c;
      },
    }),
    writable: true,
    configurable: true,
    enumerable: false,
  });
  const proto = MessagePort.prototype;
  const nodePostMessage = proto.postMessage;
  const nodeClose = proto.close;
  const wrap = (name, fn) => Object.defineProperty(proto, name, { ...Object.getOwnPropertyDescriptor(proto, name), value: fn });
  wrap('postMessage', function postMessage(...args) {
    const st = portStates.get(this);
    const to = st && !st.gone ? st.peer : null;
    const moved = args.length > 1 ? transferList(args[1]) : null;
    // The moved ports go along with the value when the receiving port is
    // one whose deliveries are seen here, which takes them off.
    if (moved && to) args[0] = [args[0], moved.map((t) => t.port)];
    const result = Reflect.apply(nodePostMessage, this, args);
    if (moved) for (const t of moved) to ? t.move() : t.forget();
    if (to) to.posted(moved);
    return result;
  });
  wrap('close', function close(...args) {
    const st = portStates.get(this);
    if (st) {
      st.gone = true;
      if (st.peer) st.peer.gone = true;
    }
    return Reflect.apply(nodeClose, this, args);
  });
  const nodeStructuredClone = structuredClone;
  globalThis.structuredClone = function structuredClone(value, opts) {
    const moved = transferList(opts);
    if (!moved) return Reflect.apply(nodeStructuredClone, undefined, arguments);
    const [copy, created] = Reflect.apply(nodeStructuredClone, undefined, [[value, moved.map((t) => t.port)], opts]);
    for (const t of moved) t.move();
    arrived(moved, created);
    return copy;
  };
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

// trimStack drops this executor's stack frames, which say nothing about
// the render and name its path on the server, and the stack frames below
// the render's own code (the vm call, timers and promise jobs as Node runs
// them, this executor's): a stack shows the bundle's, the environment's and
// the request's, as on the in-process engines.
function trimStack(stack) {
  const lines = stack.split('\n');
  const isStackFrame = (line) => line.startsWith('    at ');
  const executors = (line) => line.includes(__filename + ':');
  const runsIt = (line) => executors(line) || /[( ]node:[a-z_/]+:\d+:\d+\)?$/.test(line);
  let end = lines.length;
  while (end > 0 && isStackFrame(lines[end - 1]) && runsIt(lines[end - 1])) end--;
  return lines.slice(0, end).filter((line) => !(isStackFrame(line) && executors(line))).join('\n');
}

