// Command benchctl runs gorender's side-by-side benchmark against the Node
// reference server (bench/node/server.mjs) and prints one table. bash
// bench/run.sh installs the tools, builds both sides and runs it; see
// bench/README.md for what it measures and how.
package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gorender/gorender/bench"
	"github.com/gorender/gorender/gemclient"
)

const password = "bench-password-4f7a1c9e2b"

type config struct {
	duration, warmup time.Duration
	runs, conns      int
	workers          int
	memWorkers       int
	coldRuns         int
	serverCPUs       string
	loadCPUs         string
	workloads        []string
	protocols        []string
	variants         []string
	mem              bool
	gorenderBin      string
	nodeDir          string
	outDir           string
	gorenderEnv      []string
	slowLimit        time.Duration
}

func main() {
	var c config
	var workloads, protocols, variants, genv string
	flag.DurationVar(&c.duration, "duration", 10*time.Second, "measured time of one run")
	flag.DurationVar(&c.warmup, "warmup", 3*time.Second, "warm-up before each measured run")
	flag.IntVar(&c.runs, "runs", 3, "interleaved runs per cell (the table shows medians)")
	flag.IntVar(&c.conns, "conns", 4, "concurrent connections of the load generator (one request in flight each)")
	flag.IntVar(&c.workers, "workers", 0, "Node cluster workers = gorender RENDERER_WORKERS_COUNT (default: the number of server CPUs)")
	flag.IntVar(&c.memWorkers, "mem-workers", 4, "workers of the memory workload (4 concurrent renders)")
	flag.IntVar(&c.coldRuns, "cold-runs", 5, "cold starts per server")
	flag.StringVar(&c.serverCPUs, "server-cpus", "", "taskset CPU list of both servers (default: the upper half of the CPUs)")
	flag.StringVar(&c.loadCPUs, "load-cpus", "", "taskset CPU list of the load generator (default: the lower half)")
	flag.StringVar(&workloads, "workloads", "hello,small,medium,large", "render workloads")
	flag.StringVar(&protocols, "protocols", "h2c,http1", "h2c (h2load) and/or http1 (wrk)")
	flag.StringVar(&variants, "variants", "node,gorender,quickjs", "servers: node, gorender (goja, defaults), gorender-norw (goja with RENDERER_REWRITE_STRING_BUILDS=false), quickjs (RENDERER_JS_ENGINE=quickjs)")
	flag.BoolVar(&c.mem, "mem", true, "run the memory workload (4 concurrent renders) and cold starts")
	flag.StringVar(&c.gorenderBin, "gorender", "bin/gorender", "gorender binary")
	flag.StringVar(&c.nodeDir, "node-dir", "bench/node", "directory of the Node reference server (npm ci done)")
	flag.StringVar(&c.outDir, "out", "", "results directory (default bench/results/<UTC time>)")
	flag.StringVar(&genv, "gorender-env", "", "extra environment of gorender, comma-separated K=V")
	flag.DurationVar(&c.slowLimit, "slow-limit", 15*time.Second, "skip a cell whose single probe render takes longer")
	flag.Parse()
	c.workloads, c.protocols, c.variants = split(workloads), split(protocols), split(variants)
	if genv != "" {
		c.gorenderEnv = split(genv)
	}
	go stopOnSignal()
	err := run(c)
	stopAll()
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchctl:", err)
		os.Exit(1)
	}
}

// live are the servers running now: stopped on SIGINT/SIGTERM, since they
// run in their own process groups (a terminal's Ctrl-C does not reach them).
var (
	liveMu sync.Mutex
	live   = map[*server]bool{}
)

func stopOnSignal() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	<-ch
	fmt.Fprintln(os.Stderr, "benchctl: stopping the servers")
	stopAll()
	os.Exit(130)
}

func stopAll() {
	liveMu.Lock()
	servers := make([]*server, 0, len(live))
	for s := range live {
		servers = append(servers, s)
	}
	liveMu.Unlock()
	for _, s := range servers {
		s.stop()
	}
}

