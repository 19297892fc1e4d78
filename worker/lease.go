package worker

import (
	"context"
	"errors"
	"slices"
	"time"

	"go.opentelemetry.io/otel/codes"

	"github.com/gorender/gorender/jsvm"
	"github.com/gorender/gorender/tracing"
)

// bundleSet is the sorted unique ids of entry and deps: acquiring runtimes
// in one global order is what keeps two requests from deadlocking.
func bundleSet(entry string, deps []string) []string {
	ids := append([]string{entry}, deps...)
	slices.Sort(ids)
	return slices.Compact(ids)
}

// lease is the runtimes one request holds: one of each bundle of its set.
type lease struct {
	held  []leased // in the set's (sorted) order
	entry *entry   // the entry bundle's runtime, one of held
	// reserved is the entry runtime's executor reservation (jsvm.Reserver),
	// nil for engines whose runtimes run by themselves.
	reserved jsvm.Reserver
	// waitStarted is when the request began to wait for its runtimes.
	waitStarted time.Time
}

// leased is one runtime of a lease: bundle id's, from its pool.
type leased struct {
	id   string
	pool *pool
	e    *entry
}

func (l *lease) release() { l.releaseAs(replacedBroken) }

// releaseAs releases the lease; a broken runtime is replaced and counted
// with reason brokenReason.
func (l *lease) releaseAs(brokenReason replaceReason) {
	if l.reserved != nil {
		l.reserved.Unreserve()
	}
	for _, h := range l.held {
		h.pool.release(h.e, brokenReason)
	}
}

// abandon gives up every runtime of the lease (see pool.abandon); the
// executor reservation is given back once the render's goroutine returns.
func (l *lease) abandon(finished <-chan struct{}) {
	if l.reserved != nil {
		go func() {
			<-finished
			l.reserved.Unreserve()
		}()
	}
	for _, h := range l.held {
		h.pool.abandon(h.e, finished)
	}
}

// setStop records the render's interrupt on every leased runtime and
// returns the runtimes by bundle id.
func (l *lease) setStop(stop context.CancelCauseFunc) map[string]jsvm.Runtime {
	runtimes := make(map[string]jsvm.Runtime, len(l.held))
	for _, h := range l.held {
		h.pool.setStop(h.e, stop)
		runtimes[h.id] = h.e.rt
	}
	return runtimes
}

// acquire leases one runtime of every bundle of ids, in order, then the
// entry runtime's (entryID's) executor for the set if its engine shares them
// (jsvm.Reserver), all
// within the queue timeout. The bundles are loaded first: the queue timeout
// bounds the wait for a free runtime, not a cold bundle's load (which would
// otherwise use it up and turn the first render of a large bundle into a
// 503).
func (p *Pools) acquire(ctx context.Context, ids []string, entryID string) (*lease, error) {
	pools := make([]*pool, len(ids))
	for i, id := range ids {
		pl, err := p.pool(ctx, id)
		if err != nil {
			return nil, err
		}
		pools[i] = pl
	}
	_, span := tracing.Start(ctx, p.cfg.Tracer, "queue wait")
	defer span.End()
	started := time.Now()
	waitCtx := &queueWait{Context: ctx, deadline: started.Add(p.cfg.QueueTimeout)}
	defer waitCtx.stop()
	l := &lease{held: make([]leased, 0, len(ids)), waitStarted: started}
	for i, id := range ids {
		pl := pools[i]
		e, err := pl.acquire(waitCtx)
		if err != nil {
			l.release()
			if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
				err = ErrQueueTimeout
			}
			if span.IsRecording() {
				span.SetStatus(codes.Error, err.Error())
			}
			return nil, err
		}
		l.held = append(l.held, leased{id, pl, e})
		if id == entryID {
			l.entry = e
		}
	}
	if r, ok := l.entry.rt.(jsvm.Reserver); ok {
		with := make([]jsvm.Runtime, 0, len(l.held)-1)
		for _, h := range l.held {
			if h.e != l.entry {
				with = append(with, h.e.rt)
			}
		}
		if err := r.Reserve(waitCtx, with); err != nil {
			l.release()
			if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
				return nil, ErrQueueTimeout
			}
			return nil, err
		}
		l.reserved = r
	}
	if q, ok := l.entry.rt.(jsvm.Queuer); !ok || !q.QueuesRenders() {
		p.cfg.Observer.QueueWait(time.Since(started))
	}
	return l, nil
}

// queueWait is a request's context bounded by the queue timeout, whose
// timer is made only when something waits (asks for Done): most renders
// find their runtimes free, and context.WithTimeout cost each of them a
// timer and a child in the request's context (about 1.5 µs and 600 B).
// One goroutine uses it (acquire's).
type queueWait struct {
	context.Context // the request's
	deadline        time.Time
	wait            context.Context // made by the first Done
	cancel          context.CancelFunc
}

func (q *queueWait) Done() <-chan struct{} {
	if q.wait == nil {
		q.wait, q.cancel = context.WithDeadline(q.Context, q.deadline)
	}
	return q.wait.Done()
}

// Err is the request's error until the deadline; from it on, the
// deadline's, whether or not anything waited (as context.WithDeadline's).
func (q *queueWait) Err() error {
	if q.wait == nil && time.Now().Before(q.deadline) {
		return q.Context.Err()
	}
	q.Done()
	return q.wait.Err()
}

// Value asks the wait's context once it is made, so that context.Cause
// finds its cause.
func (q *queueWait) Value(key any) any {
	if q.wait == nil {
		return q.Context.Value(key)
	}
	return q.wait.Value(key)
}

func (q *queueWait) Deadline() (time.Time, bool) {
	if d, ok := q.Context.Deadline(); ok && d.Before(q.deadline) {
		return d, true
	}
	return q.deadline, true
}

// stop ends the wait's timer, if one was made.
func (q *queueWait) stop() {
	if q.cancel != nil {
		q.cancel()
	}
}
