// Reservations: a render waits for a process of its group, idle or (when
// pipelining) busy, and gives it back (release).

package nodeengine

import (
	"context"
	"errors"
	"slices"
)

// waiter is a reservation waiting for a process.
type waiter struct {
	ch    chan *proc
	group *group
	// idleOnly: the render needs a bundle loaded, which only an otherwise
	// unused process may do (it never queues).
	idleOnly bool
}

// errClosed is a reservation after Close.
var errClosed = errors.New("node engine closed")

// reserve waits for an idle process of group g (or a fresh one, which it
// binds to g), until ctx ends; when none is idle, a render may queue in a
// busy process of g (pipelining: queueOK and config.Depth > 1). A group
// with fewer processes than it may have starts one for the renders that
// wait (provisionLocked). The reservation is the caller's until release.
func (e *Engine) reserve(ctx context.Context, g *group, queueOK bool) (*proc, error) {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil, errClosed
	}
	if p := e.takeIdleLocked(g); p != nil {
		e.mu.Unlock()
		return p, nil
	}
	if queueOK {
		if p := e.takeQueuedLocked(g); p != nil {
			e.growLocked(g)
			e.mu.Unlock()
			return p, nil
		}
	}
	w := &waiter{ch: make(chan *proc, 1), group: g, idleOnly: !queueOK}
	e.waiters = append(e.waiters, w)
	stop := e.provisionLocked(g)
	e.mu.Unlock()
	for _, q := range stop {
		q.stop(reasonEvicted)
	}
	select {
	case p := <-w.ch:
		if p == nil {
			return nil, errClosed
		}
		return p, nil
	case <-ctx.Done():
		e.mu.Lock()
		if i := slices.Index(e.waiters, w); i >= 0 {
			e.waiters = slices.Delete(e.waiters, i, i+1)
			e.mu.Unlock()
			return nil, ctx.Err()
		}
		e.mu.Unlock()
		if p := <-w.ch; p != nil {
			e.release(p)
		}
		return nil, ctx.Err()
	}
}

// servesGroup reports whether p is g's.
func (e *Engine) servesGroup(p *proc, g *group) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return p.group == g
}

// groupOf returns the group of progs.
func (e *Engine) groupOf(progs ...*program) *group {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.groupLocked(progs)
}

// takeIdleLocked takes an idle process of g, one with all of g's bundles
// loaded if any, else a fresh one if g may have another process; the most
// recently released first.
func (e *Engine) takeIdleLocked(g *group) *proc {
	i := -1
	for j := len(e.idle) - 1; j >= 0; j-- {
		if p := e.idle[j]; p.group == g {
			if len(p.loaded) == len(g.progs) {
				i = j
				break
			}
			if i < 0 {
				i = j
			}
		}
	}
	return e.takeIdleAtLocked(i, g)
}

// takeIdleAtLocked takes and holds the idle process at index i, or, when i
// is -1, an unbound idle process, which it binds to g; nil if none.
func (e *Engine) takeIdleAtLocked(i int, g *group) *proc {
	if i < 0 {
		i = slices.IndexFunc(e.idle, func(p *proc) bool { return p.group == nil })
		if i < 0 || !e.bindLocked(e.idle[i], g) {
			return nil
		}
	}
	p := e.idle[i]
	e.idle = slices.Delete(e.idle, i, i+1)
	e.holdLocked(p)
	return p
}

// holdLocked makes p, idle, its first holder's.
func (e *Engine) holdLocked(p *proc) {
	p.busy = true
	p.holders = 1
	p.open = false
}

// takeQueuedLocked queues a render in a busy process of g with room
// (fewer than config.Depth holders), the least held one; nil if none.
func (e *Engine) takeQueuedLocked(g *group) *proc {
	if e.cfg.Depth < 2 {
		return nil
	}
	var best *proc
	for _, p := range e.procs {
		if p != nil && e.queueableLocked(p, g) && (best == nil || p.holders < best.holders) {
			best = p
		}
	}
	if best != nil {
		best.holders++
	}
	return best
}

// queueableLocked reports whether a render of g may queue in p: its first
// holder loaded g's bundles before it sent its render (open).
func (e *Engine) queueableLocked(p *proc, g *group) bool {
	return p.open && !p.retire && !p.evicted && !p.dead.Load() && p.holders < e.cfg.Depth && p.group == g
}

// opened marks p, whose render was sent, as taking queued renders (its
// first holder loads nothing more into it), and queues in it the renders
// that wait for a process and may.
func (e *Engine) opened(p *proc) {
	if e.cfg.Depth < 2 {
		return
	}
	e.mu.Lock()
	if p.open && len(e.waiters) == 0 {
		e.mu.Unlock()
		return
	}
	p.open = true
	handed := e.queueWaitersLocked(p)
	e.mu.Unlock()
	for _, w := range handed {
		w.ch <- p
	}
}

