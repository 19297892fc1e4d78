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
// rewrite, as does the global `renderingRequest` on the node engine (its
// executor sets it to the text it compiles); a bundle that replaces the
// global JSON.parse is called for the props.

import "strings"

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
	var b strings.Builder
	grow := len(code)
	for _, sp := range spans {
		grow += len("JSON.parse('')") + len(sp.escapes)
	}
	b.Grow(grow)
	at := 0
	for _, sp := range spans {
		b.WriteString(code[at:sp.start])
		b.WriteString("JSON.parse('")
		// The JSON text as a single-quoted string: a backslash before each
		// backslash, quote and line break (whitespace in JSON, which becomes
		// a line continuation: the string loses it, JSON.parse never needed
		// it, and the program keeps its line count).
		from := sp.start
		for _, e := range sp.escapes {
			b.WriteString(code[from:e])
			b.WriteByte('\\')
			from = e
		}
		b.WriteString(code[from:sp.end])
		b.WriteString("')")
		at = sp.end
	}
	b.WriteString(code[at:])
	return b.String(), len(spans)
}

// jsonSpan is a literal to rewrite, with the offsets of the bytes that
// need a backslash in a single-quoted string.
type jsonSpan struct {
	start, end int
	escapes    []int
}

// propsJSONSpans returns the literals to rewrite, in order; nil when none,
// or when the scanner could not follow the program.
func propsJSONSpans(code string, min int) []jsonSpan {
	sc := &scanner{s: code, min: min, newline: true}
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
