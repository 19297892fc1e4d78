package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gorender/gorender/bench"
	"github.com/gorender/gorender/gemclient"
)

// ---- Results ------------------------------------------------------------

type result struct {
	Setup    string `json:"setup"` // pinned or saturated
	Workload string `json:"workload"`
	Encoding string `json:"encoding"` // raw, form or json
	// Mode is "distinct×N" (N variants in rotation), "unique" (-unique:
	// every request sent once) or "repeated" (one request sent again and
	// again).
	Mode    string  `json:"request_mode"`
	Proto   string  `json:"proto"`
	Variant string  `json:"variant"`
	Workers int     `json:"workers"`
	Conns   int     `json:"conns"`
	Run     int     `json:"run"`
	Load    string  `json:"load_avg_at_start"`
	RPS     float64 `json:"rps"`
	P50ms   float64 `json:"p50_ms"`
	P99ms   float64 `json:"p99_ms"`
	RSSMB   float64 `json:"peak_rss_mb"`
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
	Started    time.Time         `json:"started"`
	Config     string            `json:"config"`
	Setups     map[string]string `json:"setups"`
	Machine    string            `json:"machine"`
	Commit     string            `json:"commit"`
	LoadBefore string            `json:"load_before"`
	LoadAfter  string            `json:"load_after"`
	Rounds     []string          `json:"rounds"` // each round's start and load average
	Results    []result          `json:"results"`
	Cold       []coldResult      `json:"cold"`
	Answers    []string          `json:"answers"`
}

// ---- Setups ----------------------------------------------------------------

// setup is how the servers and the load generator share the machine.
type setup struct {
	name                 string // pinned or saturated
	serverCPUs, loadCPUs string // taskset CPU lists; "": not pinned
	workers, conns       int
	protocols            []string
}

func (st setup) String() string {
	switch st.serverCPUs {
	case "":
		return fmt.Sprintf("nothing pinned, %d workers (= CPUs), %d connections × 1 in flight", st.workers, st.conns)
	default:
		return fmt.Sprintf("server on CPUs %s, load generator on CPUs %s, %d workers, %d connections × 1 in flight", st.serverCPUs, st.loadCPUs, st.workers, st.conns)
	}
}

// setups returns the setups of c.setups: "pinned" runs each server on the
// server CPUs (one core on a 2-core machine) with the load generator on
// the others; "saturated" pins nothing, runs workers = CPUs and enough
// connections to keep them all busy, and is read as CPU per request.
func setups(c config) ([]setup, error) {
	ncpu := cpuCount()
	half := max(1, ncpu/2)
	serverCPUs, loadCPUs := c.serverCPUs, c.loadCPUs
	if serverCPUs == "" {
		serverCPUs = cpuRange(ncpu-half, ncpu-1)
	}
	if loadCPUs == "" {
		loadCPUs = serverCPUs // one CPU: share it
		if ncpu > 1 {
			loadCPUs = cpuRange(0, ncpu-half-1)
		}
	}
	workers := c.workers
	if workers <= 0 {
		workers = cpuListSize(serverCPUs)
	}
	var out []setup
	for _, name := range c.setups {
		switch name {
		case "pinned":
			out = append(out, setup{name, serverCPUs, loadCPUs, workers, c.conns, c.protocols})
		case "saturated":
			conns := c.satConns
			if conns <= 0 {
				conns = 2 * ncpu
			}
			out = append(out, setup{name, "", "", ncpu, conns, c.satProtocols})
		default:
			return nil, fmt.Errorf("unknown setup %q (pinned, saturated)", name)
		}
	}
	return out, nil
}

// cpuRange is the taskset list of CPUs a to b.
func cpuRange(a, b int) string {
	if a == b {
		return strconv.Itoa(a)
	}
	return fmt.Sprintf("%d-%d", a, b)
}

// ---- Jobs -------------------------------------------------------------------

