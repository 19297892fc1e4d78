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

import (
	"strings"
	"unicode/utf8"
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

type tokKind uint8

const (
	tokNone  tokKind = iota // start of the program
	tokPunct                // an operator or punctuator; text in prevText
	tokIdent                // an identifier or a keyword; text in prevText
	tokValue                // a number, string, template, regex, or a literal skipped as JSON
	tokClose                // `)`, `]` or `}`; text in prevText
)

// frame is one open bracket: `{`, `(`, `[`, or `$` for a template's `${`.
type frame struct {
	kind     byte
	open     int      // offset of the bracket
	object   bool     // `{` in expression position: an object literal
	ternary  int      // `?` seen in this frame whose `:` has not come
	params   bool     // `(` of a function's parameter list
	badParam bool     // the parameter list has a pattern or a rest element
	body     bool     // `{` of a function's body (one with a parameter list)
	names    []string // the body's plain parameters
}

type scanner struct {
	s        string
	i        int
	prev     tokKind
	prevText string
	frames   []frame
	cands    []jsonSpan
	mark     int // no JSON validation starts before this offset
	json     jsonText
	min      int

	templates   int     // open `${` substitutions
	lexical     bool    // the program has let, const or class
	decl        []bool  // per candidate: a var declaration (dropped if lexical)
	newline     bool    // a line break since the last token
	lineKind    tokKind // the token before the current line's first one
	lineText    string
	funcState   int      // 1 after `function`, 2 after its name
	hasBody     bool     // a function's parameter list just closed
	pendingBody []string // its plain parameters, for the body's `{`
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

func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || c == '#' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// regexAfterWord says what a `/` after a word is: true for the reserved
// words after which it starts a regex; absent for an identifier or the
// other reserved words (a division); false for the words that are
// keywords only in some contexts (`of`, `yield`, `await`, ...): unsure.
var regexAfterWord = map[string]bool{
	"return": true, "typeof": true, "instanceof": true, "in": true, "new": true,
	"delete": true, "void": true, "throw": true, "case": true, "do": true, "else": true,
	"of": false, "yield": false, "await": false, "let": false, "async": false, "static": false,
	"get": false, "set": false,
}

// operatorChars are those that form operators by maximal munch here.
const operatorChars = "=!<>+-*%&|^~"

func (sc *scanner) run() bool {
	s := sc.s
	for sc.i < len(s) {
		c := s[sc.i]
		switch {
		case c == ' ' || c == '\t' || c == '\v' || c == '\f':
			sc.i++
		case c == '\n' || c == '\r':
			sc.i++
			sc.newline = true
		case c == '/' && sc.i+1 < len(s) && s[sc.i+1] == '/':
			sc.skipLineComment()
		case c == '/' && sc.i+1 < len(s) && s[sc.i+1] == '*':
			end := strings.Index(s[sc.i+2:], "*/")
			if end < 0 {
				return false
			}
			if strings.ContainsAny(s[sc.i:sc.i+2+end], "\n\r") {
				sc.newline = true
			}
			sc.i += 2 + end + 2
		case c == '"' || c == '\'':
			if !sc.skipString(c) {
				return false
			}
			sc.token(tokValue, "")
		case c == '`':
			sc.i++
			if !sc.template() {
				return false
			}
		case c >= '0' && c <= '9' || c == '.' && sc.i+1 < len(s) && s[sc.i+1] >= '0' && s[sc.i+1] <= '9':
			sc.number()
			sc.token(tokValue, "")
		case isIdentByte(c):
			start := sc.i
			for sc.i < len(s) && isIdentByte(s[sc.i]) {
				sc.i++
			}
			if sc.i < len(s) && (s[sc.i] == '\\' || s[sc.i] >= utf8.RuneSelf) {
				return false // an escaped or non-ASCII identifier: not modelled
			}
			if !sc.ident(s[start:sc.i]) {
				return false
			}
		case c == '/':
			regex, sure := sc.regexAllowed()
			if !sure {
				return false
			}
			if regex {
				if !sc.skipRegex() {
					return false
				}
				sc.token(tokValue, "")
			} else {
				n := 1
				if sc.i+1 < len(s) && s[sc.i+1] == '=' {
					n = 2
				}
				sc.i += n
				sc.token(tokPunct, s[sc.i-n:sc.i])
			}
		case c == '{' || c == '[':
			if !sc.open(c) {
				return false
			}
		case c == '(':
			if len(sc.frames) >= maxScanDepth {
				return false
			}
			f := frame{kind: '(', open: sc.i}
			if sc.funcState > 0 {
				f.params = true
			}
			sc.i++
			sc.token(tokPunct, "(")
			sc.funcState = 0
			sc.frames = append(sc.frames, f)
		case c == ')' || c == ']' || c == '}':
			if !sc.close(c) {
				return false
			}
		case c == '?':
			switch {
			case strings.HasPrefix(s[sc.i:], "??="):
				sc.i += 3
				sc.token(tokPunct, "??=")
			case strings.HasPrefix(s[sc.i:], "??"):
				sc.i += 2
				sc.token(tokPunct, "??")
			case strings.HasPrefix(s[sc.i:], "?.") && !(sc.i+2 < len(s) && s[sc.i+2] >= '0' && s[sc.i+2] <= '9'):
				sc.i += 2
				sc.token(tokPunct, "?.")
			default:
				sc.i++
				if n := len(sc.frames); n > 0 {
					sc.frames[n-1].ternary++
				}
				sc.token(tokPunct, "?")
			}
		case c == ':':
			sc.i++
			sc.token(tokPunct, ":")
		case c == ';' || c == ',':
			sc.i++
			sc.token(tokPunct, s[sc.i-1:sc.i])
		case c == '.':
			n := 1
			if strings.HasPrefix(s[sc.i:], "...") {
				n = 3
			}
			sc.i += n
			sc.token(tokPunct, s[sc.i-n:sc.i])
		case strings.IndexByte(operatorChars, c) >= 0:
			start := sc.i
			if strings.HasPrefix(s[sc.i:], "=>") {
				sc.i += 2
			} else {
				for sc.i < len(s) && strings.IndexByte(operatorChars, s[sc.i]) >= 0 {
					sc.i++
				}
			}
			if op := s[start:sc.i]; strings.Contains(op, "<!--") || strings.Contains(op, "-->") {
				return false // an HTML-like comment (sloppy scripts), or x-->0: not modelled
			}
			sc.token(tokPunct, s[start:sc.i])
		default:
			return false // `@`, `\`, non-ASCII outside strings: not modelled
		}
	}
	return len(sc.frames) == 0
}

// token records a token.
func (sc *scanner) token(kind tokKind, text string) {
	if sc.newline {
		sc.lineKind, sc.lineText, sc.newline = sc.prev, sc.prevText, false
	}
	if sc.hasBody && !(kind == tokPunct && text == "{") {
		sc.hasBody, sc.pendingBody = false, nil
	}
	if sc.funcState > 0 && kind != tokPunct && kind != tokIdent {
		sc.funcState = 0
	}
	if n := len(sc.frames); n > 0 && sc.frames[n-1].params && kind == tokPunct && (text == "{" || text == "[" || text == "...") {
		sc.frames[n-1].badParam = true
	}
	if kind == tokPunct && text == ":" {
		if n := len(sc.frames); n > 0 && sc.frames[n-1].ternary > 0 {
			sc.frames[n-1].ternary--
			text = "?:" // a ternary's colon: expression position
		} else if n > 0 && sc.frames[n-1].object {
			text = "?:" // an object literal's key: its value is an expression
		}
	}
	sc.prev, sc.prevText = kind, text
}

func (sc *scanner) ident(word string) bool {
	dotted := sc.prev == tokPunct && (sc.prevText == "." || sc.prevText == "?.")
	if !dotted && word == "with" {
		return false
	}
	// JSON may be called (JSON.stringify(...)), nothing else: a
	// declaration could shadow the global the rewrite calls, an assignment
	// replace its parse.
	if rest := sc.s[sc.i:]; !dotted && word == "JSON" && !strings.HasPrefix(rest, ".stringify(") && !strings.HasPrefix(rest, ".parse(") {
		return false
	}
	if !dotted && (word == "let" || word == "const" || word == "class") {
		sc.lexical = true
	}
	if n := len(sc.frames); n > 0 && sc.frames[n-1].params && !dotted {
		f := &sc.frames[n-1]
		if sc.prev == tokPunct && (sc.prevText == "(" || sc.prevText == ",") {
			f.names = append(f.names, word)
		}
	}
	state := 0
	switch {
	case !dotted && word == "function":
		state = 1
	case sc.funcState == 1 || sc.funcState == 2:
		state = 2 // the function's name
	}
	sc.token(tokIdent, word)
	sc.funcState = state
	return true
}

// regexAllowed says whether a `/` here starts a regex, and whether the
// scanner is sure of it.
func (sc *scanner) regexAllowed() (regex, sure bool) {
	switch sc.prev {
	case tokNone:
		return true, true
	case tokValue:
		return false, true
	case tokIdent:
		regex, listed := regexAfterWord[sc.prevText]
		return regex, regex || !listed
	case tokClose:
		if sc.prevText == "]" {
			return false, true
		}
		return false, false // `(a) / b` or `if (a) /re/`; `{}` likewise
	}
	if strings.HasSuffix(sc.prevText, "++") || strings.HasSuffix(sc.prevText, "--") {
		return false, false
	}
	return true, true
}

func (sc *scanner) skipLineComment() {
	for sc.i < len(sc.s) && sc.s[sc.i] != '\n' && sc.s[sc.i] != '\r' {
		sc.i++
	}
}

func (sc *scanner) skipString(q byte) bool {
	s := sc.s
	for sc.i++; sc.i < len(s); sc.i++ {
		switch s[sc.i] {
		case '\\':
			sc.i++
		case q:
			sc.i++
			return true
		case '\n', '\r':
			return false
		}
	}
	return false
}

func (sc *scanner) skipRegex() bool {
	s := sc.s
	class := false
	for sc.i++; sc.i < len(s); sc.i++ {
		switch s[sc.i] {
		case '\\':
			sc.i++
		case '[':
			class = true
		case ']':
			class = false
		case '/':
			if !class {
				sc.i++
				for sc.i < len(s) && isIdentByte(s[sc.i]) {
					sc.i++
				}
				return true
			}
		case '\n', '\r':
			return false
		}
	}
	return false
}

func (sc *scanner) number() {
	s := sc.s
	for sc.i < len(s) {
		c := s[sc.i]
		if isIdentByte(c) || c == '.' {
			sc.i++
			continue
		}
		if (c == '+' || c == '-') && (s[sc.i-1] == 'e' || s[sc.i-1] == 'E') && !strings.HasPrefix(s[sc.i-2:], "0x") {
			sc.i++
			continue
		}
		break
	}
}

// template scans a template literal's text from after "`" or after the `}`
// of a substitution, up to its end or to its next `${`.
func (sc *scanner) template() bool {
	s := sc.s
	for ; sc.i < len(s); sc.i++ {
		switch s[sc.i] {
		case '\\':
			sc.i++
		case '`':
			sc.i++
			sc.token(tokValue, "")
			return true
		case '$':
			if sc.i+1 < len(s) && s[sc.i+1] == '{' {
				if len(sc.frames) >= maxScanDepth {
					return false
				}
				sc.frames = append(sc.frames, frame{kind: '$', open: sc.i})
				sc.templates++
				sc.i += 2
				sc.token(tokPunct, "${")
				return true
			}
		}
	}
	return false
}

// expressionStart says whether a `{` or `[` after the previous token is
// surely a literal.
func (sc *scanner) expressionStart() bool {
	if sc.prev != tokPunct {
		return false
	}
	switch t := sc.prevText; t {
	case "(", ",", "?", "?:", "[":
		return true
	case "=>", "!", "~", "<", ">":
		return false
	default:
		return strings.HasSuffix(t, "=") // =, ==, ===, !=, +=, <=, ...
	}
}

func (sc *scanner) open(c byte) bool {
	if len(sc.frames) >= maxScanDepth {
		return false
	}
	expr := sc.expressionStart() && sc.templates == 0
	start := sc.i
	if expr && start >= sc.mark {
		sc.json.s, sc.json.escapes = sc.s, sc.json.escapes[:0]
		end, fail, proto := sc.json.valueEnd(start)
		if end < 0 {
			sc.mark = fail
		} else {
			// A complete JSON value: one expression, scanned as such.
			if end-start >= sc.min && !proto {
				if decl, ok := sc.shapeOK(start, end); ok {
					sc.cands = append(sc.cands, jsonSpan{start, end, append([]int(nil), sc.json.escapes...)})
					sc.decl = append(sc.decl, decl)
				}
			}
			sc.i = end
			sc.token(tokValue, "")
			return true
		}
	}
	f := frame{kind: c, open: start, object: c == '{' && expr}
	if c == '{' && sc.hasBody {
		f.body, f.names = true, sc.pendingBody
	}
	sc.hasBody, sc.pendingBody = false, nil
	sc.i++
	sc.token(tokPunct, string(c))
	sc.frames = append(sc.frames, f)
	return true
}

func (sc *scanner) close(c byte) bool {
	n := len(sc.frames)
	if n == 0 {
		return false
	}
	f := sc.frames[n-1]
	want := map[byte]byte{')': '(', ']': '[', '}': '{'}[c]
	if f.kind == '$' && c == '}' {
		sc.frames = sc.frames[:n-1]
		sc.templates--
		sc.i++
		return sc.template()
	}
	if f.kind != want { // `(]`, or `}` closing a `(`
		return false
	}
	sc.frames = sc.frames[:n-1]
	sc.i++
	sc.token(tokClose, string(c))
	if c == ')' && f.params {
		sc.hasBody = true
		if !f.badParam {
			sc.pendingBody = f.names
		}
	}
	return true
}

// shapeOK says whether the literal s[start:end] sits in one of the lines
// the gem writes, alone on its line but for indentation (the first line of
// the literal before it, its last after it):
//
//	var NAME = LITERAL;
//	NAME = LITERAL;
//	var NAME = typeof PARAM === 'undefined' ? LITERAL : PARAM;
//
// The line must start a statement (the token before it is none, `;`, `{`
// or `}`) in a block or function body, or at the top level; a `var` must
// be in a function's body, and PARAM one of its plain parameters. decl
// reports a `var` line: a let, const or class anywhere in the program
// could make it a redeclaration error, so those are dropped then.
//
// Why so narrow: the rewrite is longer than the literal, so a stack
// position after it on its line would move, and V8 quotes source text in
// some messages (a callee's, an iterable's: `{(intermediate value)} is not
// iterable`) and the whole line of a SyntaxError. On these lines nothing
// after the literal can throw or be quoted, the literal's value only goes
// into a variable, and the line itself is always valid.
func (sc *scanner) shapeOK(start, end int) (decl, ok bool) {
	s := sc.s
	if sc.newline || !(sc.lineKind == tokNone || sc.lineKind == tokPunct && (sc.lineText == ";" || sc.lineText == "{") ||
		sc.lineKind == tokClose && sc.lineText == "}") {
		return false, false
	}
	var top *frame
	if n := len(sc.frames); n > 0 {
		top = &sc.frames[n-1]
		if top.kind != '{' || top.object {
			return false, false
		}
	}
	lineEnd := len(s)
	if k := strings.IndexAny(s[end:], "\n\r"); k >= 0 {
		lineEnd = end + k
	}
	before := lineTokens(s[strings.LastIndexAny(s[:start], "\n\r")+1 : start])
	after := lineTokens(s[end:lineEnd])
	name := func(w string) bool { return w != "" && !(w[0] >= '0' && w[0] <= '9') && !reserved[w] && isWord(w) }
	param := func(w string) bool {
		if top == nil || !top.body {
			return false
		}
		for _, p := range top.names {
			if p == w {
				return true
			}
		}
		return false
	}
	inBody := top != nil && top.body
	switch {
	case len(before) == 3 && before[0] == "var" && name(before[1]) && before[2] == "=" && inBody:
		return true, len(after) == 1 && after[0] == ";"
	case len(before) == 2 && name(before[0]) && before[1] == "=":
		return false, len(after) == 1 && after[0] == ";"
	case len(before) == 8 && before[0] == "var" && name(before[1]) && before[2] == "=" && before[3] == "typeof" &&
		param(before[4]) && before[5] == "===" && (before[6] == "'undefined'" || before[6] == `"undefined"`) && before[7] == "?":
		return true, len(after) == 3 && after[0] == ":" && after[1] == before[4] && after[2] == ";"
	}
	return false, false
}

// lineTokens splits a piece of a line into the tokens shapeOK knows (words,
// `=`, `===`, `?`, `:`, `;`, a quoted "undefined"); anything else gives a
// token that matches nothing.
func lineTokens(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			i++
			continue
		case isWord(s[i : i+1]):
			j := i
			for j < len(s) && isWord(s[j:j+1]) {
				j++
			}
			out = append(out, s[i:j])
			i = j
			continue
		case strings.HasPrefix(s[i:], "==="):
			out = append(out, "===")
			i += 3
			continue
		case strings.HasPrefix(s[i:], "'undefined'") || strings.HasPrefix(s[i:], `"undefined"`):
			out = append(out, s[i:i+11])
			i += 11
			continue
		case c == '=' || c == '?' || c == ':' || c == ';':
			if c == '=' && strings.HasPrefix(s[i:], "==") {
				return append(out, "!")
			}
			out = append(out, s[i:i+1])
			i++
			continue
		}
		return append(out, "!")
	}
	return out
}

