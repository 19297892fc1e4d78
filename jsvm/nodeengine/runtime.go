package nodeengine

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/gorender/gorender/jsvm"
)

// bundleRuntime is a bundle's lease on the engine's processes: it holds no
// process between renders. Load makes sure the bundle is evaluated in a
// process (one more each time another runtime of the bundle loads, so that
// a pool of N runtimes warms N processes); Eval runs a render on the
// process reserved for it.
type bundleRuntime struct {
	eng *Engine
	prg *program
	// reserved is Reserve's process, for the next Eval. Atomic: when the
	// pools give up on a render (quarantine), the lease and the pool each
	// let go of it once Eval returns, on goroutines of their own.
	reserved atomic.Pointer[proc]
	broken   bool
	closed   bool
}

// NewRuntime implements jsvm.Engine.
func (e *Engine) NewRuntime() (jsvm.Runtime, error) {
	if e.isClosed() {
		return nil, errClosed
	}
	return &bundleRuntime{eng: e}, nil
}

// Load implements jsvm.Runtime.
func (r *bundleRuntime) Load(ctx context.Context, p jsvm.Program) error {
	prg, ok := p.(*program)
	if !ok {
		return fmt.Errorf("load bundle: program %T is not a node program", p)
	}
	if r.prg != nil {
		return fmt.Errorf("load bundle %s: the runtime holds bundle %s already", prg.name, r.prg.name)
	}
	prg.mu.Lock()
	prg.refs++
	prg.mu.Unlock()
	r.prg = prg
	return r.eng.warm(ctx, prg)
}

// warm evaluates prg in a process of the group of prg alone (the renders
// that have it as entry and no dependency): the first time in any (a
// bundle that fails to evaluate fails here), then in one more of the group
// that lacks it (or a fresh one) if one is idle now.
func (e *Engine) warm(ctx context.Context, prg *program) error {
	e.mu.Lock()
	g := e.groupLocked([]*program{prg})
	anywhere := false
	for _, p := range e.procs {
		if p != nil && p.group == g && p.loaded[prg] {
			anywhere = true
			break
		}
	}
	e.mu.Unlock()
	var p *proc
	if anywhere {
		if p = e.tryReserveLacking(g, prg); p == nil {
			return nil
		}
	} else {
		var err error
		if p, err = e.reserve(ctx, g, false); err != nil {
			return fmt.Errorf("load bundle %s: no node process became free: %w", prg.name, err)
		}
	}
	err := e.loadInto(ctx, p, prg)
	if !errors.Is(err, errLoadGoesOn) {
		e.release(p)
	}
	return err
}

// Reserve implements jsvm.Reserver: it waits for a process of the group
// of this runtime's bundle and with's for this runtime's next render.
func (r *bundleRuntime) Reserve(ctx context.Context, with []jsvm.Runtime) error {
	if r.reserved.Load() != nil {
		return nil
	}
	progs, err := r.setOf(with)
	if err != nil {
		return err
	}
	p, err := r.eng.reserve(ctx, r.eng.groupOf(progs...), true)
	if err != nil {
		return err
	}
	r.reserved.Store(p)
	return nil
}

// setOf is the programs of a render of this runtime with others: its own
// first.
func (r *bundleRuntime) setOf(others []jsvm.Runtime) ([]*program, error) {
	if r.prg == nil {
		return nil, errors.New("evaluate: no bundle loaded")
	}
	progs := make([]*program, 1, 1+len(others))
	progs[0] = r.prg
	for _, rt := range others {
		other, ok := rt.(*bundleRuntime)
		if !ok || other.prg == nil {
			return nil, fmt.Errorf("evaluate: the runtime %T of a dependency bundle is not a loaded node runtime", rt)
		}
		progs = append(progs, other.prg)
	}
	return progs, nil
}

// Unreserve implements jsvm.Reserver.
func (r *bundleRuntime) Unreserve() {
	if p := r.reserved.Swap(nil); p != nil {
		r.eng.release(p)
	}
}

// QueuesRenders implements jsvm.Queuer: with a depth over 1 a render may
// wait in a process behind another.
func (r *bundleRuntime) QueuesRenders() bool { return r.eng.cfg.Depth > 1 }