// queueWaitersLocked queues in p, busy and taking queued renders, the
// waiting renders that may queue in it, in the order they came, while it
// has room; the caller hands them p once e.mu is unlocked. No waiter is
// ever left that could queue somewhere: reserve queues a render before it
// waits, and the two changes that make room call this (opened: up to
// Depth-1 renders; release: the one its leaving holder made).
func (e *Engine) queueWaitersLocked(p *proc) []*waiter {
	var handed []*waiter
	for i := 0; i < len(e.waiters); {
		w := e.waiters[i]
		if w.idleOnly || !e.queueableLocked(p, w.group) {
			i++
			continue
		}
		e.waiters = slices.Delete(e.waiters, i, i+1)
		p.holders++
		handed = append(handed, w)
	}
	return handed
}

// lacksQueued reports whether p, taking queued renders, lacks a program
// of progs: a holder that finds it so is not its only one, and may not
// load a bundle into it.
func (e *Engine) lacksQueued(p *proc, progs []*program) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !p.open {
		return false
	}
	for _, prg := range progs {
		if !p.loaded[prg] {
			return true
		}
	}
	return false
}

// tryReserveLacking takes, without waiting, an idle process of g that
// lacks prg, else a fresh one if g may have another process; nil if none.
func (e *Engine) tryReserveLacking(g *group, prg *program) *proc {
	e.mu.Lock()
	defer e.mu.Unlock()
	i := slices.IndexFunc(e.idle, func(p *proc) bool { return p.group == g && !p.loaded[prg] })
	return e.takeIdleAtLocked(i, g)
}

// release ends a reservation of p. A process left with holders stays
// theirs, and a waiting render of its group may queue in it. Otherwise it
// goes to the first waiter of its group (a fresh one: of a group that may
// have another process), else, if another group lacks processes for its
// waiting renders, it makes room for it (evicted), else to the idle set,
// and a render queued behind another in a busy process of its group is
// asked to leave it (withdrawQueuedLocked), so that no render waits behind
// a slow one while a process is free. A dead process is dropped (its
// supervisor replaces it); one due for recycling, or whose group is not
// live any more, is stopped.
func (e *Engine) release(p *proc) {
	e.mu.Lock()
	if p.holders > 0 {
		p.holders--
	}
	if p.holders > 0 {
		handed := e.queueWaitersLocked(p)
		e.mu.Unlock()
		for _, w := range handed {
			w.ch <- p
		}
		return
	}
	p.busy, p.open = false, false
	p.touch()
	if p.dead.Load() || p.evicted || e.closed {
		e.mu.Unlock()
		return
	}
	if p.retire {
		e.mu.Unlock()
		p.stop(reasonRecycled)
		return
	}
	if p.group != nil && !p.group.live() {
		e.evictLocked(p, nil)
		e.mu.Unlock()
		p.stop(reasonEvicted)
		return
	}
	for i, w := range e.waiters {
		if e.bindLocked(p, w.group) {
			e.waiters = slices.Delete(e.waiters, i, i+1)
			e.holdLocked(p)
			e.mu.Unlock()
			w.ch <- p
			return
		}
	}
	if p.group != nil {
		if h := e.starvedLocked(p.group); h != nil {
			e.evictLocked(p, h)
			e.mu.Unlock()
			p.stop(reasonEvicted)
			return
		}
	}
	e.idle = append(e.idle, p)
	e.withdrawQueuedLocked(p)
	wake := false
	if p.group == nil || len(p.loaded) < len(p.group.progs) || e.spreadHeld {
		// The spreader may load into a process only while another
		// stays idle (and no render waits: there is none, p is idle).
		wake = len(e.idle) >= 2
		e.spreadHeld = !wake
	}
	e.mu.Unlock()
	if wake {
		e.wakeSpreader()
	}
}

// withdrawQueuedLocked asks one render queued behind another in a busy
// process of p's group, if any, to come back for a process now that p is
// idle (ticket.move): if its process has not started it, the executor gives it
// back and it reserves again, finding p unless a new render took p first.
// p is not held for it: the executor reads the withdraw only once the
// render ahead of it yields, and a server render is mostly synchronous
// JavaScript, so the answer comes when that render ends, and usually says
// the queued render started there after all. A process held for the
// answer stood idle all that time (a whole render, each time a process
// was freed while renders were queued), and the renders that came
// meanwhile queued behind busy processes in turn.
func (e *Engine) withdrawQueuedLocked(p *proc) {
	if p.group == nil {
		return
	}
	for _, o := range e.procs {
		if o == nil || o == p || o.group != p.group || o.holders < 2 {
			continue
		}
		if t := o.queuedTicket(); t != nil {
			t.move <- struct{}{}
			return
		}
	}
}
