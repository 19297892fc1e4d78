'use strict';
// DOMException, Event, EventTarget, AbortController and AbortSignal as Node
// 20 has them globally (small, spec-shaped implementations).

var ERROR_CODES = {
  IndexSizeError: 1, HierarchyRequestError: 3, WrongDocumentError: 4, InvalidCharacterError: 5,
  NoModificationAllowedError: 7, NotFoundError: 8, NotSupportedError: 9, InvalidStateError: 11,
  SyntaxError: 12, InvalidModificationError: 13, NamespaceError: 14, InvalidAccessError: 15,
  TypeMismatchError: 17, SecurityError: 18, NetworkError: 19, AbortError: 20, URLMismatchError: 21,
  QuotaExceededError: 22, TimeoutError: 23, InvalidNodeTypeError: 24, DataCloneError: 25,
};

class DOMException extends Error {
  constructor(message, options) {
    super(message === undefined ? '' : String(message));
    var name = 'Error';
    if (options !== null && typeof options === 'object') {
      if (options.name !== undefined) name = String(options.name);
      if ('cause' in options) Object.defineProperty(this, 'cause', { value: options.cause, writable: true, configurable: true });
    } else if (options !== undefined) {
      name = String(options);
    }
    Object.defineProperty(this, 'name', { value: name, writable: true, configurable: true });
  }
  get code() { return ERROR_CODES[this.name] || 0; }
}
Object.keys(ERROR_CODES).forEach(function (name) {
  var constName = name.replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase().replace(/_ERROR$/, '_ERR');
  Object.defineProperty(DOMException, constName, { value: ERROR_CODES[name], enumerable: true });
});

var kStop = Symbol('stop');
var kCanceled = Symbol('canceled');

class Event {
  constructor(type, init) {
    if (arguments.length === 0) throw new TypeError('The "type" argument must be specified');
    init = init || {};
    this.type = String(type);
    this.bubbles = !!init.bubbles;
    this.cancelable = !!init.cancelable;
    this.composed = !!init.composed;
    this.defaultPrevented = false;
    this.timeStamp = Date.now();
    this.isTrusted = false;
    this.target = null;
    this.currentTarget = null;
    this.eventPhase = 0;
    this[kStop] = false;
    this[kCanceled] = false;
  }
  get srcElement() { return this.target; }
  get returnValue() { return !this.defaultPrevented; }
  get cancelBubble() { return this[kStop]; }
  composedPath() { return this.currentTarget ? [this.currentTarget] : []; }
  preventDefault() { if (this.cancelable) this.defaultPrevented = true; }
  stopPropagation() { this[kStop] = true; }
  stopImmediatePropagation() { this[kStop] = true; }
}
Event.NONE = 0; Event.CAPTURING_PHASE = 1; Event.AT_TARGET = 2; Event.BUBBLING_PHASE = 3;

var kListeners = Symbol('listeners');

class EventTarget {
  constructor() { this[kListeners] = new Map(); }
  addEventListener(type, listener, options) {
    if (listener == null) return;
    var once = false, signal = null, capture = false;
    if (typeof options === 'object' && options !== null) {
      once = !!options.once; signal = options.signal || null; capture = !!options.capture;
    } else {
      capture = !!options;
    }
    if (signal && signal.aborted) return;
    var list = this[kListeners].get(type);
    if (!list) { list = []; this[kListeners].set(type, list); }
    for (var i = 0; i < list.length; i++) {
      if (list[i].listener === listener && list[i].capture === capture) return;
    }
    var entry = { listener: listener, once: once, capture: capture, removed: false };
    list.push(entry);
    if (signal) {
      var self = this;
      signal.addEventListener('abort', function () { self.removeEventListener(type, listener, options); }, { once: true });
    }
  }
  removeEventListener(type, listener, options) {
    var capture = typeof options === 'object' && options !== null ? !!options.capture : !!options;
    var list = this[kListeners].get(type);
    if (!list) return;
    for (var i = 0; i < list.length; i++) {
      if (list[i].listener === listener && list[i].capture === capture) {
        list[i].removed = true;
        list.splice(i, 1);
        return;
      }
    }
  }
  dispatchEvent(event) {
    if (!(event instanceof Event)) throw new TypeError('The "event" argument must be an instance of Event.');
    event.target = this;
    event.currentTarget = this;
    event.eventPhase = 2;
    var list = this[kListeners].get(event.type);
    if (list) {
      var copy = list.slice();
      for (var i = 0; i < copy.length; i++) {
        var entry = copy[i];
        if (entry.removed) continue;
        if (entry.once) this.removeEventListener(event.type, entry.listener, { capture: entry.capture });
        var fn = entry.listener;
        try {
          if (typeof fn === 'function') fn.call(this, event);
          else if (fn && typeof fn.handleEvent === 'function') fn.handleEvent(event);
        } catch (e) {
          reportError(e);
        }
        if (event[kStop]) break;
      }
    }
    event.currentTarget = null;
    event.eventPhase = 0;
    return !event.defaultPrevented;
  }
}