// Broken implements jsvm.Runtime: a runtime whose render lost its process
// (killed at the deadline, crashed) is retired; its bundle stays loaded in
// the other processes.
func (r *bundleRuntime) Broken() bool { return r.broken }

// Close implements jsvm.Runtime.
func (r *bundleRuntime) Close() {
	if r.closed {
		return
	}
	r.closed = true
	r.Unreserve()
	if r.prg != nil {
		r.prg.mu.Lock()
		r.prg.refs--
		gone := r.prg.closed && r.prg.refs == 0
		r.prg.mu.Unlock()
		if gone {
			r.eng.stopUnneeded()
		}
	}
}

// cancelGrace is how long a render asked to stop (its client left, the
// pools interrupted it) may take to say it stopped before its process is
// killed. A render waiting on timers or I/O stops at once; one running
// JavaScript does not answer. A stream's grace runs from the last chunk
// gorender reads of it: the executor sends none once it has read the
// cancel, but the ones it sent before lie ahead of its answer in the pipe,
// and a loaded gorender may take longer than the grace to read them (a
// process that stopped at once was killed so, and the next renders waited
// for its replacement). A variable so that tests of a render that stops
// can give a loaded machine all the time it needs.
var cancelGrace = 250 * time.Millisecond

// Eval implements jsvm.Runtime.
func (r *bundleRuntime) Eval(ctx context.Context, code string, req *jsvm.Request) (jsvm.Result, error) {
	if r.broken || r.closed {
		return jsvm.Result{}, errors.New("evaluate: runtime is retired")
	}
	if r.prg == nil {
		return jsvm.Result{}, errors.New("evaluate: no bundle loaded")
	}
	if req == nil {
		req = jsvm.NewRequest(nil)
	}
	started := time.Now()
	set := make(map[string]string, len(req.Runtimes))
	others := make([]jsvm.Runtime, 0, len(req.Runtimes))
	for id, rt := range req.Runtimes {
		if rt == jsvm.Runtime(r) {
			continue
		}
		other, ok := rt.(*bundleRuntime)
		if !ok || other.prg == nil {
			return jsvm.Result{}, fmt.Errorf("evaluate: the runtime of bundle %q is not a loaded node runtime", id)
		}
		set[id] = other.prg.key
		others = append(others, rt)
	}
	for id, rt := range req.Runtimes {
		if rt == jsvm.Runtime(r) {
			set[id] = r.prg.key
		}
	}
	progs, err := r.setOf(others)
	if err != nil {
		return jsvm.Result{}, err
	}
	g := r.eng.groupOf(progs...)
	p := r.reserved.Load()
	owned := p == nil
	if !owned && !r.eng.servesGroup(p, g) {
		// Reserved for another set (not the pools' way): it runs where
		// its own set runs.
		r.eng.release(p)
		r.reserved.Store(nil)
		p, owned = nil, true
	}
	queueOK := true
	for {
		if p == nil {
			var err error
			if p, err = r.eng.reserve(ctx, g, queueOK); err != nil {
				if !owned {
					r.reserved.Store(nil)
				}
				if ctx.Err() != nil {
					return jsvm.Result{}, jsvm.InterruptedError(ctx, started)
				}
				return jsvm.Result{}, fmt.Errorf("evaluate: %w", err)
			}
			if !owned {
				r.reserved.Store(p)
			}
		}
		rn := &render{rt: r, p: p, req: req, code: code, started: started, set: set, progs: progs}
		res, err := rn.run(ctx)
		if rn.elsewhere {
			// It never ran in p: it reserves another (an idle one if it
			// needs a bundle loaded).
			r.eng.release(p)
			p, queueOK = nil, !rn.needsIdle
			if !owned {
				r.reserved.Store(nil)
			}
			continue
		}
		switch {
		case rn.finishing:
			// The process is released when the render or load ends.
			if !owned {
				r.reserved.Store(nil)
			}
		case owned:
			r.eng.release(p)
		}
		return res, err
	}
}

// render is one Eval on one process.
type render struct {
	rt      *bundleRuntime
	p       *proc
	req     *jsvm.Request
	code    string
	started time.Time
	set     map[string]string // the render set's bundle ids, to program keys
	progs   []*program        // the render set: its group's programs, the entry's first
	id      uint64
	funcs   map[string]jsvm.HostFunc
	t       *ticket
	// finishing is set when the render's caller was answered and its
	// process finishes the render, or the load of a bundle it needs, in
	// the background and is released then (finishLater, loadInto).
	finishing bool
	// elsewhere is set when the render did not run in p and goes to
	// another process, reserved again (needsIdle: an idle one, to load a
	// bundle into).
	elsewhere bool
	needsIdle bool
}

