'use strict';
// assert: the basics (ok, equal, strictEqual, deepStrictEqual, throws…),
// enough for library invariants.

var util = require('./util');

class AssertionError extends Error {
  constructor(options) {
    super(options.message);
    this.name = 'AssertionError';
    this.code = 'ERR_ASSERTION';
    this.actual = options.actual;
    this.expected = options.expected;
    this.operator = options.operator;
    this.generatedMessage = !options.userMessage;
  }
}

function fail(actual, expected, message, operator, defaultMessage) {
  if (message instanceof Error) throw message;
  throw new AssertionError({
    message: message !== undefined ? message : defaultMessage, userMessage: message !== undefined,
    actual: actual, expected: expected, operator: operator,
  });
}

function assert(value, message) {
  if (!value) fail(value, true, message, '==', 'The expression evaluated to a falsy value:\n\n  assert(' + util.inspect(value) + ')\n');
}
assert.ok = function ok(value, message) {
  if (!value) fail(value, true, message, '==', 'The expression evaluated to a falsy value:\n\n  assert.ok(' + util.inspect(value) + ')\n');
};
assert.equal = function (a, b, m) { if (!(a == b)) fail(a, b, m, '==', util.inspect(a) + ' == ' + util.inspect(b)); }; // eslint-disable-line eqeqeq
assert.notEqual = function (a, b, m) { if (a == b) fail(a, b, m, '!=', util.inspect(a) + ' != ' + util.inspect(b)); }; // eslint-disable-line eqeqeq
assert.strictEqual = function (a, b, m) { if (!Object.is(a, b)) fail(a, b, m, 'strictEqual', 'Expected values to be strictly equal:\n\n' + util.inspect(a) + ' !== ' + util.inspect(b) + '\n'); };
assert.notStrictEqual = function (a, b, m) { if (Object.is(a, b)) fail(a, b, m, 'notStrictEqual', 'Expected "actual" to be strictly unequal to: ' + util.inspect(b)); };
assert.deepEqual = assert.deepStrictEqual = function (a, b, m) { if (!util.isDeepStrictEqual(a, b)) fail(a, b, m, 'deepStrictEqual', 'Expected values to be strictly deep-equal'); };
assert.notDeepEqual = assert.notDeepStrictEqual = function (a, b, m) { if (util.isDeepStrictEqual(a, b)) fail(a, b, m, 'notDeepStrictEqual', 'Expected "actual" not to be strictly deep-equal to: ' + util.inspect(b)); };
assert.fail = function (message) { fail(undefined, undefined, message === undefined ? 'Failed' : message, 'fail', 'Failed'); };
assert.throws = function (fn, expected, message) {
  try { fn(); } catch (e) { return; }
  fail(undefined, expected, typeof expected === 'string' ? expected : message, 'throws', 'Missing expected exception.');
};
assert.doesNotThrow = function (fn) { fn(); };
assert.ifError = function (err) { if (err !== null && err !== undefined) throw err; };
assert.match = function (s, re, m) { if (!re.test(s)) fail(s, re, m, 'match', 'The input did not match the regular expression ' + String(re)); };
assert.AssertionError = AssertionError;
assert.strict = assert;

module.exports = assert;