function reportError(e) {
  // Node reports listener exceptions as uncaught exceptions.
  var q = globalThis.queueMicrotask;
  if (typeof q === 'function') q(function () { throw e; });
}

var kAborted = Symbol('aborted');
var kReason = Symbol('reason');
var kOnabort = Symbol('onabort');
var constructing = false;

class AbortSignal extends EventTarget {
  constructor() {
    if (!constructing) throw new TypeError('Illegal constructor');
    super();
    this[kAborted] = false;
    this[kReason] = undefined;
    this[kOnabort] = null;
  }
  get aborted() { return this[kAborted]; }
  get reason() { return this[kReason]; }
  get onabort() { return this[kOnabort]; }
  set onabort(fn) {
    if (this[kOnabort]) this.removeEventListener('abort', this[kOnabort]);
    this[kOnabort] = typeof fn === 'function' ? fn : null;
    if (this[kOnabort]) this.addEventListener('abort', this[kOnabort]);
  }
  throwIfAborted() { if (this[kAborted]) throw this[kReason]; }
  static abort(reason) {
    var s = newSignal();
    abortSignal(s, reason === undefined ? new DOMException('This operation was aborted', 'AbortError') : reason);
    return s;
  }
  static timeout(ms) {
    var s = newSignal();
    var t = setTimeout(function () {
      abortSignal(s, new DOMException('The operation was aborted due to timeout', 'TimeoutError'));
    }, ms);
    if (t && typeof t.unref === 'function') t.unref();
    return s;
  }
  static any(signals) {
    var s = newSignal();
    for (var i = 0; i < signals.length; i++) {
      if (signals[i].aborted) { abortSignal(s, signals[i].reason); return s; }
    }
    signals.forEach(function (other) {
      other.addEventListener('abort', function () { abortSignal(s, other.reason); }, { once: true });
    });
    return s;
  }
}
Object.defineProperty(AbortSignal.prototype, Symbol.toStringTag, { value: 'AbortSignal', configurable: true });

function newSignal() {
  constructing = true;
  try { return new AbortSignal(); } finally { constructing = false; }
}

function abortSignal(signal, reason) {
  if (signal[kAborted]) return;
  signal[kAborted] = true;
  signal[kReason] = reason;
  signal.dispatchEvent(new Event('abort'));
}

class AbortController {
  constructor() { this._signal = newSignal(); }
  get signal() { return this._signal; }
  abort(reason) {
    abortSignal(this._signal, reason === undefined ? new DOMException('This operation was aborted', 'AbortError') : reason);
  }
}
Object.defineProperty(AbortController.prototype, Symbol.toStringTag, { value: 'AbortController', configurable: true });

class CustomEvent extends Event {
  constructor(type, init) {
    super(type, init);
    this.detail = init && init.detail !== undefined ? init.detail : null;
  }
}

module.exports = {
  DOMException: DOMException,
  Event: Event,
  EventTarget: EventTarget,
  CustomEvent: CustomEvent,
  AbortController: AbortController,
  AbortSignal: AbortSignal,
  // readable-stream asks for the abort-controller package by name.
  default: AbortController,
};