// job is a workload's requests in one body encoding, encoded into files.
type job struct {
	w    bench.Workload
	enc  string
	mode string // distinct×N, unique or repeated
	key  string // the answer's key: the workload, and "variant 0" when distinct
	// code0 is the first request's JavaScript, golden Node's answer to it
	// ("" when there is no golden).
	code0, golden string
	files         []string
	e             bench.Encoded // the content type and headers of every body
}

func (j *job) distinct() bool { return len(j.files) > 1 }

func (j *job) request(i int) request { return request{j.files[i], j.e.ContentType, j.e.Header} }

// newJob encodes w's requests in enc: n variants (bench.Variants), or the
// request itself when n is 0.
func newJob(dir string, w bench.Workload, enc string, n int) (*job, error) {
	j := &job{w: w, enc: enc, mode: "repeated", key: w.Name}
	codes := []string{w.Code}
	if n > 0 {
		var err error
		if codes, err = bench.Variants(w.Code, n); err != nil {
			return nil, fmt.Errorf("%s: %w", w.Name, err)
		}
		j.mode, j.key = fmt.Sprintf("distinct×%d", n), w.Name+" variant 0"
	}
	j.code0 = codes[0]
	if g, ok := goldens[w.Name]; ok {
		golden, err := bench.ReadTestdata(g)
		if err != nil {
			return nil, err
		}
		if n > 0 {
			if golden, err = bench.VariantAnswer(w.Code, golden, 0); err != nil {
				return nil, fmt.Errorf("%s golden: %w", w.Name, err)
			}
		}
		j.golden = golden
	}
	for i, code := range codes {
		e, err := bench.EncodeRender(enc, code, password)
		if err != nil {
			return nil, err
		}
		j.e = e
		file := filepath.Join(dir, fmt.Sprintf("%s-%s-%s-%d.body", w.Name, enc, strings.SplitN(j.mode, "×", 2)[0], i))
		if err := os.WriteFile(file, e.Body, 0o644); err != nil {
			return nil, err
		}
		j.files = append(j.files, file)
	}
	return j, nil
}

// ---- Orchestration -------------------------------------------------------