func (rn *render) run(ctx context.Context) (jsvm.Result, error) {
	r, p, req, set, progs := rn.rt, rn.p, rn.req, rn.set, rn.progs
	if r.eng.lacksQueued(p, progs) {
		// Queued behind another render: only a process with no other
		// holder may load a bundle (a load cannot wait behind a render).
		rn.elsewhere, rn.needsIdle = true, true
		return jsvm.Result{}, nil
	}
	for _, prg := range progs {
		if err := r.eng.loadInto(ctx, p, prg); err != nil {
			if errors.Is(err, errLoadGoesOn) {
				// p finishes the load, then is released (loadInto).
				rn.finishing = true
				return jsvm.Result{}, jsvm.InterruptedError(ctx, rn.started)
			}
			if p.dead.Load() {
				r.broken = true
			}
			if ctx.Err() != nil {
				return jsvm.Result{}, jsvm.InterruptedError(ctx, rn.started)
			}
			return jsvm.Result{}, &jsvm.BundleLoadError{ID: prg.name, Err: err}
		}
	}

	rn.id = r.eng.nextRender.Add(1)
	t := newTicket(rn.id, req.Sink != nil || req.Updates != nil)
	t.bundle = r.prg.name
	rn.t = t
	code, parsed, latin1, sent := compiledCode(rn.code)
	h := &header{T: "render", R: rn.id, B: r.prg.key, Set: set, Sink: req.Sink != nil, Updates: req.Updates != nil, Host: rn.hostEntries(),
		Parsed: parsed, Latin1: latin1}
	// Counted before it is sent: a render that comes for p once this one
	// is in its pipe must see p due for recycling, or it would queue there.
	r.eng.rendered(p)
	err := p.sendRender(t, h, code)
	sent()
	if err != nil {
		if errors.Is(err, errOutputEnded) {
			rn.elsewhere = true // it was never sent
			return jsvm.Result{}, nil
		}
		return rn.lost()
	}
	r.eng.opened(p)
	moveC := t.move
	withdrawing := false // the render was asked to move: a withdraw was sent
	defer p.noMoves(t)

	var notify chan struct{}
	if req.Updates != nil {
		notify = make(chan struct{}, 1)
		req.Updates.SetNotify(func() {
			select {
			case notify <- struct{}{}:
			default:
			}
		})
		defer req.Updates.SetNotify(nil)
	}
	var (
		applying      *jsvm.Update // the update sent and not yet applied
		seq           uint64       // applying's sequence number
		updatesClosed bool
		idle          *time.Timer
		idleC         <-chan time.Time
		grace         *time.Timer // from the stop (stop)
		graceC        <-chan time.Time
		stopped       error       // the answer, once gorender asked the render to stop
		streaming     bool        // the answer started streaming
		startedC      = t.started // nil once the render may be running
	)
	defer func() {
		if idle != nil {
			idle.Stop()
		}
		if grace != nil {
			grace.Stop()
		}
	}()
	touch := func() {
		if idle != nil {
			idle.Reset(req.StreamIdle)
		}
	}
	stop := func(why string, answer error) {
		if stopped != nil {
			return
		}
		stopped = answer
		if idle != nil {
			idle.Stop()
			idleC = nil
		}
		if err := p.send(&header{T: "cancel", R: rn.id, Why: why}, ""); err != nil {
			p.kill(reasonUnresponsive)
		}
		grace = time.NewTimer(cancelGrace)
		graceC = grace.C
	}
	// sendUpdate sends the next update once the last was applied (or the
	// close once none is left): updates the executor's JavaScript cannot
	// take (it never yields) stay in the request's queue, where the
	// stream's idle watchdog sees them pile up.
	sendUpdate := func() {
		if applying != nil || updatesClosed || startedC != nil {
			return
		}
		up, ok, closed := req.Updates.TakeOne()
		switch {
		case ok:
			seq++
			applying = &up
			if err := p.send(&header{T: "update", R: rn.id, N: seq, ID: up.BundleID}, up.Code); err != nil {
				p.kill(reasonUnresponsive)
			}
		case closed:
			updatesClosed = true
			if err := p.send(&header{T: "close", R: rn.id}, ""); err != nil {
				p.kill(reasonUnresponsive)
			}
		}
	}
	// begin is the render's start: the first sent to p starts at once,
	// one queued behind others once they answered. The caller learns it
	// (its render deadline runs from then), and updates go from then on.
	begin := func() {
		startedC = nil
		if req.Started != nil {
			req.Started()
		}
		if req.Updates != nil {
			sendUpdate()
		}
	}
	if t.hasStarted() {
		begin()
	}
	ctxDone := ctx.Done()
	for {
		select {
		case <-startedC:
			begin()
		case <-moveC:
			// A process became idle: the render is withdrawn from p
			// unless p has started it (its frames say which).
			moveC = nil
			withdrawing = true
			_ = p.send(&header{T: "withdraw", R: rn.id}, "")
		case fp, ok := <-t.frames:
			if !ok {
				if t.unstarted {
					// p ended before it could start the render: it ran
					// nowhere and goes to another process.
					rn.elsewhere = true
					return jsvm.Result{}, nil
				}
				if stopped != nil {
					r.broken = true
					return jsvm.Result{}, stopped
				}
				return rn.lost()
			}
			f := t.take(fp)
			if f.h.T == "done" && f.h.Kind == "withdrawn" {
				if !withdrawing {
					return rn.protocolError(fmt.Errorf("%w: render %d withdrawn unasked", errProtocol, rn.id))
				}
				rn.elsewhere = true
				return jsvm.Result{}, nil
			}
			if startedC != nil {
				// Its frames say it started: the select may take them
				// before the start signal, which must come first (a
				// stream's start lifts the render deadline begin arms).
				begin()
			}
			switch f.h.T {
			case "start":
				if stopped != nil {
					continue
				}
				if req.Sink == nil {
					return rn.protocolError(fmt.Errorf("%w: a stream started without a sink", errProtocol))
				}
				streaming = true
				if err := req.Sink.Start(); err != nil {
					stop("client", &jsvm.RenderError{Kind: jsvm.KindCanceled, Text: jsvm.CanceledText})
					continue
				}
				if req.StreamIdle > 0 {
					idle = time.NewTimer(req.StreamIdle)
					idleC = idle.C
				}
			case "chunk":
				if stopped != nil {
					// Sent before the executor read the cancel: it is
					// not stuck, gorender is behind (cancelGrace).
					grace.Reset(cancelGrace)
					continue
				}
				if len(f.body) == 0 || req.Sink == nil {
					continue
				}
				touch()
				if err := req.Sink.Write(f.body); err != nil {
					stop("client", &jsvm.RenderError{Kind: jsvm.KindCanceled, Text: jsvm.StreamCanceledText})
				}
			case "call":
				if fn := rn.funcs[f.h.K]; fn != nil && stopped == nil {
					fn(f.h.Args...)
				}
			case "updated", "updateFailed":
				if applying == nil || f.h.N != seq {
					return rn.protocolError(fmt.Errorf("%w: %q frame for update %d, which is not the one applying", errProtocol, f.h.T, f.h.N))
				}
				if f.h.T == "updateFailed" {
					failed, err := errorOf(f)
					if err != nil {
						return rn.protocolError(err)
					}
					if req.Updates.Failed != nil {
						req.Updates.Failed(*applying, failed.Message)
					}
				} else if req.Updates.Applied != nil {
					req.Updates.Applied(*applying)
				}
				applying = nil
				touch()
				sendUpdate()
			case "done":
				if stopped != nil {
					return jsvm.Result{}, stopped
				}
				return rn.answer(f)
			default:
				return rn.protocolError(fmt.Errorf("%w: unexpected %q frame during a render", errProtocol, f.h.T))
			}
		case <-notify:
			sendUpdate()
		case <-idleC:
			idleC = nil
			stop("idle", &jsvm.RenderError{Kind: jsvm.KindTimeout, Text: jsvm.StreamIdleText(req.StreamIdle)})
		case <-ctxDone:
			ctxDone = nil
			if !t.hasStarted() {
				// Still queued behind another render: the executor drops
				// it unstarted (or stops it, if it started meanwhile, as
				// any render asked to stop), and its caller is answered
				// now; p is released when its done frame comes.
				if err := p.send(&header{T: "cancel", R: rn.id, Why: "interrupt"}, ""); err != nil {
					p.kill(reasonUnresponsive)
				}
				rn.finishLater(req.Deadline)
				return jsvm.Result{}, jsvm.InterruptedError(ctx, rn.started)
			}
			if pastDeadline(ctx) {
				// A render past its deadline may be running JavaScript that
				// never yields (a loop, a catastrophic regex): its process
				// is killed and replaced; the other processes' renders go on.
				p.kill(reasonDeadline)
				r.broken = true
				return jsvm.Result{}, jsvm.InterruptedError(ctx, rn.started)
			}
			stop("interrupt", jsvm.InterruptedError(ctx, rn.started))
		case <-graceC:
			// A render asked to stop that did not within the grace is
			// running JavaScript. Before its deadline it may be merely
			// slow: its caller is answered now and its process finishes
			// it, then serves on (a replacement would cost a start, the
			// bundles' loads and a cold V8). Streams and incremental
			// renders have no deadline past their start, so they are
			// stopped here.
			if !streaming && req.Updates == nil && time.Until(req.Deadline) > 0 {
				rn.finishLater(req.Deadline)
				return jsvm.Result{}, stopped
			}
			p.kill(reasonUnresponsive)
			r.broken = true
			return jsvm.Result{}, stopped
		}
	}
}

