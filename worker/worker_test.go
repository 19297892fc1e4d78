package worker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorender/gorender/jsvm"
)

type mapSource struct {
	mu    sync.Mutex
	src   map[string]string
	held  map[string]int // holds not released, by bundle
	reads atomic.Int32
}

func (m *mapSource) Hold(id string) (func(), error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.held == nil {
		m.held = map[string]int{}
	}
	m.held[id]++
	var once sync.Once
	return func() {
		once.Do(func() {
			m.mu.Lock()
			m.held[id]--
			m.mu.Unlock()
		})
	}, nil
}

// holds returns the bundles held, with how many holds each.
func (m *mapSource) holds() map[string]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]int{}
	for id, n := range m.held {
		if n != 0 {
			out[id] = n
		}
	}
	return out
}

func (m *mapSource) ReadBundle(id string) ([]byte, error) {
	m.reads.Add(1)
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.src[id]
	if !ok {
		return nil, fmt.Errorf("no bundle %s", id)
	}
	return []byte(s), nil
}

// newPools returns pools over the fake engine (fakeengine_test.go) and
// bundles src.
func newPools(t *testing.T, src map[string]string, mutate func(*Config)) (*Pools, *mapSource) {
	t.Helper()
	engine := newFakeEngine()
	t.Cleanup(engine.unstick)
	source := &mapSource{src: src}
	cfg := Config{
		Engine: engine, Source: source, RuntimesPerBundle: 2, MaxBundles: 4,
		QueueTimeout: time.Second, RenderTimeout: 5 * time.Second, DrainTimeout: time.Second,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	if mutate != nil {
		mutate(&cfg)
	}
	p := New(cfg)
	t.Cleanup(p.Close)
	return p, source
}

// app is a bundle whose renders answer what they are asked to echo.
const app = "tag app"

func TestRenderCompilesOnceAndRunsConcurrently(t *testing.T) {
	p, source := newPools(t, map[string]string{"app": app}, nil)
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := range 20 {
		wg.Go(func() {
			res, err := p.Render(context.Background(), "app", nil, fmt.Sprintf("echo app:%d", i), nil)
			if err != nil {
				errs <- err
				return
			}
			if want := fmt.Sprintf("app:%d", i); res.Body != want {
				errs <- fmt.Errorf("got %q want %q", res.Body, want)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := source.reads.Load(); n != 1 {
		t.Fatalf("bundle read %d times, want once", n)
	}
	if p.Loaded() != 1 {
		t.Fatalf("loaded = %d", p.Loaded())
	}
}

// busy is how many runtimes of bundle id are leased.
func busy(p *Pools, id string) int {
	for _, st := range p.Stats() {
		if st.ID == id {
			return st.Busy
		}
	}
	return 0
}

func TestQueueTimeout(t *testing.T) {
	p, _ := newPools(t, map[string]string{"app": app}, func(c *Config) {
		c.RuntimesPerBundle = 1
		c.QueueTimeout = 100 * time.Millisecond
	})
	release := make(chan struct{})
	go func() {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() { <-release; cancel() }()
		_, _ = p.Render(ctx, "app", nil, "spin", nil)
	}()
	// The spin holds the only runtime once the pool leased it.
	for busy(p, "app") == 0 {
		time.Sleep(time.Millisecond)
	}
	_, err := p.Render(context.Background(), "app", nil, "echo app:1", nil)
	if !errors.Is(err, ErrQueueTimeout) {
		t.Fatalf("err = %v, want ErrQueueTimeout", err)
	}
	close(release)
	// The canceled runaway's runtime is replaced and the pool serves again.
	deadline := time.Now().Add(5 * time.Second)
	for {
		res, err := p.Render(context.Background(), "app", nil, "echo app:2", nil)
		if err == nil {
			if res.Body != "app:2" {
				t.Fatalf("got %q", res.Body)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pool did not recover: %v", err)
		}
	}
}

func TestTimeoutReplacesRuntime(t *testing.T) {
	p, _ := newPools(t, map[string]string{"app": app}, func(c *Config) {
		c.RuntimesPerBundle = 1
		c.RenderTimeout = 200 * time.Millisecond
	})
	if _, err := p.Render(context.Background(), "app", nil, "next", nil); err != nil {
		t.Fatal(err)
	}
	_, err := p.Render(context.Background(), "app", nil, "spin", nil)
	var re *jsvm.RenderError
	if !errors.As(err, &re) || re.Kind != jsvm.KindTimeout {
		t.Fatalf("err = %v", err)
	}
	// Fresh runtime: module state starts over.
	res, err := p.Render(context.Background(), "app", nil, "count", nil)
	if err != nil || res.Body != "0" {
		t.Fatalf("after replacement: %q %v", res.Body, err)
	}
}

func TestBundleSetAndLRU(t *testing.T) {
	src := map[string]string{}
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		src[id] = "tag " + id
	}
	p, source := newPools(t, src, func(c *Config) { c.MaxBundles = 2 })
	res, err := p.Render(context.Background(), "a", []string{"b", "a"}, "tag+ b", nil)
	if err != nil || res.Body != "ab" {
		t.Fatalf("set render: %q %v", res.Body, err)
	}
	_, err = p.Render(context.Background(), "a", []string{"b", "c"}, "tag", nil)
	var tooMany *TooManyBundlesError
	if !errors.As(err, &tooMany) || err.Error() != "Too many bundles uploaded. The maximum allowed is 2." {
		t.Fatalf("err = %v", err)
	}
	if _, err := p.Render(context.Background(), "c", nil, "tag", nil); err != nil {
		t.Fatal(err)
	}
	if p.Loaded() != 2 || p.IsLoaded("a") || !p.IsLoaded("b") || !p.IsLoaded("c") {
		t.Fatalf("LRU kept the wrong bundles: a=%v b=%v c=%v", p.IsLoaded("a"), p.IsLoaded("b"), p.IsLoaded("c"))
	}
	before := source.reads.Load()
	if res, err := p.Render(context.Background(), "a", nil, "tag", nil); err != nil || res.Body != "a" {
		t.Fatalf("reload: %q %v", res.Body, err)
	}
	if source.reads.Load() != before+1 {
		t.Fatal("evicted bundle was not reloaded")
	}
}

func TestLoadErrors(t *testing.T) {
	p, _ := newPools(t, map[string]string{"syntax": "syntax", "throws": "throw bad init"}, nil)
	for id, want := range map[string]string{"syntax": "SyntaxError", "throws": "bad init", "missing": "no bundle missing"} {
		_, err := p.Render(context.Background(), id, nil, "echo 1", nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want containing %q", id, err, want)
		}
	}
	if p.Loaded() != 0 {
		t.Fatalf("failed bundles stayed loaded: %d", p.Loaded())
	}
}

// TestStatsListLoadedBundlesOnly: Stats (the series labelled by bundle) has
// one entry per loaded bundle, and an evicted bundle leaves it at once.
func TestStatsListLoadedBundlesOnly(t *testing.T) {
	src := map[string]string{"a": "tag a", "b": "tag b", "c": "tag c"}
	p, _ := newPools(t, src, func(c *Config) { c.MaxBundles = 2 })
	ids := func() []string {
		var out []string
		for _, st := range p.Stats() {
			if st.Runtimes != 1 || st.Busy != 0 {
				t.Errorf("stats of %s: %+v, want 1 runtime, none busy", st.ID, st)
			}
			out = append(out, st.ID)
		}
		slices.Sort(out)
		return out
	}
	for _, id := range []string{"a", "b", "c"} {
		if _, err := p.Render(context.Background(), id, nil, "echo 1", nil); err != nil {
			t.Fatal(err)
		}
	}
	if got := ids(); !slices.Equal(got, []string{"b", "c"}) {
		t.Fatalf("Stats lists %v, want the loaded [b c]", got)
	}
}

// TestPoolsHoldLoadedBundles: a bundle is held (kept safe from the cache's
// pruner) from its load until its pool is drained after eviction; a bundle
// that fails to load is not held; Close releases every hold.
func TestPoolsHoldLoadedBundles(t *testing.T) {
	p, source := newPools(t, map[string]string{"a": "tag a", "b": "tag b", "bad": "syntax"}, func(c *Config) { c.MaxBundles = 1 })
	if _, err := p.Render(context.Background(), "a", nil, "echo 1", nil); err != nil {
		t.Fatal(err)
	}
	if got := source.holds(); !maps.Equal(got, map[string]int{"a": 1}) {
		t.Fatalf("holds %v with a loaded, want [a:1]", got)
	}
	if _, err := p.Render(context.Background(), "bad", nil, "echo 1", nil); err == nil {
		t.Fatal("the bad bundle loaded")
	}
	if _, err := p.Render(context.Background(), "b", nil, "echo 1", nil); err != nil {
		t.Fatal(err)
	}
	// a was evicted: its pool drains in the background, then lets go.
	deadline := time.Now().Add(10 * time.Second)
	for !maps.Equal(source.holds(), map[string]int{"b": 1}) {
		if time.Now().After(deadline) {
			t.Fatalf("holds %v after a's eviction, want [b:1]", source.holds())
		}
		time.Sleep(time.Millisecond)
	}
	p.Close()
	if got := source.holds(); len(got) != 0 {
		t.Errorf("holds %v after Close, want none", got)
	}
}

// TestResultSizeBound: a result longer than MaxResultSize is an error
// naming RENDERER_MAX_RESULT_SIZE, on every engine (checked above them);
// one at the bound is answered.
func TestResultSizeBound(t *testing.T) {
	p, _ := newPools(t, map[string]string{"app": app}, func(c *Config) { c.MaxResultSize = 4 })
	if res, err := p.Render(context.Background(), "app", nil, "echo abcd", nil); err != nil || res.Body != "abcd" {
		t.Fatalf("a result at the bound: %q %v", res.Body, err)
	}
	_, err := p.Render(context.Background(), "app", nil, "echo abcde", nil)
	var re *jsvm.RenderError
	if !errors.As(err, &re) || re.Kind != jsvm.KindJS || !strings.Contains(re.Text, "RENDERER_MAX_RESULT_SIZE") {
		t.Fatalf("a result over the bound: %v, want a render error naming RENDERER_MAX_RESULT_SIZE", err)
	}
}