// isWord says whether s is made of identifier characters ($, _, ASCII
// letters and digits).
func isWord(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '#' || !isIdentByte(c) {
			return false
		}
	}
	return s != ""
}

// reserved lists the words that cannot be a variable's name here (reserved
// words, strict mode's, and eval and arguments, which strict code cannot
// assign).
var reserved = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`await break case catch class const continue debugger default delete do else enum
		export extends false finally for function if import in instanceof new null return super switch this throw true try
		typeof var void while with yield let static implements interface package private protected public eval arguments
		async of get set undefined NaN Infinity`) {
		reserved[w] = true
	}
}

// jsonText validates JSON (RFC 8259) in s, and records where a
// single-quoted string holding it needs a backslash: before each backslash
// and quote, and each line break (CR LF counts as one).
type jsonText struct {
	s       string
	escapes []int
}

// valueEnd validates the JSON array or object starting at s[start], in
// valid UTF-8 (no recursion: nesting is a stack of bytes). It returns the
// offset after it, or end -1 and the offset where it stopped being JSON;
// proto reports a key "__proto__".
func (j *jsonText) valueEnd(start int) (end, fail int, proto bool) {
	s := j.s
	var stack []byte // open containers: '{' or '['
	i := start
	for {
		// A value at i.
		i = j.ws(i)
		if i >= len(s) {
			return -1, i, false
		}
		switch c := s[i]; {
		case c == '{' || c == '[':
			if len(stack) >= maxScanDepth {
				return -1, i, false
			}
			stack = append(stack, c)
			i = j.ws(i + 1)
			if i < len(s) && (c == '{' && s[i] == '}' || c == '[' && s[i] == ']') {
				i++
				stack = stack[:len(stack)-1]
				break
			}
			if c == '{' {
				var ok, k bool
				if i, k, ok = j.key(i); !ok {
					return -1, i, false
				}
				proto = proto || k
			}
			continue
		case c == '"':
			var ok bool
			if i, ok = j.str(i); !ok {
				return -1, i, false
			}
		case c == '-' || c >= '0' && c <= '9':
			var ok bool
			if i, ok = jsonNumber(s, i); !ok {
				return -1, i, false
			}
		case strings.HasPrefix(s[i:], "true"):
			i += 4
		case strings.HasPrefix(s[i:], "false"):
			i += 5
		case strings.HasPrefix(s[i:], "null"):
			i += 4
		default:
			return -1, i, false
		}
		// After a value: a separator, or closing brackets.
		for {
			if len(stack) == 0 {
				return i, 0, proto
			}
			i = j.ws(i)
			if i >= len(s) {
				return -1, i, false
			}
			top := stack[len(stack)-1]
			if s[i] == ',' {
				i++
				if top == '{' {
					var ok, k bool
					if i, k, ok = j.key(j.ws(i)); !ok {
						return -1, i, false
					}
					proto = proto || k
				}
				break
			}
			if top == '{' && s[i] == '}' || top == '[' && s[i] == ']' {
				i++
				stack = stack[:len(stack)-1]
				continue
			}
			return -1, i, false
		}
	}
}

