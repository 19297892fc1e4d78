'use strict';
// events: EventEmitter from the events package, plus Node 20's helpers.

var EventEmitter = require('events');

if (!EventEmitter.errorMonitor) EventEmitter.errorMonitor = Symbol('events.errorMonitor');
if (!EventEmitter.captureRejectionSymbol) EventEmitter.captureRejectionSymbol = Symbol.for('nodejs.rejection');
if (!EventEmitter.setMaxListeners) EventEmitter.setMaxListeners = function () {};
if (!EventEmitter.getEventListeners) {
  EventEmitter.getEventListeners = function (emitter, name) {
    return typeof emitter.listeners === 'function' ? emitter.listeners(name) : [];
  };
}
if (!EventEmitter.addAbortListener) {
  EventEmitter.addAbortListener = function (signal, listener) {
    signal.addEventListener('abort', listener, { once: true });
    return { dispose: function () { signal.removeEventListener('abort', listener); } };
  };
}
EventEmitter.EventEmitter = EventEmitter;

module.exports = EventEmitter;
