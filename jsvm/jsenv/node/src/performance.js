'use strict';
// performance: now() and timeOrigin from the host clock; marks and measures
// are accepted and not recorded.

var state = require('./state');

var host = state.host;
var performance = {
  now: function now() { return host.now(); },
  timeOrigin: host.timeOrigin,
  mark: function () { return undefined; },
  measure: function () { return undefined; },
  clearMarks: function () {},
  clearMeasures: function () {},
  clearResourceTimings: function () {},
  getEntries: function () { return []; },
  getEntriesByName: function () { return []; },
  getEntriesByType: function () { return []; },
  eventLoopUtilization: function () { return { idle: 0, active: 0, utilization: 0 }; },
  timerify: function (fn) { return fn; },
  toJSON: function () { return { timeOrigin: host.timeOrigin }; },
};

module.exports = performance;
