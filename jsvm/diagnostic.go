package jsvm

import (
	"strings"
	"unicode/utf8"
)

// maxDebugSnippetLength bounds how much of a rendering request an error
// answer echoes (PROTOCOL.md §5): requests can be many megabytes.
const maxDebugSnippetLength = 1000

const truncationFiller = "... TRUNCATED ..."

// truncateMiddle keeps the head and tail of s, max runes in all, joined by
// the filler.
func truncateMiddle(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	keep := max - utf8.RuneCountInString(truncationFiller)
	head := keep / 2
	tail := keep - head
	runes := []rune(s)
	return string(runes[:head]) + truncationFiller + string(runes[len(runes)-tail:])
}

// jsErrorText is the body of a 400 for a render that threw: the request
// (truncated), the exception message and its stack.
func jsErrorText(code, message, stack string) string {
	var b strings.Builder
	b.WriteString("JS code for rendering request was:\n")
	b.WriteString(truncateMiddle(code, maxDebugSnippetLength))
	b.WriteString("\n\nEXCEPTION MESSAGE:\n")
	b.WriteString(message)
	b.WriteString("\n\nSTACK:\n")
	b.WriteString(stack)
	b.WriteString("\n")
	return b.String()
}

// nilResultText is the body of a 400 for a falsy completion value.
func nilResultText(code string) string {
	return "INVALID NIL or NULL result for rendering\n\nJS code for rendering request was:\n" +
		truncateMiddle(code, maxDebugSnippetLength) + "\n"
}

// Texts of render failures every engine answers the same way.
const (
	neverSettledStubTimers = "the rendering request returned a promise that never settled: timers are stubbed (RENDERER_STUB_TIMERS), so nothing can resolve it"
	neverSettledIdle       = "the rendering request returned a promise that never settled: no timer, immediate or other pending work was left that could resolve it"
	streamWithoutSinkText  = "The rendering request returned a stream where a buffered answer was expected.\n"
	streamStalledText      = "Stream stalled: it neither ended nor had any pending work that could continue it.\n"
)
