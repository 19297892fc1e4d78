package errtrack

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/honeybadger-io/honeybadger-go"
)

// honeybadgerSink sends events through Honeybadger's Go client
// (github.com/honeybadger-io/honeybadger-go, maintained: v0.9.0 of
// January 2026). The client queues up to 100 notices (past that a notice is
// dropped and logged) and sends them from one goroutine, each within
// Config.SendTimeout; both bounds but the timeout are the client's, fixed.
//
// Its frames have a file, a line and a method, no column and no in-app
// flag: a bundle's own frames have their file under "[PROJECT_ROOT]/",
// which is how Honeybadger tells an application's frames from the rest.
type honeybadgerSink struct {
	client *honeybadger.Client
}

func newHoneybadger(cfg Config, logger *slog.Logger) *honeybadgerSink {
	return &honeybadgerSink{client: honeybadger.New(honeybadger.Configuration{
		APIKey:   cfg.HoneybadgerAPIKey,
		Env:      cfg.HoneybadgerEnv,
		Endpoint: cfg.HoneybadgerEndpoint,
		Timeout:  cfg.SendTimeout,
		Sync:     false, // wins over HONEYBADGER_SYNC, which would send on the render's goroutine
		Logger:   printfLogger{logger: logger},
		// The client's events (Insights) are not used: their queue is kept
		// small rather than at its 100,000 default.
		EventsMaxQueueSize: 1,
		EventsBatchSize:    1,
	})}
}

// projectRoot marks a bundle's own frames for Honeybadger.
const projectRoot = "[PROJECT_ROOT]/"

func (s *honeybadgerSink) send(ev *event) {
	stack := make([]*honeybadger.Frame, len(ev.frames))
	for i, f := range ev.frames {
		file := f.File
		if f.InApp && ev.platform == "javascript" {
			file = projectRoot + file
		}
		stack[i] = &honeybadger.Frame{File: file, Number: strconv.Itoa(f.Line), Method: f.Function}
	}
	context := honeybadger.Context{}
	for _, k := range slices.Sorted(maps.Keys(ev.tags)) {
		context[k] = ev.tags[k]
	}
	tags := honeybadger.Tags{ev.kind, "engine_" + ev.tags["engine"]}
	_, _ = s.client.Notify(
		honeybadger.Error{Class: ev.errType, Message: ev.message, Stack: stack},
		context, tags,
		honeybadger.Fingerprint{Content: strings.Join(ev.fingerprint, "\n")},
	)
}

func (s *honeybadgerSink) flush(timeout time.Duration) {
	done := make(chan struct{})
	go func() { s.client.Flush(); close(done) }()
	select {
	case <-done:
	case <-time.After(timeout):
	}
}

// printfLogger writes the client's own lines (a notice dropped, a send
// that failed) to the log.
type printfLogger struct{ logger *slog.Logger }

func (l printfLogger) Printf(format string, args ...any) {
	l.logger.Warn("honeybadger", "line", strings.TrimSpace(fmt.Sprintf(format, args...)))
}
