'use strict';
// Node-style errors with a code.

function describe(value) {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (typeof value === 'function') return 'function ' + (value.name || '<anonymous>');
  if (typeof value === 'object') {
    if (value.constructor && value.constructor.name) return 'an instance of ' + value.constructor.name;
    return 'an instance of Object';
  }
  var shown = String(value);
  if (shown.length > 28) shown = shown.slice(0, 25) + '...';
  if (typeof value === 'string') shown = "'" + shown + "'";
  return 'type ' + typeof value + ' (' + shown + ')';
}

function withCode(err, code) {
  err.code = code;
  return err;
}

exports.invalidArgType = function (name, expected, value) {
  return withCode(new TypeError('The "' + name + '" argument must be ' + expected + '. Received ' + describe(value)),
    'ERR_INVALID_ARG_TYPE');
};

exports.invalidArgValue = function (name, value, reason) {
  return withCode(new TypeError("The argument '" + name + "' " + (reason || 'is invalid') + '. Received ' + describe(value)),
    'ERR_INVALID_ARG_VALUE');
};

exports.withCode = withCode;

// fsError builds the Error of a failed file system call from the host's
// description [code, errno, syscall, path, message].
exports.fsError = function (d) {
  var err = new Error(d[4]);
  err.errno = d[1];
  err.code = d[0];
  err.syscall = d[2];
  err.path = d[3];
  return err;
};
