package eventloop

import "context"

// Watch calls interrupt when ctx ends while JavaScript may be running.
// While loop sleeps (a stream waiting for data, a promise waiting for a
// timer) it does not: Run returns ctx's error before running anything, and
// the runtime stays usable. loop is the runtime's loop as the render starts
// (read here, never from the watching goroutine); with none yet (stub
// timers until a stream needs one) every end interrupts. The returned stop
// ends the watch and reports whether interrupt was called; it waits for a
// call in progress, so that a deadline racing with the render's end is
// never missed.
func Watch(ctx context.Context, loop *Loop, interrupt func()) (stop func() (interrupted bool)) {
	if loop != nil {
		loop.waiting.Store(false) // left set by an earlier render that ended while waiting
	}
	var called bool
	done := make(chan struct{})
	stopWatch := context.AfterFunc(ctx, func() {
		defer close(done)
		if loop != nil && loop.waiting.Load() {
			return
		}
		called = true
		interrupt()
	})
	return func() bool {
		if stopWatch() {
			return false
		}
		<-done
		return called
	}
}
