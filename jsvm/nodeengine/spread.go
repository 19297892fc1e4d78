package nodeengine

import (
	"context"
	"slices"
	"strings"
)

// Spreading a bundle to every process. A bundle is first evaluated in one
// process: by a runtime's Load (warm), or by a render that needs it where
// it is missing. From then on the spreader, one goroutine per engine,
// evaluates it in every other process in the background, so that the
// renders that follow do not each pay for a load in their own process.
// Renders come first:
//   - it takes only an idle process, and only while no render waits for one
//     and another process stays idle for the next render that comes (a
//     render waits for a background load only if every other process
//     became busy meanwhile);
//   - it loads one bundle into one process at a time (loads are CPU-bound
//     and share the CPUs with the renders), then gives the process back:
//     release hands it to a waiting render before the spreader sees it.
//
// It spreads only the bundles the pools hold (program.live; at most
// MAX_VM_POOL_SIZE), which every process would load under traffic anyway;
// what the pools let go of is unloaded (unloadUnused) and not spread. A
// bundle that fails to load in the background (an error, a process that
// died or passed the load limit) is not spread again: it loads where a
// render needs it.

// wakeSpreader asks the spreader to look for work.
func (e *Engine) wakeSpreader() {
	select {
	case e.spreadWake <- struct{}{}:
	default:
	}
}

// spread runs the spreader until Close.
func (e *Engine) spread() {
	defer e.supervisors.Done()
	for {
		select {
		case <-e.done:
			return
		case <-e.spreadWake:
		}
		for {
			e.mu.Lock()
			p, prg := e.nextSpreadLocked()
			e.mu.Unlock()
			if p == nil {
				break
			}
			if err := e.loadInto(context.Background(), p, prg); err != nil {
				prg.unspread.Store(true)
				e.log.Warn("bundle failed to load in the background; it loads where a render needs it", "node_process", p.slot, "bundle", prg.name, "err", err)
			}
			e.release(p)
		}
	}
}

// nextSpreadLocked takes an idle process and a bundle to load into it, if
// the rules above allow one now. It marks the processes that lack a bundle
// to spread (proc.lacking), and whether the rules held a load back
// (spreadHeld), so that release wakes the spreader only when a process
// becoming idle may let it work.
func (e *Engine) nextSpreadLocked() (*proc, *program) {
	e.spreadHeld = false
	if e.closed {
		return nil, nil
	}
	var progs []*program
	for _, p := range e.procs {
		if p == nil || p.dead.Load() {
			continue
		}
		for prg := range p.loaded {
			if !slices.Contains(progs, prg) && !prg.unspread.Load() && prg.live() {
				progs = append(progs, prg)
			}
		}
	}
	// The oldest bundle first: the order the keys were given in.
	slices.SortFunc(progs, func(a, b *program) int {
		return cmpKeys(a.key, b.key)
	})
	canTake := len(e.waiters) == 0 && len(e.idle) >= 2
	var take *proc
	var what *program
	for _, p := range e.procs {
		if p == nil {
			continue
		}
		p.lacking = false
		if p.dead.Load() || p.retire {
			continue
		}
		i := slices.IndexFunc(progs, func(prg *program) bool { return !p.loaded[prg] })
		if i < 0 {
			continue
		}
		p.lacking = true
		if take != nil || !slices.Contains(e.idle, p) {
			continue
		}
		if !canTake {
			e.spreadHeld = true
			continue
		}
		take, what = p, progs[i]
	}
	if take == nil {
		return nil, nil
	}
	e.idle = slices.DeleteFunc(e.idle, func(q *proc) bool { return q == take })
	e.holdLocked(take)
	return take, what
}

// cmpKeys orders program keys ("p1", "p2", …, "p10") by their number.
func cmpKeys(a, b string) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}
