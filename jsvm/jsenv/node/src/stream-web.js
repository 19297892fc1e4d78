'use strict';
// stream/web: WHATWG streams (web-streams-polyfill) and the text streams.

var ws = require('web-streams-polyfill');
var text = require('./text');

class TextEncoderStream {
  constructor() {
    var enc = new text.TextEncoder();
    var pendingHigh = '';
    var ts = new ws.TransformStream({
      transform: function (chunk, controller) {
        var s = pendingHigh + String(chunk);
        pendingHigh = '';
        var last = s.charCodeAt(s.length - 1);
        if (last >= 0xD800 && last <= 0xDBFF) { pendingHigh = s[s.length - 1]; s = s.slice(0, -1); }
        if (s) controller.enqueue(enc.encode(s));
      },
      flush: function (controller) { if (pendingHigh) controller.enqueue(enc.encode(pendingHigh)); },
    });
    this._ts = ts;
  }
  get encoding() { return 'utf-8'; }
  get readable() { return this._ts.readable; }
  get writable() { return this._ts.writable; }
}

class TextDecoderStream {
  constructor(label, options) {
    var dec = new text.TextDecoder(label, options);
    this._dec = dec;
    this._ts = new ws.TransformStream({
      transform: function (chunk, controller) {
        var s = dec.decode(chunk, { stream: true });
        if (s) controller.enqueue(s);
      },
      flush: function (controller) {
        var s = dec.decode();
        if (s) controller.enqueue(s);
      },
    });
  }
  get encoding() { return this._dec.encoding; }
  get fatal() { return this._dec.fatal; }
  get ignoreBOM() { return this._dec.ignoreBOM; }
  get readable() { return this._ts.readable; }
  get writable() { return this._ts.writable; }
}

module.exports = {
  ReadableStream: ws.ReadableStream,
  ReadableStreamDefaultReader: ws.ReadableStreamDefaultReader,
  ReadableStreamBYOBReader: ws.ReadableStreamBYOBReader,
  ReadableStreamBYOBRequest: ws.ReadableStreamBYOBRequest,
  ReadableByteStreamController: ws.ReadableByteStreamController,
  ReadableStreamDefaultController: ws.ReadableStreamDefaultController,
  TransformStream: ws.TransformStream,
  TransformStreamDefaultController: ws.TransformStreamDefaultController,
  WritableStream: ws.WritableStream,
  WritableStreamDefaultWriter: ws.WritableStreamDefaultWriter,
  WritableStreamDefaultController: ws.WritableStreamDefaultController,
  ByteLengthQueuingStrategy: ws.ByteLengthQueuingStrategy,
  CountQueuingStrategy: ws.CountQueuingStrategy,
  TextEncoderStream: TextEncoderStream,
  TextDecoderStream: TextDecoderStream,
};
