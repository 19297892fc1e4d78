package tests

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// Issue 27 (2 and 3): one bundle's code, escaped from its context or not,
// cannot observe or change the renders of a bundle it was not rendered
// with. A render's entry bundle and its dependency bundles are rendered
// together; nothing else is. On the node engine a process belongs to one
// such set for its whole life; goja and quickjs hold it with a runtime per
// bundle. Each test runs on every engine (GORENDER_TEST_ENGINE).

// isolationVictim renders a page holding the request's secret.
const isolationVictim = `globalThis.renderPage = (p) => '<div class="v">' + p.secret + '</div>';`

// isolationSpy, at its top level, wraps the built-ins a render's request and
// answer pass through (Buffer, TextEncoder, TextDecoder, String.prototype
// methods) to record what they see, and counts the async resources an
// async_hooks hook sees; report() answers both. arm() makes the hook throw
// from then on.
const isolationSpy = `
var seen = [], size = 0, quiet = false;
function record(v) {
  if (quiet || size > (1 << 20)) return;
  quiet = true;
  try { var s = typeof v === 'string' ? v : Object.prototype.toString.call(v) === '[object Uint8Array]' ? Buffer.from(v).latin1Slice() : ''; if (s) { seen.push(s); size += s.length; } } catch (e) {}
  quiet = false;
}
function wrap(proto, name) {
  if (!proto || typeof proto[name] !== 'function') return;
  var orig = proto[name];
  proto[name] = function () { var out = orig.apply(this, arguments); record(out); return out; };
}
if (typeof Buffer !== 'undefined') { wrap(Buffer.prototype, 'toString'); wrap(Buffer.prototype, 'utf8Slice'); }
if (typeof TextEncoder !== 'undefined') wrap(TextEncoder.prototype, 'encode');
if (typeof TextDecoder !== 'undefined') wrap(TextDecoder.prototype, 'decode');
var hooks = 0, armed = false;
try {
  require('async_hooks').createHook({ init: function () { hooks++; if (armed) throw new Error('spy hook'); } }).enable();
} catch (e) {}
globalThis.report = function () { quiet = true; var out = JSON.stringify({ seen: seen.join('|'), hooks: hooks }); quiet = false; return out; };
globalThis.arm = function () { armed = true; return 'armed'; };
`

// isolationServer starts a server on the engine under test with the
// issue's setup (modules on, one worker) and uploads the victim and the
// spy; it answers their ids.
func isolationServer(t *testing.T, env map[string]string) (*server, string, string) {
	t.Helper()
	base := map[string]string{
		"RENDERER_SUPPORT_MODULES": "true",
		"RENDERER_WORKERS_COUNT":   "1",
		"RENDERER_RENDER_TIMEOUT":  "20s",
	}
	for k, v := range env {
		base[k] = v
	}
	s := startServer(t, base)
	victim, spy := newID("victim"), newID("spy")
	s.upload(t, map[string]string{victim: isolationVictim, spy: isolationSpy}, nil)
	return s, victim, spy
}

// renderVictim renders the victim's page for secret and checks it answers
// its own HTML.
func renderVictim(t *testing.T, s *server, victim, secret string) {
	t.Helper()
	r := s.render(t, transports[0], victim, fmt.Sprintf(`renderPage({secret: %q})`, secret))
	r.want(t, transports[0], http.StatusOK, `<div class="v">`+secret+`</div>`)
}

// spyReport is what the spy recorded, by a render of the spy alone.
func spyReport(t *testing.T, s *server, spy string) string {
	t.Helper()
	r := s.render(t, transports[0], spy, `report()`)
	r.wantStatus(t, transports[0], http.StatusOK)
	return r.Body
}

// TestBundleCannotSpyOnAnother: a bundle whose top level wraps the
// built-ins reads nothing of another bundle's requests or answers, unless
// the two are rendered together (the victim as entry, the spy as its
// dependency): then the spy may see that render, and only that one.
func TestBundleCannotSpyOnAnother(t *testing.T) {
	s, victim, spy := isolationServer(t, nil)
	spyReport(t, s, spy) // the spy loaded and its wrappers on
	for i := range 5 {
		renderVictim(t, s, victim, fmt.Sprintf("ALONE-SECRET-%d", i))
	}
	// Together: the victim's render with the spy as a dependency.
	r := s.render(t, transports[0], victim,
		fmt.Sprintf(`Promise.resolve(runOnOtherBundle(%q, 'report()')).then(function (rep) { return renderPage({secret: 'SET-SECRET'}) + rep; })`, spy), spy)
	r.wantStatus(t, transports[0], http.StatusOK)
	if !strings.HasPrefix(r.Body, `<div class="v">SET-SECRET</div>`) {
		t.Fatalf("the set's render: %s", clip(r.Body))
	}
	if testEngine == "node" && !strings.Contains(r.Body, "SET-SECRET") {
		t.Fatal("the spy's wrappers saw nothing of a render it took part in: the test's spy does not work")
	}
	for i := range 3 {
		renderVictim(t, s, victim, fmt.Sprintf("ALONE-AFTER-%d", i))
	}
	rep := spyReport(t, s, spy)
	for _, secret := range []string{"ALONE-SECRET", "ALONE-AFTER", "SET-SECRET", `class=\"v\"`} {
		if strings.Contains(rep, secret) {
			t.Errorf("the spy alone saw %q of renders it was not part of: %s", secret, clip(rep))
		}
	}
	// The spy within the set sees nothing of the victim's renders alone.
	r = s.render(t, transports[0], victim, fmt.Sprintf(`runOnOtherBundle(%q, 'report()')`, spy), spy)
	r.wantStatus(t, transports[0], http.StatusOK)
	for _, secret := range []string{"ALONE-SECRET", "ALONE-AFTER"} {
		if strings.Contains(r.Body, secret) {
			t.Errorf("the spy in the set {victim, spy} saw %q of the victim's renders alone: %s", secret, clip(r.Body))
		}
	}
}

