// tests/testdata/bundles/async-props.js: a hand-written CommonJS bundle for
// the incremental-render (async props) route, PROTOCOL.md §8. It needs the
// support-modules environment (require('stream'), Buffer, setImmediate) and
// is copied verbatim (no npm, no build step).
//
//   AsyncPropsApp.render({ title, expected, railsContext })
//     the rendering request: returns a stream.PassThrough that gets the shell
//     frame at once, then one frame per delivered prop. In pull mode
//     (sharedExecutionContext.get('pullEnabled')) it asks for every expected
//     prop not in pushProps with sharedExecutionContext.get('propRequestEmitter'),
//     on the turn after the shell frame (setImmediate).
//   AsyncPropsApp.deliver(name, value)
//     an update chunk: writes that prop's frame (on a microtask); the stream
//     ends when every expected prop has arrived.
//   AsyncPropsApp.close()
//     the onRequestClosedUpdateChunk: writes one last frame naming the props
//     that never arrived, then ends the stream (nothing if already ended).
//
// Frames use the React on Rails length-prefixed framing:
//   <metadata JSON>\t<content byte length, 8 lower-case hex digits>\n<content>
// The state of a render lives in the request's sharedExecutionContext (the
// Map shared by all evaluations of one HTTP request), never in module scope:
// module state is shared by every request that uses this bundle.
'use strict';

var PassThrough = require('stream').PassThrough;

var SESSION_KEY = 'asyncPropsApp.session';
var META = { consoleReplayScript: '', hasErrors: false, isShellReady: true };

function frame(content) {
  var hex = Buffer.byteLength(content, 'utf8').toString(16);
  while (hex.length < 8) hex = '0' + hex;
  return JSON.stringify(META) + '\t' + hex + '\n' + content;
}

function escapeHtml(value) {
  return String(value).replace(/[&<>"']/g, function (c) {
    return '&#' + c.charCodeAt(0) + ';';
  });
}

var RENDERERS = {
  user: function (user) {
    return '<p class="user">' + escapeHtml(user.name) + ' \u2014 ' + escapeHtml(user.city) + '</p>';
  },
  comments: function (comments) {
    return '<ul class="comments">' + comments.map(function (c) {
      return '<li><b>' + escapeHtml(c.author) + '</b>: ' + escapeHtml(c.text) + '</li>';
    }).join('') + '</ul>';
  },
};

function renderProp(name, value) {
  var body = RENDERERS[name] ? RENDERERS[name](value) : '<pre>' + escapeHtml(JSON.stringify(value)) + '</pre>';
  return '<template data-async-prop="' + escapeHtml(name) + '">' + body + '</template>';
}

function currentSession(what) {
  var session = sharedExecutionContext.get(SESSION_KEY);
  if (!session) throw new Error('AsyncPropsApp.' + what + ': no render in progress for this request');
  return session;
}

function finish(session) {
  if (session.done) return;
  session.done = true;
  session.out.end();
}

function render(options) {
  var ctx = sharedExecutionContext;
  var session = { out: new PassThrough(), expected: options.expected.slice(), received: {}, done: false };
  ctx.set(SESSION_KEY, session);

  var html = '<div id="async-props-app" data-location="' + escapeHtml(options.railsContext.location) + '">' +
    '<h1>' + escapeHtml(options.title) + '</h1>' +
    session.expected.map(function (name) {
      return '<section data-async-prop="' + escapeHtml(name) + '"><p class="loading">Loading ' + escapeHtml(name) + '\u2026</p></section>';
    }).join('') +
    '</div>';
  session.out.write(frame(html));

  if (ctx.get('pullEnabled') === true) {
    var emit = ctx.get('propRequestEmitter');
    var pushed = ctx.get('pushProps');
    var wanted = session.expected.filter(function (name) { return !(pushed && pushed.has(name)); });
    setImmediate(function () {
      wanted.forEach(function (name) { emit(name); });
    });
  }
  return session.out;
}

function deliver(name, value) {
  var session = currentSession('deliver');
  if (session.done || session.expected.indexOf(name) < 0 || Object.prototype.hasOwnProperty.call(session.received, name)) {
    return false;
  }
  session.received[name] = true;
  Promise.resolve().then(function () {
    if (session.done) return;
    session.out.write(frame(renderProp(name, value)));
    var complete = session.expected.every(function (n) {
      return Object.prototype.hasOwnProperty.call(session.received, n);
    });
    if (complete) finish(session);
  });
  return true;
}

function close() {
  var session = currentSession('close');
  if (session.done) return false;
  Promise.resolve().then(function () {
    if (session.done) return;
    var missing = session.expected.filter(function (n) {
      return !Object.prototype.hasOwnProperty.call(session.received, n);
    });
    session.out.write(frame('<template data-async-props-missing="' + escapeHtml(missing.join(' ')) + '"></template>'));
    finish(session);
  });
  return true;
}

globalThis.AsyncPropsApp = { render: render, deliver: deliver, close: close };
