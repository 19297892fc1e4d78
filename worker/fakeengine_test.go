package worker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/gorender/gorender/jsvm"
)

// fakeEngine is a jsvm.Engine whose "JavaScript" is a few commands, so that
// the pools' behaviour (scheduling, deadlines, replacement, quarantine,
// recycling, the LRU, the memory guard) is tested deterministically and
// fast, as database/sql tests its pool on a fake driver. Real engines run
// the conformance suite (jsvm/conformance) and the end-to-end tests.
//
// A bundle is directives separated by ';': "tag X" (what the tag command
// answers, default the bundle id), "load D" (loading takes D),
// "throw MESSAGE" (loading fails), "syntax" (compiling fails).
//
// A rendering request is one command:
//
//	echo TEXT      answers TEXT
//	next           counts the render in this runtime and answers the count
//	count          answers the count
//	tag            answers the bundle's tag
//	tag+ ID        the tag, then the tag of bundle ID's runtime of the request (runOnOtherBundle)
//	spin           runs until interrupted
//	stuck          ignores its interrupt until the engine is unstuck
//	hoard          allocates Go heap until interrupted
//	stream-spin    starts a stream, writes "first", then runs until interrupted
//	stream-write   starts a stream, writes "chunk" and ends it
//	stream-updates starts a stream and takes the request's updates, writing
//	               nothing, until their queue closes (or it is interrupted)
//	queued D CMD   waits D as if queued in its executor (queues: the
//	               runtimes are jsvm.Queuers), then starts (Request.Started)
//	               and runs CMD
type fakeEngine struct {
	mu      sync.Mutex
	unstuck chan struct{} // closed by unstick
	queues  bool
}

func newFakeEngine() *fakeEngine { return &fakeEngine{unstuck: make(chan struct{})} }

// unstick lets every stuck render return.
func (e *fakeEngine) unstick() {
	e.mu.Lock()
	defer e.mu.Unlock()
	select {
	case <-e.unstuck:
	default:
		close(e.unstuck)
	}
}

func (e *fakeEngine) Name() string { return "fake" }

type fakeProgram struct {
	name, tag string
	load      time.Duration
	throw     string
}

func (p *fakeProgram) Name() string { return p.name }

func (e *fakeEngine) Compile(name, path, source string) (jsvm.Program, error) {
	p := &fakeProgram{name: name, tag: name}
	for _, d := range strings.Split(source, ";") {
		verb, arg, _ := strings.Cut(strings.TrimSpace(d), " ")
		switch verb {
		case "tag":
			p.tag = arg
		case "load":
			d, err := time.ParseDuration(arg)
			if err != nil {
				return nil, err
			}
			p.load = d
		case "throw":
			p.throw = arg
		case "syntax":
			return nil, fmt.Errorf("compile bundle %s: SyntaxError: Unexpected token", name)
		}
	}
	return p, nil
}

func (e *fakeEngine) NewRuntime() (jsvm.Runtime, error) { return &fakeRuntime{engine: e}, nil }

type fakeRuntime struct {
	engine  *fakeEngine
	program *fakeProgram
	renders int
	broken  bool
	hoard   [][]byte
}

func (r *fakeRuntime) Load(ctx context.Context, p jsvm.Program) error {
	fp := p.(*fakeProgram)
	select {
	case <-time.After(fp.load):
	case <-ctx.Done():
		r.broken = true
		return fmt.Errorf("load bundle %s: interrupted: %w", fp.name, ctx.Err())
	}
	if fp.throw != "" {
		return fmt.Errorf("load bundle %s: Error: %s", fp.name, fp.throw)
	}
	r.program = fp
	return nil
}

func (r *fakeRuntime) Eval(ctx context.Context, code string, req *jsvm.Request) (jsvm.Result, error) {
	if r.broken {
		return jsvm.Result{}, errors.New("evaluate: runtime is retired")
	}
	started := time.Now()
	interrupted := func() (jsvm.Result, error) {
		r.broken = true
		return jsvm.Result{}, jsvm.InterruptedError(ctx, started)
	}
	verb, arg, _ := strings.Cut(code, " ")
	switch verb {
	case "echo":
		return jsvm.Result{Body: arg}, nil
	case "next":
		r.renders++
		return jsvm.Result{Body: fmt.Sprint(r.renders)}, nil
	case "count":
		return jsvm.Result{Body: fmt.Sprint(r.renders)}, nil
	case "tag":
		return jsvm.Result{Body: r.program.tag}, nil
	case "tag+":
		other, ok := req.Runtimes[arg].(*fakeRuntime)
		if !ok {
			return jsvm.Result{}, &jsvm.RenderError{Kind: jsvm.KindJS, Text: jsvm.JSErrorText(code, "no bundle "+arg+" in the request", "")}
		}
		return jsvm.Result{Body: r.program.tag + other.program.tag}, nil
	case "spin":
		<-ctx.Done()
		return interrupted()
	case "stuck":
		<-r.engine.unstuck
		return interrupted()
	case "stream-spin":
		if err := req.Sink.Start(); err != nil {
			return jsvm.Result{}, err
		}
		if err := req.Sink.Write([]byte("first")); err != nil {
			return jsvm.Result{}, err
		}
		<-ctx.Done()
		return interrupted()
	case "stream-write":
		if err := req.Sink.Start(); err != nil {
			return jsvm.Result{}, err
		}
		return jsvm.Result{Streamed: true}, req.Sink.Write([]byte("chunk"))
	case "stream-updates":
		if err := req.Sink.Start(); err != nil {
			return jsvm.Result{}, err
		}
		notified := make(chan struct{}, 1)
		req.Updates.SetNotify(func() {
			select {
			case notified <- struct{}{}:
			default:
			}
		})
		defer req.Updates.SetNotify(nil)
		for {
			select {
			case <-notified:
				if _, closed := req.Updates.Take(); closed {
					return jsvm.Result{Streamed: true}, nil
				}
			case <-ctx.Done():
				return interrupted()
			}
		}
	case "queued":
		d, cmd, _ := strings.Cut(arg, " ")
		wait, err := time.ParseDuration(d)
		if err != nil {
			return jsvm.Result{}, err
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return jsvm.Result{}, jsvm.InterruptedError(ctx, started)
		}
		req.Started()
		return r.Eval(ctx, cmd, req)
	case "hoard":
		for ctx.Err() == nil {
			r.hoard = append(r.hoard, make([]byte, 1<<20))
			time.Sleep(time.Millisecond)
		}
		r.hoard = nil
		return interrupted()
	}
	return jsvm.Result{}, &jsvm.RenderError{Kind: jsvm.KindJS, Text: jsvm.JSErrorText(code, "unknown command", "")}
}

func (r *fakeRuntime) Broken() bool { return r.broken }

func (r *fakeRuntime) QueuesRenders() bool { return r.engine.queues }

func (r *fakeRuntime) Close() { r.broken = true }
