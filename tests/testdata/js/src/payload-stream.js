// tests/testdata/bundles/payload-stream.js: a hand-written CommonJS bundle
// (support modules: require('stream'), ReadableStream, TextEncoder, timers),
// copied verbatim (no npm, no build step). It plays the RSC bundle of React
// on Rails Pro's RSC rendering flow: the server bundle (stream-app.js,
// renderCrossStream) obtains a payload from it as a stream, through
// runOnOtherBundle, and renders each part as it arrives.
//
//   PayloadStream.lines(items, ms, lastAfter)
//     a Node stream.PassThrough that writes one NDJSON line per item, one
//     every ms milliseconds (the first after ms), then ends; the last line
//     also waits for the promise lastAfter when given (tests: flushed as
//     produced, without timing).
//   PayloadStream.web(items, ms, lastAfter)
//     the same as a web ReadableStream of UTF-8 bytes.
//   PayloadStream.open()
//     how many of these streams are open: neither ended nor cancelled.
'use strict';

var PassThrough = require('stream').PassThrough;

var open = 0;

// produce calls write(line) for each item on its timer, then end(); it
// returns stop(), which cancels what is left.
function produce(items, ms, lastAfter, write, end) {
  var i = 0;
  var timer = null;
  var stopped = false;
  function next() {
    timer = null;
    if (stopped) return;
    write(JSON.stringify(items[i]) + '\n');
    i += 1;
    if (i === items.length) {
      end();
      return;
    }
    schedule();
  }
  function schedule() {
    var last = i === items.length - 1;
    timer = setTimeout(function () {
      if (last && lastAfter) Promise.resolve(lastAfter).then(next);
      else next();
    }, ms);
  }
  open += 1;
  schedule();
  return function stop() {
    if (stopped) return;
    stopped = true;
    open -= 1;
    if (timer !== null) clearTimeout(timer);
  };
}

globalThis.PayloadStream = {
  lines: function (items, ms, lastAfter) {
    var out = new PassThrough();
    var stop = produce(items, ms, lastAfter, function (line) { out.write(line); }, function () { out.end(); });
    out.on('close', stop);
    return out;
  },
  web: function (items, ms, lastAfter) {
    var encoder = new TextEncoder();
    var stop;
    return new ReadableStream({
      start: function (controller) {
        stop = produce(items, ms, lastAfter, function (line) { controller.enqueue(encoder.encode(line)); }, function () {
          stop();
          controller.close();
        });
      },
      cancel: function () { stop(); },
    });
  },
  open: function () { return open; },
};
