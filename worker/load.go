package worker

import (
	"context"
	"fmt"
	"slices"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/gorender/gorender/jsvm"
	"github.com/gorender/gorender/jsvm/sourcemap"
	"github.com/gorender/gorender/tracing"
)

type loadCall struct {
	done chan struct{}
	pool *pool
	err  error
}

// Preload loads bundle id if it is not loaded yet and fills its pool with
// runtimes, so that the first renders do not pay for loading the bundle.
func (p *Pools) Preload(ctx context.Context, id string) error {
	pl, err := p.pool(ctx, id)
	if err != nil {
		return err
	}
	for missing := p.cfg.RuntimesPerBundle - pl.size(); missing > 0; missing-- {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := pl.replenish(); err != nil {
			return err
		}
	}
	return nil
}

// pool returns the loaded pool of id, loading it once if needed, and marks
// it most recently used.
func (p *Pools) pool(ctx context.Context, id string) (*pool, error) {
	p.mu.Lock()
	if pl, ok := p.pools[id]; ok {
		p.touchLocked(id)
		p.mu.Unlock()
		return pl, nil
	}
	call, inFlight := p.loading[id]
	if !inFlight {
		call = &loadCall{done: make(chan struct{})}
		p.loading[id] = call
	}
	p.mu.Unlock()

	ctx, span := tracing.Start(ctx, p.cfg.Tracer, tracing.SpanBuildExecutionContext)
	defer span.End()
	if span.IsRecording() {
		// joined: another request's load of the bundle was under way.
		span.SetAttributes(tracing.BundleTimestamp.String(id), attribute.Bool("gorender.load.joined", inFlight))
	}
	if !inFlight {
		// The load outlives any one request: other requests may wait on it.
		call.pool, call.err = p.load(context.WithoutCancel(ctx), id)
		p.mu.Lock()
		delete(p.loading, id)
		if call.err == nil {
			p.pools[id] = call.pool
			p.touchLocked(id)
			p.evictLocked()
			p.cfg.Observer.BundlesLoaded(len(p.pools))
		}
		p.mu.Unlock()
		close(call.done)
	}
	select {
	case <-call.done:
		if call.err != nil && span.IsRecording() {
			span.SetStatus(codes.Error, "the bundle failed to load")
		}
		return call.pool, call.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// load reads and compiles bundle id and starts its pool with one runtime, so
// that a bundle that fails to evaluate fails here, once.
func (p *Pools) load(ctx context.Context, id string) (pl *pool, err error) {
	started := time.Now()
	release, err := p.cfg.Source.Hold(id)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			release()
		}
	}()
	src, err := p.cfg.Source.ReadBundle(id)
	if err != nil {
		return nil, fmt.Errorf("read bundle %s: %w", id, err)
	}
	// The bundle's path on disk, if the source knows it: with
	// RENDERER_SUPPORT_MODULES it is __filename and the root of fs.
	path := ""
	if bp, ok := p.cfg.Source.(interface{ BundlePath(id string) string }); ok {
		path = bp.BundlePath(id)
	}
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.SetAttributes(tracing.BytesTotal.Int(len(src)), tracing.Engine.String(p.cfg.Engine.Name()))
	}
	prg, err := p.cfg.Engine.Compile(id, path, string(src))
	if err != nil {
		return nil, &LoadError{ID: id, Err: err}
	}
	var positions sourcemap.Positions
	var rewrites sourcemap.Rewrites
	if bp, ok := prg.(jsvm.BundlePositions); ok {
		positions = bp.BundlePosition
		if bp.Rewritten() {
			rewrites = bp.ReplayRewrites
		}
	}
	p.cfg.SourceMaps.Add(id, path, positions, rewrites)
	pl = newPool(id, prg, p.cfg, &p.quarantine, release)
	e, err := pl.newEntry(ctx)
	if err != nil {
		p.cfg.SourceMaps.Remove(id)
		return nil, &LoadError{ID: id, Err: err}
	}
	pl.mu.Lock()
	pl.idle = append(pl.idle, e)
	pl.mu.Unlock()
	p.cfg.Logger.InfoContext(ctx, "bundle loaded", "bundle", id, "bytes", len(src), "duration", time.Since(started))
	return pl, nil
}

func (p *Pools) touchLocked(id string) {
	if i := slices.Index(p.lru, id); i >= 0 {
		p.lru = slices.Delete(p.lru, i, i+1)
	}
	p.lru = append(p.lru, id)
}

// evictLocked drops least recently used bundles beyond MaxBundles; their
// in-flight renders may finish within the drain timeout.
func (p *Pools) evictLocked() {
	for len(p.lru) > p.cfg.MaxBundles {
		id := p.lru[0]
		p.lru = p.lru[1:]
		pl := p.pools[id]
		delete(p.pools, id)
		p.cfg.SourceMaps.Remove(id)
		p.cfg.Logger.Info("bundle evicted", "bundle", id, "max_bundles", p.cfg.MaxBundles)
		go pl.drain(p.cfg.DrainTimeout)
	}
}