// ws skips JSON whitespace from i.
func (j *jsonText) ws(i int) int {
	s := j.s
	for ; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t':
		case '\r':
			j.escapes = append(j.escapes, i)
			if i+1 < len(s) && s[i+1] == '\n' {
				i++
			}
		case '\n':
			j.escapes = append(j.escapes, i)
		default:
			return i
		}
	}
	return i
}

// key reads `"key" :` at i, and says whether the key is "__proto__".
func (j *jsonText) key(i int) (next int, proto, ok bool) {
	s := j.s
	if i >= len(s) || s[i] != '"' {
		return i, false, false
	}
	end, ok := j.str(i)
	if !ok {
		return end, false, false
	}
	raw := s[i+1 : end-1]
	proto = raw == "__proto__" || strings.IndexByte(raw, '\\') >= 0 && unescapeJSON(raw) == "__proto__"
	end = j.ws(end)
	if end >= len(s) || s[end] != ':' {
		return end, false, false
	}
	return end + 1, proto, true
}

// str reads a JSON string at i (at its quote), in valid UTF-8, and returns
// the offset after it.
func (j *jsonText) str(i int) (int, bool) {
	s := j.s
	for k := i + 1; k < len(s); {
		for k < len(s) && !strSpecial[s[k]] {
			k++
		}
		if k >= len(s) {
			break
		}
		switch c := s[k]; {
		case c == '"':
			return k + 1, true
		case c < 0x20:
			return k, false
		case c == '\'':
			j.escapes = append(j.escapes, k)
			k++
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRuneInString(s[k:])
			if r == utf8.RuneError && n == 1 {
				return k, false
			}
			k += n
		default: // a backslash
			if k+1 >= len(s) {
				return k, false
			}
			j.escapes = append(j.escapes, k)
			switch s[k+1] {
			case '\\':
				j.escapes = append(j.escapes, k+1)
				k += 2
			case '"', '/', 'b', 'f', 'n', 'r', 't':
				k += 2
			case 'u':
				if k+6 > len(s) || !isHex(s[k+2]) || !isHex(s[k+3]) || !isHex(s[k+4]) || !isHex(s[k+5]) {
					return k, false
				}
				k += 6
			default:
				return k, false
			}
		}
	}
	return len(s), false
}

