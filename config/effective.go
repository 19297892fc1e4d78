// The configuration in effect, for the start-up log.

package config

import (
	"log/slog"
	"slices"
	"strings"
)

// Effective is the configuration in effect, one attribute per variable
// named after it, for the start-up log: durations and sizes in human
// units, the password only as set or unset, and only the settings that
// apply to the configured engine.
func (c *Config) Effective() []slog.Attr {
	attrs := make([]slog.Attr, 0, len(settings))
	for _, s := range settings {
		if s.Engine != "" && s.Engine != c.JSEngine {
			continue
		}
		if v := s.Value.show(c); v != "" {
			attrs = append(attrs, slog.String(s.Name, v))
		}
	}
	return attrs
}

// Changed is the part of Effective that differs from the defaults on this
// machine, for the readable start-up log. A computed default (one that
// follows other rows, like GRACEFUL_WORKER_RESTART_TIMEOUT the render
// timeout) is a change only when its variable is set in c.Environ.
func (c *Config) Changed() []slog.Attr {
	set := map[string]bool{}
	for _, kv := range c.Environ {
		if name, v, _ := strings.Cut(kv, "="); v != "" {
			set[name] = true
		}
	}
	// The defaults are the rows read with nothing set, on the same engine
	// (no second choice of engine) and the same runtime settings.
	d := &loader{c: &Config{MemoryLimit: c.MemoryLimit, Procs: c.Procs}, getenv: func(string) string { return "" }, engine: c.JSEngine}
	for _, s := range settings {
		_ = s.Value.parse(d, s.Default) // a default parses
	}
	var changed []slog.Attr
	for _, a := range c.Effective() {
		s := settings[slices.IndexFunc(settings, func(s setting) bool { return s.Name == a.Key })]
		if (s.Default != "" || set[s.Name]) && s.Value.show(d.c) != a.Value.String() {
			changed = append(changed, a)
		}
	}
	return changed
}
