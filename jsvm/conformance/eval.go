package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gorender/gorender/jsvm"
)

func newEngine(t *testing.T, engine string) jsvm.Engine {
	t.Helper()
	e, err := NewEngine(engine, jsvm.Options{StubTimers: true})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

const bundle = `
var renders = 0;
function greet(name) { renders++; console.log('hi %s', name); return '<p>' + name + ' ' + renders + '</p>'; }
`

func testEvalResults(t *testing.T, engine string) {
	e := newEngine(t, engine)
	rt := NewLoaded(t, e, "b1", bundle)
	tests := []struct {
		name, code, want string
		kind             jsvm.ErrorKind
		wantErr          string
	}{
		{name: "string verbatim", code: `greet("a")`, want: "<p>a 1</p>"},
		{name: "module state persists", code: `greet("b")`, want: "<p>b 2</p>"},
		{name: "object stringified", code: `({a: 1, b: [true, null]})`, want: `{"a":1,"b":[true,null]}`},
		{name: "number stringified", code: `42`, want: `42`},
		{name: "resolved promise string", code: `Promise.resolve('<i>x</i>')`, want: "<i>x</i>"},
		{name: "async function object", code: `(async () => ({x: await Promise.resolve(1)}))()`, want: `{"x":1}`},
		{name: "thenable", code: `({then(res) { res('t') }})`, want: "t"},
		{name: "console history per render", code: `console.log('x'); console.warn(1); JSON.stringify(console.history)`,
			want: `[{"level":"log","arguments":["[SERVER] x"]},{"level":"warn","arguments":[1]}]`},
		{name: "renderingRequest global", code: `renderingRequest.length + ''`, want: "28"},
		{name: "undefined", code: `undefined`, kind: jsvm.KindNilResult, wantErr: "INVALID NIL or NULL result for rendering"},
		{name: "empty string", code: `''`, kind: jsvm.KindNilResult, wantErr: "INVALID NIL or NULL result for rendering"},
		{name: "null promise", code: `Promise.resolve(null)`, kind: jsvm.KindNilResult, wantErr: "INVALID NIL or NULL result for rendering"},
		{name: "throw", code: `throw new TypeError('boom')`, kind: jsvm.KindJS, wantErr: "EXCEPTION MESSAGE:\nboom\n\nSTACK:\nTypeError: boom"},
		{name: "rejected", code: `Promise.reject(new Error('nope'))`, kind: jsvm.KindJS, wantErr: "EXCEPTION MESSAGE:\nnope"},
		{name: "syntax error", code: `(function( {`, kind: jsvm.KindJS, wantErr: "SyntaxError"},
		{name: "pending promise", code: `new Promise(() => {})`, kind: jsvm.KindJS, wantErr: "never settled"},
		{name: "stream", code: `({pipe() {}, read() {}})`, kind: jsvm.KindUnsupported, wantErr: "returned a stream where a buffered answer was expected"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := rt.Eval(context.Background(), tc.code, jsvm.NewRequest(map[string]jsvm.Runtime{"b1": rt}))
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if res.Body != tc.want {
					t.Fatalf("body = %q, want %q", res.Body, tc.want)
				}
				return
			}
			var re *jsvm.RenderError
			if !errors.As(err, &re) {
				t.Fatalf("error = %v, want *RenderError", err)
			}
			if re.Kind != tc.kind || !strings.Contains(re.Text, tc.wantErr) {
				t.Fatalf("error = %v %q, want %v containing %q", re.Kind, re.Text, tc.kind, tc.wantErr)
			}
			if !strings.HasPrefix(re.Text, "INVALID") && !strings.HasPrefix(re.Text, "JS code for rendering request was:\n") && tc.kind != jsvm.KindUnsupported {
				t.Fatalf("diagnostic does not start with the request: %q", re.Text)
			}
		})
	}
	if rt.Broken() {
		t.Fatal("runtime broken after ordinary errors")
	}
}

