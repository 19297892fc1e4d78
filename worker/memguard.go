package worker

import (
	"context"
	"errors"
	"runtime"
	"runtime/metrics"
	"sync"
	"time"
)

// errHeapLimit is the cause of a render stopped by the memory guard.
var errHeapLimit = errors.New("the renderer's heap passed its limit (RENDERER_MAX_HEAP) while this render ran, and it was the longest running")

// active is the set of renders in progress, for the memory guard.
type active struct {
	mu      sync.Mutex
	next    uint64
	renders map[uint64]activeRender
}

type activeRender struct {
	started time.Time
	stop    context.CancelCauseFunc
}

func (a *active) add(stop context.CancelCauseFunc) (remove func()) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.renders == nil {
		a.renders = make(map[uint64]activeRender)
	}
	a.next++
	id := a.next
	a.renders[id] = activeRender{started: time.Now(), stop: stop}
	return func() {
		a.mu.Lock()
		delete(a.renders, id)
		a.mu.Unlock()
	}
}

// stopOldest interrupts the longest-running render; false if none runs.
func (a *active) stopOldest(cause error) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	var oldest uint64
	for id, r := range a.renders {
		if oldest == 0 || r.started.Before(a.renders[oldest].started) {
			oldest = id
		}
	}
	if oldest == 0 {
		return false
	}
	a.renders[oldest].stop(cause)
	delete(a.renders, oldest)
	return true
}

// heapBytes is the memory occupied by heap objects, live or not yet collected.
func heapBytes() uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return sample[0].Value.Uint64()
}

// RunMemoryGuard watches the Go heap every interval until ctx ends. When it
// passes limit even after a collection, the longest-running render is
// interrupted and answered like a timeout, and so on until the heap is back
// under the limit. Approximate by nature: the heap is shared, so the guard
// cannot know which render grew it; the longest running is the usual
// culprit of a runaway allocation.
func (p *Pools) RunMemoryGuard(ctx context.Context, limit uint64, interval time.Duration) {
	if limit == 0 {
		return
	}
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		if heapBytes() <= limit {
			continue
		}
		runtime.GC()
		if heap := heapBytes(); heap > limit && p.active.stopOldest(errHeapLimit) {
			// Its runtime is counted as replaced (replacedHeapLimit) when released.
			p.cfg.Logger.Warn("memory guard interrupted a render", "heap_bytes", heap, "limit_bytes", limit)
		}
	}
}
