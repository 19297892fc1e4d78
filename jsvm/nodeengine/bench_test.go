package nodeengine

import (
	"context"
	"testing"

	"github.com/gorender/gorender/jsvm"
)

// BenchmarkEvalHello is one trivial render through a process: the frames'
// round trip and the executor's flow, no React.
func BenchmarkEvalHello(b *testing.B) {
	e, _ := newEngine(b, config{StubTimers: true})
	rt := load(b, e, "b", "", `var x;`)
	req := jsvm.NewRequest(map[string]jsvm.Runtime{"b": rt})
	ctx := context.Background()
	b.ResetTimer()
	for range b.N {
		res, err := rt.Eval(ctx, `'<p>hello</p>'`, req)
		if err != nil || res.Body != "<p>hello</p>" {
			b.Fatal(res.Body, err)
		}
	}
}
