// Command benchctl runs gorender's side-by-side benchmark against the Node
// reference server (bench/node/server.mjs) and prints one table. bash
// bench/run.sh installs the tools, builds both sides and runs it; see
// bench/README.md for what it measures and how.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"
)

const password = "bench-password-4f7a1c9e2b"

type config struct {
	duration, warmup time.Duration
	runs, conns      int
	workers          int
	memWorkers       int
	memBundles       int
	coldRuns         int
	serverCPUs       string
	loadCPUs         string
	workloads        []string
	protocols        []string
	variants         []string
	encodings        []string
	distinct         int
	unique           bool
	repeat           bool
	setups           []string
	satConns         int
	satProtocols     []string
	mem              bool
	gorenderBin      string
	nodeDir          string
	outDir           string
	gorenderEnv      []string
	slowLimit        time.Duration
}

func main() {
	if len(os.Args) == 3 && os.Args[1] == "loadgen" {
		if err := runLoadgen(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "benchctl loadgen:", err)
			os.Exit(1)
		}
		return
	}
	var c config
	var workloads, protocols, variants, genv, encodings, sets, satProtocols string
	flag.DurationVar(&c.duration, "duration", 10*time.Second, "measured time of one run")
	flag.DurationVar(&c.warmup, "warmup", 3*time.Second, "warm-up before each measured run")
	flag.IntVar(&c.runs, "runs", 3, "interleaved rounds (the table shows the medians of each cell)")
	flag.StringVar(&sets, "setups", "pinned,saturated", "pinned: each server on the server CPUs, the load generator on the others; saturated: nothing pinned, workers = CPUs (read as CPU per request)")
	flag.IntVar(&c.conns, "conns", 4, "pinned setup: concurrent connections of the load generator (one request in flight each)")
	flag.IntVar(&c.workers, "workers", 0, "pinned setup: Node cluster workers = gorender RENDERER_WORKERS_COUNT (default: the number of server CPUs)")
	flag.IntVar(&c.satConns, "sat-conns", 0, "saturated setup: connections (default: 2 × CPUs)")
	flag.StringVar(&satProtocols, "sat-protocols", "h2c", "saturated setup: protocols")
	flag.StringVar(&encodings, "encodings", "raw,form,json", "body encodings of the page workloads (medium, large): raw (gems 17.1+), form (gems up to 17.0), json")
	flag.IntVar(&c.distinct, "distinct", 32, "distinct requests each page workload rotates through (1 to 1000)")
	flag.BoolVar(&c.unique, "unique", false, "page workloads: make every request a new one (a counter in the domNodeId of each variant), which V8's compilation cache never answers; in rotation it answers the variants it compiled before")
	flag.BoolVar(&c.repeat, "repeat", false, "send the page workloads as one repeated request, as before (V8 then compiles it once)")
	flag.IntVar(&c.memWorkers, "mem-workers", 4, "workers of the memory workload (4 concurrent renders)")
	flag.IntVar(&c.memBundles, "mem-bundles", 3, "bundles of the many-bundles memory workload (mem-workers × this, medium page; 1: none)")
	flag.IntVar(&c.coldRuns, "cold-runs", 5, "cold starts per server")
	flag.StringVar(&c.serverCPUs, "server-cpus", "", "taskset CPU list of both servers (default: the upper half of the CPUs)")
	flag.StringVar(&c.loadCPUs, "load-cpus", "", "taskset CPU list of the load generator (default: the lower half)")
	flag.StringVar(&workloads, "workloads", "hello,small,medium,large", "render workloads")
	flag.StringVar(&protocols, "protocols", "h2c,http1", "pinned setup: h2c and/or http1 (repeated requests: h2load and wrk; distinct ones: benchctl's own generator)")
	flag.StringVar(&variants, "variants", "node,gorender,quickjs,gorender-node", "servers: node, gorender (goja, defaults), gorender-norw (goja with RENDERER_REWRITE_STRING_BUILDS=false), quickjs (RENDERER_JS_ENGINE=quickjs), gorender-node (RENDERER_JS_ENGINE=node)")
	flag.BoolVar(&c.mem, "mem", true, "run the memory workload (4 concurrent renders) and cold starts")
	flag.StringVar(&c.gorenderBin, "gorender", "bin/gorender", "gorender binary")
	flag.StringVar(&c.nodeDir, "node-dir", "bench/node", "directory of the Node reference server (npm ci done)")
	flag.StringVar(&c.outDir, "out", "", "results directory (default bench/results/<UTC time>)")
	flag.StringVar(&genv, "gorender-env", "", "extra environment of gorender, comma-separated K=V")
	flag.DurationVar(&c.slowLimit, "slow-limit", 15*time.Second, "skip a cell whose single probe render takes longer")
	flag.Parse()
	c.workloads, c.protocols, c.variants = split(workloads), split(protocols), split(variants)
	c.encodings, c.setups, c.satProtocols = split(encodings), split(sets), split(satProtocols)
	if c.distinct < 1 || c.distinct > 1000 {
		fmt.Fprintln(os.Stderr, "benchctl: -distinct must be 1 to 1000")
		os.Exit(2)
	}
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
