package worker

import (
	"context"
	"time"
)

// RunRecycler recycles every runtime of every pool each RecycleInterval,
// one at a time RecycleDelay apart, until ctx ends (upstream's scheduled
// worker restarts, without restarts: the other runtimes keep serving).
func (p *Pools) RunRecycler(ctx context.Context) {
	if p.cfg.RecycleInterval <= 0 {
		return
	}
	ticker := time.NewTicker(p.cfg.RecycleInterval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		p.mu.Lock()
		pools := make([]*pool, 0, len(p.pools))
		for _, pl := range p.pools {
			pools = append(pools, pl)
		}
		p.mu.Unlock()
		for _, pl := range pools {
			pl.startGeneration()
		}
		for _, pl := range pools {
			for pl.recycleOne(p.cfg.RecycleGrace) {
				select {
				case <-ctx.Done():
					return
				case <-time.After(p.cfg.RecycleDelay):
				}
			}
		}
	}
}