func split(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

// ---- Results ------------------------------------------------------------

type result struct {
	Workload string  `json:"workload"`
	Proto    string  `json:"proto"`
	Variant  string  `json:"variant"`
	Workers  int     `json:"workers"`
	Run      int     `json:"run"`
	RPS      float64 `json:"rps"`
	P50ms    float64 `json:"p50_ms"`
	P99ms    float64 `json:"p99_ms"`
	RSSMB    float64 `json:"peak_rss_mb"`
	Requests int     `json:"requests"`
	Failed   int     `json:"failed"`
	Note     string  `json:"note,omitempty"`
}

type coldResult struct {
	Variant string  `json:"variant"`
	Run     int     `json:"run"`
	Ms      float64 `json:"ms"`
	Listen  float64 `json:"listen_ms"`
	RSSMB   float64 `json:"rss_mb"`
}

type report struct {
	Started    time.Time    `json:"started"`
	Config     string       `json:"config"`
	Machine    string       `json:"machine"`
	Commit     string       `json:"commit"`
	LoadBefore string       `json:"load_before"`
	LoadAfter  string       `json:"load_after"`
	Results    []result     `json:"results"`
	Cold       []coldResult `json:"cold"`
	Answers    []string     `json:"answers"`
}

// ---- Orchestration -------------------------------------------------------

func run(c config) error {
	ncpu := cpuCount()
	half := max(1, ncpu/2)
	if c.serverCPUs == "" {
		c.serverCPUs = fmt.Sprintf("%d-%d", ncpu-half, ncpu-1)
	}
	if c.loadCPUs == "" {
		c.loadCPUs = c.serverCPUs // one CPU: share it
		if ncpu > 1 {
			c.loadCPUs = fmt.Sprintf("0-%d", ncpu-half-1)
		}
	}
	if c.workers <= 0 {
		c.workers = cpuListSize(c.serverCPUs)
	}
	if c.outDir == "" {
		c.outDir = filepath.Join("bench", "results", time.Now().UTC().Format("20060102T150405Z"))
	}
	if err := os.MkdirAll(c.outDir, 0o755); err != nil {
		return err
	}
	abs, err := filepath.Abs(c.outDir)
	if err != nil {
		return err
	}
	c.outDir = abs

	ws, err := bench.Workloads()
	if err != nil {
		return err
	}
	byName := map[string]bench.Workload{}
	for _, w := range ws {
		byName[w.Name] = w
		if err := os.WriteFile(filepath.Join(c.outDir, w.Name+".js"), []byte(w.Code), 0o644); err != nil {
			return err
		}
	}
	small, err := bench.ReadTestdata("requests/small-page.js")
	if err != nil {
		return err
	}
	built, err := bench.ReadTestdata("bundles/react-app.js")
	if err != nil {
		return err
	}
	for _, v := range c.variants {
		if _, ok := variantEnv[v]; !ok {
			return fmt.Errorf("unknown variant %q", v)
		}
	}

	rep := &report{
		Started:    time.Now().UTC(),
		Config:     fmt.Sprintf("%d workers, server CPUs %s, load CPUs %s, %d connections × 1 in flight, %v (+%v warm-up) × %d interleaved runs", c.workers, c.serverCPUs, c.loadCPUs, c.conns, c.duration, c.warmup, c.runs),
		Machine:    machine(),
		Commit:     commit(),
		LoadBefore: loadavg(),
	}
	fmt.Printf("benchctl: %s\nmachine: %s\ncommit: %s\nload average before: %s\nresults: %s\n\n", rep.Config, rep.Machine, rep.Commit, rep.LoadBefore, c.outDir)

	answers := newAnswerCheck()
	slowSkip := map[string]string{} // variant/workload -> reason
	for r := 1; r <= c.runs; r++ {
		for _, wn := range c.workloads {
			w, ok := byName[wn]
			if !ok {
				return fmt.Errorf("unknown workload %q", wn)
			}
			for _, proto := range c.protocols {
				for _, v := range rotate(c.variants, r) {
					key := v + "/" + wn
					if reason, ok := slowSkip[key]; ok {
						rep.Results = append(rep.Results, result{Workload: wn, Proto: proto, Variant: v, Workers: c.workers, Run: r, Note: reason})
						continue
					}
					res, err := cell(c, v, proto, w, built, c.workers, r, answers, c.warmup, c.duration)
					if err != nil {
						var slow *slowError
						if errors.As(err, &slow) {
							slowSkip[key] = slow.Error()
							res = result{Workload: wn, Proto: proto, Variant: v, Workers: c.workers, Run: r, Note: slow.Error()}
						} else {
							return fmt.Errorf("%s %s %s run %d: %w", v, wn, proto, r, err)
						}
					}
					rep.Results = append(rep.Results, res)
					fmt.Printf("run %d  %-7s %-6s %-12s %9.1f req/s  p50 %8.2f ms  p99 %8.2f ms  peak RSS %7.1f MB  %s\n",
						r, wn, proto, v, res.RPS, res.P50ms, res.P99ms, res.RSSMB, res.Note)
				}
			}
		}
	}
	if c.mem {
		for r := 1; r <= c.runs; r++ {
			for _, wn := range []string{"medium", "large"} {
				w := byName[wn]
				for _, v := range rotate(c.variants, r) {
					key := v + "/" + wn
					if reason, ok := slowSkip[key]; ok {
						rep.Results = append(rep.Results, result{Workload: "mem4-" + wn, Proto: "h2c", Variant: v, Workers: c.memWorkers, Run: r, Note: reason})
						continue
					}
					res, err := cell(c, v, "h2c", w, built, c.memWorkers, r, answers, c.warmup, c.duration)
					if err != nil {
						var slow *slowError
						if !errors.As(err, &slow) {
							return fmt.Errorf("mem4 %s %s run %d: %w", v, wn, r, err)
						}
						res = result{Variant: v, Note: slow.Error()}
					}
					res.Workload, res.Proto, res.Workers, res.Run = "mem4-"+wn, "h2c", c.memWorkers, r
					rep.Results = append(rep.Results, res)
					fmt.Printf("run %d  mem4-%-6s h2c   %-12s %9.1f req/s  p50 %8.2f ms  p99 %8.2f ms  peak RSS %7.1f MB  %s\n",
						r, wn, v, res.RPS, res.P50ms, res.P99ms, res.RSSMB, res.Note)
				}
			}
		}
		for r := 1; r <= c.coldRuns; r++ {
			for _, v := range rotate(c.variants, r) {
				cr, err := coldStart(c, v, built, small)
				if err != nil {
					return fmt.Errorf("cold start %s: %w", v, err)
				}
				cr.Run = r
				rep.Cold = append(rep.Cold, cr)
				fmt.Printf("cold %d  %-12s listening after %7.1f ms, first render after 410 → upload %7.1f ms, RSS %6.1f MB\n", r, v, cr.Listen, cr.Ms, cr.RSSMB)
			}
		}
	}
	rep.LoadAfter = loadavg()
	rep.Answers = answers.summary()
	table := renderTable(c, rep)
	fmt.Println()
	fmt.Print(table)
	if err := os.WriteFile(filepath.Join(c.outDir, "table.md"), []byte(table), 0o644); err != nil {
		return err
	}
	b, _ := json.MarshalIndent(rep, "", "  ")
	return os.WriteFile(filepath.Join(c.outDir, "results.json"), b, 0o644)
}

// rotate starts the variant order at a different place each run, so that no
// server always runs first (interleaving).
func rotate(vs []string, r int) []string {
	out := make([]string, 0, len(vs))
	for i := range vs {
		out = append(out, vs[(i+r-1)%len(vs)])
	}
	return out
}

type slowError struct{ took time.Duration }

func (e *slowError) Error() string {
	return fmt.Sprintf("skipped: one render took over %v (the quadratic string build)", e.took.Round(time.Second))
}

// cell starts a fresh server, uploads the bundle with the gem's 410 flow,
// checks the workload's answer, then measures it under load.
func cell(c config, variant, proto string, w bench.Workload, bundle string, workers, run int, answers *answerCheck, warmup, duration time.Duration) (result, error) {
	res := result{Workload: w.Name, Proto: proto, Variant: variant, Workers: workers, Run: run}
	s, err := startServer(c, variant, proto, workers, "")
	if err != nil {
		return res, err
	}
	defer s.stop()
	id := bundleID(bundle)
	client := s.client(proto)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := s.waitReady(ctx, client); err != nil {
		return res, err
	}
	if err := uploadWith410(ctx, client, id, bundle, "'<p>hello</p>'\n"); err != nil {
		return res, err
	}
	start := time.Now()
	pctx, pcancel := context.WithTimeout(ctx, c.slowLimit)
	probe, err := client.RenderRaw(pctx, gemclient.Render{BundleID: id, Code: w.Code})
	pcancel()
	took := time.Since(start)
	if took >= c.slowLimit {
		return res, &slowError{took}
	}
	if err != nil {
		return res, err
	}
	if probe.Status != 200 {
		return res, fmt.Errorf("probe render: %d %.300s", probe.Status, probe.Body)
	}
	if note := answers.check(w.Name, variant, probe.Body); note != "" {
		res.Note = note
	}
	// A slow render gets a longer window, so that enough requests complete
	// in it (a request still in flight when the window closes is not counted):
	// at least 10× one render × the renders in flight per worker.
	perWorker := (c.conns + workers - 1) / workers
	if need := time.Duration(10*perWorker) * took; need > duration {
		duration = min(need.Round(time.Second), 45*time.Second)
		warmup = max(warmup, min(time.Duration(2*perWorker)*took, 20*time.Second).Round(time.Second))
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/bundles/%s/render/bench", s.port, id)
	body := filepath.Join(c.outDir, w.Name+".js")
	sampler := startRSSSampler(s.pid())
	var lr loadResult
	if proto == "h2c" {
		lr, err = h2load(c, url, body, workers, warmup, duration)
	} else {
		lr, err = wrk(c, url, body, warmup, duration)
	}
	res.RSSMB = sampler.stop()
	if err != nil {
		return res, err
	}
	res.RPS, res.P50ms, res.P99ms, res.Requests, res.Failed = lr.rps, lr.p50, lr.p99, lr.requests, lr.failed
	if lr.requests == 0 {
		res.Note = strings.TrimSpace(res.Note + fmt.Sprintf(" no request completed in %v", duration))
	}
	if lr.failed > 0 {
		res.Note = strings.TrimSpace(res.Note + fmt.Sprintf(" %d failed requests", lr.failed))
	}
	return res, nil
}

func bundleID(bundle string) string {
	sum := sha256.Sum256([]byte(bundle))
	return "rorp-v2-s-" + hex.EncodeToString(sum[:])
}

// uploadWith410 renders code the way Rails does on a fresh renderer: a raw
// render, a 410, then the same render as multipart with the bundle.
func uploadWith410(ctx context.Context, client *gemclient.Client, id, bundle, code string) error {
	r, err := client.RenderRaw(ctx, gemclient.Render{BundleID: id, Code: code})
	if err != nil {
		return err
	}
	if r.Status == 200 {
		return nil // already in this server's cache
	}
	if r.Status != 410 {
		return fmt.Errorf("first render: %d %.300s, want 410", r.Status, r.Body)
	}
	r, err = client.RenderMultipart(ctx, gemclient.Render{BundleID: id, Code: code, Bundles: map[string][]byte{id: []byte(bundle)}})
	if err != nil {
		return err
	}
	if r.Status != 200 {
		return fmt.Errorf("render with the bundle: %d %.300s", r.Status, r.Body)
	}
	return nil
}

// ---- Answers --------------------------------------------------------------

// answerCheck compares every server's answer to a workload: with Node's
// golden where there is one, and across servers always.
type answerCheck struct {
	mu    sync.Mutex
	first map[string]string // workload -> "variant sha"
	notes []string
}

var goldens = map[string]string{"hello": "golden/hello.html", "small": "golden/small-page.html", "medium": "golden/list-page.html"}

func newAnswerCheck() *answerCheck { return &answerCheck{first: map[string]string{}} }

func (a *answerCheck) check(workload, variant, body string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	sum := sha256.Sum256([]byte(body))
	sha := hex.EncodeToString(sum[:8])
	if g, ok := goldens[workload]; ok {
		want, err := bench.ReadTestdata(g)
		if err == nil && want != body {
			note := fmt.Sprintf("MISMATCH: %s %s differs from Node's golden", variant, workload)
			a.notes = append(a.notes, note)
			return note
		}
	}
	prev, ok := a.first[workload]
	if !ok {
		a.first[workload] = variant + " " + sha
		a.notes = append(a.notes, fmt.Sprintf("%s: %d bytes, sha256 %s… (%s)", workload, len(body), sha, variant))
		return ""
	}
	if !strings.HasSuffix(prev, " "+sha) {
		note := fmt.Sprintf("MISMATCH: %s %s answer sha %s, %s", variant, workload, sha, prev)
		a.notes = append(a.notes, note)
		return note
	}
	return ""
}

func (a *answerCheck) summary() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.notes)
}

