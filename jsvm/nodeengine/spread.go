package nodeengine

import (
	"context"
	"slices"
	"strings"
	"time"
)

// Spreading a group's bundles to its processes. A group's bundles are
// first evaluated in one process: by a runtime's Load (warm, the group of
// the bundle alone), or by a render that needs them where they are
// missing. From then on the spreader, one goroutine per engine, evaluates
// them in the group's other processes in the background, and binds fresh
// processes to the group (up to config.Processes) to do the same, so that
// the renders that follow do not each pay for a load in their own process.
// Renders come first:
//   - it takes only an idle process, and only while no render of the group
//     waits for one and another process the group may use stays idle for
//     the next render that comes (a render waits for a background load
//     only if every other process became busy meanwhile);
//   - it loads one bundle into one process at a time (loads are CPU-bound
//     and share the CPUs with the renders), then gives the process back:
//     release hands it to a waiting render before the spreader sees it.
//
// It spreads only groups whose bundles all loaded in one of their
// processes and the pools still hold (group.live), most recently used
// first. A bundle that fails to load in the background (an error, a
// process that died or passed the load limit) is not spread again: it
// loads where a render needs it.

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
// the rules above allow one now. It marks whether the rules held a load
// back (spreadHeld), so that release wakes the spreader only when a process
// becoming idle may let it work (also when that process lacks a bundle of
// its group, or is fresh).
func (e *Engine) nextSpreadLocked() (*proc, *program) {
	e.spreadHeld = false
	if e.closed {
		return nil, nil
	}
	// The groups to spread, by their processes; the most recently used
	// first.
	var groups []*group
	used := make(map[*group]time.Time)
	for _, p := range e.procs {
		if p == nil {
			continue
		}
		g := p.group
		if g == nil || p.dead.Load() || p.evicted {
			continue
		}
		if _, ok := used[g]; !ok {
			groups = append(groups, g)
		}
		if p.lastUsed.After(used[g]) {
			used[g] = p.lastUsed
		}
	}
	slices.SortFunc(groups, func(a, b *group) int { return used[b].Compare(used[a]) })
	var take *proc
	var what *program
	for _, g := range groups {
		if !g.live() || !e.loadedSomewhereLocked(g) {
			continue
		}
		progs := slices.DeleteFunc(slices.Clone(g.progs), func(prg *program) bool { return prg.unspread.Load() })
		if len(progs) == 0 {
			continue
		}
		usable := 0 // idle processes a render of g may take
		for _, p := range e.idle {
			if p.group == g || p.group == nil {
				usable++
			}
		}
		canTake := e.waitingLocked(g) == 0 && usable >= 2
		for _, p := range e.procs {
			if p == nil || p.group != g || p.dead.Load() || p.retire || p.evicted {
				continue
			}
			i := slices.IndexFunc(progs, func(prg *program) bool { return !p.loaded[prg] })
			if i < 0 {
				continue
			}
			if take != nil || !slices.Contains(e.idle, p) {
				continue
			}
			if !canTake {
				e.spreadHeld = true
				continue
			}
			take, what = p, progs[i]
		}
		if take != nil {
			continue
		}
		// A fresh process for g, if g may have another.
		if n, _ := e.countLocked(g); n >= e.cfg.Processes {
			continue
		}
		i := slices.IndexFunc(e.idle, func(p *proc) bool { return p.group == nil })
		if i < 0 {
			continue
		}
		if !canTake {
			e.spreadHeld = true
			continue
		}
		take, what = e.idle[i], progs[0]
		take.group = g
	}
	if take == nil {
		return nil, nil
	}
	e.idle = slices.DeleteFunc(e.idle, func(q *proc) bool { return q == take })
	e.holdLocked(take)
	return take, what
}

// loadedSomewhereLocked reports whether a process of g has all of g's
// bundles loaded: its renders ran.
func (e *Engine) loadedSomewhereLocked(g *group) bool {
	for _, p := range e.procs {
		if p != nil && p.group == g && !p.dead.Load() && len(p.loaded) == len(g.progs) {
			return true
		}
	}
	return false
}

// cmpKeys orders program keys ("p1", "p2", …, "p10") by their number.
func cmpKeys(a, b string) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}
