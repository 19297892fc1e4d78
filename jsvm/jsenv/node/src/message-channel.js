'use strict';
// MessageChannel/MessagePort: messages are structured-cloned and delivered
// as macrotasks (setImmediate), which is what React's scheduler needs.

var et = require('./events-target');
var structuredClone = require('./structured-clone');

class MessagePort extends et.EventTarget {
  constructor() {
    super();
    this._other = null;
    this._onmessage = null;
    this._closed = false;
  }
  postMessage(data) {
    var other = this._other;
    if (!other || this._closed || other._closed) return;
    var copy = structuredClone(data);
    setImmediate(function () {
      if (other._closed) return;
      var ev = new et.Event('message');
      ev.data = copy;
      ev.ports = [];
      other.dispatchEvent(ev);
    });
  }
  get onmessage() { return this._onmessage; }
  set onmessage(fn) {
    if (this._onmessage) this.removeEventListener('message', this._onmessage);
    this._onmessage = typeof fn === 'function' ? fn : null;
    if (this._onmessage) this.addEventListener('message', this._onmessage);
  }
  start() {}
  close() {
    this._closed = true;
    if (this._other) this._other._closed = true;
  }
  ref() { return this; }
  unref() { return this; }
  hasRef() { return false; }
}

class MessageChannel {
  constructor() {
    this.port1 = new MessagePort();
    this.port2 = new MessagePort();
    this.port1._other = this.port2;
    this.port2._other = this.port1;
  }
}

module.exports = { MessageChannel: MessageChannel, MessagePort: MessagePort };
