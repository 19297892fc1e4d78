package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gorender/gorender/config"
	"github.com/gorender/gorender/server"
)

// parseFlags parses a command's flags. The flag package's own printing is
// off: an error is printed once, by main, and -h prints the usage of every
// command (run). It returns flag.ErrHelp for -h/--help and a usageError
// for anything else it does not take, stray arguments included.
func parseFlags(fs *flag.FlagSet, args []string) error {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usagef("%s: %v", fs.Name(), err)
	}
	if fs.NArg() > 0 {
		return usagef("%s: unexpected arguments %q", fs.Name(), fs.Args())
	}
	return nil
}

// portFlag defines -p and --port on fs.
func portFlag(fs *flag.FlagSet, usage string) *int {
	port := new(int)
	fs.IntVar(port, "p", 0, usage)
	fs.IntVar(port, "port", 0, usage)
	return port
}

// checkPort refuses a -p that is not a port.
func checkPort(name string, port int) error {
	if port < 0 || port > 65535 {
		return usagef("%s: -p %d is not a port (1-65535)", name, port)
	}
	return nil
}

// newLogger writes logs to stderr at the configured level, durations in
// Go's notation (1.5s, to the microsecond) rather than nanoseconds: JSON
// lines for machines, or slog's text lines when stderr is a terminal or
// RENDERER_LOG_FORMAT=text (text reports whether it is text).
func newLogger(cfg *config.Config, stderr io.Writer) (logger *slog.Logger, text bool) {
	if cfg.LogSilent {
		return slog.New(slog.DiscardHandler), false
	}
	opts := &slog.HandlerOptions{
		Level: cfg.LogLevel,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Value.Kind() == slog.KindDuration {
				d := a.Value.Duration()
				if d > time.Millisecond {
					d = d.Round(time.Microsecond)
				}
				a.Value = slog.StringValue(config.FormatDuration(d))
			}
			return a
		},
	}
	switch cfg.LogFormat {
	case config.LogText:
		text = true
	case "":
		text = isTerminal(stderr)
	}
	if text {
		return slog.New(slog.NewTextHandler(stderr, opts)), true
	}
	return slog.New(slog.NewJSONHandler(stderr, opts)), false
}

// isTerminal reports whether w is a terminal: a file that answers the
// terminal attributes request.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), ioctlReadTermios)
	return err == nil
}

// logSettings writes the settings that differ from their defaults under
// the text log's configuration line, one a line, values aligned.
func logSettings(w io.Writer, settings []slog.Attr) {
	width := 0
	for _, a := range settings {
		width = max(width, len(a.Key))
	}
	var b strings.Builder
	for _, a := range settings {
		fmt.Fprintf(&b, "    %-*s  %s\n", width, a.Key, a.Value)
	}
	io.WriteString(w, b.String())
}

func serve(ctx context.Context, args []string, environ []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	port := portFlag(fs, "listen port (overrides RENDERER_PORT)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := checkPort("serve", *port); err != nil {
		return err
	}
	cfg, err := config.Load(lookup(environ), *port)
	if err != nil {
		return err
	}
	srv, ln, err := start(cfg, environ, stderr)
	if err != nil {
		return err
	}
	return srv.Serve(ctx, ln)
}

// start applies cfg's runtime settings, logs the configuration in effect
// and its warnings once, builds the server and opens its listener.
// environ is the process environment.
func start(cfg *config.Config, environ []string, stderr io.Writer) (*server.Server, net.Listener, error) {
	logger, text := newLogger(cfg, stderr)
	cfg.ApplyRuntime()
	cfg.Environ = environ
	if text {
		// Nothing else logs yet: the block stays under its line.
		changed := cfg.Changed()
		logger.Info("configuration: the settings that differ from their defaults", "count", len(changed))
		if logger.Enabled(context.Background(), slog.LevelInfo) {
			logSettings(stderr, changed)
		}
	} else {
		logger.LogAttrs(context.Background(), slog.LevelInfo, "configuration", cfg.Effective()...)
	}
	if cfg.JSEngineChoice != "" {
		logger.Info("JavaScript engine chosen (RENDERER_JS_ENGINE=auto)", "engine", cfg.JSEngine, "why", cfg.JSEngineChoice)
	}
	for _, w := range cfg.Warnings {
		logger.Warn(w)
	}
	for _, name := range config.UnknownVariables(environ) {
		logger.Warn(name + " is not a gorender variable and has no effect; 'gorender help config' lists them")
	}
	srv, err := server.New(cfg, build(), logger)
	if err != nil {
		return nil, nil, err
	}
	ln, err := srv.Listen()
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, nil, fmt.Errorf("port %d is taken by another process; choose a free one with RENDERER_PORT or -p: %w", cfg.Port, err)
	}
	if err != nil {
		return nil, nil, err
	}
	return srv, ln, nil
}
