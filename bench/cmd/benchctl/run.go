package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gorender/gorender/bench"
	"github.com/gorender/gorender/gemclient"
)

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
	// CPUms is the server's CPU time (its process tree: gorender and its
	// Node.js processes, or Node's cluster) per completed request in the
	// measured window: unlike req/s, it barely moves with other load on
	// the machine.
	CPUms    float64 `json:"cpu_ms_per_request"`
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
					fmt.Printf("run %d  %-7s %-6s %-12s %9.1f req/s  p50 %8.2f ms  p99 %8.2f ms  peak RSS %7.1f MB  CPU %7.3f ms/req  %s\n",
						r, wn, proto, v, res.RPS, res.P50ms, res.P99ms, res.RSSMB, res.CPUms, res.Note)
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
					fmt.Printf("run %d  mem4-%-6s h2c   %-12s %9.1f req/s  p50 %8.2f ms  p99 %8.2f ms  peak RSS %7.1f MB  CPU %7.3f ms/req  %s\n",
						r, wn, v, res.RPS, res.P50ms, res.P99ms, res.RSSMB, res.CPUms, res.Note)
				}
			}
		}
		for r := 1; r <= c.runs && c.memBundles > 1; r++ {
			for _, v := range rotate(c.variants, r) {
				res, err := cellBundles(c, v, byName["medium"], built, c.memWorkers, c.memBundles, r, answers)
				if err != nil {
					return fmt.Errorf("%s %s run %d: %w", res.Workload, v, r, err)
				}
				rep.Results = append(rep.Results, res)
				fmt.Printf("run %d  %s h2c   %-12s %9.1f req/s  p50 %8.2f ms  p99 %8.2f ms  peak RSS %7.1f MB  CPU %7.3f ms/req  %s\n",
					r, res.Workload, v, res.RPS, res.P50ms, res.P99ms, res.RSSMB, res.CPUms, res.Note)
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
		lr, err = h2load(c, s.pid(), url, body, workers, warmup, duration)
	} else {
		lr, err = wrk(c, s.pid(), url, body, warmup, duration)
	}
	res.RSSMB = sampler.stop()
	if err != nil {
		return res, err
	}
	res.RPS, res.P50ms, res.P99ms, res.Requests, res.Failed = lr.rps, lr.p50, lr.p99, lr.requests, lr.failed
	res.CPUms = cpuPerRequest(lr.cpu, lr.requests)
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