// finishLater lets the process finish a render whose caller was answered:
// it is released once its done frame arrives, and killed at the render
// deadline if it has not ended by then (counted as a deadline kill). A
// render still queued (its caller left) is dropped by the executor; if it
// started meanwhile, it has the cancel grace from its start at least.
func (rn *render) finishLater(deadline time.Time) {
	rn.finishing = true
	e, p, t := rn.rt.eng, rn.p, rn.t
	queued := !t.hasStarted()
	go func() {
		defer e.release(p)
		var timer *time.Timer
		var timerC <-chan time.Time
		arm := func() {
			d := time.Until(deadline)
			if queued {
				d = max(d, cancelGrace)
			}
			timer = time.NewTimer(d)
			timerC = timer.C
		}
		defer func() {
			if timer != nil {
				timer.Stop()
			}
		}()
		startedC := t.started
		if !queued {
			startedC = nil
			arm()
		}
		for {
			select {
			case <-startedC:
				startedC = nil
				arm()
			case fp, ok := <-t.frames:
				if !ok || t.take(fp).h.T == "done" {
					return
				}
			case <-timerC:
				p.kill(reasonDeadline)
				return
			}
		}
	}()
}

// pastDeadline reports whether ctx ended at a render deadline rather than
// by its request going away (or the pools stopping it).
func pastDeadline(ctx context.Context) bool {
	var d *jsvm.DeadlineError
	return errors.As(context.Cause(ctx), &d) || errors.Is(ctx.Err(), context.DeadlineExceeded)
}

