package nodeengine

import "github.com/gorender/gorender/jsvm/transform"

// compiledCode is a rendering request as a process compiles it: its large
// JSON literals become JSON.parse of the same text (transform.PropsAsJSON),
// which V8 parses several times faster than it compiles a literal. Answers
// quote the request as sent. A variable so that tests render both ways.
var compiledCode = func(code string) string {
	out, _ := transform.PropsAsJSON(code)
	return out
}
