'use strict';
// timers and timers/promises over the environment's real timers.

var state = require('./state');

var t = state.env.timers;

function abortError(signal) {
  var DOMException = require('./events-target').DOMException;
  var err = new DOMException('The operation was aborted', 'AbortError');
  err.cause = signal && signal.reason;
  return err;
}

function delayed(schedule, clear) {
  return function (delay, value, options) {
    var signal = options && options.signal;
    return new Promise(function (resolve, reject) {
      if (signal && signal.aborted) { reject(abortError(signal)); return; }
      var onAbort;
      var handle = schedule(function () {
        if (signal) signal.removeEventListener('abort', onAbort);
        resolve(value);
      }, delay);
      if (options && options.ref === false && handle && handle.unref) handle.unref();
      if (signal) {
        onAbort = function () { clear(handle); reject(abortError(signal)); };
        signal.addEventListener('abort', onAbort, { once: true });
      }
    });
  };
}

var promises = {
  setTimeout: delayed(function (fn, d) { return t.setTimeout(fn, d); }, t.clearTimeout),
  setImmediate: function (value, options) {
    return delayed(function (fn) { return t.setImmediate(fn); }, t.clearImmediate)(0, value, options);
  },
  scheduler: {
    wait: function (delay, options) { return promises.setTimeout(delay, undefined, options); },
    yield: function () { return promises.setImmediate(); },
  },
};

module.exports = {
  setTimeout: t.setTimeout,
  clearTimeout: t.clearTimeout,
  setInterval: t.setInterval,
  clearInterval: t.clearInterval,
  setImmediate: t.setImmediate,
  clearImmediate: t.clearImmediate,
  promises: promises,
};
