package nodeengine

import (
	"slices"
	"strings"
	"time"
)

// Isolation groups. Node's vm contexts are no security boundary: a
// process's built-ins (Buffer, TextEncoder, URL, require('util'),
// async_hooks, the executor's own fs) are the same objects in every
// context, and code that escapes its context holds the executor. So a
// process belongs to one group for its whole life: the set of bundles
// (programs) of the render that first used it, an entry bundle and its
// dependencyBundleTimestamps. Only that group's bundles are ever loaded in
// it and only renders of exactly that set run in it. A process that has
// loaded nothing (fresh: started at start, or replacing one that is no
// longer needed) is untainted and is bound to the first group that needs
// it. A bound process is never given to another group: when it is not
// needed any more (its group's bundles were let go of, or its slot goes to
// a group that lacks processes) it is stopped and a process of the slot's
// next group, or a fresh one, starts in its place.
//
// Bounds: a group has at most config.Processes (RENDERER_WORKERS_COUNT)
// processes, and all groups together config.MaxProcesses
// (RENDERER_NODE_MAX_PROCESSES) slots. The first config.Processes slots
// always run a process (fresh or bound), as before groups; the others
// start when a group that lacks processes waits for one, and end when
// their process is not needed any more. At the total bound, a group that
// lacks processes takes the slot of the least recently used idle process
// of another group (eviction).

// group is an isolation group: the programs of a render set, sorted.
type group struct {
	key   string
	progs []*program
}

// live reports whether every program of the group is still held by the
// pools: a group with one of them let go of has no more renders.
func (g *group) live() bool {
	for _, prg := range g.progs {
		if !prg.live() {
			return false
		}
	}
	return true
}

// groupLocked returns the group of progs (any order, repeats allowed).
func (e *Engine) groupLocked(progs []*program) *group {
	if len(progs) == 1 {
		if g := e.groups[progs[0].key]; g != nil {
			return g
		}
	}
	sorted := slices.Clone(progs)
	slices.SortFunc(sorted, func(a, b *program) int { return cmpKeys(a.key, b.key) })
	sorted = slices.Compact(sorted)
	keys := make([]string, len(sorted))
	for i, prg := range sorted {
		keys[i] = prg.key
	}
	key := strings.Join(keys, ",")
	g := e.groups[key]
	if g == nil {
		e.forgetGroupsLocked()
		g = &group{key: key, progs: sorted}
		e.groups[key] = g
	}
	return g
}

// forgetGroupsLocked drops the groups that are not live and that no slot
// serves.
func (e *Engine) forgetGroupsLocked() {
	for key, g := range e.groups {
		if g.live() {
			continue
		}
		served := false
		for i := range e.procs {
			if e.slotGroupLocked(i) == g {
				served = true
				break
			}
		}
		if !served && !slices.ContainsFunc(e.waiters, func(w *waiter) bool { return w.group == g }) {
			delete(e.groups, key)
		}
	}
}

// slotGroupLocked is the group slot i serves: its process's, or the one
// its next process starts for (nil: untainted, or not running).
func (e *Engine) slotGroupLocked(i int) *group {
	if !e.slotRunning[i] {
		return nil
	}
	if p := e.procs[i]; p != nil && !p.evicted {
		return p.group
	}
	return e.slotNext[i]
}

// countLocked counts the slots serving g, and of them those whose process
// is not ready to take work yet (starting, loading its bundles back).
func (e *Engine) countLocked(g *group) (n, pending int) {
	for i := range e.procs {
		if e.slotGroupLocked(i) != g {
			continue
		}
		n++
		if p := e.procs[i]; p == nil || p.evicted || !p.ready || p.dead.Load() {
			pending++
		}
	}
	return n, pending
}

// freshStartingLocked counts the slots whose process is starting bound to
// no group: the first to take work binds it, so a group that waits counts
// them as its own on the way (a slow start must not start another).
func (e *Engine) freshStartingLocked() int {
	n := 0
	for i := range e.procs {
		if !e.slotRunning[i] || e.slotGroupLocked(i) != nil {
			continue
		}
		if p := e.procs[i]; p == nil || !p.ready {
			n++
		}
	}
	return n
}

