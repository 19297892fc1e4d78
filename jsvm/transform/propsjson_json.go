package transform

import (
	"math/bits"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// jsonText validates JSON (RFC 8259) in s.
//
// It is the scan's hot loop (a request's props are nearly all of its
// bytes): the bytes of a string that need no look are skipped eight at a
// time (str), the open containers are a reused stack, and nothing is
// allocated per literal.
type jsonText struct {
	s     string
	stack []byte // open containers: '{' or '['
}

// valueEnd validates the JSON array or object starting at s[start], in
// valid UTF-8 (no recursion: nesting is a stack of bytes). It returns the
// offset after it, or end -1 and the offset where it stopped being JSON;
// proto reports a key "__proto__".
func (j *jsonText) valueEnd(start int) (end, fail int, proto bool) {
	s := j.s
	stack := j.stack[:0]
	defer func() { j.stack = stack[:0] }()
	i := start
	for {
		// A value at i.
		i = j.ws(i)
		if i >= len(s) {
			return -1, i, false
		}
		switch c := s[i]; {
		case c == '"':
			var ok bool
			if i, ok = j.str(i); !ok {
				return -1, i, false
			}
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
	if i < len(s) && s[i] > ' ' { // the common case: none
		return i
	}
	for ; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\r', '\n':
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
	k := i + 1
	for {
		// To the next byte strSpecial marks: eight at a time, then one
		// at a time for the last few.
		for k+8 <= len(s) {
			if m := strStops(load64(s, k)); m != 0 {
				k += bits.TrailingZeros64(m) >> 3
				break
			}
			k += 8
		}
		for k < len(s) && !strSpecial[s[k]] {
			k++
		}
		if k >= len(s) {
			return len(s), false
		}
		switch c := s[k]; {
		case c == '"':
			return k + 1, true
		case c < 0x20:
			return k, false
		case c >= 0xC2 && c <= 0xDF && k+1 < len(s) && s[k+1]&0xC0 == 0x80:
			k += 2 // a 2-byte sequence (Latin-1 and the like), the most common
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
			switch s[k+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
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
}

// strSpecial marks the bytes str stops at: a quote, a backslash, a control
// character, a non-ASCII byte.
var strSpecial = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c == '"' || c == '\\' || c < 0x20 || c >= utf8.RuneSelf
	}
	return t
}()

const (
	ones = 0x0101010101010101
	high = 0x8080808080808080
)

// load64 reads s[k:k+8] as a little-endian word (the compiler makes it one
// load).
func load64(s string, k int) uint64 {
	b := s[k : k+8]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// strStops returns the high bit of each byte of w that strSpecial marks,
// exact up to the first one (a borrow out of a marked byte may mark the
// ones after it: only the lowest bit set is used). A byte is zero in
// w^(ones*c) where it is c, and (x-ones)&^x has its high bit set in each
// zero byte of x; (w-ones*0x20)&^w likewise below 0x20.
func strStops(w uint64) uint64 {
	q := w ^ (ones * '"')
	b := w ^ (ones * '\\')
	return ((q-ones)&^q | (b-ones)&^b | (w-ones*0x20)&^w | w) & high
}

// escStops is strStops for the bytes appendQuoted writes otherwise: a
// backslash, a quote, CR, LF and non-ASCII bytes (escSpecial).
func escStops(w uint64) uint64 {
	b := w ^ (ones * '\\')
	a := w ^ (ones * '\'')
	r := w ^ (ones * '\r')
	n := w ^ (ones * '\n')
	return ((b-ones)&^b | (a-ones)&^a | (r-ones)&^r | (n-ones)&^n | w) & high
}

var escSpecial = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c == '\\' || c == '\'' || c == '\r' || c == '\n' || c >= utf8.RuneSelf
	}
	return t
}()

// appendQuoted appends lit, valid UTF-8, as the content of a single-quoted
// string, in ASCII: a backslash before each backslash, quote and line break
// (whitespace in JSON, which becomes a line continuation: the string loses
// it, JSON.parse never needed it, and the program keeps its line count; CR
// LF is one), and each non-ASCII character but U+2028 and U+2029 as \uXXXX
// (two for one past U+FFFF), which the string decodes to the same UTF-16
// code units. An ASCII
// text is decoded by Node in half the time of one with a few non-ASCII
// characters, and compiled by V8 as a one-byte string (a single character
// past U+00FF makes the whole request a two-byte one).
//
// wide is how many more bytes than UTF-16 code units it appended.
func appendQuoted(b []byte, lit string) (_ []byte, wide int) {
	from, k := 0, 0
	for {
		for k+8 <= len(lit) {
			if m := escStops(load64(lit, k)); m != 0 {
				k += bits.TrailingZeros64(m) >> 3
				break
			}
			k += 8
		}
		for k < len(lit) && !escSpecial[lit[k]] {
			k++
		}
		if k >= len(lit) {
			return append(b, lit[from:]...), wide
		}
		b = append(b, lit[from:k]...)
		if c := lit[k]; c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(lit[k:])
			if r == '\u2028' || r == '\u2029' {
				// Kept: a line terminator for V8's line numbers, which
				// the escape is not.
				b = append(b, lit[k:k+n]...)
				wide += n - 1
				k += n
				from = k
				continue
			}
			if r1, r2 := utf16.EncodeRune(r); r1 != utf8.RuneError {
				b = appendUnicodeEscape(b, r1)
				r = r2
			}
			b = appendUnicodeEscape(b, r)
			k += n
			from = k
			continue
		}
		b = append(b, '\\')
		from = k
		if lit[k] == '\r' && k+1 < len(lit) && lit[k+1] == '\n' {
			k++
		}
		k++
	}
}

// appendUnicodeEscape appends \uXXXX of the code unit u.
func appendUnicodeEscape(b []byte, u rune) []byte {
	const hex = "0123456789abcdef"
	return append(b, '\\', 'u', hex[u>>12&15], hex[u>>8&15], hex[u>>4&15], hex[u&15])
}

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
