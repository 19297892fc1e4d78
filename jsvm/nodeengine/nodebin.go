package nodeengine

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// minNodeMajor is the oldest Node.js the engine runs: the permission
// model and the vm features the executor uses are there from Node 20.
const minNodeMajor = 20

// nodeBinary is the Node.js executable the engine runs and its version.
type nodeBinary struct {
	path                string
	version             string // as node prints it, without the v
	major, minor, patch int
}

// findNode resolves the Node.js executable (configured, else node on PATH)
// and checks its version.
func findNode(configured string) (nodeBinary, error) {
	path := configured
	if path == "" {
		p, err := exec.LookPath("node")
		if err != nil {
			return nodeBinary{}, fmt.Errorf("RENDERER_JS_ENGINE=node needs Node.js %d or newer, and no node was found on PATH: install Node.js or set RENDERER_NODE_PATH", minNodeMajor)
		}
		path = p
	} else if p, err := exec.LookPath(path); err != nil {
		return nodeBinary{}, fmt.Errorf("RENDERER_NODE_PATH=%s: %w", path, err)
	} else {
		path = p
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) && len(exit.Stderr) > 0 {
			err = fmt.Errorf("%w: %s", err, strings.TrimSpace(string(exit.Stderr)))
		}
		return nodeBinary{}, fmt.Errorf("run %s --version: %w", path, err)
	}
	n, err := parseNodeVersion(strings.TrimSpace(string(out)))
	if err != nil {
		return nodeBinary{}, fmt.Errorf("%s --version: %w", path, err)
	}
	n.path = path
	if n.major < minNodeMajor {
		return nodeBinary{}, fmt.Errorf("RENDERER_JS_ENGINE=node needs Node.js %d or newer; %s is v%s", minNodeMajor, path, n.version)
	}
	return n, nil
}

// parseNodeVersion reads node --version's "v20.20.2".
func parseNodeVersion(s string) (nodeBinary, error) {
	v := strings.TrimPrefix(s, "v")
	parts := strings.SplitN(v, ".", 3)
	if len(parts) != 3 || v == s {
		return nodeBinary{}, fmt.Errorf("unexpected version %q", s)
	}
	var nums [3]int
	for i, p := range parts {
		// A pre-release suffix (20.0.0-pre) ends the number.
		if j := strings.IndexFunc(p, func(r rune) bool { return r < '0' || r > '9' }); j >= 0 {
			p = p[:j]
		}
		n, err := strconv.Atoi(p)
		if err != nil {
			return nodeBinary{}, fmt.Errorf("unexpected version %q", s)
		}
		nums[i] = n
	}
	return nodeBinary{version: v, major: nums[0], minor: nums[1], patch: nums[2]}, nil
}

// atLeast reports whether the version is major.minor or newer.
func (n nodeBinary) atLeast(major, minor int) bool {
	return n.major > major || (n.major == major && n.minor >= minor)
}

// args are the command line of an executor process: Node's permission
// model allowing reads of the executor and the given roots only (no
// writes, child processes, worker threads, addons or WASI), and the V8 heap
// limit and semi-space size when they are set.
func (n nodeBinary) args(executor string, readRoots []string, heapLimitMiB, semiSpaceMiB int) []string {
	var args []string
	if n.atLeast(23, 5) || (n.major == 22 && n.minor >= 13) {
		args = append(args, "--permission")
	} else {
		args = append(args, "--experimental-permission")
	}
	if n.atLeast(20, 11) {
		// The model is stable in later versions; the warning is noise in
		// gorender's log.
		args = append(args, "--disable-warning=ExperimentalWarning")
	}
	args = append(args, "--allow-fs-read="+executor)
	for _, root := range readRoots {
		args = append(args, "--allow-fs-read="+root)
	}
	if heapLimitMiB > 0 {
		args = append(args, "--max-old-space-size="+strconv.Itoa(heapLimitMiB))
	}
	if semiSpaceMiB > 0 {
		args = append(args, "--max-semi-space-size="+strconv.Itoa(semiSpaceMiB))
	}
	return append(args, executor)
}
