package transform

// PropsAsJSON: large object and array literals of a rendering request,
// compiled as JSON.parse of the same text.
//
// The gem embeds props and the Rails context in each rendering request as
// literals (`var usedProps = typeof props === 'undefined' ? {...} : props;`),
// often hundreds of KB. V8 parses JSON.parse's argument several times faster
// than it compiles the same text as an object literal, and real traffic sends
// distinct requests, so V8's cache of compiled scripts never saves that
// compile. The rewrite turns each literal that is valid JSON into
//
//	JSON.parse('<the same text, escaped as a JS string literal>')
//
// where the program's meaning is the same. The scanner is a tokenizer, not a
// parser: it understands strings, comments, template literals (with `${}`
// nesting) and regular expressions, and gives up (rewrites nothing) whenever
// it cannot tell a regex from a division (after `)`, `}`, `++`, or a word
// such as `of` that may be a name), meets something it does not model
// (non-ASCII or escaped names, HTML-like comments, a hashbang), or finds the
// request's brackets unbalanced. One pass, linear in the
// request's size: a literal that is not valid JSON is validated once, and no
// opening bracket before the point where that validation failed is validated
// again. No recursion; nesting lives in slices.
//
// A literal is rewritten only when all of these hold:
//   - its text is valid JSON (RFC 8259), valid UTF-8, at least
//     PropsJSONMinBytes long, and has no key "__proto__" (in a literal that
//     key sets the prototype; JSON.parse makes it an own property);
//   - it sits alone on one of the lines the gem writes (shapeOK): `var
//     NAME = L;`, `NAME = L;` (redux store props) or `var NAME = typeof
//     PARAM === 'undefined' ? L : PARAM;`, starting a statement in a block
//     or function body. There nothing after the literal can throw or be
//     quoted in a message (the rewrite is longer, so a column after it on
//     its line would move, and V8 quotes source text: `{(intermediate
//     value)} is not iterable`), the line cannot be a syntax error (whose
//     stack quotes the line), and the literal is an expression, never a
//     block or a pattern. Line breaks inside the literal become line
//     continuations in the string, so every later line keeps its number;
//   - the request names `JSON` only to call JSON.stringify or JSON.parse
//     (a local JSON would shadow the global one) and has no `with`; a
//     `var` line also needs a request with no let, const or class, which
//     could make it a redeclaration error.
//
// Everything else about the value is the same by the specification of
// JSON.parse, which evaluates the text as an ECMAScript literal: duplicate
// keys (the last wins, at the first one's place), numbers (1e400 is
// Infinity, -0 is -0, big integers round the same way), integer-like keys
// (listed first, ascending), lone surrogates in \u escapes, U+2028/2029.
// propsjson_test.go checks each of these, and the rules above, in Node.
//
// What stays observable: the text of the program the engine compiles. The
// source text of a function that encloses the literal
// (Function.prototype.toString, reached through `caller`) shows the
// rewrite; a bundle that replaces the global JSON.parse is called for the
// props. (`renderingRequest` stays the text as sent: the in-process engines
// set it from the request, and a host that compiles elsewhere rebuilds it
// from AppendPropsAsJSON's offsets.)
//
// The string is written in ASCII (appendQuoted): a backslash before each
// backslash, quote and line break, each non-ASCII character but U+2028 and
// U+2029 as \uXXXX. The scan is linear and allocates per literal nothing
// but what it keeps; string bytes are read eight at a time (strStops).