// ---- Servers ----------------------------------------------------------------

type server struct {
	variant string
	port    int
	cmd     *exec.Cmd
	started time.Time
	done    chan struct{}
	log     *os.File
}

// variantEnv is what each server variant adds to the environment; every
// one of them is sent the bundle as built.
var variantEnv = map[string][]string{
	"node":          nil,
	"gorender":      nil,
	"gorender-norw": {"RENDERER_REWRITE_STRING_BUILDS=false"},
	"quickjs":       {"RENDERER_JS_ENGINE=quickjs"},
}

var nextPort = 3810

func startServer(c config, variant, proto string, workers int, cache string) (*server, error) {
	nextPort++
	if nextPort > 3890 {
		nextPort = 3811
	}
	s := &server{variant: variant, port: nextPort, done: make(chan struct{})}
	if cache == "" {
		cache = filepath.Join(c.outDir, "cache-"+strings.ReplaceAll(variant, "+", "-"))
	}
	var args, env []string
	env = append(os.Environ(), "RENDERER_PORT="+strconv.Itoa(s.port), "RENDERER_HOST=127.0.0.1",
		"RENDERER_PASSWORD="+password, "RENDERER_SERVER_BUNDLE_CACHE_PATH="+cache,
		"RENDERER_WORKERS_COUNT="+strconv.Itoa(workers))
	if variant == "node" {
		args = []string{"-c", c.serverCPUs, "node", filepath.Join(c.nodeDir, "server.mjs")}
		env = append(env, "RENDERER_PROTOCOL="+proto)
	} else {
		args = []string{"-c", c.serverCPUs, c.gorenderBin}
		// GOMAXPROCS is gorender's own default: the CPUs of its taskset,
		// at least 2.
		env = append(env, "RENDERER_LOG_LEVEL=warn",
			"RENDERER_RENDER_TIMEOUT=120s", "RENDERER_QUEUE_TIMEOUT=120s")
		env = append(env, variantEnv[variant]...)
		env = append(env, c.gorenderEnv...)
	}
	logf, err := os.OpenFile(filepath.Join(c.outDir, "server-"+strings.ReplaceAll(variant, "+", "-")+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	s.log = logf
	s.cmd = exec.Command("taskset", args...)
	s.cmd.Env = env
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	s.started = time.Now()
	if err := s.cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	go func() { _ = s.cmd.Wait(); close(s.done) }()
	liveMu.Lock()
	live[s] = true
	liveMu.Unlock()
	return s, nil
}

func (s *server) pid() int { return s.cmd.Process.Pid }

func (s *server) client(proto string) *gemclient.Client {
	return &gemclient.Client{BaseURL: fmt.Sprintf("http://127.0.0.1:%d", s.port), Password: password,
		GemVersion: "17.0.0", RailsEnv: "production", HTTP: gemclient.NewHTTPClient(proto == "h2c")}
}

// waitReady polls /health until the server answers.
func (s *server) waitReady(ctx context.Context, client *gemclient.Client) error {
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, client.BaseURL+"/health", nil)
		if resp, err := client.HTTP.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-s.done:
			return fmt.Errorf("%s exited: see %s", s.variant, s.log.Name())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// stop ends the server's process group (the server, and Node's workers).
func (s *server) stop() {
	liveMu.Lock()
	if !live[s] {
		liveMu.Unlock()
		return
	}
	delete(live, s)
	liveMu.Unlock()
	defer s.log.Close()
	select {
	case <-s.done:
		return
	default:
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.done
	}
}

// coldStart times process start → first successful render, through the
// gem's flow (410, then the render with the bundle attached), on an empty
// cache, over h2c.
func coldStart(c config, variant, bundle, code string) (coldResult, error) {
	cache, err := os.MkdirTemp(c.outDir, "cold-")
	if err != nil {
		return coldResult{}, err
	}
	defer os.RemoveAll(cache)
	s, err := startServer(c, variant, "h2c", c.workers, cache)
	if err != nil {
		return coldResult{}, err
	}
	defer s.stop()
	client := s.client("h2c")
	client.HTTP.Timeout = 2 * time.Minute
	id := bundleID(bundle)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var listen time.Duration
	for {
		r, err := client.RenderRaw(ctx, gemclient.Render{BundleID: id, Code: code})
		if err == nil {
			listen = time.Since(s.started)
			if r.Status != 410 {
				return coldResult{}, fmt.Errorf("first render: %d, want 410", r.Status)
			}
			break
		}
		select {
		case <-s.done:
			return coldResult{}, fmt.Errorf("server exited: see %s", s.log.Name())
		case <-ctx.Done():
			return coldResult{}, ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
	}
	r, err := client.RenderMultipart(ctx, gemclient.Render{BundleID: id, Code: code, Bundles: map[string][]byte{id: []byte(bundle)}})
	if err != nil {
		return coldResult{}, err
	}
	total := time.Since(s.started)
	if r.Status != 200 {
		return coldResult{}, fmt.Errorf("render with the bundle: %d %.300s", r.Status, r.Body)
	}
	return coldResult{Variant: variant, Ms: ms(total), Listen: ms(listen), RSSMB: treeRSS(s.pid())}, nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// ---- Load generators ----------------------------------------------------------

type loadResult struct {
	rps, p50, p99    float64
	requests, failed int
}

var rawHeaders = []string{
	"content-type: " + gemclient.RawJSContentType,
	"x-react-on-rails-pro-protocol-version: " + gemclient.ProtocolVersion,
	"x-react-on-rails-pro-gem-version: 17.0.0",
	"x-react-on-rails-pro-rails-env: production",
	"x-react-on-rails-pro-dependency-bundle-timestamps: []",
	"authorization: Bearer " + password,
}

var (
	h2loadRPS    = regexp.MustCompile(`finished in [0-9.]+m?s, ([0-9.]+) req/s`)
	h2loadReqs   = regexp.MustCompile(`requests: (\d+) total, \d+ started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout`)
	h2loadStatus = regexp.MustCompile(`status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx`)
)

func secs(d time.Duration) string { return strconv.Itoa(int(d.Round(time.Second)/time.Second)) + "s" }

func h2load(c config, url, body string, workers int, warmup, duration time.Duration) (loadResult, error) {
	logFile := filepath.Join(c.outDir, "h2load.log")
	_ = os.Remove(logFile)
	args := []string{"-c", c.loadCPUs, "h2load", "-c", strconv.Itoa(c.conns), "-m", "1", "-t", "1",
		"-D", secs(duration), "--warm-up-time=" + secs(warmup), "-d", body, "--log-file=" + logFile}
	for _, h := range rawHeaders {
		args = append(args, "-H", h)
	}
	args = append(args, url)
	out, err := exec.Command("taskset", args...).CombinedOutput()
	if err != nil {
		return loadResult{}, fmt.Errorf("h2load: %v\n%s", err, out)
	}
	var lr loadResult
	text := string(out)
	m := h2loadRPS.FindStringSubmatch(text)
	if m == nil {
		return lr, fmt.Errorf("h2load output: %s", text)
	}
	lr.rps, _ = strconv.ParseFloat(m[1], 64)
	if m := h2loadReqs.FindStringSubmatch(text); m != nil {
		lr.requests, _ = strconv.Atoi(m[3])
		failed, _ := strconv.Atoi(m[4])
		errored, _ := strconv.Atoi(m[5])
		lr.failed = failed + errored
	}
	if m := h2loadStatus.FindStringSubmatch(text); m != nil {
		for _, x := range m[2:] {
			n, _ := strconv.Atoi(x)
			lr.failed += n
		}
	}
	durations, err := readH2loadLog(logFile)
	if err != nil {
		return lr, err
	}
	lr.p50, lr.p99 = percentile(durations, 50), percentile(durations, 99)
	return lr, nil
}

// readH2loadLog reads h2load's per-request log (start µs, status, duration
// µs) and returns the durations of the 2xx answers in ms.
func readH2loadLog(path string) ([]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []float64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), "\t")
		if len(fields) < 3 || !strings.HasPrefix(fields[1], "2") {
			continue
		}
		us, err := strconv.ParseFloat(fields[2], 64)
		if err == nil {
			out = append(out, us/1000)
		}
	}
	return out, sc.Err()
}

func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	sort.Float64s(s)
	i := int(p/100*float64(len(s))+0.5) - 1
	return s[max(0, min(i, len(s)-1))]
}

