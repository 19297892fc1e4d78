package errtrack

import (
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Frame is one frame of a JavaScript stack, as the error trackers show it.
type Frame struct {
	Function string
	File     string
	Line     int // 1-based; 0 unknown
	Column   int // 1-based; 0 unknown
	// InApp is true for the bundle's own sources, false for the render's
	// request, the environment gorender runs bundles in, the node engine's
	// executor, Node's internals, native code and node_modules.
	InApp bool
}

// maxFrames bounds the frames an event carries, innermost first: a deep
// recursion's stack is thousands of frames of the same few.
const maxFrames = 64

// location is a frame's position: file:line[:column], with goja's
// program counter "(n)" after it.
var location = regexp.MustCompile(`^(.*?):(\d+)(?::(\d+))?(?:\(\d+\))?$`)

// ParseStack reads the frames of a stack's text, innermost first, as the
// three engines print them after jsvm/sourcemap mapped them:
//
//	goja     "\tat fn (src/a.js:8:9)", "\tat renderingRequest:1:19(3)", "\tat fn (native)"
//	quickjs  "    at fn (src/a.js:8:13)", "    at <eval> (renderingRequest:1:5)", "    at gorender-quickjs.js:122:18"
//	node     "    at Object.fn (src/a.js:8:12)", "    at async Promise.all (index 0)", "    at new Promise (<anonymous>)"
//
// Lines that are not frames (the error's header, a message's own lines)
// are skipped. It is the one place stacks are read as frames.
func ParseStack(stack string) []Frame {
	var frames []Frame
	for line := range strings.Lines(stack) {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "at ")
		if !ok {
			continue
		}
		if len(frames) == maxFrames {
			break
		}
		frames = append(frames, parseFrame(rest))
	}
	return frames
}

// parseFrame reads a frame after its "at ": "function (location)" or a
// bare location.
func parseFrame(s string) Frame {
	var f Frame
	loc := s
	if strings.HasSuffix(s, ")") {
		if i := strings.Index(s, " ("); i >= 0 {
			f.Function = s[:i]
			loc = s[i+2 : len(s)-1]
			// V8's eval frames: "eval at outer (file:1:2), <anonymous>:1:1"
			if j := strings.LastIndex(loc, ", "); j >= 0 && strings.HasPrefix(loc, "eval at ") {
				loc = loc[j+2:]
			}
		}
	}
	f.Function = strings.TrimPrefix(strings.TrimPrefix(f.Function, "async "), "new ")
	if m := location.FindStringSubmatch(loc); m != nil {
		f.File = m[1]
		f.Line, _ = strconv.Atoi(m[2])
		f.Column, _ = strconv.Atoi(m[3])
	} else {
		f.File = loc // native, <anonymous>, index 0
	}
	f.InApp = inApp(f.File, f.Line)
	return f
}

// inApp tells the bundle's sources (mapped, or the bundle itself, <id>.js)
// from what runs them.
func inApp(file string, line int) bool {
	switch {
	case line == 0, file == "renderingRequest", file == "<anonymous>", file == "native":
		return false
	case strings.HasPrefix(file, "gorender-") && strings.HasSuffix(file, ".js"): // the environment
		return false
	case strings.HasPrefix(file, "node:"), strings.HasPrefix(file, "/"): // Node's internals, the executor
		return false
	case strings.Contains(file, "node_modules/"):
		return false
	}
	return true
}

// errorType is the error's class from its stack's header ("TypeError:
// ...", the first such line before the frames: a load error's text has
// gorender's line first), else "Error".
func errorType(stack string) string {
	for line := range strings.Lines(stack) {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "at ") {
			break
		}
		if m := errorHeader.FindStringSubmatch(line); m != nil {
			return m[1]
		}
	}
	return "Error"
}

var errorHeader = regexp.MustCompile(`^([A-Z][A-Za-z0-9_$]*(?:Error|Exception))(?::|$)`)

// maxMessage bounds, in characters, the message an event carries.
const maxMessage = 1024

// quoted and longNumber are what messageShape takes out of a message: the
// literal values a message quotes (a missing key, a props value thrown
// with JSON.stringify) and long numbers (ids, amounts).
var (
	quoted     = regexp.MustCompile("'[^'\\n]*'|\"[^\"\\n]*\"|`[^`]*`")
	longNumber = regexp.MustCompile(`\d{4,}`)
)

// messageShape is an exception's message as it leaves gorender: its
// quoted strings and numbers of four digits or more replaced by
// placeholders, at most maxMessage characters. A thrown message is the
// bundle's text and may carry values from the render's props; its shape
// is also what groups errors whose values differ.
func messageShape(message string) string {
	s := quoted.ReplaceAllStringFunc(message, func(q string) string {
		return q[:1] + "…" + q[:1]
	})
	s = longNumber.ReplaceAllString(s, "<n>")
	if utf8.RuneCountInString(s) > maxMessage {
		s = string([]rune(s)[:maxMessage]) + "…"
	}
	return s
}

// fingerprint groups an error by what it is, not where it ran: its kind,
// type, message shape and in-app frames (file, line, column, function);
// a frame in a bundle without a source map names the bundle, <id>.js, so
// the bundles' ids become one placeholder and the same error from two
// bundles of the same source groups together. Without in-app frames, all
// frames' files and functions.
func fingerprint(kind, errType, shape string, frames []Frame, bundles []string) []string {
	fp := []string{"gorender", kind, errType, shape}
	anyInApp := false
	for _, f := range frames {
		anyInApp = anyInApp || f.InApp
	}
	for _, f := range frames {
		file := f.File
		for _, id := range bundles {
			if file == id+".js" {
				file = "<bundle>.js"
			}
		}
		switch {
		case anyInApp && f.InApp:
			fp = append(fp, file+":"+strconv.Itoa(f.Line)+":"+strconv.Itoa(f.Column)+" "+f.Function)
		case !anyInApp:
			fp = append(fp, file+" "+f.Function)
		}
	}
	return fp
}
