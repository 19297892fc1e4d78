package conformance

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gorender/gorender/jsvm"
)

// Support-modules fixture bundles give Node's bytes (goldens recorded with
// Node 20 by tests/testdata/js/record.mjs).
func testSupportModulesGoldens(t *testing.T, engine string) {
	e := NodeEngine(t, engine, jsvm.Options{ReplayAsyncLogs: true})
	tests := []struct{ bundle, request, golden string }{
		{"node-app-esbuild", "node-app-home", "node-app-home"},
		{"node-app-esbuild", "node-app-about", "node-app-about"},
		{"node-app-webpack", "node-app-home", "node-app-home"},
		{"node-app-webpack", "node-app-about", "node-app-about"},
		{"async-app", "async-als", "async-als"},
	}
	runtimes := map[string]jsvm.Runtime{}
	for _, tc := range tests {
		t.Run(tc.bundle+"/"+tc.request, func(t *testing.T) {
			rt, ok := runtimes[tc.bundle]
			if !ok {
				rt = LoadFixture(t, e, tc.bundle)
				runtimes[tc.bundle] = rt
			}
			code := Testdata(t, "requests", tc.request+".js")
			want := Testdata(t, "golden", tc.golden+".html")
			// Twice: module state and per-render cleanup must not change the bytes.
			for i := range 2 {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				res, err := rt.Eval(ctx, code, jsvm.NewRequest(map[string]jsvm.Runtime{tc.bundle: rt}))
				cancel()
				if err != nil {
					t.Fatalf("render %d: %v", i, err)
				}
				if res.Body != want {
					t.Fatalf("render %d differs from the golden:\ngot  %s\nwant %s", i, res.Body, want)
				}
			}
		})
	}
}

// The streaming renders are the streaming issue's; here it is enough that
// they produce a stream.
func testSupportModulesStreamKind(t *testing.T, engine string) {
	e := NodeEngine(t, engine, jsvm.Options{})
	rt := LoadFixture(t, e, "stream-app")
	for _, req := range []string{"stream-pipeable", "stream-web"} {
		_, err := rt.Eval(context.Background(), Testdata(t, "requests", req+".js"), jsvm.NewRequest(nil))
		var re *jsvm.RenderError
		if !errors.As(err, &re) || re.Kind != jsvm.KindUnsupported || !strings.Contains(re.Text, "returned a stream") {
			t.Fatalf("%s: err = %v, want the stream kind", req, err)
		}
	}
}

// The plain-script goldens, with real and with stub timers; with
// ReplayAsyncLogs off the log AsyncGreeting writes after its await is not
// replayed (upstream resets console.history after the synchronous part), so
// that golden needs it on.
func testPlainGoldens(t *testing.T, engine string) {
	for _, opts := range []jsvm.Options{{StubTimers: true, ReplayAsyncLogs: true}, {ReplayAsyncLogs: true}, {SupportModules: true, ReplayAsyncLogs: true}} {
		e, err := NewEngine(engine, opts)
		if err != nil {
			t.Fatal(err)
		}
		rt := LoadFixture(t, e, "react-app")
		for _, name := range []string{"hello-world", "small-page", "list-page", "async-greeting"} {
			res, err := rt.Eval(context.Background(), Testdata(t, "requests", name+".js"), jsvm.NewRequest(nil))
			if err != nil {
				t.Fatalf("%+v %s: %v", opts, name, err)
			}
			if want := Testdata(t, "golden", name+".html"); res.Body != want {
				t.Fatalf("%+v %s differs:\ngot  %.300s\nwant %.300s", opts, name, res.Body, want)
			}
		}
	}
	e, err := NewEngine(engine, jsvm.Options{StubTimers: true})
	if err != nil {
		t.Fatal(err)
	}
	rt := LoadFixture(t, e, "react-app")
	res, err := rt.Eval(context.Background(), Testdata(t, "requests", "async-greeting.js"), jsvm.NewRequest(nil))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Body, "resolved after await") || !strings.Contains(res.Body, "AsyncGreeting: start for") {
		t.Fatalf("ReplayAsyncLogs off: %s", res.Body)
	}
}
