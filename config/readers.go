// The readers of the rows that read a value their own way.

package config

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/gorender/gorender/jsvm/engines"
)

// parseEngine reads RENDERER_JS_ENGINE: an engine's name, or auto.
func parseEngine(l *loader, v string) error {
	if v != engines.Auto && !slices.Contains(engines.Names, v) {
		return errors.New("want one of " + engines.Auto + ", " + strings.Join(engines.Names, ", "))
	}
	l.c.JSEngine, l.c.JSEngineChoice = l.jsEngine(), l.why
	return nil
}

// defaultCacheFallback is where bundles go when no .node-renderer-bundles
// directory is found above the working directory (upstream's default).
const defaultCacheFallback = "/tmp/react-on-rails-pro-node-renderer-bundles"

// parseCachePath resolves the bundle cache root: the configured one, else
// the deprecated alias, else the nearest .node-renderer-bundles above the
// working directory, else upstream's /tmp default.
func parseCachePath(l *loader, path string) error {
	if path == "" && l.getenv("RENDERER_BUNDLE_PATH") != "" {
		path = l.getenv("RENDERER_BUNDLE_PATH")
		l.warn("RENDERER_BUNDLE_PATH is deprecated: use RENDERER_SERVER_BUNDLE_CACHE_PATH")
	}
	if path == "" {
		path = defaultCacheFallback
		if wd, err := os.Getwd(); err == nil {
			for dir := wd; ; dir = filepath.Dir(dir) {
				candidate := filepath.Join(dir, ".node-renderer-bundles")
				if info, err := os.Stat(candidate); err == nil && info.IsDir() {
					path = candidate
					break
				}
				if filepath.Dir(dir) == dir {
					break
				}
			}
		}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("bundle cache path %q: %w", path, err)
	}
	l.c.CachePath = abs
	return nil
}

// Upstream's readings of its two booleans (PROTOCOL.md §11), kept for
// compatibility; values outside the sets below are warned about, since
// they are most likely meant otherwise (RENDERER_SUPPORT_MODULES=1 is off).
var (
	supportModulesOn  = []string{"true", "TRUE", "yes", "YES"}
	supportModulesOff = []string{"false", "FALSE", "no", "NO"}
)

func parseSupportModules(l *loader, v string) error {
	l.c.SupportModules = slices.Contains(supportModulesOn, v)
	if !l.c.SupportModules && !slices.Contains(supportModulesOff, v) {
		l.warn("RENDERER_SUPPORT_MODULES=%q is taken as false, as the Node renderer does: it is on only for %s (off: %s)",
			v, strings.Join(supportModulesOn, ", "), strings.Join(supportModulesOff, ", "))
	}
	return nil
}

func parseStubTimers(l *loader, v string) error {
	l.c.StubTimers = v == "true"
	if v != "true" && v != "false" {
		l.warn("RENDERER_STUB_TIMERS=%q is taken as false (timers are real), as the Node renderer does: timers are stubbed only when it is unset, empty or exactly true; set true or false", v)
	}
	return nil
}

// parseConsoleMaxLines reads RENDERER_CONSOLE_MAX_LINES; 0 is no bound
// (jsvm's negative).
func parseConsoleMaxLines(l *loader, v string) error {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > 1<<30 {
		return errors.New("want a number of lines, 0 for no bound")
	}
	l.c.ConsoleMaxLines = n
	if n == 0 {
		l.c.ConsoleMaxLines = -1
	}
	return nil
}

// parseConsoleMaxBytes reads RENDERER_CONSOLE_MAX_BYTES; 0 is no bound
// (jsvm's negative).
func parseConsoleMaxBytes(l *loader, v string) error {
	n, err := parseBytes(v)
	if err != nil || n > 1<<40 {
		return errors.New("want a size such as 4MiB, 0 for no bound")
	}
	l.c.ConsoleMaxBytes = int64(n)
	if n == 0 {
		l.c.ConsoleMaxBytes = -1
	}
	return nil
}

// minNodeHeapLimit is the least V8 heap a node engine process gets: below
// it Node.js itself and a real bundle hardly fit.
const minNodeHeapLimit = 64 << 20

func parseNodeHeapLimit(l *loader, v string) error {
	n, err := parseBytes(v)
	if err != nil || (n != 0 && (n < minNodeHeapLimit || n > 1<<40)) {
		return errors.New("want a size such as 512MiB or 2GiB (at least 64MiB), or 0 for V8's default")
	}
	l.c.NodeHeapLimit = n
	return nil
}

func showNodeHeapLimit(c *Config) string { return showV8Size(c.NodeHeapLimit) }

// showV8Size shows a V8 size setting: 0 leaves V8's default.
func showV8Size(n uint64) string {
	if n == 0 {
		return "V8's default"
	}
	return FormatBytes(n)
}

// maxNodeSemiSpace bounds RENDERER_NODE_SEMI_SPACE: the young generation
// takes up to three semi-spaces per process.
const maxNodeSemiSpace = 1 << 30

func parseNodeSemiSpace(l *loader, v string) error {
	n, err := parseBytes(v)
	if err != nil || n > maxNodeSemiSpace || n%(1<<20) != 0 {
		return errors.New("want a size in whole MiB such as 32MiB (at most 1GiB), or 0 for V8's default")
	}
	l.c.NodeSemiSpace = n
	return nil
}

func showNodeSemiSpace(c *Config) string { return showV8Size(c.NodeSemiSpace) }

// parseLogLevel maps upstream's levels onto slog's.
func parseLogLevel(v string) (level slog.Level, silent bool, err error) {
	switch strings.ToLower(v) {
	case "fatal", "error":
		return slog.LevelError, false, nil
	case "warn":
		return slog.LevelWarn, false, nil
	case "info":
		return slog.LevelInfo, false, nil
	case "debug", "trace":
		return slog.LevelDebug, false, nil
	case "silent":
		return slog.LevelError, true, nil
	}
	return 0, false, errors.New("want one of fatal, error, warn, info, debug, trace, silent")
}

func showLogLevel(level slog.Level, silent bool) string {
	if silent {
		return "silent"
	}
	return strings.ToLower(level.String())
}
