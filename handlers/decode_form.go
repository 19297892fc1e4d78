package handlers

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"net/url"
)

// decodeForm decodes an application/x-www-form-urlencoded body, keeping the
// order and the repetitions of its keys. Pairs without a name are skipped.
// It decodes data in place (a decoded pair is never longer than its
// encoding) and its strings share data's bytes: data is this request's
// alone and nothing else reads it afterwards.
func decodeForm(data []byte) (*Fields, *HTTPError) {
	f := &Fields{}
	rest := data
	for len(rest) > 0 {
		var pair []byte
		pair, rest, _ = bytes.Cut(rest, []byte{'&'})
		if len(pair) == 0 {
			continue
		}
		rawName, rawValue, _ := bytes.Cut(pair, []byte{'='})
		name, err := queryUnescapeInPlace(rawName)
		if err != nil {
			return nil, badRequest("Invalid form body: %s.", echo(err.Error()))
		}
		value, err := queryUnescapeInPlace(rawValue)
		if err != nil {
			return nil, badRequest("Invalid form body: %s.", echo(err.Error()))
		}
		if len(name) > 0 {
			f.addString(bytesString(name), bytesString(value))
		}
	}
	return f, nil
}

// queryUnescapeInPlace is url.QueryUnescape (same result, same error)
// writing the decoded bytes over b and returning them.
func queryUnescapeInPlace(b []byte) ([]byte, error) {
	w, i := 0, 0
	for {
		if i-w >= 8 {
			i, w = unescapeDense(b, i, w)
		}
		// Copy up to the next '%' or '+', eight bytes at a time. A word is
		// stored whole when that cannot reach a byte not yet read (w <= i,
		// and the output lags the input by 2 bytes per escape).
		found := false
		for i+8 <= len(b) {
			x := binary.LittleEndian.Uint64(b[i:])
			m := bytesEqual(x, '%') | bytesEqual(x, '+')
			if m == 0 {
				binary.LittleEndian.PutUint64(b[w:], x)
				i, w = i+8, w+8
				continue
			}
			k := firstByte(m)
			if i-w >= 8 {
				binary.LittleEndian.PutUint64(b[w:], x)
			} else {
				copy(b[w:w+k], b[i:i+k])
			}
			i, w, found = i+k, w+k, true
			break
		}
		if !found { // the last bytes, fewer than eight
			for i < len(b) && b[i] != '%' && b[i] != '+' {
				b[w] = b[i]
				i, w = i+1, w+1
			}
			if i == len(b) {
				return b[:w], nil
			}
		}
		if b[i] == '+' {
			b[w] = ' '
			i, w = i+1, w+1
			continue
		}
		if i+2 >= len(b) || hexValue[b[i+1]]|hexValue[b[i+2]] > 0xf {
			return nil, url.EscapeError(b[i:min(i+3, len(b))])
		}
		b[w] = hexValue[b[i+1]]<<4 | hexValue[b[i+2]]
		i, w = i+3, w+1
	}
}

// unescapeDense is queryUnescapeInPlace's loop once the output lags the
// input by eight bytes or more (four escapes in), for a rendering request's
// one escape every few bytes. It finds the '%' of 64 bytes at once, so that
// finding the next one does not wait on decoding the previous one, and
// copies the run before each a word at a time ('+' turned to ' ' within
// the word), which the lag lets it store whole. It stops 72 bytes before
// the end, or at a '%' not followed by two hex digits, and returns where it
// stopped: the bytes from i on are still the input's.
func unescapeDense(b []byte, i, w int) (int, int) {
	const plusToSpace = '+' ^ ' '
	for block := i; block+72 <= len(b); block += 64 { // 64 bytes, a run's last word
		var percents uint64
		for k := range 8 {
			percents |= uint64(byteBits(binary.LittleEndian.Uint64(b[block+8*k:]), '%')) << (8 * k)
		}
		for ; percents != 0; percents &= percents - 1 {
			p := block + bits.TrailingZeros64(percents) // p >= i: hex digits are no '%'
			for {
				x := binary.LittleEndian.Uint64(b[i:])
				x ^= bytesExact(x, '+') >> 7 * plusToSpace
				binary.LittleEndian.PutUint64(b[w:], x) // w+8 <= i: read already
				if p-i <= 8 {
					break
				}
				i, w = i+8, w+8
			}
			w += p - i
			hi, lo := hexValue[b[p+1]], hexValue[b[p+2]]
			if hi|lo > 0xf {
				return p, w // the caller reports it
			}
			b[w] = hi<<4 | lo
			i, w = p+3, w+1
		}
	}
	return i, w
}

// bytesExact has the high bit set in every byte of x equal to c, and only
// in those.
func bytesExact(x uint64, c byte) uint64 {
	const lows, highs = 0x7f7f7f7f7f7f7f7f, 0x8080808080808080
	y := x ^ uint64(c)*0x0101010101010101
	return ^((y&lows + lows) | y) & highs // no carry crosses a byte
}

// bytesEqual has the high bit set in the lowest byte of x equal to c (and
// maybe in higher ones: only the lowest set bit is exact).
func bytesEqual(x uint64, c byte) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	y := x ^ uint64(c)*ones
	return (y - ones) &^ y & highs
}

// firstByte returns the index of the byte flagged by the lowest bit of m.
func firstByte(m uint64) int { return bits.TrailingZeros64(m) >> 3 }

// hexValue is the value of a hex digit, 0xff for another byte.
var hexValue = func() (v [256]byte) {
	for c := range v {
		switch {
		case '0' <= c && c <= '9':
			v[c] = byte(c - '0')
		case 'a' <= c && c <= 'f':
			v[c] = byte(c - 'a' + 10)
		case 'A' <= c && c <= 'F':
			v[c] = byte(c - 'A' + 10)
		default:
			v[c] = 0xff
		}
	}
	return v
}()
