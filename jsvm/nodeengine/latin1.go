package nodeengine

import (
	"math/bits"
	"slices"
	"unicode/utf8"
)

// A rendering request goes down the pipe in Latin-1 when every character
// of it is at most U+00FF (the executor decodes it with latin1Slice),
// else in UTF-8 as it came. Node decodes UTF-8 with a few non-ASCII
// characters at about 2 ns a byte (its fast path ends at the first one),
// Latin-1 at a memory copy's speed: the large page's 1.17 MB took 2.2-2.5
// ms as UTF-8 and 0.65-0.94 ms as Latin-1 (node, Buffer.toString and
// latin1Slice, on this machine under load). An ASCII request is the same
// bytes in both, and is sent as it is.

// appendLatin1 says whether text can go as Latin-1 (ok): valid UTF-8 with
// no character past U+00FF. If it has non-ASCII characters (converted), it
// appends its Latin-1 bytes to dst and returns them; else text itself
// goes.
func appendLatin1(dst []byte, text string) (out []byte, ok, converted bool) {
	k := asciiPrefix(text)
	if k == len(text) {
		return dst, true, false
	}
	// Latin-1 is never longer: the text's length is room enough.
	out = slices.Grow(dst, len(text))
	buf := out[len(dst) : len(dst)+len(text)]
	j := copy(buf, text[:k])
	for k < len(text) {
		// A 2-byte sequence of U+0080 to U+00FF: C2 or C3, then a
		// continuation byte.
		c := text[k]
		if (c != 0xC2 && c != 0xC3) || k+1 >= len(text) || text[k+1]&0xC0 != 0x80 {
			return dst, false, false
		}
		buf[j] = (c&0x1F)<<6 | text[k+1]&0x3F
		j++
		k += 2
		n := asciiPrefix(text[k:])
		j += copy(buf[j:], text[k:k+n])
		k += n
	}
	return out[:len(dst)+j], true, true
}

// asciiPrefix is the length of s's leading ASCII bytes, read eight at a
// time.
func asciiPrefix(s string) int {
	k := 0
	for ; k+8 <= len(s); k += 8 {
		b := s[k : k+8]
		w := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
		if m := w & 0x8080808080808080; m != 0 {
			return k + bits.TrailingZeros64(m)>>3
		}
	}
	for k < len(s) && s[k] < utf8.RuneSelf {
		k++
	}
	return k
}
