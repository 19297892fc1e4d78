package jsvm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// ErrorKind classifies a failed render for the answer and for metrics.
type ErrorKind int

const (
	// KindJS is a thrown error, a rejected promise or a syntax error.
	KindJS ErrorKind = iota
	// KindNilResult is a falsy completion value.
	KindNilResult
	// KindTimeout is a render interrupted at its deadline, or stopped at
	// an engine's limit (memory): its runtime was replaced.
	KindTimeout
	// KindUnsupported is a result gorender cannot answer (a stream without
	// a sink).
	KindUnsupported
	// KindCanceled is a render stopped because its request went away.
	KindCanceled
)

// String returns the kind's metric label.
func (k ErrorKind) String() string {
	switch k {
	case KindJS:
		return "js_error"
	case KindNilResult:
		return "nil_result"
	case KindTimeout:
		return "timeout"
	case KindUnsupported:
		return "unsupported"
	case KindCanceled:
		return "canceled"
	}
	return "unknown"
}

// RenderError is a render that failed; Text is the answer's body. Every
// engine answers the same failure with the same text: build it with the
// functions and constants below.
type RenderError struct {
	Kind ErrorKind
	Text string
	// Message and Stack are a thrown error's exception message and stack
	// as Text shows them (JSError; worker maps Stack with Text), for the
	// error trackers; "" for other failures.
	Message, Stack string
	// Panic is the Go stack (runtime.Callers) of a recovered panic this
	// error stands for; nil otherwise.
	Panic []uintptr
}

func (e *RenderError) Error() string { return e.Text }

// BundleLoadError is a bundle of a render's set that failed to load where
// the render was to run, after it had loaded elsewhere: an engine that
// evaluates a bundle once per process (node) loads it again for a render
// in a process that lacks it, and that load may fail although the first
// succeeded (a file the bundle requires at load changed meanwhile). It is
// answered as any bundle that fails to load (worker.LoadError: 400,
// PROTOCOL.md §5), not as an internal error.
type BundleLoadError struct {
	ID  string
	Err error
}

func (e *BundleLoadError) Error() string { return e.Err.Error() }
func (e *BundleLoadError) Unwrap() error { return e.Err }

// ErrInterrupted is the reason given to an engine's interrupt when a
// render's context ends.
var ErrInterrupted = errors.New("render interrupted")

// DeadlineError is the cause a caller gives when it cancels a render's
// context at its deadline (context.WithCancelCause): the render is then
// answered as timed out after Limit.
type DeadlineError struct{ Limit time.Duration }

func (e *DeadlineError) Error() string { return fmt.Sprintf("render deadline of %s passed", e.Limit) }

// TimeoutText is the answer's body for a render stopped at its deadline.
func TimeoutText(limit time.Duration) string {
	return fmt.Sprintf("Render timed out after %s: the rendering request was interrupted and its JavaScript runtime replaced.", limit)
}

// Texts of render failures every engine answers the same way.
const (
	// CanceledText answers a render whose request went away.
	CanceledText = "Render canceled: the request went away."
	// StreamCanceledText answers a stream whose client went away.
	StreamCanceledText = "Stream canceled: the client went away."
	// StreamWithoutSinkText answers a stream result where the caller gave
	// no Sink.
	StreamWithoutSinkText = "The rendering request returned a stream where a buffered answer was expected.\n"
	// StreamStalledText answers a stream that can never continue.
	StreamStalledText = "Stream stalled: it neither ended nor had any pending work that could continue it.\n"
	// NeverSettledStubTimers and NeverSettledIdle are the exception
	// messages of a promise that can never settle.
	NeverSettledStubTimers = "the rendering request returned a promise that never settled: timers are stubbed (RENDERER_STUB_TIMERS), so nothing can resolve it"
	NeverSettledIdle       = "the rendering request returned a promise that never settled: no timer, immediate or other pending work was left that could resolve it"
)

// StreamIdleText answers a stream that produced nothing for idle.
func StreamIdleText(idle time.Duration) string {
	return fmt.Sprintf("Stream idle: nothing was produced for %s.", idle)
}

// InterruptedError is the error of a render stopped because ctx ended: a
// timeout when its deadline passed (the limit from ctx's *DeadlineError
// cause, else from ctx's deadline and started), else a cancellation.
func InterruptedError(ctx context.Context, started time.Time) *RenderError {
	var deadline *DeadlineError
	if errors.As(context.Cause(ctx), &deadline) {
		return &RenderError{Kind: KindTimeout, Text: TimeoutText(deadline.Limit)}
	}
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &RenderError{Kind: KindCanceled, Text: CanceledText}
	}
	limit := time.Since(started)
	if d, ok := ctx.Deadline(); ok {
		limit = d.Sub(started)
	}
	// Rounded up: the deadline was set a moment before the render started.
	limit = (limit + time.Millisecond - 1).Truncate(time.Millisecond)
	return &RenderError{Kind: KindTimeout, Text: TimeoutText(limit)}
}

