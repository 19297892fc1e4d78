// Package server wires gorender together from its configuration (package
// config): the listener that serves HTTP/1.1 and h2c on one port, the
// router, readiness and graceful shutdown.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/gorender/gorender/auth"
	"github.com/gorender/gorender/bundles"
	"github.com/gorender/gorender/config"
	"github.com/gorender/gorender/errtrack"
	"github.com/gorender/gorender/handlers"
	"github.com/gorender/gorender/jsvm"
	"github.com/gorender/gorender/jsvm/engines"
	"github.com/gorender/gorender/jsvm/sourcemap"
	"github.com/gorender/gorender/metrics"
	"github.com/gorender/gorender/server/conns"
	"github.com/gorender/gorender/tracing"
	"github.com/gorender/gorender/worker"
)

const (
	sweepEvery       = 5 * time.Minute
	stagingMaxAge    = 30 * time.Minute
	memoryGuardEvery = 100 * time.Millisecond
	// pruneEvery is how often the bundle cache is measured and pruned to
	// RENDERER_SERVER_BUNDLE_CACHE_MAX_SIZE, besides after every store.
	pruneEvery = time.Minute
	// generationRetry is the wait before a declared bundle that failed to
	// load is tried again.
	generationRetry, generationRetryMax = 2 * time.Second, 10 * time.Second
	// flushTimeout bounds the export of the last spans at exit.
	flushTimeout = 5 * time.Second
)

// Server is a configured gorender, ready to serve.
type Server struct {
	cfg      *config.Config
	logger   *slog.Logger
	cache    *bundles.Cache
	pools    *worker.Pools
	engine   jsvm.Engine
	handler  http.Handler
	metrics  *metrics.Metrics // nil when RENDERER_METRICS is off
	tracing  *tracing.Tracing // nil when traces are off
	stopping atomic.Bool
	// generation is the pre-seed declaration to load at start (nil: none);
	// generationLoaded turns true once all its bundles are loaded.
	generation       *bundles.Generation
	generationLoaded atomic.Bool
	build            Build
	errors           *errtrack.Tracker // Sentry and Honeybadger; nil when both are off
}

// Build is what the binary says of itself: its version, the commit it was
// built from and that build's date (`gorender version`, /info).
type Build struct {
	Version, Commit, Date string
}