import (
	"slices"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// PropsJSONMinBytes is the smallest literal rewritten: V8's guidance is that
// JSON.parse pays from about 10 KB, and below it the scan's own cost is not
// worth saving (docs/performance.md).
const PropsJSONMinBytes = 10 << 10

// maxScanDepth bounds the bracket nesting the scanner follows; deeper
// requests are left as they are.
const maxScanDepth = 1 << 12

// PropsAsJSON returns code with each large JSON literal rewritten (see the
// comment above), and how many it rewrote. With nothing to rewrite it
// returns code itself.
func PropsAsJSON(code string) (string, int) {
	return PropsAsJSONAbove(code, PropsJSONMinBytes)
}

// PropsAsJSONAbove is PropsAsJSON with the threshold min (tests rewrite every
// literal with 1).
func PropsAsJSONAbove(code string, min int) (string, int) {
	spans := propsJSONSpans(code, min)
	if len(spans) == 0 {
		return code, 0
	}
	out, _ := appendRewrite(nil, code, spans, false)
	// out is never written again: the string shares it.
	return unsafe.String(unsafe.SliceData(out), len(out)), len(spans)
}

// AppendPropsAsJSON is PropsAsJSON for a host that sends the rewritten text
// on and must also give the text as sent (the node engine's executor, as
// renderingRequest) without sending it twice. It appends the rewritten text
// to dst (a buffer the caller reuses) and returns where each JSON.parse('…')
// call stands in it, as start and end offsets in UTF-16 code units (a
// JavaScript string's indexes), two a call. The text as sent is the
// rewritten one with each call replaced by its string's content with the
// backslash before each escaped character dropped (the string has no other
// escape). When nothing is rewritten, it returns dst and no calls: the
// text is code.
func AppendPropsAsJSON(dst []byte, code string) (out []byte, calls []int) {
	return AppendPropsAsJSONAbove(dst, code, PropsJSONMinBytes)
}

// AppendPropsAsJSONAbove is AppendPropsAsJSON with the threshold min.
func AppendPropsAsJSONAbove(dst []byte, code string, min int) ([]byte, []int) {
	spans := propsJSONSpans(code, min)
	if len(spans) == 0 {
		return dst, nil
	}
	return appendRewrite(dst, code, spans, true)
}

// appendRewrite appends code with spans rewritten to dst, and with calls
// where each call stands (AppendPropsAsJSON); none when the text between
// the literals is not valid UTF-8 (Node decodes it its own way: the offsets
// could not be told).
func appendRewrite(dst []byte, code string, spans []jsonSpan, calls bool) ([]byte, []int) {
	// Room for the text and each call's additions: its backslashes are
	// usually a few percent of a literal (one a sixteenth byte before
	// append grows the buffer).
	grow := len(code)
	for _, sp := range spans {
		grow += len(jsonParseOpen+jsonParseClose) + (sp.end-sp.start)>>4
	}
	b := slices.Grow(dst, grow)
	var offsets []int
	at, units := 0, 0 // units: UTF-16 length of the text appended so far
	for _, sp := range spans {
		b = append(b, code[at:sp.start]...)
		callAt := len(b)
		b = append(b, jsonParseOpen...)
		var wide int
		b, wide = appendQuoted(b, code[sp.start:sp.end])
		b = append(b, jsonParseClose...)
		if calls {
			gap := code[at:sp.start]
			if !utf8.ValidString(gap) {
				return dst, nil
			}
			units += utf16Len(gap)
			n := len(b) - callAt - wide
			offsets = append(offsets, units, units+n)
			units += n
		}
		at = sp.end
	}
	return append(b, code[at:]...), offsets
}

const (
	jsonParseOpen  = "JSON.parse('"
	jsonParseClose = "')"
)

// jsonSpan is a literal to rewrite.
type jsonSpan struct{ start, end int }

// propsJSONSpans returns the literals to rewrite, in order; nil when none,
// or when the scanner could not follow the program.
func propsJSONSpans(code string, min int) []jsonSpan {
	sc := &scanner{s: code, min: min, newline: true}
	sc.json.s = code
	if strings.HasPrefix(code, "#!") || !sc.run() { // a hashbang comment is not modelled
		return nil
	}
	if sc.lexical {
		kept := sc.cands[:0]
		for i, c := range sc.cands {
			if !sc.decl[i] {
				kept = append(kept, c)
			}
		}
		sc.cands = kept
	}
	return sc.cands
}
