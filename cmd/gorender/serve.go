package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"

	"github.com/gorender/gorender/server"
)

// parsePort reads the -p flag of serve and demo.
func parsePort(name string, args []string, stderr io.Writer) (int, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	port := fs.Int("p", 0, "listen port (overrides RENDERER_PORT)")
	if err := fs.Parse(args); err != nil {
		return 0, err
	}
	if fs.NArg() > 0 {
		return 0, fmt.Errorf("%s: unexpected arguments %v", name, fs.Args())
	}
	if *port < 0 || *port > 65535 {
		return 0, fmt.Errorf("%s: -p %d is not a port", name, *port)
	}
	return *port, nil
}

// newLogger writes structured JSON logs to stderr at the configured level.
func newLogger(cfg *server.Config, stderr io.Writer) *slog.Logger {
	if cfg.LogSilent {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
}

func serve(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	port, err := parsePort("serve", args, stderr)
	if err != nil {
		return err
	}
	cfg, err := server.LoadConfig(getenv, port)
	if err != nil {
		return err
	}
	srv, ln, err := start(cfg, stderr)
	if err != nil {
		return err
	}
	return srv.Serve(ctx, ln)
}

// start builds the server from cfg and opens its listener.
func start(cfg *server.Config, stderr io.Writer) (*server.Server, net.Listener, error) {
	logger := newLogger(cfg, stderr)
	cfg.ApplyRuntime()
	logStartupNotices(cfg, logger)
	srv, err := server.New(cfg, version, logger)
	if err != nil {
		return nil, nil, err
	}
	ln, err := srv.Listen()
	if err != nil {
		return nil, nil, err
	}
	return srv, ln, nil
}

func logStartupNotices(cfg *server.Config, logger *slog.Logger) {
	for _, w := range cfg.Warnings {
		logger.Warn(w)
	}
	if cfg.Password == "" {
		logger.Warn("no RENDERER_PASSWORD: every request is accepted (allowed because RAILS_ENV/NODE_ENV say development or test)")
	}
}