// TestAsyncHookSeesNoOtherBundle: an async_hooks hook in one bundle counts
// none of another bundle's async resources, and once it throws on every
// resource it fails none of the other bundle's renders.
func TestAsyncHookSeesNoOtherBundle(t *testing.T) {
	s, victim, spy := isolationServer(t, nil)
	hooks := func() int {
		var n int
		rep := spyReport(t, s, spy)
		if i := strings.LastIndex(rep, `"hooks":`); i >= 0 {
			fmt.Sscanf(rep[i+len(`"hooks":`):], "%d", &n)
		}
		return n
	}
	h1 := hooks()
	h2 := hooks() // a report's own resources: h2-h1
	for i := range 10 {
		r := s.render(t, transports[0], victim, fmt.Sprintf(`Promise.resolve(1).then(function () { return renderPage({secret: 'ASYNC-%d'}); })`, i))
		r.want(t, transports[0], http.StatusOK, fmt.Sprintf(`<div class="v">ASYNC-%d</div>`, i))
	}
	h3 := hooks()
	if h3-h2 != h2-h1 {
		t.Errorf("the spy's hook counted %d async resources across the victim's 10 renders and a report, %d for a report alone: it sees the victim's", h3-h2, h2-h1)
	}
	// The armed hook may fail the spy's own render (its process, on node,
	// dies of the throw while the render's jobs drain): that is its own.
	r := s.render(t, transports[0], spy, `arm()`)
	t.Logf("the spy's arm: %d %s", r.Status, clip(r.Body))
	for i := range 5 {
		r := s.render(t, transports[0], victim, fmt.Sprintf(`Promise.resolve(1).then(function () { return renderPage({secret: 'ARMED-%d'}); })`, i))
		r.want(t, transports[0], http.StatusOK, fmt.Sprintf(`<div class="v">ARMED-%d</div>`, i))
	}
}

// escapeRender is a render's code that, on the node engine, reaches the
// executor's own process object through a host function's constructor
// (Node's vm is no boundary) and runs body with its fs as fs; elsewhere
// it answers why it could not.
func escapeRender(body string) string {
	return `(function () {
  var P, fs;
  try {
    P = runOnOtherBundle.constructor('return process')();
    fs = P.getBuiltinModule ? P.getBuiltinModule('fs') : P.mainModule.require('fs');
  } catch (e) { return 'no escape: ' + e; }
  if (!fs || typeof fs.writeSync !== 'function') return 'no escape: no fs';
  ` + body + `
})()`
}

// TestEscapedBundleCannotForgeAnother: a bundle that escapes its context
// and wraps the executor's fs.writeSync (the answer pipe) to forge and
// record answers, then closes the executor's request pipe, neither forges
// nor reads another bundle's answers, nor makes them time out.
func TestEscapedBundleCannotForgeAnother(t *testing.T) {
	s, victim, spy := isolationServer(t, nil)
	renderVictim(t, s, victim, "CARD-4111-0000")
	r := s.render(t, transports[0], spy, escapeRender(`
  var orig = fs.writeSync;
  globalThis.stolen = [];
  fs.writeSync = function (fd, buf) {
    try {
      var s = Buffer.isBuffer(buf) ? buf.toString('latin1') : String(buf);
      if (s.indexOf('CARD') >= 0) { globalThis.stolen.push(s); }
      if (Buffer.isBuffer(buf)) {
        var i = s.indexOf('CARD');
        while (i >= 0) { buf.write('FAKE', i, 'latin1'); i = s.indexOf('CARD', i + 1); }
      }
    } catch (e) {}
    return orig.apply(this, arguments);
  };
  return 'wrapped';`))
	r.wantStatus(t, transports[0], http.StatusOK)
	escaped := r.Body == "wrapped"
	if testEngine == "node" && !escaped {
		t.Fatalf("the escape did not work on the node engine (%s): the test proves nothing", clip(r.Body))
	}
	for i := range 5 {
		renderVictim(t, s, victim, fmt.Sprintf("CARD-4111-%04d", i))
	}
	r = s.render(t, transports[0], spy, `JSON.stringify(globalThis.stolen || [])`)
	r.wantStatus(t, transports[0], http.StatusOK)
	if strings.Contains(r.Body, "4111") {
		t.Errorf("the escaped spy read the victim's answers: %s", clip(r.Body))
	}
	// Closing the executor's request pipe ends (at most) the spy's own
	// process; the victim's renders answer, without waiting for a timeout.
	r = s.render(t, transports[0], spy, escapeRender(`fs.closeSync(3); return 'closed';`))
	t.Logf("the spy's close: %d %s", r.Status, clip(r.Body))
	for i := range 5 {
		renderVictim(t, s, victim, fmt.Sprintf("CARD-5500-%04d", i))
	}
}
