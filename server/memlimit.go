package server

import (
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

// applyMemoryLimit makes the Go runtime aware of the container's memory:
// without GOMEMLIMIT, a cgroup limit L sets a soft limit of 90% of L so the
// GC works harder before the kernel kills the process. It returns the
// effective soft limit in bytes, or 0 when there is none.
func applyMemoryLimit(getenv func(string) string) (limit uint64, source string) {
	if getenv("GOMEMLIMIT") != "" {
		current := debug.SetMemoryLimit(-1)
		if current <= 0 || current == math.MaxInt64 {
			return 0, ""
		}
		return uint64(current), "GOMEMLIMIT"
	}
	for _, path := range cgroupMemoryFiles {
		raw, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		v := strings.TrimSpace(string(raw))
		n, err := strconv.ParseUint(v, 10, 64)
		// "max" (v2) or a near-2^63 value (v1) mean no limit.
		if err != nil || n == 0 || n >= 1<<60 {
			return 0, ""
		}
		soft := n / 10 * 9
		debug.SetMemoryLimit(int64(soft))
		return soft, path
	}
	return 0, ""
}

// defaultGCPercent is gorender's GOGC when the variable is unset. A render
// allocates many times its live heap (the 179 KB list page: 18 MB per render
// on goja), so at Go's default of 100 the collector takes a quarter of the
// CPU; at 200 a render costs about 16% less CPU (bench/README.md) for a heap
// up to three times the live data, still bounded by GOMEMLIMIT.
const defaultGCPercent = 200

// applyGCPercent sets defaultGCPercent unless GOGC is set, and returns the
// GC percent in effect (negative: collection off).
func applyGCPercent(getenv func(string) string) int {
	if getenv("GOGC") != "" {
		current := debug.SetGCPercent(100)
		debug.SetGCPercent(current)
		return current
	}
	debug.SetGCPercent(defaultGCPercent)
	return defaultGCPercent
}

// minProcs is the fewest Ps gorender runs with when GOMAXPROCS is unset.
// With one P (a one-CPU container: Go derives GOMAXPROCS from the CPU
// limit), network wake-ups and the collector's mark worker queue behind the
// render that holds the P: small-page renders on one pinned CPU had a p99
// of 74-108 ms at a p50 of 3.8 ms, against 17 ms with two Ps on the same
// CPU (bench/README.md). Runtimes per bundle still default to the CPUs.
const minProcs = 2

// startProcs is GOMAXPROCS as the process started: the CPUs Go found
// (affinity and cgroup limit) or the variable. It is the default number of
// runtimes per bundle, whatever applyMinProcs sets.
var startProcs = runtime.GOMAXPROCS(0)

// applyMinProcs raises GOMAXPROCS to minProcs unless the variable is set,
// and returns the value in effect.
func applyMinProcs(getenv func(string) string) int {
	if getenv("GOMAXPROCS") == "" && runtime.GOMAXPROCS(0) < minProcs {
		runtime.GOMAXPROCS(minProcs)
	}
	return runtime.GOMAXPROCS(0)
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
