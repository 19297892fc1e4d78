package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gorender/gorender/bench"
)

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

// ---- CPU ----------------------------------------------------------------------

// treeCPU is the user and system time of pid and its descendants so far,
// with the children they already reaped (a Node.js process gorender
// replaced, a cluster worker that exited).
func treeCPU(pid int) time.Duration {
	var ticks int64
	for _, p := range descendants(pid) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		if err != nil {
			continue
		}
		s := string(b)
		// Fields after the command (which may hold spaces): utime, stime,
		// cutime and cstime are the 14th to 17th of the line.
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 15 {
			continue
		}
		for _, x := range f[11:15] {
			n, _ := strconv.ParseInt(x, 10, 64)
			ticks += n
		}
	}
	return time.Duration(ticks) * time.Second / clockTicks
}

// clockTicks is the kernel's USER_HZ, the unit of /proc's CPU times: 100
// on every Linux platform gorender builds for.
const clockTicks = 100

func cpuPerRequest(cpu time.Duration, requests int) float64 {
	if requests == 0 {
		return 0
	}
	return float64(cpu.Microseconds()) / 1000 / float64(requests)
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
