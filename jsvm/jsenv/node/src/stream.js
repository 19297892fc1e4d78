'use strict';
// stream: Node's streams from readable-stream (Readable, Writable, Duplex,
// Transform, PassThrough, pipeline, finished, promises…).

var rs = require('readable-stream');

module.exports = rs;
