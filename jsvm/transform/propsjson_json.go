package transform

import (
	"strings"
	"unicode/utf8"
)

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