// New builds a Server from cfg: it opens the bundle cache and makes the
// engine, but listens on nothing yet.
func New(cfg *config.Config, build Build, logger *slog.Logger) (*Server, error) {
	traces, err := tracing.New(cfg.Tracing, build.Version, logger)
	if err != nil {
		return nil, err
	}
	if traces != nil {
		logger = tracing.Logger(logger)
	}
	tracer := traces.Tracer() // nil when off
	errs, err := errtrack.New(cfg.ErrorTracking, build.Version, cfg.JSEngine, logger)
	if err != nil {
		return nil, err
	}
	cache, err := bundles.Open(cfg.CachePath, logger)
	if err != nil {
		return nil, fmt.Errorf("open bundle cache: %w", err)
	}
	sourceMapLimit := int64(min(cfg.SourceMapCacheSize, math.MaxInt64))
	maps := sourcemap.New(sourceMapLimit, logger)
	engine, err := engines.New(cfg.JSEngine, jsvm.Options{
		StubTimers:       cfg.StubTimers,
		SupportModules:   cfg.SupportModules,
		ReplayAsyncLogs:  cfg.ReplayAsyncLogs,
		MemoryLimit:      cfg.QuickJSMemoryLimit,
		MaxAllocation:    cfg.MaxAllocation,
		ConsoleMaxLines:  cfg.ConsoleMaxLines,
		ConsoleMaxBytes:  cfg.ConsoleMaxBytes,
		KeepStringBuilds: !cfg.RewriteStringBuilds,
		// No render runs longer uninterrupted than the longest of its
		// deadlines: its own, a stream's idle window, a bundle's load.
		RegexpMatchTimeout: max(cfg.RenderTimeout, cfg.StreamIdleTimeout, worker.MinLoadTimeout),
		Environ:            cfg.Environ, // process.env (without the password)
		Node: jsvm.NodeOptions{
			Path:            cfg.NodePath,
			Processes:       cfg.WorkersCount,
			MaxProcesses:    max(cfg.NodeMaxProcesses, cfg.WorkersCount),
			QueueDepth:      cfg.NodeQueueDepth,
			LoadTimeout:     cfg.NodeLoadTimeout,
			HeapLimit:       int64(cfg.NodeHeapLimit),
			SemiSpace:       int64(cfg.NodeSemiSpace),
			ReadRoots:       []string{cfg.CachePath, cfg.CachePath + ".artifact-snapshots"},
			MaxRenders:      cfg.MaxRendersPerRuntime,
			RestartInterval: cfg.RecycleInterval,
			RestartDelay:    cfg.RecycleDelay,
			SourceMapLimit:  sourceMapLimit,
			MaxResult:       int64(cfg.MaxResultSize),
			OnCrash:         onCrash(errs),
		},
		Logger:   logger,
		MapStack: maps.Rewrite,
	})
	if err != nil {
		return nil, fmt.Errorf("JavaScript engine: %w", err)
	}
	var m *metrics.Metrics
	var observer worker.Observer
	if cfg.Metrics {
		m = metrics.New(build.Version, engine.Name())
		observer = m
	}
	s := &Server{cfg: cfg, logger: logger, cache: cache, engine: engine, metrics: m, tracing: traces, errors: errs, build: build}
	if cfg.GenerationManifest != "" {
		// A bad declaration fails the start: a deploy that ships a broken
		// cache must not come up half-ready.
		if s.generation, err = cache.ReadGeneration(cfg.GenerationManifest); err != nil {
			s.closeEngine()
			return nil, err
		}
	}
	s.pools = worker.New(worker.Config{
		Engine:               engine,
		Source:               cache,
		RuntimesPerBundle:    runtimesPerBundle(cfg),
		MaxBundles:           cfg.MaxVMPoolSize,
		QueueTimeout:         cfg.QueueTimeout,
		RenderTimeout:        cfg.RenderTimeout,
		DrainTimeout:         cfg.DrainTimeout,
		MaxRendersPerRuntime: cfg.MaxRendersPerRuntime,
		MaxQuarantined:       cfg.MaxQuarantined,
		MaxResultSize:        int64(cfg.MaxResultSize),
		RecycleInterval:      cfg.RecycleInterval,
		RecycleDelay:         cfg.RecycleDelay,
		RecycleGrace:         cfg.RecycleGrace,
		Logger:               logger,
		Observer:             observer,
		Tracer:               tracer,
		SourceMaps:           maps,
		OnQuarantine:         onQuarantine(errs),
	})
	if m != nil {
		m.QuarantineLimit(cfg.MaxQuarantined)
		m.LoadedBundles(func() []metrics.BundleStats {
			stats := s.pools.Stats()
			out := make([]metrics.BundleStats, len(stats))
			for i, b := range stats {
				out[i] = metrics.BundleStats(b)
			}
			return out
		})
		if r, ok := engine.(jsvm.ProcessReporter); ok {
			m.EngineProcesses(func() ([]metrics.ProcessSample, map[string]uint64) {
				procs := r.Processes()
				out := make([]metrics.ProcessSample, len(procs))
				for i, p := range procs {
					out[i] = metrics.ProcessSample{Process: strconv.Itoa(p.Slot), RSS: p.RSS}
				}
				return out, r.ProcessRestarts()
			})
		}
	}
	var engineInfo map[string]string
	if r, ok := engine.(jsvm.InfoReporter); ok {
		engineInfo = r.Info()
	}
	budget := handlers.NewBudget(cfg.UnauthenticatedBudget)
	if m != nil {
		m.UnauthenticatedBody(budget.InUse, budget.Limit())
		m.MaxHeap(cfg.MaxHeap)
	}
	h := handlers.New(handlers.Deps{
		Cache:           cache,
		Renderer:        s.pools,
		Readiness:       s,
		Password:        auth.NewPassword(cfg.Password),
		RendererVersion: build.Version,
		RendererCommit:  build.Commit,
		BuildDate:       build.Date,
		Engine:          engine.Name(),
		EngineInfo:      engineInfo,
		Metrics:         m,
		Tracer:          tracer,
		Errors:          errs,
		Logger:          logger,
		StreamIdle:      cfg.StreamIdleTimeout,
		Budget:          budget,
		BodyLimits: handlers.BodyLimits{
			MaxBodyBytes: cfg.MaxBodySize, MaxFieldBytes: cfg.MaxFieldSize, MaxParts: cfg.MaxParts,
			ReadTimeout: cfg.BodyReadTimeout, AuthTimeout: cfg.AuthTimeout,
		},
		LineTimeout:   cfg.IncrementalLineTimeout,
		PullIdle:      cfg.PullModeIdleTimeout,
		Authenticated: conns.MarkAuthenticated,
	})
	mw := []func(http.Handler) http.Handler{dropUnreadBodies, observe(logger, cfg.LogHTTPLevel, m, tracer), writeDeadlines(cfg.WriteTimeout)}
	if cfg.MaxConnectionAge > 0 {
		mw = append(mw, conns.RetireOld)
	}
	if errs != nil {
		mw = append(mw, errs.Middleware)
	}
	s.handler = growStack{NewRouter(h, m, mw...)}
	return s, nil
}