var (
	wrkRPS     = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)
	wrkReqs    = regexp.MustCompile(`(\d+) requests in`)
	wrkNon2xx  = regexp.MustCompile(`Non-2xx or 3xx responses: (\d+)`)
	wrkErrors  = regexp.MustCompile(`Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)`)
	wrkLatency = regexp.MustCompile(`(?m)^\s+(50|99)%\s+([0-9.]+)(us|ms|s)\s*$`)
)

func wrk(c config, url, body string, warmup, duration time.Duration) (loadResult, error) {
	script := filepath.Join(c.outDir, "post.lua")
	var lua strings.Builder
	lua.WriteString("wrk.method = \"POST\"\n")
	fmt.Fprintf(&lua, "local f = assert(io.open(%q, \"rb\"))\nwrk.body = f:read(\"*a\")\nf:close()\n", body)
	for _, h := range rawHeaders {
		k, v, _ := strings.Cut(h, ": ")
		fmt.Fprintf(&lua, "wrk.headers[%q] = %q\n", k, v)
	}
	if err := os.WriteFile(script, []byte(lua.String()), 0o644); err != nil {
		return loadResult{}, err
	}
	base := []string{"-c", c.loadCPUs, "wrk", "-t", "1", "-c", strconv.Itoa(c.conns), "--timeout", "120s", "-s", script}
	if warmup > 0 {
		if out, err := exec.Command("taskset", append(slices.Clone(base), "-d", secs(warmup), url)...).CombinedOutput(); err != nil {
			return loadResult{}, fmt.Errorf("wrk warm-up: %v\n%s", err, out)
		}
	}
	out, err := exec.Command("taskset", append(base, "--latency", "-d", secs(duration), url)...).CombinedOutput()
	if err != nil {
		return loadResult{}, fmt.Errorf("wrk: %v\n%s", err, out)
	}
	text := string(out)
	var lr loadResult
	m := wrkRPS.FindStringSubmatch(text)
	if m == nil {
		return lr, fmt.Errorf("wrk output: %s", text)
	}
	lr.rps, _ = strconv.ParseFloat(m[1], 64)
	if m := wrkReqs.FindStringSubmatch(text); m != nil {
		lr.requests, _ = strconv.Atoi(m[1])
	}
	if m := wrkNon2xx.FindStringSubmatch(text); m != nil {
		lr.failed, _ = strconv.Atoi(m[1])
	}
	if m := wrkErrors.FindStringSubmatch(text); m != nil {
		for _, x := range m[1:] {
			n, _ := strconv.Atoi(x)
			lr.failed += n
		}
	}
	for _, m := range wrkLatency.FindAllStringSubmatch(text, -1) {
		v, _ := strconv.ParseFloat(m[2], 64)
		switch m[3] {
		case "us":
			v /= 1000
		case "s":
			v *= 1000
		}
		if m[1] == "50" {
			lr.p50 = v
		} else {
			lr.p99 = v
		}
	}
	return lr, nil
}

