package nodeengine

import "github.com/gorender/gorender/jsvm/transform"

// compiledCode is a rendering request as a process compiles it: as sent.
// transform.PropsAsJSON (large JSON literals as JSON.parse of the same
// text, which V8 parses faster than it compiles a literal) is not applied
// on this engine yet: its gain on the large page is not established (the
// Go scan costs about as much as V8 saves, docs/performance.md "Props as JSON (quickjs engine; measured, not yet on for node)"), and the
// executor would set renderingRequest to the rewritten text. The tests and
// benchmarks render both ways through this variable (propsAsJSON).
var compiledCode = func(code string) string { return code }

// propsAsJSON is the rewrite the engine would apply.
func propsAsJSON(code string) string {
	out, _ := transform.PropsAsJSON(code)
	return out
}
