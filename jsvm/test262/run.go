package test262

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/gorender/gorender/jsvm"
)

// Host runs one test in one mode in a fresh realm. It is safe for
// concurrent use.
type Host interface {
	Name() string
	Run(t *Test, source string) Outcome
}

// Outcome is a test's result in one mode; Message says why it failed.
type Outcome struct {
	Pass    bool
	Message string
}

func fail(format string, args ...any) Outcome {
	msg := fmt.Sprintf(format, args...)
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	return Outcome{Message: strings.ReplaceAll(msg, "\n", " ⏎ ")}
}

// preludeSource is the host's part of the realm on goja and quickjs
// (INTERPRETING.md "Host-Defined Functions"): $262 with the global object,
// and the hooks a script cannot give itself on these engines throwing, so
// that a test that needs them fails saying so; print, which async tests'
// $DONE calls, records its outcome for the render that follows.
const preludeSource = `
var $262 = (function () {
  function unavailable(name) {
    return function () { throw new Test262Error('$262.' + name + ' is not available to the runner on this engine'); };
  }
  return {
    global: globalThis,
    createRealm: unavailable('createRealm'),
    evalScript: unavailable('evalScript'),
    detachArrayBuffer: unavailable('detachArrayBuffer'),
    gc: unavailable('gc'),
  };
})();
var print = (function () {
  var state = { message: undefined, settle: undefined };
  globalThis.__test262Async = state;
  return function print(message) {
    message = String(message);
    if (state.message === undefined && message.indexOf('Test262:Async') === 0) {
      state.message = message;
      if (state.settle) state.settle(message);
    }
  };
})();
`

// asyncResult is the rendering request that reads an async test's outcome:
// the message $DONE printed, or a promise of it.
const asyncResult = `(function (s) {
  delete globalThis.__test262Async;
  return s.message !== undefined ? s.message : new Promise(function (resolve) { s.settle = resolve; });
})(globalThis.__test262Async)`

const asyncComplete = "Test262:AsyncTestComplete"

// EngineHost runs tests on an engine of gorender's jsvm boundary: each test
// is compiled as a bundle (Engine.Compile: goja lowers with esbuild what it
// cannot parse, as it does a bundle) and loaded into a fresh runtime after
// the prelude; an async test's outcome is then read by a rendering request.
type EngineHost struct {
	Engine  jsvm.Engine
	Timeout time.Duration
	prelude jsvm.Program
}

// NewEngineHost compiles the prelude for e; timeout bounds each test.
func NewEngineHost(e jsvm.Engine, timeout time.Duration) (*EngineHost, error) {
	p, err := e.Compile("test262-host", "", preludeSource)
	if err != nil {
		return nil, fmt.Errorf("compile the test262 prelude on %s: %w", e.Name(), err)
	}
	return &EngineHost{Engine: e, Timeout: timeout, prelude: p}, nil
}

// Name is the engine's.
func (h *EngineHost) Name() string { return h.Engine.Name() }

// Run runs t's source in a fresh runtime.
func (h *EngineHost) Run(t *Test, source string) Outcome {
	p, err := h.Engine.Compile("test262", "", source)
	if err != nil {
		if t.NegativePhase == "parse" {
			return Outcome{Pass: true}
		}
		return fail("compile: %v", err)
	}
	rt, err := h.Engine.NewRuntime()
	if err != nil {
		return fail("new runtime: %v", err)
	}
	defer rt.Close()
	ctx, cancel := context.WithTimeoutCause(context.Background(), h.Timeout, &jsvm.DeadlineError{Limit: h.Timeout})
	defer cancel()
	if err := rt.Load(ctx, h.prelude); err != nil {
		return fail("prelude: %v", err)
	}
	err = rt.Load(ctx, p)
	switch {
	case t.NegativePhase == "parse":
		if err != nil && strings.Contains(err.Error(), "SyntaxError") {
			return Outcome{Pass: true}
		}
		return fail("parsed; want a SyntaxError (loaded: %v)", err)
	case t.NegativePhase == "runtime":
		if err != nil && strings.Contains(err.Error(), t.NegativeType) {
			return Outcome{Pass: true}
		}
		return fail("want a %s at runtime, got %v", t.NegativeType, err)
	case err != nil:
		return fail("%v", err)
	case !t.Has("async"):
		return Outcome{Pass: true}
	}
	res, err := rt.Eval(ctx, asyncResult, jsvm.NewRequest(map[string]jsvm.Runtime{"test262": rt}))
	switch {
	case err != nil:
		var re *jsvm.RenderError
		if errors.As(err, &re) {
			return fail("async: %s", re.Text)
		}
		return fail("async: %v", err)
	case res.Body != asyncComplete:
		return fail("async: %s", res.Body)
	}
	return Outcome{Pass: true}
}

// Result is a test's outcome on one host: it passes when every mode does.
type Result struct {
	Test    *Test
	Pass    bool
	Message string // the first failing mode's, with the mode
}

// RunAll runs tests on h with jobs at once; progress, if not nil, is called
// after each test.
func RunAll(s *Suite, h Host, tests []*Test, jobs int, progress func(done int)) []Result {
	results := make([]Result, len(tests))
	next := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for range max(jobs, 1) {
		wg.Go(func() {
			for i := range next {
				results[i] = runModes(s, h, tests[i])
				if progress != nil {
					mu.Lock()
					done++
					progress(done)
					mu.Unlock()
				}
			}
		})
	}
	for i := range tests {
		next <- i
	}
	close(next)
	wg.Wait()
	return results
}

func runModes(s *Suite, h Host, t *Test) Result {
	for _, strict := range t.Modes() {
		src, err := s.Source(t, strict)
		if err != nil {
			return Result{Test: t, Message: err.Error()}
		}
		if o := h.Run(t, src); !o.Pass {
			mode := "sloppy"
			if strict {
				mode = "strict"
			}
			return Result{Test: t, Message: mode + ": " + o.Message}
		}
	}
	return Result{Test: t, Pass: true}
}
