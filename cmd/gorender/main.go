// Command gorender renders React for Rails: a drop-in replacement for the
// React on Rails Pro Node renderer, speaking its protocol 2.0.0.
//
//	gorender [serve] [-p PORT]   serve with the environment's configuration
//	gorender demo [-p PORT]      serve an embedded example bundle and render it once
//	gorender healthcheck         exit 0 if /health answers 200 (for Docker HEALTHCHECK)
//	gorender version             print the version
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// version is stamped at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

func main() {
	ctx, stop := signalContext()
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "gorender:", err)
		os.Exit(1)
	}
}

// signalContext is canceled at the first SIGTERM or SIGINT; a second one
// exits at once.
func signalContext() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-signals
		cancel()
		<-signals
		fmt.Fprintln(os.Stderr, "gorender: second signal, exiting now")
		os.Exit(1)
	}()
	return ctx, func() { signal.Stop(signals); cancel() }
}

// run is the whole program, with its environment passed in so tests can
// start it in-process.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return serve(ctx, args, getenv, stderr)
	case "demo":
		return demo(ctx, args, getenv, stdout, stderr)
	case "healthcheck":
		return healthcheck(ctx, getenv)
	case "version":
		_, err := fmt.Fprintln(stdout, "gorender", version)
		return err
	case "help", "-h", "--help":
		_, err := fmt.Fprint(stdout, usage)
		return err
	default:
		return fmt.Errorf("unknown command %q\n%s", cmd, usage)
	}
}

const usage = `usage:
  gorender [serve] [-p PORT]   serve renders with the environment's configuration
  gorender demo [-p PORT]      serve an embedded example React bundle and render it once
  gorender healthcheck         exit 0 if this host's /health answers 200
  gorender version             print the version
`