// ---- Memory -----------------------------------------------------------------

type rssSampler struct {
	stopc chan struct{}
	done  chan float64
}

// startRSSSampler samples the RSS of pid and its descendants every 50 ms.
func startRSSSampler(pid int) *rssSampler {
	s := &rssSampler{stopc: make(chan struct{}), done: make(chan float64, 1)}
	go func() {
		peak := treeRSS(pid)
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-s.stopc:
				s.done <- max(peak, treeRSS(pid))
				return
			case <-t.C:
				peak = max(peak, treeRSS(pid))
			}
		}
	}()
	return s
}

func (s *rssSampler) stop() float64 { close(s.stopc); return <-s.done }

// treeRSS returns the summed VmRSS of pid and its descendants, in MB.
func treeRSS(pid int) float64 {
	total := 0.0
	for _, p := range descendants(pid) {
		total += vmRSS(p)
	}
	return total
}

func descendants(pid int) []int {
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", out[i]))
		for _, t := range tasks {
			b, _ := os.ReadFile(t)
			for _, f := range strings.Fields(string(b)) {
				if n, err := strconv.Atoi(f); err == nil {
					out = append(out, n)
				}
			}
		}
	}
	return out
}

func vmRSS(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			f := strings.Fields(line)
			if len(f) >= 2 {
				kb, _ := strconv.ParseFloat(f[1], 64)
				return kb / 1024
			}
		}
	}
	return 0
}