func testPerRenderGlobalsCleared(t *testing.T, engine string) {
	e := newEngine(t, engine)
	rt := NewLoaded(t, e, "b1", bundle)
	req := jsvm.NewRequest(map[string]jsvm.Runtime{"b1": rt})
	if _, err := rt.Eval(context.Background(), `'x'`, req); err != nil {
		t.Fatal(err)
	}
	res, err := rt.Eval(context.Background(), `typeof globalThis.renderingRequestX + typeof console.history.length`, req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Body != "undefinednumber" {
		t.Fatalf("got %q", res.Body)
	}
	// Globals set during a render are gone after it: evaluate code that
	// inspects them from a function defined during an earlier render.
	if _, err := rt.Eval(context.Background(), `globalThis.peek = () => typeof renderingRequest + typeof sharedExecutionContext + typeof runOnOtherBundle; 'x'`, req); err != nil {
		t.Fatal(err)
	}
	// Outside any render: a program loaded into the runtime records what
	// peek sees, and the next render reads the record.
	if v, _ := registered.Load(engine); v.(Engine).OneBundlePerRuntime {
		t.Skip("a runtime of this engine holds one bundle: no code runs in its context outside a render")
	}
	probe, err := e.Compile("probe", "", `globalThis.seen = peek();`)
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Load(context.Background(), probe); err != nil {
		t.Fatal(err)
	}
	if v := MustEval(t, rt, `seen`); v != "undefinedundefinedundefined" {
		t.Fatalf("per-render globals leaked: %s", v)
	}
}

func testTimeoutInterruptsAndRetires(t *testing.T, engine string) {
	rt := NewLoaded(t, newEngine(t, engine), "b1", bundle)
	ctx, cancel := renderDeadline(100 * time.Millisecond)
	defer cancel()
	req := jsvm.NewRequest(nil)
	started := time.Now()
	_, err := rt.Eval(ctx, `while (true) {}`, req)
	var re *jsvm.RenderError
	if !errors.As(err, &re) || re.Kind != jsvm.KindTimeout || re.Text != jsvm.TimeoutText(100*time.Millisecond) {
		t.Fatalf("err = %#v", err)
	}
	if time.Since(started) > 5*time.Second {
		t.Fatalf("interrupt took %v", time.Since(started))
	}
	if !rt.Broken() {
		t.Fatal("interrupted runtime not retired")
	}
}

// testSharedContextAndRunOnOtherBundle: the request's shared context is
// one for all its bundles (a bundle's own value comes back as it is,
// another's as a JSON copy), runOnOtherBundle evaluates in the other
// bundle's context, promises included, and each bundle's console history
// stays its own.
func testSharedContextAndRunOnOtherBundle(t *testing.T, engine string) {
	e := newEngine(t, engine)
	entry := NewLoaded(t, e, "entry", `var tag = 'entry';`)
	rsc := NewLoaded(t, e, "rsc", `var tag = 'rsc'; var n = 0; function payload(x) { n++; console.log('rsc payload ' + x); return JSON.stringify({x: x, n: n}); }`)
	req := jsvm.NewRequest(map[string]jsvm.Runtime{"entry": entry, "rsc": rsc})
	code := `
		var obj = {deep: [1, 2]};
		sharedExecutionContext.set('k', obj);
		sharedExecutionContext.set(7, 'seven');
		var same = sharedExecutionContext.get('k') === obj;
		var fromOther = runOnOtherBundle('rsc', "tag + ':' + sharedExecutionContext.get(7) + ':' + JSON.stringify(sharedExecutionContext.get('k')) + ':' + (sharedExecutionContext instanceof Map)");
		runOnOtherBundle('rsc', "sharedExecutionContext.set('fromRsc', {v: payload('p')}); 1");
		console.log('entry after');
		JSON.stringify([same, fromOther, sharedExecutionContext.get('fromRsc'), sharedExecutionContext.size, [...sharedExecutionContext.keys()], console.history.map((h) => h.arguments[0])])`
	res, err := entry.Eval(context.Background(), code, req)
	if err != nil {
		t.Fatal(err)
	}
	want := `[true,"rsc:seven:{\"deep\":[1,2]}:true",{"v":"{\"x\":\"p\",\"n\":1}"},3,["k",7,"fromRsc"],["[SERVER] entry after"]]`
	if res.Body != want {
		t.Fatalf("got  %s\nwant %s", res.Body, want)
	}
	// A new request starts with an empty shared context.
	res, err = entry.Eval(context.Background(), `String(sharedExecutionContext.size)`, jsvm.NewRequest(map[string]jsvm.Runtime{"entry": entry}))
	if err != nil || res.Body != "0" {
		t.Fatalf("fresh request: %q %v", res.Body, err)
	}
	_, err = entry.Eval(context.Background(), `runOnOtherBundle('nope', '1')`, jsvm.NewRequest(map[string]jsvm.Runtime{"entry": entry}))
	if err == nil || !strings.Contains(err.Error(), `bundle "nope" is not in this request's bundle set`) {
		t.Fatalf("unknown bundle: %v", err)
	}
	res, err = entry.Eval(context.Background(), `runOnOtherBundle('rsc', 'Promise.resolve(payload("q"))').then(s => 'got ' + s)`, req)
	if err != nil || res.Body != `got {"x":"q","n":2}` {
		t.Fatalf("promise across bundles: %q %v", res.Body, err)
	}
}

// testRunOnOtherBundleNesting: runOnOtherBundle calls nest at most
// jsvm.MaxRunOnOtherDepth deep, across bundles or within one; the call past
// it throws a RangeError-like error the code can catch, and the request
// goes on. An error crossing many calls keeps its message, prefixed once.
// Before the bound, a recursion 1,000 calls deep took goja 4-9 s and
// quickjs 30 s (or ended in a stack overflow that retired the runtime),
// each level formatting the error of the one below, whose message grew by
// a prefix per level.
func testRunOnOtherBundleNesting(t *testing.T, engine string) {
	e := newEngine(t, engine)
	src := func(self, other string) string {
		return fmt.Sprintf(`function next(n, cross) { return cross ? %q : %q; }
			function down(n, cross) { return n === 0 ? 'bottom' : runOnOtherBundle(next(n, cross), 'down(' + (n - 1) + ', ' + cross + ')'); }
			function fail(n, cross) { if (n === 0) throw new Error('bottom'); return runOnOtherBundle(next(n, cross), 'fail(' + (n - 1) + ', ' + cross + ')'); }`, other, self)
	}
	a := NewLoaded(t, e, "a", src("a", "b"))
	b := NewLoaded(t, e, "b", src("b", "a"))
	max := jsvm.MaxRunOnOtherDepth
	for _, cross := range []bool{true, false} {
		prefix := ""
		if cross {
			prefix = "runOnOtherBundle: "
		}
		req := jsvm.NewRequest(map[string]jsvm.Runtime{"a": a, "b": b})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		code := fmt.Sprintf(`var deep; try { down(%d, %v) } catch (e) { deep = e.message }
			JSON.stringify([deep, down(%d, %v)])`, 10*max, cross, max, cross)
		res, err := a.Eval(ctx, code, req)
		cancel()
		if want, _ := json.Marshal([]string{prefix + jsvm.RunOnOtherTooDeepText, "bottom"}); err != nil || res.Body != string(want) {
			t.Errorf("cross=%v: nested %d deep, then %d: got %.300q, %.300v; want %s", cross, 10*max, max, res.Body, err, want)
		}
		_, err = a.Eval(context.Background(), fmt.Sprintf("fail(%d, %v)", max, cross), jsvm.NewRequest(map[string]jsvm.Runtime{"a": a, "b": b}))
		if err == nil || !strings.Contains(err.Error(), "EXCEPTION MESSAGE:\n"+prefix+"bottom\n") {
			t.Errorf("cross=%v: an error thrown %d calls deep: %.600v; want its message %q", cross, max, err, prefix+"bottom")
		}
		if a.Broken() || b.Broken() {
			t.Fatalf("cross=%v: a runtime was retired", cross)
		}
	}
}

// testRunOnOtherBundleCallsBack: a bundle that calls another which calls
// back into it (a calling b calling a) goes on in its own render: its
// console history and per-render globals are the ones it had. (goja and
// quickjs once ran the call back as a new render of a and ended it, taking
// runOnOtherBundle away from a; node began a's console history again,
// keeping only the line logged during the call back.)
func testRunOnOtherBundleCallsBack(t *testing.T, engine string) {
	e := newEngine(t, engine)
	a := NewLoaded(t, e, "a", `function back() { console.log('a called back'); return 'back'; }`)
	b := NewLoaded(t, e, "b", `function call() { console.log('b'); return runOnOtherBundle('a', 'back()'); }`)
	req := jsvm.NewRequest(map[string]jsvm.Runtime{"a": a, "b": b})
	res, err := a.Eval(context.Background(), `console.log('a before');
		var got = runOnOtherBundle('b', 'call()');
		console.log('a after');
		JSON.stringify([got, typeof runOnOtherBundle, console.history.map((h) => h.arguments[0])])`, req)
	want := `["back","function",["[SERVER] a before","[SERVER] a called back","[SERVER] a after"]]`
	if err != nil || res.Body != want {
		t.Fatalf("got  %s %v\nwant %s", res.Body, err, want)
	}
}

func testLoadErrors(t *testing.T, engine string) {
	e := newEngine(t, engine)
	// A syntax error fails at Compile, or, in an engine that compiles the
	// bundle where it runs it (node: in its processes), at Load; the worker
	// answers both as the bundle's load error.
	if bad, err := e.Compile("bad", "", "function ("); err == nil {
		v, _ := registered.Load(engine)
		if !v.(Engine).CompilesAtLoad {
			t.Fatal("syntax error compiled")
		}
		rt, err := e.NewRuntime()
		if err != nil {
			t.Fatal(err)
		}
		if err := rt.Load(context.Background(), bad); err == nil || !strings.Contains(err.Error(), "SyntaxError") {
			t.Fatalf("load of a syntax error = %v", err)
		}
	}
	p, err := e.Compile("throws", "", "throw new Error('load failed')")
	if err != nil {
		t.Fatal(err)
	}
	rt, err := e.NewRuntime()
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Load(context.Background(), p); err == nil || !strings.Contains(err.Error(), "load failed") {
		t.Fatalf("load error = %v", err)
	}
}