// MaxDebugSnippetLength bounds how much of a rendering request an error
// answer echoes (PROTOCOL.md §5): requests can be many megabytes.
const MaxDebugSnippetLength = 1000

// MaxRunOnOtherDepth bounds how deep runOnOtherBundle calls nest in one
// render (a bundle calling one that calls back, and so on): the call past
// it throws a RangeError (RunOnOtherTooDeepText). Node's stack ends such a
// recursion at about 250 levels anyway, and each level costs goja and
// quickjs more than the one below it (an error crossing a level takes the
// stack of the runtime it enters): 100 levels take them a fraction of a
// second, 1,000 took them 9-30 s.
const MaxRunOnOtherDepth = 100

// MaxCrossingStreams bounds the streams of other bundles a bundle's render
// receives through runOnOtherBundle and has not read to their end: each
// holds up to 64 KiB between the runtimes (inproc crossQueueMax), on
// quickjs outside its memory limit, so a render must not open them
// without bound. The call past it throws CrossingStreamsText.
const MaxCrossingStreams = 1000

// CrossingStreamsText is the error's message past MaxCrossingStreams.
var CrossingStreamsText = fmt.Sprintf("runOnOtherBundle: a bundle's render receives at most %d streams at once", MaxCrossingStreams)

// RunOnOtherTooDeepText is the RangeError's message past MaxRunOnOtherDepth.
var RunOnOtherTooDeepText = fmt.Sprintf("Maximum call stack size exceeded: runOnOtherBundle calls nest at most %d deep", MaxRunOnOtherDepth)

// runOnOtherPrefix begins the message of an error that crossed
// runOnOtherBundle.
const runOnOtherPrefix = "runOnOtherBundle: "

// RunOnOtherMessage is the message of the error a runOnOtherBundle call
// throws when the code it ran in the other bundle threw message: prefixed
// once, however many calls it crossed, so that a deep recursion's message
// stays the size of the deepest one's.
func RunOnOtherMessage(message string) string {
	if strings.HasPrefix(message, runOnOtherPrefix) {
		return message
	}
	return runOnOtherPrefix + message
}

// MaxErrorTextLength bounds, in characters, each of the exception message
// and the stack an error answer echoes: thrown text is the bundle's (and
// may be the rendering request's props), a 50 MB message made a 100 MB
// answer. Like the request's snippet, the middle is cut out. The in-process
// engines cut the text before it crosses into Go (env.js errorParts,
// EnvOptions' errorTextMax).
const MaxErrorTextLength = 64 << 10

const truncationFiller = "... TRUNCATED ..."

// TruncateMiddle keeps the head and tail of s, max runes in all, joined by
// the filler. It copies only what it keeps: s may be many megabytes.
func TruncateMiddle(s string, max int) string {
	if len(s) <= max || utf8.RuneCountInString(s) <= max {
		return s
	}
	keep := max - utf8.RuneCountInString(truncationFiller)
	end := 0 // after the head's keep/2 runes
	for range keep / 2 {
		_, n := utf8.DecodeRuneInString(s[end:])
		end += n
	}
	start := len(s) // before the tail's other runes
	for range keep - keep/2 {
		_, n := utf8.DecodeLastRuneInString(s[:start])
		start -= n
	}
	return s[:end] + truncationFiller + s[start:]
}

// JSErrorText is the body of a 400 for a render that threw (PROTOCOL.md §5):
// the request (truncated), the exception message and its stack (each at
// most MaxErrorTextLength, truncated the same way).
func JSErrorText(code, message, stack string) string {
	var b strings.Builder
	b.WriteString("JS code for rendering request was:\n")
	b.WriteString(TruncateMiddle(code, MaxDebugSnippetLength))
	b.WriteString("\n\nEXCEPTION MESSAGE:\n")
	b.WriteString(TruncateMiddle(message, MaxErrorTextLength))
	b.WriteString("\n\nSTACK:\n")
	b.WriteString(TruncateMiddle(stack, MaxErrorTextLength))
	b.WriteString("\n")
	return b.String()
}

// JSError is the error of a render that threw: its answer is
// JSErrorText's.
func JSError(code, message, stack string) *RenderError {
	return &RenderError{Kind: KindJS, Text: JSErrorText(code, message, stack),
		Message: TruncateMiddle(message, MaxErrorTextLength), Stack: TruncateMiddle(stack, MaxErrorTextLength)}
}

// ResultTooLargeText is the body of a 400 for a result longer than the
// bound limit (RENDERER_MAX_RESULT_SIZE).
func ResultTooLargeText(code string, size int, limit int64) string {
	return fmt.Sprintf("The rendering request's result is %d bytes, more than the %d bytes of RENDERER_MAX_RESULT_SIZE: it was not sent.\n\nJS code for rendering request was:\n%s\n",
		size, limit, TruncateMiddle(code, MaxDebugSnippetLength))
}

// NilResultText is the body of a 400 for a falsy completion value.
func NilResultText(code string) string {
	return "INVALID NIL or NULL result for rendering\n\nJS code for rendering request was:\n" +
		TruncateMiddle(code, MaxDebugSnippetLength) + "\n"
}
