package config

import (
	"errors"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
)

// cgroupMemoryFiles hold a container's memory limit: cgroup v2, then v1.
var cgroupMemoryFiles = []string{
	"/sys/fs/cgroup/memory.max",
	"/sys/fs/cgroup/memory/memory.limit_in_bytes",
}

// parseMemoryLimit plans the Go runtime's soft memory limit: with
// GOMEMLIMIT, the runtime's own reading of it (a bad one stops the process
// before main); without, 90% of the container's memory limit L, so that the
// GC works harder before the kernel kills the process. The limit is 0 when
// there is none.
func parseMemoryLimit(l *loader, v string) error {
	if v != "" {
		// A negative limit only reads the current one.
		if current := debug.SetMemoryLimit(-1); current > 0 && current != math.MaxInt64 {
			l.c.MemoryLimit, l.c.MemoryLimitSource = uint64(current), "GOMEMLIMIT"
		}
		return nil
	}
	for _, path := range cgroupMemoryFiles {
		raw, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSpace(string(raw)), 10, 64)
		// "max" (v2) or a near-2^63 value (v1) mean no limit.
		if err != nil || n == 0 || n >= 1<<60 {
			return nil
		}
		l.c.MemoryLimit, l.c.MemoryLimitSource = n/10*9, path
		return nil
	}
	return nil
}

func showMemoryLimit(c *Config) string {
	switch c.MemoryLimitSource {
	case "":
		return "none"
	case "GOMEMLIMIT":
		return FormatBytes(c.MemoryLimit)
	}
	return FormatBytes(c.MemoryLimit) + " (90% of " + c.MemoryLimitSource + ")"
}

// parseGCPercent plans GOGC as the runtime reads it: a percentage, or off
// (negative). The runtime takes a malformed GOGC as 100 without a word;
// gorender refuses it.
//
// When GOGC is unset gorender uses 200 (its row's default). A render
// allocates many times its live heap (the 179 KB list page: 18 MB per render
// on goja), so at Go's default of 100 the collector takes a quarter of the
// CPU; at 200 a render costs about 16% less CPU (bench/README.md) for a heap
// up to three times the live data, still bounded by GOMEMLIMIT.
func parseGCPercent(l *loader, v string) error {
	switch n, err := strconv.Atoi(v); {
	case v == "off":
		l.c.GCPercent = -1
	case err != nil:
		return errors.New("want a percentage such as 100 or 200, or off")
	default:
		l.c.GCPercent = max(n, -1)
	}
	return nil
}

func showGCPercent(c *Config) string {
	if c.GCPercent < 0 {
		return "off"
	}
	return strconv.Itoa(c.GCPercent)
}

// minProcs is the fewest Ps gorender runs with when GOMAXPROCS is unset
// and renders run in this process (goja, quickjs). With one P (a one-CPU
// container: Go derives GOMAXPROCS from the CPU limit), network wake-ups
// and the collector's mark worker queue behind the render that holds the
// P: small-page renders on one pinned CPU had a p99 of 74-108 ms at a p50
// of 3.8 ms, against 17 ms with two Ps on the same CPU (bench/README.md).
// Runtimes per bundle still default to the CPUs.
//
// The node engine renders in its Node.js processes: no render holds a P,
// and the second P only cost the server wake-ups. gorender goes idle
// while a Node.js process renders and wakes for its answer; with an idle
// P to fill, Go wakes a second thread each time. On one CPU with the Node
// reference's requests, one P cost 10-25% less CPU per request on
// gorender's side (hello 0.244-0.273 ms against 0.275-0.315, small 0.415
// against 0.519, medium 1.68 against 2.21) and 20-35% fewer context
// switches.
const minProcs = 2

// startProcs is GOMAXPROCS as the process started: the CPUs Go found
// (affinity and cgroup limit) or the variable. It is the default number of
// runtimes per bundle, whatever GOMAXPROCS gorender then runs with.
var startProcs = runtime.GOMAXPROCS(0)

// parseProcs plans GOMAXPROCS: the variable as the runtime reads it, else
// what the runtime found, but at least minProcs unless the node engine
// renders (RENDERER_JS_ENGINE, resolved: its row comes later in the table
// and reports a bad value).
// The runtime ignores a malformed GOMAXPROCS without a word; gorender
// refuses it.
func parseProcs(l *loader, v string) error {
	if v == "" {
		l.c.Procs = runtime.GOMAXPROCS(0)
		if l.jsEngine() != "node" {
			l.c.Procs = max(l.c.Procs, minProcs)
		}
		return nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return errors.New("want a whole number of at least 1")
	}
	l.c.Procs = n
	return nil
}

// ApplyRuntime sets the Go runtime's collector (GOGC), soft memory limit
// (GOMEMLIMIT) and Ps (GOMAXPROCS) to what Load planned. These are
// process-wide, so the command calls it once, before serving; settings
// that are already in effect are left untouched (GOMAXPROCS keeps
// following the CPU limit unless it must be raised).
func (c *Config) ApplyRuntime() {
	debug.SetGCPercent(c.GCPercent)
	if c.MemoryLimit > 0 && c.MemoryLimitSource != "GOMEMLIMIT" {
		debug.SetMemoryLimit(int64(c.MemoryLimit))
	}
	if runtime.GOMAXPROCS(0) != c.Procs {
		runtime.GOMAXPROCS(c.Procs)
	}
}

// parseBytes reads a size: a number of bytes, or one with a unit
// (KiB, MiB, GiB, KB, MB, GB, K, M, G).
func parseBytes(v string) (uint64, error) {
	units := []struct {
		suffix string
		scale  uint64
	}{
		{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9},
		{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30},
	}
	scale := uint64(1)
	for _, u := range units {
		if strings.HasSuffix(v, u.suffix) {
			v, scale = strings.TrimSpace(strings.TrimSuffix(v, u.suffix)), u.scale
			break
		}
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 {
		return 0, strconv.ErrSyntax
	}
	return uint64(f * float64(scale)), nil
}
