'use strict';
// crypto basics, in the host: random bytes, random UUIDs, hashes and HMACs
// (md5, sha1, sha224, sha256, sha384, sha512), getRandomValues.

var state = require('./state');
var errors = require('./errors');

var host = state.host;
function B() { return require('./buffer').Buffer; }

function toBytes(data, encoding, name) {
  var Buffer = B();
  if (typeof data === 'string') return Buffer.from(data, encoding || 'utf8');
  if (data instanceof ArrayBuffer) return Buffer.from(data);
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  throw errors.invalidArgType(name || 'data', 'of type string or an instance of Buffer, TypedArray, or DataView', data);
}

function bufferOf(u8) {
  var Buffer = B();
  return Buffer.from(u8.buffer, u8.byteOffset, u8.byteLength);
}

function Hash(algorithm, key) {
  this._alg = String(algorithm);
  this._key = key;
  this._chunks = [];
  this._done = false;
  host.hash(this._alg, key ? key.buffer.slice(key.byteOffset, key.byteOffset + key.byteLength) : null, null);
}
Hash.prototype.update = function update(data, inputEncoding) {
  if (this._done) throw errors.withCode(new Error('Digest already called'), 'ERR_CRYPTO_HASH_FINALIZED');
  this._chunks.push(toBytes(data, inputEncoding));
  return this;
};
Hash.prototype.digest = function digest(outputEncoding) {
  if (this._done) throw errors.withCode(new Error('Digest already called'), 'ERR_CRYPTO_HASH_FINALIZED');
  this._done = true;
  var all = B().concat(this._chunks);
  this._chunks = null;
  var key = this._key;
  var out = B().from(host.hash(this._alg,
    key ? key.buffer.slice(key.byteOffset, key.byteOffset + key.byteLength) : null,
    all.buffer.slice(all.byteOffset, all.byteOffset + all.byteLength)));
  return outputEncoding && outputEncoding !== 'buffer' ? out.toString(outputEncoding) : out;
};
Hash.prototype.copy = function copy() {
  if (this._done) throw errors.withCode(new Error('Digest already called'), 'ERR_CRYPTO_HASH_FINALIZED');
  var h = Object.create(Hash.prototype);
  h._alg = this._alg; h._key = this._key; h._chunks = this._chunks.slice(); h._done = false;
  return h;
};

function createHash(algorithm) {
  if (typeof algorithm !== 'string') throw errors.invalidArgType('algorithm', 'of type string', algorithm);
  return new Hash(algorithm, null);
}
function createHmac(algorithm, key) {
  if (typeof algorithm !== 'string') throw errors.invalidArgType('hmac', 'of type string', algorithm);
  return new Hash(algorithm, toBytes(key, 'utf8', 'key'));
}

function randomBytes(size, cb) {
  if (typeof size !== 'number' || size < 0 || size > 2147483647 || size !== Math.floor(size)) {
    throw errors.withCode(new RangeError('The value of "size" is out of range. It must be >= 0 && <= 2147483647. Received ' + size), 'ERR_OUT_OF_RANGE');
  }
  var b = B().from(host.randomBytes(size));
  if (typeof cb === 'function') {
    require('./process').nextTick(function () { cb(null, b); });
    return undefined;
  }
  return b;
}

function getRandomValues(array) {
  if (!ArrayBuffer.isView(array) || array instanceof Float32Array || array instanceof Float64Array || array instanceof DataView) {
    var DOMException = require('./events-target').DOMException;
    throw new DOMException("The data argument must be an integer-type TypedArray", 'TypeMismatchError');
  }
  if (array.byteLength > 65536) {
    var DOMException2 = require('./events-target').DOMException;
    throw new DOMException("The ArrayBufferView's byte length (" + array.byteLength + ') exceeds the number of bytes of entropy available via this API (65536)', 'QuotaExceededError');
  }
  new Uint8Array(array.buffer, array.byteOffset, array.byteLength).set(new Uint8Array(host.randomBytes(array.byteLength)));
  return array;
}

function randomUUID() { return host.randomUUID(); }

function randomInt(min, max, cb) {
  if (max === undefined || typeof max === 'function') { cb = max; max = min; min = 0; }
  var range = max - min;
  var bytes = new Uint8Array(host.randomBytes(6));
  var x = 0;
  for (var i = 0; i < 6; i++) x = x * 256 + bytes[i];
  var n = min + Math.floor((x / 281474976710656) * range);
  if (typeof cb === 'function') { require('./process').nextTick(function () { cb(null, n); }); return undefined; }
  return n;
}

function timingSafeEqual(a, b) {
  if (a.byteLength !== b.byteLength) {
    throw errors.withCode(new RangeError('Input buffers must have the same byte length'), 'ERR_CRYPTO_TIMING_SAFE_EQUAL_LENGTH');
  }
  var x = new Uint8Array(a.buffer, a.byteOffset, a.byteLength), y = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  var d = 0;
  for (var i = 0; i < x.length; i++) d |= x[i] ^ y[i];
  return d === 0;
}

function unsupported(name) {
  return function () {
    throw errors.withCode(new Error('crypto.' + name + ' is not available in gorender: only hashes, HMACs and random values are'), 'ERR_FEATURE_UNAVAILABLE_ON_PLATFORM');
  };
}

var webcrypto = {
  getRandomValues: getRandomValues,
  randomUUID: randomUUID,
};
Object.defineProperty(webcrypto, 'subtle', { enumerable: true, get: unsupported('subtle') });

module.exports = {
  createHash: createHash,
  createHmac: createHmac,
  randomBytes: randomBytes,
  pseudoRandomBytes: randomBytes,
  randomFillSync: function (buf, offset, size) {
    offset = offset || 0;
    size = size === undefined ? buf.byteLength - offset : size;
    new Uint8Array(buf.buffer || buf, (buf.byteOffset || 0) + offset, size).set(new Uint8Array(host.randomBytes(size)));
    return buf;
  },
  randomUUID: randomUUID,
  randomInt: randomInt,
  getRandomValues: getRandomValues,
  timingSafeEqual: timingSafeEqual,
  getHashes: function () { return ['md5', 'sha1', 'sha224', 'sha256', 'sha384', 'sha512']; },
  webcrypto: webcrypto,
  subtle: undefined,
  createCipheriv: unsupported('createCipheriv'),
  createDecipheriv: unsupported('createDecipheriv'),
  createSign: unsupported('createSign'),
  createVerify: unsupported('createVerify'),
  pbkdf2: unsupported('pbkdf2'),
  pbkdf2Sync: unsupported('pbkdf2Sync'),
  scrypt: unsupported('scrypt'),
  scryptSync: unsupported('scryptSync'),
  generateKeyPair: unsupported('generateKeyPair'),
  generateKeyPairSync: unsupported('generateKeyPairSync'),
  createPublicKey: unsupported('createPublicKey'),
  createPrivateKey: unsupported('createPrivateKey'),
  createSecretKey: unsupported('createSecretKey'),
};
Object.defineProperty(module.exports, 'subtle', { enumerable: true, get: unsupported('subtle') });
