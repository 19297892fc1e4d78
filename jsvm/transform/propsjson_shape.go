package transform

import "strings"

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