// closeEngine stops what the engine runs outside gorender's own process
// (the node engine's processes): nothing is left behind.
func (s *Server) closeEngine() {
	if c, ok := s.engine.(interface{ Close() }); ok {
		c.Close()
	}
}

// Ready implements handlers.Readiness (PROTOCOL.md §9).
func (s *Server) Ready() (bool, string) {
	switch {
	case s.stopping.Load():
		return false, "shutting_down"
	case s.generation != nil && !s.generationLoaded.Load():
		return false, "waiting_for_current_generation"
	case s.generation == nil && s.pools.Loaded() == 0:
		return false, "waiting_for_bundle"
	case s.pools.QuarantineFull():
		return false, "quarantine_full"
	}
	return true, "ready"
}

// loadGeneration loads the declared bundles and fills their pools while the
// server already answers /health; /ready waits for it. Loading happens
// beside listening rather than before it so that liveness probes pass
// during a long load.
//
// A bundle that fails to load (a corrupt one is quarantined by the cache,
// so that an upload repairs it) is tried again after generationRetry, until
// it loads, doubling up to generationRetryMax (a bundle whose JavaScript
// fails compiles again each time): /ready stays false meanwhile, and each distinct failure is
// logged once, naming the bundle and why.
func (s *Server) loadGeneration(ctx context.Context) {
	started := time.Now()
	for _, id := range s.generation.Bundles {
		var last string
		for wait := generationRetry; ; wait = min(2*wait, generationRetryMax) {
			err := s.pools.Preload(ctx, id)
			if err == nil || ctx.Err() != nil {
				break
			}
			if err.Error() != last {
				last = err.Error()
				s.logger.Error("current generation: bundle failed to load; not ready until it loads (an upload of it repairs a corrupt copy)", "generation", s.generation.ID, "bundle", id, "err", err)
				s.errors.LoadError(errtrack.Tags{Bundle: id, Outcome: "bundle_load_error"}, err.Error())
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
		}
		if ctx.Err() != nil {
			return
		}
	}
	s.generationLoaded.Store(true)
	s.logger.Info("current generation loaded", "generation", s.generation.ID, "bundles", len(s.generation.Bundles), "duration", time.Since(started))
}

// Listen opens the configured address.
func (s *Server) Listen() (net.Listener, error) {
	ln, err := net.Listen("tcp", s.cfg.Addr())
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", s.cfg.Addr(), err)
	}
	return ln, nil
}

