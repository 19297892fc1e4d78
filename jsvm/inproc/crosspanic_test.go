package inproc_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gorender/gorender/jsvm"
	"github.com/gorender/gorender/jsvm/conformance"
	"github.com/gorender/gorender/jsvm/gojaengine"
	"github.com/gorender/gorender/jsvm/inproc"
	"github.com/gorender/gorender/jsvm/quickjsengine"
)

// crossPanicProducer is a bundle whose streams carry the chunk "PANIC",
// which the host function crossChunk is made to panic on
// (panicOnCrossChunk): pumped at once (while the caller's runOnOtherBundle
// runs) or on a timer (while the caller's event loop drives the
// producer's).
const crossPanicProducer = `
var stream = require('stream');
globalThis.now = function () {
  var r = new stream.Readable({ objectMode: true, read: function () {} });
  r.push('PANIC');
  r.push(null);
  return r;
};
globalThis.later = function () {
  var r = new stream.Readable({ objectMode: true, read: function () {} });
  r.push('a');
  setTimeout(function () { r.push('PANIC'); r.push(null); }, 1);
  return r;
};
`

// panicOnCrossChunk makes the host function crossChunk panic on the text
// chunk "PANIC" until t ends: no stream of the environment panics there on
// its own, and a panic of a host function is what this guards against.
// Engines bind the host functions when they make a runtime: make them
// after. The table is the process's: the test must not run in parallel.
func panicOnCrossChunk(t *testing.T) {
	for i, f := range inproc.Functions {
		if f.Name != "crossChunk" {
			continue
		}
		orig := f.Fn
		inproc.Functions[i].Fn = func(h *inproc.Host, a inproc.Args) inproc.Reply {
			if a.String(1) == "PANIC" {
				panic("injected panic in crossChunk")
			}
			return orig(h, a)
		}
		t.Cleanup(func() { inproc.Functions[i].Fn = orig })
		return
	}
	t.Fatal("no host function crossChunk")
}

// TestCrossPanicRetiresBothRuntimes: a host function that panics while the
// producer's JavaScript runs under the caller's render (its stream pumped
// as runOnOtherBundle returns it, or its timer run by the caller's loop)
// fails the render, and retires both runtimes: the panic went through
// both engines' calls, and neither is trusted afterwards.
func TestCrossPanicRetiresBothRuntimes(t *testing.T) {
	panicOnCrossChunk(t)
	engines := map[string]func(jsvm.Options) (jsvm.Engine, error){
		"goja":    func(o jsvm.Options) (jsvm.Engine, error) { return gojaengine.New(o) },
		"quickjs": func(o jsvm.Options) (jsvm.Engine, error) { return quickjsengine.New(o) },
	}
	read := func(producer string) string {
		return `runOnOtherBundle('rsc', '` + producer + `').toArray().then((a) => a.join())`
	}
	cases := map[string]string{
		"now":    read("now()"),
		"later":  read("later()"),
		"caught": `try { ` + read("now()") + ` } catch (e) { 'caught: ' + e.message }`,
	}
	for name, open := range engines {
		for cname, code := range cases {
			t.Run(name+"/"+cname, func(t *testing.T) {
				e, err := open(jsvm.Options{SupportModules: true})
				if err != nil {
					t.Fatal(err)
				}
				entry := conformance.NewLoaded(t, e, "entry", "globalThis.ok = 1;")
				rsc := conformance.NewLoaded(t, e, "rsc", crossPanicProducer)
				req := jsvm.NewRequest(map[string]jsvm.Runtime{"entry": entry, "rsc": rsc})
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				res, err := entry.Eval(ctx, code, req)
				if err == nil || !strings.Contains(err.Error(), "injected panic in crossChunk") {
					t.Fatalf("render: %q, %v; want it failed with the panic", res.Body, err)
				}
				if !entry.Broken() || !rsc.Broken() {
					t.Fatalf("after %v: caller retired %v, producer retired %v; want both", err, entry.Broken(), rsc.Broken())
				}
			})
		}
	}
}