func run(c config) error {
	sts, err := setups(c)
	if err != nil {
		return err
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
	// The encoded bodies (up to 32 × 3 × 1.5 MB for the large page) are
	// rebuilt by every run: they do not stay in the results.
	defer func() {
		bodies, _ := filepath.Glob(filepath.Join(c.outDir, "*.body"))
		for _, f := range bodies {
			_ = os.Remove(f)
		}
	}()
	var jobs []*job
	rawJob := map[string]*job{}
	for _, wn := range c.workloads {
		w, ok := byName[wn]
		if !ok {
			return fmt.Errorf("unknown workload %q", wn)
		}
		encs, n := []string{"raw"}, 0
		if w.Page {
			encs = c.encodings
			if !c.repeat {
				n = c.distinct
			}
		}
		for _, enc := range encs {
			j, err := newJob(c.outDir, w, enc, n)
			if err != nil {
				return err
			}
			if n > 0 && c.unique {
				j.mode = "unique" // every request sent once (loadgen's uniqueRequest)
			}
			jobs = append(jobs, j)
			if enc == "raw" {
				rawJob[wn] = j
			}
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
		Config:     fmt.Sprintf("%v (+%v warm-up) × %d interleaved rounds; page workloads %s", c.duration, c.warmup, c.runs, pageMode(c)),
		Setups:     map[string]string{},
		Machine:    machine(),
		Commit:     commit(),
		LoadBefore: loadavg(),
	}
	for _, st := range sts {
		rep.Setups[st.name] = st.String()
	}
	fmt.Printf("benchctl: %s\nmachine: %s\ncommit: %s\nload average before: %s\nresults: %s\n", rep.Config, rep.Machine, rep.Commit, rep.LoadBefore, c.outDir)
	for _, st := range sts {
		fmt.Printf("setup %s: %s\n", st.name, st)
	}
	fmt.Println()

	answers := newAnswerCheck()
	slowSkip := map[string]string{} // setup/variant/workload -> reason
	for r := 1; r <= c.runs; r++ {
		for _, st := range sts {
			round := fmt.Sprintf("round %d, %s: started %s, load average %s", r, st.name, time.Now().UTC().Format("15:04:05"), loadavg())
			rep.Rounds = append(rep.Rounds, round)
			fmt.Println(round)
			for _, j := range jobs {
				for _, proto := range st.protocols {
					for _, v := range rotate(c.variants, r) {
						key := st.name + "/" + v + "/" + j.w.Name
						if reason, ok := slowSkip[key]; ok {
							rep.Results = append(rep.Results, result{Setup: st.name, Workload: j.w.Name, Encoding: j.enc, Mode: j.mode, Proto: proto, Variant: v, Workers: st.workers, Conns: st.conns, Run: r, Note: reason})
							continue
						}
						res, err := cell(c, st, v, proto, j, built, st.workers, r, answers, c.warmup, c.duration)
						if err != nil {
							var slow *slowError
							if !errors.As(err, &slow) {
								return fmt.Errorf("%s %s %s %s %s run %d: %w", st.name, v, j.w.Name, j.enc, proto, r, err)
							}
							slowSkip[key] = slow.Error()
							res.Note = slow.Error()
						}
						rep.Results = append(rep.Results, res)
						printResult(res)
					}
				}
			}
		}
	}
	if c.mem {
		st := setup{"pinned", "", "", c.memWorkers, c.conns, nil}
		for _, s := range sts {
			if s.name == "pinned" {
				st = s
			}
		}
		if st.serverCPUs == "" {
			return fmt.Errorf("-mem needs the pinned setup")
		}
		st.workers = c.memWorkers
		for r := 1; r <= c.runs; r++ {
			for _, wn := range []string{"medium", "large"} {
				j := rawJob[wn]
				if j == nil {
					continue
				}
				for _, v := range rotate(c.variants, r) {
					key := "pinned/" + v + "/" + wn
					res := result{Setup: st.name, Encoding: j.enc, Mode: j.mode, Variant: v, Note: slowSkip[key]}
					if res.Note == "" {
						var err error
						res, err = cell(c, st, v, "h2c", j, built, c.memWorkers, r, answers, c.warmup, c.duration)
						if err != nil {
							var slow *slowError
							if !errors.As(err, &slow) {
								return fmt.Errorf("mem4 %s %s run %d: %w", v, wn, r, err)
							}
							res.Note = slow.Error()
						}
					}
					res.Workload, res.Proto, res.Workers, res.Run = "mem4-"+wn, "h2c", c.memWorkers, r
					rep.Results = append(rep.Results, res)
					printResult(res)
				}
			}
		}
		medium, err := newJob(c.outDir, byName["medium"], "raw", 0)
		if err != nil {
			return err
		}
		for r := 1; r <= c.runs && c.memBundles > 1; r++ {
			for _, v := range rotate(c.variants, r) {
				res, err := cellBundles(c, st, v, medium, built, c.memWorkers, c.memBundles, r, answers)
				if err != nil {
					return fmt.Errorf("%s %s run %d: %w", res.Workload, v, r, err)
				}
				rep.Results = append(rep.Results, res)
				printResult(res)
			}
		}
		st.workers = c.workers
		if st.workers <= 0 {
			st.workers = cpuListSize(st.serverCPUs)
		}
		for r := 1; r <= c.coldRuns; r++ {
			for _, v := range rotate(c.variants, r) {
				cr, err := coldStart(c, st, v, built, small)
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
	table := renderTable(rep)
	fmt.Println()
	fmt.Print(table)
	if err := os.WriteFile(filepath.Join(c.outDir, "table.md"), []byte(table), 0o644); err != nil {
		return err
	}
	b, _ := json.MarshalIndent(rep, "", "  ")
	return os.WriteFile(filepath.Join(c.outDir, "results.json"), b, 0o644)
}

func pageMode(c config) string {
	if c.repeat {
		return "repeat one request (-repeat)"
	}
	if c.unique {
		return fmt.Sprintf("send every request once (-unique: %d variants, each with a counter in its domNodeId); hello and small repeat one", c.distinct)
	}
	return fmt.Sprintf("send %d distinct requests in rotation; hello and small repeat one", c.distinct)
}

func printResult(res result) {
	fmt.Printf("%-9s run %d  %-13s %-4s %-11s %-5s %-13s %9.1f req/s  p50 %8.2f ms  p99 %8.2f ms  peak RSS %7.1f MB  CPU %7.3f ms/req  %s\n",
		res.Setup, res.Run, res.Workload, res.Encoding, res.Mode, res.Proto, res.Variant, res.RPS, res.P50ms, res.P99ms, res.RSSMB, res.CPUms, res.Note)
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
// checks the answer to the job's first request, then measures the job
// under load: distinct requests through loadgen, which checks every answer
// against the one expected for its variant; a repeated one through h2load
// or wrk.
func cell(c config, st setup, variant, proto string, j *job, bundle string, workers, run int, answers *answerCheck, warmup, duration time.Duration) (result, error) {
	res := result{Setup: st.name, Workload: j.w.Name, Encoding: j.enc, Mode: j.mode, Proto: proto, Variant: variant, Workers: workers, Conns: st.conns, Run: run, Load: loadavg()}
	s, err := startServer(c, st, variant, proto, workers, "")
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
	url := fmt.Sprintf("http://127.0.0.1:%d/bundles/%s/render/bench", s.port, id)
	body0, err := os.ReadFile(j.files[0])
	if err != nil {
		return res, err
	}
	start := time.Now()
	pctx, pcancel := context.WithTimeout(ctx, c.slowLimit)
	status, probe, err := post(pctx, client.HTTP, url, j.e, body0)
	pcancel()
	took := time.Since(start)
	if took >= c.slowLimit {
		return res, &slowError{took}
	}
	if err != nil {
		return res, err
	}
	if status != 200 {
		return res, fmt.Errorf("probe render: %d %.300s", status, probe)
	}
	if note := answers.check(j.key, variant, probe, j.golden); note != "" {
		res.Note = note
	}
	// A slow render gets a longer window, so that enough requests complete
	// in it (a request still in flight when the window closes is not counted):
	// at least 10× one render × the renders in flight per worker.
	perWorker := (st.conns + workers - 1) / workers
	if need := time.Duration(10*perWorker) * took; need > duration {
		duration = min(need.Round(time.Second), 45*time.Second)
		warmup = max(warmup, min(time.Duration(2*perWorker)*took, 20*time.Second).Round(time.Second))
	}
	sampler := startRSSSampler(s.pid())
	var lr loadResult
	switch {
	case j.distinct():
		spec := genSpec{URL: url, H2C: proto == "h2c", Conns: st.conns, Warmup: warmup, Duration: duration,
			ContentType: j.e.ContentType, Header: j.e.Header, Bodies: j.files, ServerPID: s.pid(), Unique: c.unique}
		for i := range j.files {
			want, verr := bench.VariantAnswer(j.code0, probe, i)
			if verr != nil {
				err = verr
				break
			}
			sum := sha256.Sum256([]byte(want))
			spec.Want = append(spec.Want, hex.EncodeToString(sum[:]))
		}
		if err == nil {
			lr, err = loadgen(c, st.loadCPUs, spec)
		}
	case proto == "h2c":
		lr, err = h2load(c, st.loadCPUs, st.conns, s.pid(), url, j.request(0), warmup, duration)
	default:
		lr, err = wrk(c, st.loadCPUs, st.conns, s.pid(), url, j.request(0), warmup, duration)
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
		res.Note = strings.TrimSpace(res.Note + fmt.Sprintf(" %d failed requests (%s)", lr.failed, strings.Join(lr.errors, "; ")))
	}
	return res, nil
}

// post sends one encoded render body and returns the answer.
func post(ctx context.Context, client *http.Client, url string, e bench.Encoded, body []byte) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header = e.Header.Clone()
	req.Header.Set("Content-Type", e.ContentType)
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
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
