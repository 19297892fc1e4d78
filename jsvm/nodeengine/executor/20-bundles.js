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
  r.calling.set(caller, asyncContext.getStore());
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
  const prev = asyncContext.getStore();
  try {
    if (r.calling.has(other)) asyncContext.enterWith(r.calling.get(other));
    else if (other === r.entry) asyncContext.enterWith(r.entryContext);
    else other.begin(code);
    return fn();
  } finally {
    asyncContext.enterWith(prev);
  }
}

