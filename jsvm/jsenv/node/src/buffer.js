'use strict';
// buffer: Buffer from the buffer package, plus atob/btoa and constants.

var b = require('buffer/');
var state = require('./state');

var Buffer = b.Buffer;

// The package measures a UTF-8 string by encoding it into an array in
// JavaScript; React's Node streaming renderer measures every chunk it
// writes (Buffer.byteLength(chunk, 'utf8')), which made that 35% of a
// streamed render on goja. The host counts the bytes instead (a lone
// surrogate counts 3, as U+FFFD, like Node).
var packageByteLength = Buffer.byteLength;
Buffer.byteLength = function byteLength(string, encoding) {
  if (typeof string === 'string' && (encoding === undefined || encoding === 'utf8' || encoding === 'utf-8')) {
    return state.host.utf8Length(string);
  }
  return packageByteLength.apply(this, arguments);
};

// The package encodes a string into an array of numbers before it makes
// the Buffer: on goja 16 bytes of memory per byte of UTF-8, outside any
// bound (Buffer.from of a 30-million-character string took 1.4 GB). The
// host encodes it straight into an ArrayBuffer, within the per-render
// allocation bound (RENDERER_MAX_ALLOCATION), and the Buffer shares it.
var packageFrom = Buffer.from;
Buffer.from = function from(value, encodingOrOffset, length) {
  if (typeof value === 'string' && (encodingOrOffset === undefined || encodingOrOffset === 'utf8' || encodingOrOffset === 'utf-8')) {
    return packageFrom.call(this, state.host.utf8Encode(value));
  }
  return packageFrom.apply(this, arguments);
};

function atob(input) {
  if (arguments.length === 0) throw require('./errors').withCode(new TypeError('The "data" argument must be specified'), 'ERR_MISSING_ARGS');
  var s = String(input).replace(/[\t\n\f\r ]/g, '');
  if (s.length % 4 === 0) s = s.replace(/==?$/, '');
  if (s.length % 4 === 1 || /[^+/0-9A-Za-z]/.test(s)) {
    var DOMException = require('./events-target').DOMException;
    throw new DOMException('The string to be decoded is not correctly encoded.', 'InvalidCharacterError');
  }
  return Buffer.from(s, 'base64').toString('latin1');
}

function btoa(input) {
  if (arguments.length === 0) throw require('./errors').withCode(new TypeError('The "data" argument must be specified'), 'ERR_MISSING_ARGS');
  var s = String(input);
  for (var i = 0; i < s.length; i++) {
    if (s.charCodeAt(i) > 255) {
      var DOMException = require('./events-target').DOMException;
      throw new DOMException('Invalid character', 'InvalidCharacterError');
    }
  }
  return Buffer.from(s, 'latin1').toString('base64');
}

module.exports = {
  Buffer: Buffer,
  SlowBuffer: b.SlowBuffer,
  INSPECT_MAX_BYTES: b.INSPECT_MAX_BYTES,
  kMaxLength: b.kMaxLength,
  kStringMaxLength: 536870888,
  constants: { MAX_LENGTH: b.kMaxLength, MAX_STRING_LENGTH: 536870888 },
  atob: atob,
  btoa: btoa,
  isUtf8: function (input) {
    try { new (require('./text').TextDecoder)('utf-8', { fatal: true }).decode(input); return true; } catch (e) { return false; }
  },
};
