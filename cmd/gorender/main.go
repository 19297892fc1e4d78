// Command gorender renders React for Rails: a drop-in replacement for the
// React on Rails Pro Node renderer, speaking its protocol 2.0.0. `gorender
// help` lists its commands and flags (usage below); its configuration is
// environment variables (package server's settings, `gorender help config`).
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/gorender/gorender/config"
	"github.com/gorender/gorender/server"
)

// The version, the commit and its date, stamped at build time by
// scripts/release.sh and the Dockerfile with
// -ldflags "-X main.version=... -X main.commit=... -X main.date=...".
var (
	version = "0.1.0-dev"
	commit  string
	date    string
)

// build is what `gorender version` and /info report: the stamped commit and
// date, else those Go recorded from the git checkout it built (a plain `go
// build`; "-dirty" when the tree had changes), else "unknown".
func build() server.Build {
	b := server.Build{Version: version, Commit: commit, Date: date}
	if info, ok := debug.ReadBuildInfo(); ok {
		vcs := map[string]string{}
		for _, s := range info.Settings {
			vcs[s.Key] = s.Value
		}
		if b.Commit == "" && vcs["vcs.revision"] != "" {
			b.Commit = vcs["vcs.revision"]
			if vcs["vcs.modified"] == "true" {
				b.Commit += "-dirty"
			}
		}
		b.Date = cmp.Or(b.Date, vcs["vcs.time"])
	}
	b.Commit = cmp.Or(b.Commit, "unknown")
	b.Date = cmp.Or(b.Date, "unknown")
	return b
}

func main() {
	ctx, stop := signalContext()
	defer stop()
	err := run(ctx, os.Args[1:], os.Environ(), os.Stdout, os.Stderr)
	if err == nil {
		return
	}
	fmt.Fprintln(os.Stderr, "gorender:", err)
	var usage usageError
	if errors.As(err, &usage) {
		fmt.Fprintln(os.Stderr, "Run 'gorender help' for usage.")
		os.Exit(2)
	}
	os.Exit(1)
}

// usageError is a command line gorender does not understand (exit 2);
// every other error is exit 1.
type usageError struct{ error }

func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
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

// run is the whole program, with its environment ("NAME=value" strings)
// passed in. A request for help (-h, --help, help) writes the usage to
// stdout and returns nil.
func run(ctx context.Context, args []string, environ []string, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 0 {
		switch args[0] {
		case "-h", "-help", "--help":
			args[0] = "help"
		case "-v", "-version", "--version":
			args[0] = "version"
		}
		if args[0] != "" && args[0][0] != '-' {
			cmd, args = args[0], args[1:]
		}
	}
	var err error
	switch cmd {
	case "serve":
		err = serve(ctx, args, environ, stderr)
	case "demo":
		err = demo(ctx, args, environ, stdout, stderr)
	case "healthcheck":
		err = healthcheck(ctx, args, lookup(environ), stdout)
	case "version":
		if len(args) > 0 {
			return usagef("version takes no arguments, got %q", args)
		}
		b := build()
		_, err = fmt.Fprintf(stdout, "gorender %s (commit %s, built %s)\n", b.Version, b.Commit, b.Date)
	case "help":
		return help(args, stdout)
	default:
		return usagef("unknown command %q", cmd)
	}
	if errors.Is(err, flag.ErrHelp) {
		_, err = fmt.Fprint(stdout, usage)
	}
	return err
}

// lookup is getenv over environ: the value of a name, "" when unset (the
// last one wins, as in os.Getenv).
func lookup(environ []string) func(string) string {
	vars := make(map[string]string, len(environ))
	for _, kv := range environ {
		if name, value, ok := strings.Cut(kv, "="); ok {
			vars[name] = value
		}
	}
	return func(name string) string { return vars[name] }
}

// help writes the usage, or with "config" every configuration variable.
func help(args []string, stdout io.Writer) error {
	switch {
	case len(args) == 0 || args[0] == "serve" || args[0] == "demo" || args[0] == "healthcheck":
		_, err := fmt.Fprint(stdout, usage)
		return err
	case len(args) == 1 && args[0] == "config":
		return writeConfigHelp(stdout)
	}
	return usagef("help: unknown topic %q (try 'gorender help' or 'gorender help config')", strings.Join(args, " "))
}

const usage = `gorender renders React for Rails: a drop-in replacement for the React on
Rails Pro Node renderer.

Usage:
  gorender [serve] [-p PORT]           serve renders (the default command)
  gorender demo [-p PORT] [--json]     serve an embedded example React bundle,
                                       render it once and print the HTML
  gorender healthcheck [flags]         exit 0 if gorender's /health answers 200,
                                       else print why and exit 1
  gorender version                     print the version, commit and build date
                                       (also -v, --version)
  gorender help [config]               this text (also -h, --help); with
                                       config, every environment variable

Flags of serve and demo:
  -p, --port PORT       listen port (overrides RENDERER_PORT; default 3800)
  --json                demo only: print the render's JSON answer, not its HTML

Flags of healthcheck:
  -p, --port PORT       port to check (default RENDERER_PORT, else 3800)
  --host HOST           host to check (default RENDERER_HOST; 0.0.0.0 and ::
                        are checked on 127.0.0.1)
  --url URL             check this URL instead of host and port; a URL without
                        a path gets /health (e.g. http://gorender:3800/ready)
  --timeout DURATION    give up after this long (default 5s)

Configuration:
  Environment variables, read once at start: RENDERER_PASSWORD, RENDERER_HOST,
  RENDERER_PORT, RENDERER_WORKERS_COUNT, RENDERER_JS_ENGINE, ...
  'gorender help config' lists each with its default and meaning, as does
  docs/configuration.md. A bad value stops the start with a message
  naming it. Logs are JSON lines on stderr; the configuration in effect is
  logged once at start.
`

// writeConfigHelp lists every configuration variable with its default and
// what it does: the table of docs/configuration.md as plain text.
func writeConfigHelp(w io.Writer) error {
	var b strings.Builder
	b.WriteString("gorender reads these environment variables once at start\n" +
		"(docs/configuration.md). Durations take Go syntax (500ms, 2s, 1m) or a bare\n" +
		"number of seconds; upstream's own variables keep their units.\n")
	for _, v := range config.Variables() {
		b.WriteString("\n" + v.Name + "\n")
		b.WriteString(wrap("default: "+plainText(v.Default), "    ", 79))
		b.WriteString(wrap(plainText(v.Doc), "    ", 79))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// markdownLink is [text](target).
var markdownLink = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)

// plainText drops Markdown's code spans and link targets.
func plainText(md string) string {
	return strings.ReplaceAll(markdownLink.ReplaceAllString(md, "$1"), "`", "")
}

// wrap breaks text into lines of at most width columns, each indented.
func wrap(text, indent string, width int) string {
	var b strings.Builder
	line := indent
	for _, word := range strings.Fields(text) {
		if line != indent && len(line)+1+len(word) > width {
			b.WriteString(line + "\n")
			line = indent
		}
		if line != indent {
			line += " "
		}
		line += word
	}
	b.WriteString(line + "\n")
	return b.String()
}