// ---- Machine ------------------------------------------------------------------

func cpuCount() int {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return 1
	}
	return max(1, strings.Count(string(b), "\nprocessor")+boolInt(strings.HasPrefix(string(b), "processor")))
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// cpuListSize counts the CPUs of a taskset list such as "1" or "0-3,6".
func cpuListSize(list string) int {
	n := 0
	for _, part := range strings.Split(list, ",") {
		if a, b, ok := strings.Cut(part, "-"); ok {
			x, _ := strconv.Atoi(a)
			y, _ := strconv.Atoi(b)
			n += y - x + 1
		} else if part != "" {
			n++
		}
	}
	return max(n, 1)
}

func machine() string {
	model := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "model name") {
				_, model, _ = strings.Cut(line, ": ")
				break
			}
		}
	}
	mem := ""
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		f := strings.Fields(strings.SplitN(string(b), "\n", 2)[0])
		if len(f) >= 2 {
			kb, _ := strconv.ParseFloat(f[1], 64)
			mem = fmt.Sprintf(", %.1f GB RAM", kb/1024/1024)
		}
	}
	nodeV, _ := exec.Command("node", "--version").Output()
	goV, _ := exec.Command("go", "env", "GOVERSION").Output()
	return fmt.Sprintf("%d × %s%s, Node %s, %s", cpuCount(), strings.TrimSpace(model), mem,
		strings.TrimSpace(string(nodeV)), strings.TrimSpace(string(goV)))
}