// hostEntries are the shared-context values gorender put in before the
// render, for the executor; host functions stay here and are called when
// their call frames arrive.
func (rn *render) hostEntries() []hostEntry {
	var out []hostEntry
	shared := rn.req.Shared
	for _, k := range shared.Keys() {
		key, isString := k.(string)
		e, ok := shared.Get(k)
		if !isString || !ok || e.Owner != nil {
			continue // a runtime's, not the host's (none before a render)
		}
		switch val := e.Value.(type) {
		case jsvm.HostSet:
			out = append(out, hostEntry{Key: key, Kind: "set", Value: []string(val)})
		case jsvm.HostFunc:
			if rn.funcs == nil {
				rn.funcs = make(map[string]jsvm.HostFunc)
			}
			rn.funcs[key] = val
			out = append(out, hostEntry{Key: key, Kind: "func"})
		default:
			out = append(out, hostEntry{Key: key, Kind: "value", Value: val})
		}
	}
	return out
}

// answer turns the executor's done frame into the render's answer, with
// the texts every engine answers.
func (rn *render) answer(f frame) (jsvm.Result, error) {
	code := rn.code
	switch f.h.Kind {
	case "body":
		if f.dropped > 0 {
			return jsvm.Result{}, &jsvm.RenderError{Kind: jsvm.KindJS, Text: jsvm.ResultTooLargeText(code, int(f.dropped), rn.rt.eng.resultLimit())}
		}
		// The body was allocated for this frame alone (frameReader) and
		// nothing writes to it: the answer takes it without a copy (a
		// large page's answer is megabytes).
		return jsvm.Result{Body: unsafe.String(unsafe.SliceData(f.body), len(f.body))}, nil
	case "tooLarge":
		return jsvm.Result{}, &jsvm.RenderError{Kind: jsvm.KindJS, Text: jsvm.ResultTooLargeText(code, int(f.h.N), rn.rt.eng.resultLimit())}
	case "streamed":
		return jsvm.Result{Streamed: true}, nil
	case "nil":
		return jsvm.Result{}, &jsvm.RenderError{Kind: jsvm.KindNilResult, Text: jsvm.NilResultText(code)}
	case "js":
		failed, err := errorOf(f)
		if err != nil {
			return rn.protocolError(err)
		}
		return jsvm.Result{}, jsvm.JSError(code, failed.Message, failed.Stack)
	case "unsupported":
		return jsvm.Result{}, &jsvm.RenderError{Kind: jsvm.KindUnsupported, Text: jsvm.StreamWithoutSinkText}
	case "stubPending":
		return jsvm.Result{}, jsvm.JSError(code, jsvm.NeverSettledStubTimers, "")
	case "neverSettled":
		return jsvm.Result{}, jsvm.JSError(code, jsvm.NeverSettledIdle, "")
	case "stalled":
		return jsvm.Result{}, &jsvm.RenderError{Kind: jsvm.KindJS, Text: jsvm.StreamStalledText}
	}
	return rn.protocolError(fmt.Errorf("%w: done frame of unknown kind %q", errProtocol, f.h.Kind))
}

