package worker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gorender/gorender/jsvm"
)

// streamingSink lifts the render deadline once the answer starts
// streaming: a healthy stream may run as long as it keeps producing. From
// then on it is the stream's idle watchdog: a stream that shows no
// activity (a chunk written, an update taken by its render) for its idle window
// (RENDERER_STREAM_IDLE_TIMEOUT) and streamIdleGrace more is stopped like
// a render at its deadline: its runtime interrupted, or quarantined if it
// does not stop. The engines end a stream that waits for nothing at the
// idle window themselves, keeping the runtime; their timers run between
// JavaScript callbacks, so JavaScript that never yields (a loop in a
// stream's pull or a timer's callback) is this watchdog's.
type streamingSink struct {
	jsvm.Sink
	deadline *time.Timer
	idle     time.Duration // 0: no idle bound
	stop     context.CancelCauseFunc

	mu       sync.Mutex
	watchdog *time.Timer // nil until the stream starts
	writing  bool        // a write is in progress: a blocked write is the write timeout's
	ended    bool
}

// streamIdleGrace is how much longer than its idle window a stream may show
// no activity before the watchdog stops it: the engine's own idle timer,
// which keeps the runtime, comes first when it can.
const streamIdleGrace = interruptGrace

// streamStuckError is the cause of a stream the idle watchdog stopped.
type streamStuckError struct{ Idle time.Duration }

func (e *streamStuckError) Error() string {
	return fmt.Sprintf("the stream showed no activity for %s (RENDERER_STREAM_IDLE_TIMEOUT) and its JavaScript did not yield", e.Idle)
}

func (s *streamingSink) Start() error {
	if !s.deadline.Stop() {
		return errors.New("the render deadline passed as the stream started")
	}
	err := s.Sink.Start()
	if s.idle > 0 {
		s.mu.Lock()
		if !s.ended {
			s.watchdog = time.AfterFunc(s.idle+streamIdleGrace, func() { s.stop(&streamStuckError{Idle: s.idle}) })
		}
		s.mu.Unlock()
	}
	return err
}

func (s *streamingSink) Write(p []byte) error {
	s.setWriting(true)
	defer s.setWriting(false)
	return s.Sink.Write(p)
}

// setWriting pauses the watchdog while a write is in progress and restarts
// its window after it.
func (s *streamingSink) setWriting(writing bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writing = writing
	s.rearmLocked()
}

// touch restarts the idle window (an update arrived); any goroutine.
func (s *streamingSink) touch() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rearmLocked()
}

func (s *streamingSink) rearmLocked() {
	if s.watchdog == nil || s.ended {
		return
	}
	s.watchdog.Stop()
	if !s.writing {
		s.watchdog.Reset(s.idle + streamIdleGrace)
	}
}

// end stops the watchdog for good: the render returned.
func (s *streamingSink) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ended = true
	if s.watchdog != nil {
		s.watchdog.Stop()
	}
}