func commit() string {
	out, err := exec.Command("git", "-C", bench.RepoRoot(), "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	c := strings.TrimSpace(string(out))
	if st, _ := exec.Command("git", "-C", bench.RepoRoot(), "status", "--porcelain").Output(); len(st) > 0 {
		c += " (with uncommitted changes)"
	}
	return c
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// ---- Table --------------------------------------------------------------------

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

type cellKey struct{ workload, proto, variant string }

func renderTable(c config, rep *report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "gorender vs Node reference, %s\n\n", rep.Started.Format("2006-01-02 15:04 UTC"))
	fmt.Fprintf(&b, "- machine: %s\n- commit: %s\n- setup: %s\n- load average (1/5/15 min) before: %s, after: %s\n\n",
		rep.Machine, rep.Commit, rep.Config, rep.LoadBefore, rep.LoadAfter)
	groups := map[cellKey][]result{}
	var order []cellKey
	for _, r := range rep.Results {
		k := cellKey{r.Workload, r.Proto, r.Variant}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	type agg struct {
		rps, p50, p99, rss float64
		runs               int
		note               string
	}
	med := map[cellKey]agg{}
	for k, rs := range groups {
		var rps, p50, p99, rss []float64
		var notes []string
		for _, r := range rs {
			if r.Note != "" && !slices.Contains(notes, r.Note) {
				notes = append(notes, r.Note)
			}
			if r.RPS > 0 {
				rps, p50, p99, rss = append(rps, r.RPS), append(p50, r.P50ms), append(p99, r.P99ms), append(rss, r.RSSMB)
			}
		}
		med[k] = agg{median(rps), median(p50), median(p99), median(rss), len(rps), strings.Join(notes, "; ")}
	}
	b.WriteString("| workload | proto | server | req/s | p50 ms | p99 ms | peak RSS MB | req/s ÷ node | p50 ÷ node | p99 ÷ node | RSS ÷ node | runs | note |\n")
	b.WriteString("|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|\n")
	ratio := func(a, n float64) string {
		if a == 0 || n == 0 {
			return "—"
		}
		return fmt.Sprintf("%.2f", a/n)
	}
	for _, k := range order {
		a := med[k]
		n, hasNode := med[cellKey{k.workload, k.proto, "node"}]
		row := []string{k.workload, k.proto, k.variant}
		if a.runs == 0 {
			row = append(row, "—", "—", "—", "—")
		} else {
			row = append(row, fmt.Sprintf("%.1f", a.rps), fmt.Sprintf("%.2f", a.p50), fmt.Sprintf("%.2f", a.p99), fmt.Sprintf("%.0f", a.rss))
		}
		if k.variant != "node" && hasNode {
			row = append(row, ratio(a.rps, n.rps), ratio(a.p50, n.p50), ratio(a.p99, n.p99), ratio(a.rss, n.rss))
		} else {
			row = append(row, "", "", "", "")
		}
		row = append(row, strconv.Itoa(a.runs), a.note)
		b.WriteString("| " + strings.Join(row, " | ") + " |\n")
	}
	if len(rep.Cold) > 0 {
		b.WriteString("\nCold start (process start → first successful render of small-page through the gem's 410 → multipart upload flow, h2c, empty cache; median):\n\n")
		b.WriteString("| server | listening ms | first render ms | RSS after MB | ÷ node | runs |\n|---|--:|--:|--:|--:|--:|\n")
		byV := map[string][]coldResult{}
		var vs []string
		for _, cr := range rep.Cold {
			if _, ok := byV[cr.Variant]; !ok {
				vs = append(vs, cr.Variant)
			}
			byV[cr.Variant] = append(byV[cr.Variant], cr)
		}
		medOf := func(v string, f func(coldResult) float64) float64 {
			var xs []float64
			for _, cr := range byV[v] {
				xs = append(xs, f(cr))
			}
			return median(xs)
		}
		nodeMs := medOf("node", func(cr coldResult) float64 { return cr.Ms })
		for _, v := range vs {
			total := medOf(v, func(cr coldResult) float64 { return cr.Ms })
			r := ""
			if v != "node" {
				r = ratio(total, nodeMs)
			}
			fmt.Fprintf(&b, "| %s | %.1f | %.1f | %.0f | %s | %d |\n", v,
				medOf(v, func(cr coldResult) float64 { return cr.Listen }), total,
				medOf(v, func(cr coldResult) float64 { return cr.RSSMB }), r, len(byV[v]))
		}
	}
	if len(rep.Answers) > 0 {
		b.WriteString("\nAnswers (checked before each measured run; hello, small and medium against Node's goldens):\n\n")
		for _, a := range rep.Answers {
			b.WriteString("- " + a + "\n")
		}
	}
	return b.String()
}