// strSpecial marks the bytes str stops at: a quote, a backslash, a single
// quote (escaped in the rewrite), a control character, a non-ASCII byte.
var strSpecial = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c == '"' || c == '\\' || c == '\'' || c < 0x20 || c >= utf8.RuneSelf
	}
	return t
}()

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// unescapeJSON decodes the escapes of a valid JSON string's body, enough to
// compare it with an ASCII key (a \u escape is kept as its code unit).
func unescapeJSON(raw string) string {
	var b strings.Builder
	for j := 0; j < len(raw); j++ {
		if raw[j] != '\\' {
			b.WriteByte(raw[j])
			continue
		}
		j++
		switch raw[j] {
		case 'u':
			var v rune
			for _, h := range raw[j+1 : j+5] {
				v <<= 4
				switch {
				case h >= 'a':
					v += h - 'a' + 10
				case h >= 'A':
					v += h - 'A' + 10
				default:
					v += h - '0'
				}
			}
			b.WriteRune(v)
			j += 4
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		default:
			b.WriteByte(raw[j])
		}
	}
	return b.String()
}

// jsonNumber reads -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? at i and
// returns the offset after it.
func jsonNumber(s string, i int) (int, bool) {
	digits := func() int {
		k := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i - k
	}
	if s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case digits() == 0:
		return i, false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return i, false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return i, false
		}
	}
	return i, true
}
