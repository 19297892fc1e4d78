package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"syscall"
	"time"

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

// newLogger writes structured JSON logs to stderr at the configured level,
// durations in Go's notation (1.5s, to the microsecond) rather than
// nanoseconds.
func newLogger(cfg *config.Config, stderr io.Writer) *slog.Logger {
	if cfg.LogSilent {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{
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
	}))
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
	logger := newLogger(cfg, stderr)
	cfg.ApplyRuntime()
	cfg.Environ = environ
	logger.LogAttrs(context.Background(), slog.LevelInfo, "configuration", cfg.Effective()...)
	if cfg.JSEngineChoice != "" {
		logger.Info("JavaScript engine chosen (RENDERER_JS_ENGINE=auto)", "engine", cfg.JSEngine, "why", cfg.JSEngineChoice)
	}
	for _, w := range cfg.Warnings {
		logger.Warn(w)
	}
	for _, name := range config.UnknownVariables(environ) {
		logger.Warn(name + " is not a gorender variable and has no effect; 'gorender help config' lists them")
	}
	srv, err := server.New(cfg, version, logger)
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