// waitingLocked counts the renders and loads waiting for a process of g.
func (e *Engine) waitingLocked(g *group) int {
	n := 0
	for _, w := range e.waiters {
		if w.group == g {
			n++
		}
	}
	return n
}

// bindLocked binds p, fresh, to g if g may have another process.
func (e *Engine) bindLocked(p *proc, g *group) bool {
	if p.group != nil {
		return p.group == g
	}
	if n, _ := e.countLocked(g); n >= e.cfg.Processes {
		return false
	}
	p.group = g
	return true
}

// provisionLocked starts a process for g when renders of g wait and g has
// fewer processes than it may, not counting those starting for it: in a
// free slot, else in the slot of another group's least recently used idle
// process. It returns the processes to stop once e.mu is unlocked.
func (e *Engine) provisionLocked(g *group) []*proc {
	n, pending := e.countLocked(g)
	if n >= e.cfg.Processes || pending+e.freshStartingLocked() >= e.waitingLocked(g) {
		return nil
	}
	if i := slices.Index(e.slotRunning, false); i >= 0 {
		e.startSlotLocked(i, g)
		return nil
	}
	var victim *proc
	for _, p := range e.idle {
		if p.group != nil && p.group != g && (victim == nil || p.lastUsed.Before(victim.lastUsed)) {
			victim = p
		}
	}
	if victim == nil {
		return nil // a process of another group that goes idle is evicted then (release)
	}
	e.evictLocked(victim, g)
	return []*proc{victim}
}

// growLocked starts a process for g in a free slot, if g has fewer
// processes than it may and none starting, when a render of g queued
// behind another for want of an idle one: the group grows to its
// processes under load as the shared processes served every bundle before
// groups, without taking another group's (that is for renders that wait).
func (e *Engine) growLocked(g *group) {
	if n, pending := e.countLocked(g); n >= e.cfg.Processes || pending+e.freshStartingLocked() > 0 {
		return
	}
	if i := slices.Index(e.slotRunning, false); i >= 0 {
		e.startSlotLocked(i, g)
	}
}

// starvedLocked returns a group, other than g, that renders wait for and
// that lacks processes, for a process of g that goes idle to make room
// for; nil if none.
func (e *Engine) starvedLocked(g *group) *group {
	for _, w := range e.waiters {
		if w.group == g {
			continue
		}
		n, pending := e.countLocked(w.group)
		if n < e.cfg.Processes && pending < e.waitingLocked(w.group) {
			return w.group
		}
	}
	return nil
}

// evictLocked takes p, idle or being released, out of service: its slot's
// next process starts for next (nil: fresh, or none past the first
// config.Processes slots). The caller stops p once e.mu is unlocked.
func (e *Engine) evictLocked(p *proc, next *group) {
	p.evicted = true
	p.busy = true // taken by nobody: no one reserves it any more
	e.slotNext[p.slot] = next
	e.slotLoaded[p.slot] = nil
	e.idle = slices.DeleteFunc(e.idle, func(q *proc) bool { return q == p })
}

// startSlotLocked starts a supervisor for slot i, free, whose first
// process starts for g.
func (e *Engine) startSlotLocked(i int, g *group) {
	e.slotRunning[i] = true
	e.slotNext[i] = g
	e.slotLoaded[i] = nil
	e.supervisors.Add(1)
	go e.supervise(i, nil)
}

// stopUnneeded stops the idle processes whose group is not live any more
// (a bundle of it was let go of); busy ones are stopped when released.
func (e *Engine) stopUnneeded() {
	e.mu.Lock()
	var stop []*proc
	for _, p := range slices.Clone(e.idle) {
		if p.group != nil && !p.group.live() {
			e.evictLocked(p, nil)
			stop = append(stop, p)
		}
	}
	e.forgetGroupsLocked() // what no slot serves: their sources go
	e.mu.Unlock()
	for _, p := range stop {
		p.stop(reasonEvicted)
	}
}

// touch marks p as used now, for eviction's least recently used order.
func (p *proc) touch() { p.lastUsed = time.Now() }
