package quickjsengine

import (
	"context"
	"fmt"
	"testing"

	"github.com/gorender/gorender/jsvm"
	"github.com/gorender/gorender/jsvm/conformance"
	"github.com/gorender/gorender/jsvm/transform"
)

// TestPropsAsJSONSameAnswers renders the React fixture requests on QuickJS
// with and without the props rewrite, and requires the same answer byte
// for byte (body, or error text with its stack): with every literal
// rewritten whatever its size, and at the production threshold (which
// rewrites the list page's props). The node engine's test renders every
// fixture; the rewrite's own tests check its rules in Node.
func TestPropsAsJSONSameAnswers(t *testing.T) {
	defer func(f func(string) string) { compiledCode = f }(compiledCode)
	production := compiledCode
	asSent := func(code string) string { return code }
	every := func(code string) string { out, _ := transform.PropsAsJSONAbove(code, 1); return out }
	e, err := New(jsvm.Options{StubTimers: true, ReplayAsyncLogs: true})
	if err != nil {
		t.Fatal(err)
	}
	rt := conformance.LoadFixture(t, e, "react-app")
	for _, name := range []string{"hello-world", "small-page", "list-page", "throws-error", "async-greeting", "hello"} {
		code := conformance.Testdata(t, "requests", name+".js")
		render := func() string {
			ctx, cancel := context.WithTimeout(context.Background(), 60e9)
			defer cancel()
			res, err := rt.Eval(ctx, code, jsvm.NewRequest(nil))
			return fmt.Sprintf("body %q err %v", res.Body, err)
		}
		compiledCode = asSent
		want := render()
		for _, rewrite := range []func(string) string{every, production} {
			compiledCode = rewrite
			if got := render(); got != want {
				t.Fatalf("%s: the answer changed with the rewrite:\ngot  %.400q\nwant %.400q", name, got, want)
			}
		}
	}
}
