// Supervision: each slot's process started, restored, offered, retired and
// replaced (on exit, on schedule, after MaxRendersPerProcess).

package nodeengine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// supervise keeps the slot's process running until Close: it starts one
// (for the slot's next group, or fresh), offers it for work, and when it
// exits starts the next. A slot past the first config.Processes ends when
// no group needs its next process (group.go). first, if not nil, receives
// the outcome of the slot's first start.
func (e *Engine) supervise(slot int, first chan<- error) {
	defer e.supervisors.Done()
	reported := first == nil
	backoff := 100 * time.Millisecond
	for {
		if e.isClosed() {
			if !reported {
				first <- errors.New("the engine closed")
			}
			return
		}
		p, err := e.startProc(slot)
		if err == nil {
			e.spawned.Add(1)
			// Busy until offered: Close can kill it while it loads its
			// bundles back, and Processes lists it.
			p.busy = true
			e.mu.Lock()
			e.procs[slot] = p
			if g := e.slotNext[slot]; g != nil && g.live() {
				p.group = g
			}
			closed := e.closed
			e.mu.Unlock()
			if closed {
				p.kill(reasonShutdown)
			}
			err = e.restore(p)
			if err != nil {
				// Its slot keeps the group to load back.
				p.kill(reasonStart)
				<-p.exited
				e.mu.Lock()
				if e.procs[slot] == p {
					e.procs[slot] = nil
				}
				e.mu.Unlock()
			}
		}
		if !reported {
			first <- err
			reported = true
		}
		if errors.Is(err, errClosed) {
			return
		}
		if err != nil {
			e.mu.Lock()
			e.restarts[reasonStart]++
			e.mu.Unlock()
			e.log.Error("node process failed to start", "node_process", slot, "err", err, "retry_in", backoff)
			select {
			case <-e.done:
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 5*time.Second)
			continue
		}
		e.offer(p)
		select {
		case <-p.exited:
		case <-e.done:
			p.kill(reasonShutdown)
			<-p.exited
			return
		}
		// Its pipe ends with it: what it sent last (a malformed frame) is
		// read before its death is classified.
		<-p.readDone
		ends := e.retireProc(p)
		if time.Since(p.started) > 10*time.Second {
			backoff = 100 * time.Millisecond
		}
		reason := p.exitReason()
		if reason == reasonShutdown {
			return
		}
		e.mu.Lock()
		e.restarts[reason]++
		renders := p.renders
		e.mu.Unlock()
		log := e.log.Info
		if reason == reasonCrash || reason == reasonOOM {
			log = e.log.Warn
		}
		log("node process replaced", "node_process", slot, "pid", p.pid, "reason", reason, "exit", exitDescription(p.state), "renders", renders, "slot_ends", ends)
		if crashed[reason] && e.cfg.OnCrash != nil {
			e.cfg.OnCrash(slot, p.pid, reason, exitDescription(p.state))
		}
		if ends {
			return
		}
	}
}

// crashed are the reasons a process ended other than by gorender's choice.
var crashed = map[string]bool{reasonCrash: true, reasonOOM: true, reasonProtocol: true, reasonBundleFault: true}

func (e *Engine) isClosed() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.closed
}

// restore loads into a slot's new process the bundles of its group its
// predecessor had loaded, so that the renders it takes next do not pay for
// loading them. (A process started for a group that had none there loads
// them for the render that waits for it, under that render's deadline.)
func (e *Engine) restore(p *proc) error {
	e.mu.Lock()
	var want []*program
	if p.group != nil {
		want = e.slotLoaded[p.slot]
	}
	e.mu.Unlock()
	for _, prg := range want {
		if !prg.live() {
			continue
		}
		if p.dead.Load() {
			return fmt.Errorf("node process %d died while loading its bundles back", p.pid)
		}
		if err := e.loadInto(context.Background(), p, prg); err != nil {
			if p.dead.Load() {
				return fmt.Errorf("node process %d died while loading its bundles back: %w", p.pid, err)
			}
			e.log.Warn("bundle failed to load into a replaced node process; it loads on first use", "node_process", p.slot, "bundle", prg.name, "err", err)
		}
	}
	return nil
}

// offer makes a started process available; the spreader loads into it the
// bundles of its group it lacks.
func (e *Engine) offer(p *proc) {
	e.mu.Lock()
	p.ready = true
	e.mu.Unlock()
	e.release(p)
	e.wakeSpreader()
}

// retireProc forgets a process that exited; its slot's next process starts
// for its group (unless it was evicted: then for the group evictLocked
// named). It reports whether the slot ends instead: past the first
// config.Processes slots, when no group needs its next process; renders
// waiting for a process may then start one in it.
func (e *Engine) retireProc(p *proc) bool {
	e.mu.Lock()
	if e.procs[p.slot] == p {
		e.procs[p.slot] = nil
	}
	e.idle = slices.DeleteFunc(e.idle, func(q *proc) bool { return q == p })
	if !p.evicted {
		e.slotNext[p.slot] = p.group
		var progs []*program
		for prg := range p.loaded {
			progs = append(progs, prg)
		}
		slices.SortFunc(progs, func(a, b *program) int { return cmpKeys(a.key, b.key) })
		e.slotLoaded[p.slot] = progs
	}
	if g := e.slotNext[p.slot]; g != nil && !g.live() {
		e.slotNext[p.slot] = nil
	}
	if e.closed || p.slot < e.cfg.Processes || e.slotNext[p.slot] != nil {
		e.mu.Unlock()
		return false
	}
	e.slotRunning[p.slot] = false
	var stop []*proc
	for _, w := range slices.Clone(e.waiters) {
		stop = append(stop, e.provisionLocked(w.group)...)
	}
	e.mu.Unlock()
	for _, q := range stop {
		q.stop(reasonEvicted)
	}
	return true
}

// restartOnSchedule replaces every process each RestartInterval, one at a
// time RestartDelay apart: an idle one at once, a busy one when its render
// ends. Its replacement starts with the bundles it had.
func (e *Engine) restartOnSchedule() {
	defer e.supervisors.Done()
	ticker := time.NewTicker(e.cfg.RestartInterval)
	defer ticker.Stop()
	for {
		select {
		case <-e.done:
			return
		case <-ticker.C:
		}
		for slot := range e.cfg.MaxProcesses {
			e.mu.Lock()
			p := e.procs[slot]
			if p == nil || p.dead.Load() || p.evicted {
				e.mu.Unlock()
				continue
			}
			stopNow := false
			if !p.retire {
				p.retire = true
				if !p.busy {
					e.idle = slices.DeleteFunc(e.idle, func(q *proc) bool { return q == p })
					stopNow = true
				}
			}
			e.mu.Unlock()
			if stopNow {
				p.stop(reasonRecycled)
			}
			select {
			case <-e.done:
				return
			case <-time.After(e.cfg.RestartDelay):
			}
		}
	}
}

// rendered counts a render on p and marks it for recycling once it ran
// MaxRendersPerProcess.
func (e *Engine) rendered(p *proc) {
	e.mu.Lock()
	defer e.mu.Unlock()
	p.renders++
	if n := e.cfg.MaxRendersPerProcess; n > 0 && p.renders >= n && !p.retire {
		p.retire = true
		e.log.Info("node process recycled", "node_process", p.slot, "pid", p.pid, "renders", p.renders)
	}
}
