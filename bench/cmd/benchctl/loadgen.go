package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorender/gorender/gemclient"
)

// ---- The distinct-request load generator ------------------------------------
//
// h2load sends one body, and a repeated body is what V8's compilation cache
// answers for free (bench/README.md). The page workloads are sent by this
// closed-loop generator instead: Conns connections with one request in
// flight each, rotating through the variants' bodies, and every answer
// checked against the one expected for its variant. benchctl runs it as a
// child process ("benchctl loadgen <spec>") so that it is pinned to the load
// CPUs like h2load.

type genSpec struct {
	URL         string        `json:"url"`
	H2C         bool          `json:"h2c"`
	Conns       int           `json:"conns"`
	Warmup      time.Duration `json:"warmup"`
	Duration    time.Duration `json:"duration"`
	ContentType string        `json:"content_type"`
	Header      http.Header   `json:"header"`
	Bodies      []string      `json:"bodies"` // files, one per variant
	Want        []string      `json:"want"`   // hex sha256 of each variant's answer
	// Unique makes every request a new one (uniqueRequest): its variant
	// with a counter in its domNodeId.
	Unique    bool `json:"unique"`
	ServerPID int  `json:"server_pid"`
}

type genResult struct {
	Requests int      `json:"requests"` // right answers completed in the measured window
	Failed   int      `json:"failed"`   // errors, non-200s and wrong answers, warm-up included
	P50      float64  `json:"p50_ms"`
	P99      float64  `json:"p99_ms"`
	CPUNs    int64    `json:"cpu_ns"` // the server's process tree in the measured window
	Errors   []string `json:"errors,omitempty"`
}

// loadgen runs the generator of spec in a child process pinned to cpus ("":
// not pinned) and returns what it measured.
func loadgen(c config, cpus string, spec genSpec) (loadResult, error) {
	self, err := os.Executable()
	if err != nil {
		return loadResult{}, err
	}
	b, _ := json.Marshal(spec)
	file := filepath.Join(c.outDir, "loadgen.json")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		return loadResult{}, err
	}
	var stderr bytes.Buffer
	cmd := pinned(cpus, self, "loadgen", file)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return loadResult{}, fmt.Errorf("loadgen: %v: %s", err, stderr.String())
	}
	var g genResult
	if err := json.Unmarshal(out, &g); err != nil {
		return loadResult{}, fmt.Errorf("loadgen output %q: %w", out, err)
	}
	lr := loadResult{rps: float64(g.Requests) / spec.Duration.Seconds(), p50: g.P50, p99: g.P99,
		requests: g.Requests, failed: g.Failed, cpu: time.Duration(g.CPUNs)}
	if len(g.Errors) > 0 {
		lr.errors = g.Errors
	}
	return lr, nil
}

// pinned returns the command argv run on cpus (taskset), or as is when cpus
// is empty.
func pinned(cpus string, argv ...string) *exec.Cmd {
	if cpus == "" {
		return exec.Command(argv[0], argv[1:]...)
	}
	return exec.Command("taskset", append([]string{"-c", cpus}, argv...)...)
}

type sample struct {
	started, done time.Time
	err           string
}

// runLoadgen is the child: it reads the spec, sends the load and prints a
// genResult as JSON.
func runLoadgen(specFile string) error {
	b, err := os.ReadFile(specFile)
	if err != nil {
		return err
	}
	var spec genSpec
	if err := json.Unmarshal(b, &spec); err != nil {
		return fmt.Errorf("spec: %w", err)
	}
	g, err := generate(spec)
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(g)
}

// generate sends spec's load and checks every answer.
func generate(spec genSpec) (genResult, error) {
	if len(spec.Bodies) == 0 || len(spec.Bodies) != len(spec.Want) || spec.Conns < 1 {
		return genResult{}, fmt.Errorf("spec: %d bodies, %d answers, %d connections", len(spec.Bodies), len(spec.Want), spec.Conns)
	}
	var err error
	bodies := make([][]byte, len(spec.Bodies))
	for i, f := range spec.Bodies {
		if bodies[i], err = os.ReadFile(f); err != nil {
			return genResult{}, err
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	from, end := start.Add(spec.Warmup), start.Add(spec.Warmup+spec.Duration)
	var next atomic.Uint64
	samples := make([][]sample, spec.Conns)
	var wg sync.WaitGroup
	for conn := range spec.Conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := gemclient.NewHTTPClient(spec.H2C) // its own transport: its own connection
			for ctx.Err() == nil {
				n := next.Add(1) - 1
				i := int(n % uint64(len(bodies)))
				body := bodies[i]
				if spec.Unique {
					body = uniqueRequest(body, n)
				}
				s := sample{started: time.Now()}
				s.err = send(ctx, client, spec, body, spec.Want[i])
				if ctx.Err() != nil {
					return // cut off at the window's end
				}
				s.done = time.Now()
				if s.err != "" {
					s.err = fmt.Sprintf("variant %d: %s", i, s.err)
				}
				samples[conn] = append(samples[conn], s)
				if s.err != "" {
					time.Sleep(10 * time.Millisecond) // a refused connection must not spin
				}
			}
		}()
	}
	time.Sleep(time.Until(from))
	cpu0 := treeCPU(spec.ServerPID)
	time.Sleep(time.Until(end))
	cpu1 := treeCPU(spec.ServerPID)
	cancel()
	wg.Wait()

	g := genResult{CPUNs: int64(cpu1 - cpu0)}
	var lat []float64
	for _, ss := range samples {
		for _, s := range ss {
			switch {
			case s.err != "":
				g.Failed++
				if len(g.Errors) < 5 {
					g.Errors = append(g.Errors, s.err)
				}
			case !s.done.Before(from) && !s.done.After(end):
				g.Requests++
				if !s.started.Before(from) {
					lat = append(lat, float64(s.done.Sub(s.started).Microseconds())/1000)
				}
			}
		}
	}
	g.P50, g.P99 = percentile(lat, 50), percentile(lat, 99)
	return g, nil
}

// domNodeID precedes the 12 digits that end a ListPage request's domNodeId
// (bench.LargeRequest, tests/testdata/requests/list-page.js), the same in
// every body encoding.
const domNodeID = "-react-component-5b0c6f7e-3a1d-4e2b-9c4f-"

// uniqueRequest is body with the last digits of its domNodeId set to n: a
// request no other one of the run repeats, so that V8's compilation cache
// never answers it (with variants in rotation it does: a process holds
// every variant's compiled script), with the variant's answer (the answer
// does not show the domNodeId). body as is if it has no domNodeId.
func uniqueRequest(body []byte, n uint64) []byte {
	at := bytes.Index(body, []byte(domNodeID))
	if at < 0 || at+len(domNodeID)+12 > len(body) {
		return body
	}
	out := bytes.Clone(body)
	copy(out[at+len(domNodeID):], fmt.Sprintf("%012d", n%1e12))
	return out
}

// send posts one body and checks its answer: "" when it is the expected one.
func send(ctx context.Context, client *http.Client, spec genSpec, body []byte, want string) string {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, spec.URL, bytes.NewReader(body))
	if err != nil {
		return err.Error()
	}
	req.Header = spec.Header.Clone()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	req.Header.Set("Content-Type", spec.ContentType)
	resp, err := client.Do(req)
	if err != nil {
		return err.Error()
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err.Error()
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Sprintf("status %d: %.200s", resp.StatusCode, got)
	}
	if sum := sha256.Sum256(got); hex.EncodeToString(sum[:]) != want {
		return fmt.Sprintf("a %d-byte answer that is not the expected one", len(got))
	}
	return ""
}
