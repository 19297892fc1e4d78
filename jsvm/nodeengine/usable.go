package nodeengine

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"time"
)

// usableLimit bounds Usable's run of Node.js.
const usableLimit = 15 * time.Second

// Usable reports whether the node engine can run here, for the automatic
// choice of an engine (RENDERER_JS_ENGINE=auto): the Node.js it would run
// (configured, else node on PATH; 20 or newer), started as an executor is,
// confined (spawn_*.go), so that a kernel that refuses the confinement
// makes the engine unusable rather than failing gorender's start. It
// returns the path and version ("v20.20.2") found, or why not.
func Usable(configured string) (path, version string, err error) {
	node, err := findNode(configured)
	if err != nil {
		return "", "", err
	}
	if _, err := confinement(); err != nil {
		return "", "", err
	}
	want := "v" + node.version
	cmd := executorCommand(node.path, []string{"--version"}, 0)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err = cmd.Start(); err == nil {
		kill := time.AfterFunc(usableLimit, func() { cmd.Process.Kill() })
		err = cmd.Wait()
		kill.Stop()
	}
	if err == nil && strings.TrimSpace(out.String()) != want {
		err = errors.New("it printed " + fmt.Sprintf("%q", strings.TrimSpace(out.String())))
	}
	if err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			err = fmt.Errorf("%w: %s", err, msg)
		}
		return "", "", fmt.Errorf("run %s --version confined: %w", node.path, err)
	}
	return node.path, want, nil
}