// protocolError answers a render whose executor broke the protocol; the
// process is killed and replaced (proc.breach).
func (rn *render) protocolError(err error) (jsvm.Result, error) {
	rn.p.breach(rn.rt.eng.log, err, rn.rt.prg.name)
	rn.rt.broken = true
	return jsvm.Result{}, &jsvm.RenderError{Kind: jsvm.KindTimeout, Text: rn.rt.eng.deathText(rn.p.death())}
}

// lost answers a render whose process died under it.
func (rn *render) lost() (jsvm.Result, error) {
	rn.rt.broken = true
	d := rn.p.death()
	rn.rt.eng.log.Warn("node process died during a render; it is replaced", "node_process", rn.p.slot, "bundle", rn.rt.prg.name, "err", d)
	return jsvm.Result{}, &jsvm.RenderError{Kind: jsvm.KindTimeout, Text: rn.rt.eng.deathText(d)}
}

// protocolFault replaces a process that sent a frame it should never have
// sent (proc.breach).
func (e *Engine) protocolFault(p *proc, err error) {
	p.breach(e.log, err, "")
}

// Answers of renders whose process broke the executor protocol, given like
// a timeout's: after bundle code ran in it (which can take the executor
// over), or before (gorender's bug).
const (
	bundleFaultText = "Render failed: the Node.js process running it broke gorender's executor protocol after bundle code ran in it (bundle %s, logged) and was replaced."
	protocolText    = "Render failed: the Node.js process running it broke gorender's executor protocol (a gorender bug, logged) and was replaced."
)

func (e *Engine) deathText(d *deathError) string {
	switch d.kind {
	case deathOOM:
		limit := "V8's default heap limit"
		if e.cfg.HeapLimit > 0 {
			limit = fmt.Sprintf("its V8 heap limit of %d MiB, %d MiB in all", e.heapLimitMiB(), e.dataLimit()>>20)
		}
		return fmt.Sprintf("Render failed: the Node.js process running it ran out of memory (%s) and was replaced.", limit)
	case deathProtocol:
		if d.bundle != "" {
			return fmt.Sprintf(bundleFaultText, d.bundle)
		}
		return protocolText
	case deathKilled:
		return fmt.Sprintf("Render failed: the Node.js process running it was stopped (%s).", d.detail)
	}
	return fmt.Sprintf("Render failed: the Node.js process running it exited unexpectedly (%s) and was replaced.", d.detail)
}
