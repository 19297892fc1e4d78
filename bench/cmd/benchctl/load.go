package main

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// ---- Load generators ----------------------------------------------------------

type loadResult struct {
	rps, p50, p99    float64
	requests, failed int
	errors           []string // the first failures (the distinct-request generator)
	// cpu is what the server's process tree spent in the measured window
	// (after the warm-up), user and system time.
	cpu time.Duration
}

// request is the one body h2load and wrk repeat, with its headers.
type request struct {
	file        string
	contentType string
	header      http.Header
}

// headerLines are the request's headers as "name: value", Content-Type first.
func (r request) headerLines() []string {
	out := []string{"content-type: " + r.contentType}
	for k, vs := range r.header {
		for _, v := range vs {
			out = append(out, strings.ToLower(k)+": "+v)
		}
	}
	sort.Strings(out[1:])
	return out
}

var (
	h2loadRPS    = regexp.MustCompile(`finished in [0-9.]+m?s, ([0-9.]+) req/s`)
	h2loadReqs   = regexp.MustCompile(`requests: (\d+) total, \d+ started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout`)
	h2loadStatus = regexp.MustCompile(`status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx`)
)

func secs(d time.Duration) string { return strconv.Itoa(int(d.Round(time.Second)/time.Second)) + "s" }

func h2load(c config, cpus string, conns, server int, url string, rq request, warmup, duration time.Duration) (loadResult, error) {
	logFile := filepath.Join(c.outDir, "h2load.log")
	_ = os.Remove(logFile)
	args := []string{"h2load", "-c", strconv.Itoa(conns), "-m", "1", "-t", "1",
		"-D", secs(duration), "--warm-up-time=" + secs(warmup), "-d", rq.file, "--log-file=" + logFile}
	for _, h := range rq.headerLines() {
		args = append(args, "-H", h)
	}
	args = append(args, url)
	// h2load measures after its warm-up, in the same run: the server's CPU
	// is read when the warm-up ends.
	cpuAtStart := make(chan time.Duration, 1)
	timer := time.AfterFunc(warmup, func() { cpuAtStart <- treeCPU(server) })
	started := time.Now()
	out, err := pinned(cpus, args...).CombinedOutput()
	cpuAtEnd := treeCPU(server)
	if timer.Stop() {
		cpuAtStart <- cpuAtEnd
	}
	var lr loadResult
	lr.cpu = cpuAtEnd - <-cpuAtStart
	if err != nil {
		return loadResult{}, fmt.Errorf("h2load: %v\n%s", err, out)
	}
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
	durations, err := readH2loadLog(logFile, started.Add(warmup))
	if err != nil {
		return lr, err
	}
	lr.p50, lr.p99 = percentile(durations, 50), percentile(durations, 99)
	return lr, nil
}

// readH2loadLog reads h2load's per-request log (start µs since the epoch,
// status, duration µs) and returns the durations of the 2xx answers in ms,
// without the requests that started during the warm-up: h2load logs a
// request still in flight when its warm-up ends, and those are the first
// renders of cold processes (for 4 large renders on one CPU, 2.5 s against
// a steady 0.6 s: 3 of 54 entries, the whole p99).
func readH2loadLog(path string, measuredFrom time.Time) ([]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	from := float64(measuredFrom.UnixMicro())
	var out []float64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), "\t")
		if len(fields) < 3 {
			continue
		}
		start, err1 := strconv.ParseFloat(fields[0], 64)
		us, err2 := strconv.ParseFloat(fields[2], 64)
		if err1 != nil || err2 != nil {
			continue
		}
		if strings.HasPrefix(fields[1], "2") && start >= from {
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

func wrk(c config, cpus string, conns, server int, url string, rq request, warmup, duration time.Duration) (loadResult, error) {
	script := filepath.Join(c.outDir, "post.lua")
	var lua strings.Builder
	lua.WriteString("wrk.method = \"POST\"\n")
	fmt.Fprintf(&lua, "local f = assert(io.open(%q, \"rb\"))\nwrk.body = f:read(\"*a\")\nf:close()\n", rq.file)
	for _, h := range rq.headerLines() {
		k, v, _ := strings.Cut(h, ": ")
		fmt.Fprintf(&lua, "wrk.headers[%q] = %q\n", k, v)
	}
	if err := os.WriteFile(script, []byte(lua.String()), 0o644); err != nil {
		return loadResult{}, err
	}
	base := []string{"wrk", "-t", "1", "-c", strconv.Itoa(conns), "--timeout", "120s", "-s", script}
	if warmup > 0 {
		if out, err := pinned(cpus, append(slices.Clone(base), "-d", secs(warmup), url)...).CombinedOutput(); err != nil {
			return loadResult{}, fmt.Errorf("wrk warm-up: %v\n%s", err, out)
		}
	}
	cpuAtStart := treeCPU(server)
	out, err := pinned(cpus, append(base, "--latency", "-d", secs(duration), url)...).CombinedOutput()
	if err != nil {
		return loadResult{}, fmt.Errorf("wrk: %v\n%s", err, out)
	}
	text := string(out)
	var lr loadResult
	lr.cpu = treeCPU(server) - cpuAtStart
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
