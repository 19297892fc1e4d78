package tests

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// TestLeftoverJobsBelongToTheirRender: promise jobs, ticks and microtasks a
// render leaves queued when its completion value is ready are its own work,
// under its own deadline. A render that leaves an endless one behind times
// out itself (on every engine, with the same answer); the next render, of
// another bundle on the same (only) process, is served its own HTML; the
// log blames the bundle whose render timed out and no other.
func TestLeftoverJobsBelongToTheirRender(t *testing.T) {
	t.Parallel()
	s := startServer(t, map[string]string{
		"RENDERER_SUPPORT_MODULES": "true",
		"RENDERER_WORKERS_COUNT":   "1",
		"RENDERER_RENDER_TIMEOUT":  "2s",
	})
	h2 := transports[0]
	victim, attacker := newID("s"), newID("s")
	s.upload(t, map[string]string{
		victim:   `globalThis.renderPage = (p) => '<div class="v">' + p.secret + '</div>';`,
		attacker: `globalThis.__req = require;`,
	}, nil)
	const page = `renderPage({secret: "CARD-4111"})`
	s.render(t, h2, victim, page).want(t, h2, http.StatusOK, `<div class="v">CARD-4111</div>`)
	s.render(t, h2, attacker, `typeof __req`).want(t, h2, http.StatusOK, "function")

	cases := []struct{ name, code string }{
		{"promise job", `Promise.resolve().then(() => { for (;;) {} }); "attacker ok"`},
		{"promise chain", `(function again() { return Promise.resolve().then(again); })(); "attacker ok"`},
		{"nextTick chain", `(function again() { __req('process').nextTick(again); })(); "attacker ok"`},
		{"queueMicrotask chain", `(function again() { queueMicrotask(again); })(); "attacker ok"`},
		// Callbacks of async APIs: on the node engine, of work done on
		// Node's thread pool, called back after the render's jobs drained.
		{"randomBytes callback", `__req('crypto').randomBytes(8, () => { for (;;) {} }); "attacker ok"`},
		{"fs callback", `__req('fs').readdir('.', () => { for (;;) {} }); "attacker ok"`},
	}
	if testEngine == "node" { // not on goja and quickjs
		cases = append(cases, []struct{ name, code string }{
			{"pbkdf2 callback", `__req('crypto').pbkdf2('a', 'b', 20000, 32, 'sha256', () => { for (;;) {} }); "attacker ok"`},
			{"subtle.digest", `crypto.subtle.digest('SHA-256', new Uint8Array(8)).then(() => { for (;;) {} }); "attacker ok"`},
		}...)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := len(s.stderr.String())
			s.render(t, h2, attacker, c.code).want(t, h2, http.StatusBadRequest,
				"Render timed out after 2s: the rendering request was interrupted and its JavaScript runtime replaced.")
			s.render(t, h2, victim, page).want(t, h2, http.StatusOK, `<div class="v">CARD-4111</div>`)
			var blamed []string
			for _, line := range strings.Split(s.stderr.String()[before:], "\n") {
				if strings.Contains(line, "render timed out") {
					blamed = append(blamed, line)
				}
			}
			if len(blamed) != 1 || !strings.Contains(blamed[0], attacker) {
				t.Errorf("the log's timeouts are %q, want one, of bundle %s", blamed, attacker)
			}
		})
	}
	// MessagePort messages (MessageChannel, a global with
	// RENDERER_SUPPORT_MODULES). On node a message a render posts to a port
	// with a handler is its own work, delivered before its answer, posted
	// in the render, from its thread-pool callback or from a handler: the
	// endless handler times out the render that posted it. On goja and
	// quickjs a message is delivered by one of the render's immediates,
	// cancelled with its answer: the render is answered, the message
	// dropped. Either way the attacker's next render, of the same bundle
	// (on node the same process, were it not replaced), is answered its own
	// result, and the victim its HTML.
	const port = `const {port1, port2} = new MessageChannel(); port1.onmessage = () => { for (;;) {} }; port2.postMessage(1);`
	for _, c := range []struct{ name, code string }{
		{"port message", `{ ` + port + ` } "attacker ok"`},
		{"port message from a callback", `__req('crypto').randomBytes(8, () => { ` + port + ` }); "attacker ok"`},
		{"port message from a handler", `{ const {port1, port2} = new MessageChannel(); let n = 0; ` +
			`port1.onmessage = () => { if (++n < 3) port2.postMessage(n); else for (;;) {} }; port2.postMessage(0); } "attacker ok"`},
		// Posted before the port had a handler; the handler started it in
		// the same render.
		{"port message before the handler", `{ const {port1, port2} = new MessageChannel(); port2.postMessage(1); port1.onmessage = () => { for (;;) {} }; } "attacker ok"`},
		{"port handler removed and set again", `{ const {port1, port2} = new MessageChannel(); port1.onmessage = () => {}; port2.postMessage(1); ` +
			`port1.onmessage = null; port1.onmessage = () => { for (;;) {} }; } "attacker ok"`},
		// To a port a transfer made.
		{"port cloned with transfer", `{ const c = new MessageChannel(); const p = structuredClone(c.port2, {transfer: [c.port2]}); ` +
			`p.onmessage = () => { for (;;) {} }; c.port1.postMessage(1); } "attacker ok"`},
		{"port sent in a message", `{ const a = new MessageChannel(), c = new MessageChannel(); ` +
			`a.port1.onmessage = (e) => { e.ports[0].onmessage = () => { for (;;) {} }; }; a.port2.postMessage(0, [c.port2]); c.port1.postMessage(1); } "attacker ok"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := len(s.stderr.String())
			res := s.render(t, h2, attacker, c.code)
			timeouts := 0
			if testEngine == "node" {
				timeouts = 1
				res.want(t, h2, http.StatusBadRequest,
					"Render timed out after 2s: the rendering request was interrupted and its JavaScript runtime replaced.")
			} else {
				res.want(t, h2, http.StatusOK, "attacker ok")
			}
			s.render(t, h2, attacker, `"attacker again"`).want(t, h2, http.StatusOK, "attacker again")
			s.render(t, h2, victim, page).want(t, h2, http.StatusOK, `<div class="v">CARD-4111</div>`)
			var blamed []string
			for _, line := range strings.Split(s.stderr.String()[before:], "\n") {
				if strings.Contains(line, "render timed out") {
					blamed = append(blamed, line)
				}
			}
			if len(blamed) != timeouts || (timeouts == 1 && !strings.Contains(blamed[0], attacker)) {
				t.Errorf("the log's timeouts are %q, want %d, of bundle %s", blamed, timeouts, attacker)
			}
		})
	}
	// Handlers set, removed and set again as Node runs them (each render
	// answered within its deadline: a message to a stopped port is not
	// waited for); a message kept on a port without a handler goes to the
	// handler a later render sets, before that render's answer.
	for _, c := range []struct{ name, code string }{
		{"null after post", `{ const {port1, port2} = new MessageChannel(); port1.onmessage = () => {}; port2.postMessage(1); port1.onmessage = null; } "ok"`},
		{"null in handler", `new Promise((resolve) => { const {port1, port2} = new MessageChannel(); port1.onmessage = () => { port1.onmessage = null; resolve("ok"); }; port2.postMessage(1); })`},
		{"toggle in handler", `new Promise((resolve) => { const {port1, port2} = new MessageChannel(); ` +
			`port1.onmessage = () => { port1.onmessage = null; port1.onmessage = () => resolve("ok"); port2.postMessage(2); }; port2.postMessage(1); })`},
		{"toggle after post", `{ const {port1, port2} = new MessageChannel(); port1.onmessage = () => {}; port2.postMessage(1); port1.onmessage = null; port1.onmessage = () => {}; } "ok"`},
		{"listener removed", `{ const {port1, port2} = new MessageChannel(); const h = () => {}; port1.addEventListener('message', h); port2.postMessage(1); port1.removeEventListener('message', h); } "ok"`},
	} {
		t.Run("port "+c.name, func(t *testing.T) {
			s.render(t, h2, attacker, c.code).want(t, h2, http.StatusOK, "ok")
			s.render(t, h2, attacker, `"again"`).want(t, h2, http.StatusOK, "again")
		})
	}
	if testEngine == "node" {
		s.render(t, h2, attacker, `globalThis.kept = new MessageChannel(); kept.port2.postMessage("kept"); "posted"`).want(t, h2, http.StatusOK, "posted")
		s.render(t, h2, attacker, `new Promise((resolve) => { kept.port1.onmessage = (e) => resolve(e.data); })`).want(t, h2, http.StatusOK, "kept")
	}
	// Messages that end are waited for; a message to a port nobody
	// listens on is not.
	s.render(t, h2, attacker, `{ const {port1, port2} = new MessageChannel(); port1.onmessage = (e) => console.log('got', e.data); `+
		`port2.postMessage(7); new MessageChannel().port1.postMessage('nobody'); } "ported"`).
		want(t, h2, http.StatusOK, "ported")
	// Work that ends is waited for and answers as before; its callback
	// runs before the answer (what it logs is the render's).
	s.render(t, h2, attacker, `__req('crypto').randomBytes(8, (e, b) => console.log('bytes', b.length)); "fine"`).
		want(t, h2, http.StatusOK, "fine")
	s.render(t, h2, victim, page).want(t, h2, http.StatusOK, `<div class="v">CARD-4111</div>`)
}

// TestLeftoverJobsUnderLoad: two renders that leave endless promise jobs
// behind, among 40 renders of another bundle at once on two workers: the
// two time out, every other render is answered its own HTML.
func TestLeftoverJobsUnderLoad(t *testing.T) {
	t.Parallel()
	s := startServer(t, map[string]string{
		"RENDERER_WORKERS_COUNT":  "2",
		"RENDERER_RENDER_TIMEOUT": "2s",
	})
	h2 := transports[0]
	victim, attacker := newID("s"), newID("s")
	s.upload(t, map[string]string{
		victim:   `globalThis.renderPage = (p) => '<div class="v">' + p.secret + '</div>';`,
		attacker: markerBundle("attacker"),
	}, nil)
	s.render(t, h2, victim, `renderPage({secret: "warm"})`).want(t, h2, http.StatusOK, `<div class="v">warm</div>`)
	s.render(t, h2, attacker, "MARKER").want(t, h2, http.StatusOK, "attacker")

	var wg sync.WaitGroup
	for i := range 42 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%21 == 5 {
				s.render(t, h2, attacker, `Promise.resolve().then(() => { for (;;) {} }); "attacker ok"`).want(t, h2, http.StatusBadRequest,
					"Render timed out after 2s: the rendering request was interrupted and its JavaScript runtime replaced.")
				return
			}
			secret := fmt.Sprintf("CARD-%d", i)
			s.render(t, h2, victim, `renderPage({secret: "`+secret+`"})`).want(t, h2, http.StatusOK, `<div class="v">`+secret+`</div>`)
		}()
	}
	wg.Wait()
}
