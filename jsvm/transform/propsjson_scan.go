package transform

// The tokenizer of PropsAsJSON (propsjson.go): it follows a request's
// brackets, strings, comments, templates and regexes, and finds the
// literals that may be rewritten.

import (
	"strings"
	"unicode/utf8"
)

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
		case c == '#':
			// A private name: V8 reports one outside a class at the
			// token before it, which may be a rewritten literal's line.
			return false
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

// blockStart says whether a `{` after the previous token is surely a
// block or a body: at the start, after `;`, `{`, `}`, `)`, `=>`, a label's
// or a case's `:`, or else, do, try, finally.
func (sc *scanner) blockStart() bool {
	switch sc.prev {
	case tokNone:
		return true
	case tokPunct:
		switch sc.prevText {
		case ";", "{", "=>", ":":
			return true
		}
	case tokClose:
		return sc.prevText == ")" || sc.prevText == "}"
	case tokIdent:
		switch sc.prevText {
		case "else", "do", "try", "finally":
			return true
		}
	}
	return false
}

func (sc *scanner) open(c byte) bool {
	if len(sc.frames) >= maxScanDepth {
		return false
	}
	expr := sc.expressionStart() && sc.templates == 0
	start := sc.i
	if expr && start >= sc.mark {
		end, fail, proto := sc.json.valueEnd(start)
		if end < 0 {
			sc.mark = fail
		} else {
			// A complete JSON value: one expression, scanned as such.
			ok, decl := false, false
			if end-start >= sc.min && !proto {
				decl, ok = sc.shapeOK(start, end)
			}
			if ok {
				sc.cands = append(sc.cands, jsonSpan{start: start, end: end})
				sc.decl = append(sc.decl, decl)
			}
			sc.i = end
			sc.token(tokValue, "")
			return true
		}
	}
	// A `{` that is not surely a block is taken as an object literal,
	// in which no line is one of the gem's (shapeOK).
	f := frame{kind: c, open: start, object: c == '{' && (expr || !sc.blockStart())}
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