// Serve answers on ln until ctx is canceled, then shuts down gracefully:
// readiness turns 503, the listener closes, in-flight requests finish within
// the shutdown timeout (h2c connections get GOAWAY), and the pools close.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetUnencryptedHTTP2(true)
	srv := &http.Server{
		Handler:           s.handler,
		Protocols:         &protocols,
		ReadHeaderTimeout: s.cfg.HeaderTimeout,
		IdleTimeout:       s.cfg.IdleTimeout,
		MaxHeaderBytes:    int(s.cfg.MaxHeaderSize),
		HTTP2: &http.HTTP2Config{
			MaxConcurrentStreams: s.cfg.MaxConcurrentStreams,
			// Go's defaults, stated: what a connection buffers of request
			// bodies its handlers have not read yet (docs/limits.md).
			MaxReceiveBufferPerConnection: 1 << 20,
			MaxReceiveBufferPerStream:     1 << 20,
			// HTTP/2's default frame size, not Go's 1 MiB: a connection
			// keeps a read buffer as large as the largest frame it was
			// sent, for its whole life, before any password is checked.
			MaxReadFrameSize: 16 << 10,
			// A connection that takes no bytes at all (its client stopped
			// reading the socket) is closed, streams and all.
			WriteByteTimeout: s.cfg.WriteTimeout,
		},
		ErrorLog: slog.NewLogLogger(s.logger.Handler(), slog.LevelDebug),
	}
	srv.ConnContext = conns.WithConn
	if s.cfg.MaxConnectionAge > 0 {
		stamp := conns.StampAge(s.cfg.MaxConnectionAge)
		srv.ConnContext = func(ctx context.Context, c net.Conn) context.Context { return stamp(conns.WithConn(ctx, c), c) }
	}
	limited := conns.NewLimiter(ln, s.cfg.MaxConnections, s.cfg.MaxUnauthenticatedConnections, func(reason string) {
		if s.metrics != nil {
			s.metrics.ConnectionShed(reason)
		}
	})
	if s.metrics != nil {
		s.metrics.Connections(limited.Open, limited.Unauthenticated)
	}
	ln = limited
	background, stopBackground := context.WithCancel(context.Background())
	defer stopBackground()
	go s.cache.RunSweeper(background, sweepEvery, stagingMaxAge)
	go s.cache.RunPruner(background, int64(min(s.cfg.CacheMaxSize, math.MaxInt64)), pruneEvery, func(rep bundles.PruneReport) {
		if s.metrics != nil {
			s.metrics.BundleCache(rep.Size, len(rep.Pruned))
		}
	})
	go s.pools.RunRecycler(background)
	go s.pools.RunMemoryGuard(background, s.cfg.MaxHeap, memoryGuardEvery)
	if s.generation != nil {
		go s.loadGeneration(background)
	}

	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	// The configuration in effect is logged once before this, by the command.
	s.logger.Info("gorender listening", "addr", ln.Addr().String(), "version", s.build.Version, "commit", s.build.Commit,
		"engine", s.engine.Name(), "protocols", "HTTP/1.1,h2c")

	select {
	case err := <-serveErr:
		s.pools.Close()
		s.closeEngine()
		s.flushTraces()
		s.errors.Flush(flushTimeout)
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	s.stopping.Store(true)
	s.logger.Info("shutting down", "timeout", s.cfg.ShutdownTimeout)
	shutdownCtx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	defer cancel()
	err := srv.Shutdown(shutdownCtx)
	timedOut := err != nil && !errors.Is(err, http.ErrServerClosed)
	if timedOut {
		// Connections first: a request still queued or rendering gets its
		// connection closed, which Rails retries, on every engine alike;
		// closing the pools first would answer it with the error of an
		// interrupted render or a closed engine, a 400 that Rails takes
		// for the page's own.
		_ = srv.Close()
	}
	s.pools.Close()
	s.closeEngine()
	s.flushTraces()
	s.errors.Flush(flushTimeout)
	if timedOut {
		return fmt.Errorf("shutdown: in-flight requests did not finish within %s: %w", s.cfg.ShutdownTimeout, err)
	}
	s.logger.Info("stopped")
	return nil
}

// flushTraces exports the spans still queued, within flushTimeout: a
// collector that is down does not hold up the exit for longer.
func (s *Server) flushTraces() {
	ctx, cancel := context.WithTimeout(context.Background(), flushTimeout)
	defer cancel()
	if err := s.tracing.Shutdown(ctx); err != nil {
		s.logger.Warn("traces not exported at exit", "err", err)
	}
}

// runtimesPerBundle is how many renders of one bundle may be in the engine
// at once: with the node engine, every process's queue too
// (RENDERER_NODE_QUEUE_DEPTH).
func runtimesPerBundle(cfg *config.Config) int {
	if cfg.JSEngine == "node" {
		return cfg.WorkersCount * max(cfg.NodeQueueDepth, 1)
	}
	return cfg.WorkersCount
}

// onCrash and onQuarantine report a node process's crash and a quarantined
// runtime to the error trackers (nil when they are off).
func onCrash(errs *errtrack.Tracker) func(slot, pid int, reason, exit string) {
	if errs == nil {
		return nil
	}
	return errs.ProcessCrash
}

func onQuarantine(errs *errtrack.Tracker) func(bundle string) {
	if errs == nil {
		return nil
	}
	return errs.Quarantine
}
