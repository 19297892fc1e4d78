package handlers

import (
	"encoding/binary"
	"math/bits"
	"strings"

	"github.com/bytedance/sonic/encoder"
	"github.com/bytedance/sonic/unquote"
)

// The gem's JSON bodies are flat (PROTOCOL.md §3): one object whose values
// are strings and arrays of strings. Such a body is decoded here without
// building a generic tree: sonic's validator checks it, one walk finds its
// members and checks its strings for control bytes (scanFlatJSON: the head
// is read from the members), and only then, once the password passed, are
// its strings unescaped (buildFlat),
// each into one buffer of its literal's size. Any other body, valid or
// not, goes to the generic decoder (decodeJSONGeneric), which gives every
// error its text: so this path only ever returns what that decoder would
// have.

// maxFlatMembers is the most members of a flat body: a body with more goes
// to the generic decoder, so that the walk before the password passed
// costs memory bounded by this count, not by the body.
const maxFlatMembers = 64

// flatMember is one member of a flat JSON object: the spans of its key's
// literal (quotes included) and of its value.
type flatMember struct {
	key, value []byte
}

// scanFlatJSON returns the members of data when it is a valid flat JSON
// object: members whose values are strings, arrays of strings, true, false
// or null, at most maxFlatMembers of them. ok is false for anything else.
func scanFlatJSON(data []byte) (members []flatMember, ok bool) {
	if valid, _ := encoder.Valid(data); !valid {
		return nil, false
	}
	// data is one valid JSON value from here on, but for control bytes in
	// its strings (validJSON): the walk checks the strings it passes.
	i := skipJSONSpace(data, 0)
	if data[i] != '{' {
		return nil, false
	}
	for i++; ; {
		i = skipJSONSpace(data, i)
		switch data[i] {
		case '}':
			return members, true
		case ',':
			i++
			continue
		}
		if len(members) == maxFlatMembers {
			return nil, false
		}
		keyEnd, clean := jsonStringScan(data, i)
		if !clean {
			return nil, false
		}
		key := data[i:keyEnd]
		i = skipJSONSpace(data, skipJSONSpace(data, keyEnd)+1) // past ':'
		valueEnd, flat := flatValueEnd(data, i)
		if !flat {
			return nil, false
		}
		members = append(members, flatMember{key: key, value: data[i:valueEnd]})
		i = valueEnd
	}
}

// flatValueEnd returns the index past the valid JSON value at i, and
// whether it is a string, an array of strings, true, false or null, and
// without a control byte in its strings.
func flatValueEnd(data []byte, i int) (end int, flat bool) {
	switch data[i] {
	case '"':
		return jsonStringScan(data, i)
	case 't', 'n':
		return i + len("true"), true
	case 'f':
		return i + len("false"), true
	case '[':
		for i++; ; {
			i = skipJSONSpace(data, i)
			switch data[i] {
			case ']':
				return i + 1, true
			case ',':
				i++
			case '"':
				var clean bool
				if i, clean = jsonStringScan(data, i); !clean {
					return 0, false
				}
			default:
				return 0, false
			}
		}
	}
	return 0, false // a number or an object
}

// jsonStringEnd returns the index just past the string starting at i (a
// '"' of valid JSON).
func jsonStringEnd(data []byte, i int) int {
	end, _ := jsonStringScan(data, i)
	return end
}

// jsonStringScan is jsonStringEnd, and reports whether the string has no
// control byte (below 0x20: JSON forbids them in strings, and sonic's
// validator lets them through). It reads eight bytes at a time: a quote
// ends the string unless escaped, and which bytes the backslashes of a word
// escape is looked up (escapedBytes), so that the many escapes of a
// rendering request cost no branch each.
func jsonStringScan(data []byte, i int) (end int, clean bool) {
	j := i + 1
	var carry uint8     // 1: the byte at j is escaped by the previous word
	var controls uint64 // nonzero: a word before j had a control byte
	for ; j+8 <= len(data); j += 8 {
		x := binary.LittleEndian.Uint64(data[j:])
		e := escapedBytes[carry][byteBits(x, '\\')]
		// The lowest byte flagged here is below 0x20; a borrow may flag
		// bytes above it: so a flag below the quote means a control byte.
		c := (x - 0x20*0x0101010101010101) &^ x & 0x8080808080808080
		if quotes := byteBits(x, '"') &^ e.escaped; quotes != 0 {
			k := bits.TrailingZeros8(quotes)
			return j + k + 1, controls|c&(1<<(8*k)-1) == 0
		}
		controls |= c
		carry = e.carry
	}
	clean = controls == 0
	for ; ; j++ {
		if data[j] < 0x20 {
			clean = false
		}
		switch {
		case carry == 1:
			carry = 0
		case data[j] == '\\':
			carry = 1
		case data[j] == '"':
			return j + 1, clean
		}
	}
}

// byteBits returns the bytes of x equal to c as bits: bit k for byte k.
func byteBits(x uint64, c byte) uint8 {
	return uint8((bytesExact(x, c) >> 7) * 0x0102040810204080 >> 56)
}

// escapes is which bytes of a word the backslashes escape, and whether the
// next word's first byte is escaped.
type escapes struct {
	escaped, carry uint8
}

// escapedBytes[carry][backslashes] is the escapes of a word whose
// backslashes are the bits of backslashes, its first byte escaped if carry.
var escapedBytes = func() (table [2][256]escapes) {
	for carry := range 2 {
		for slashes := range 256 {
			var e escapes
			pending := carry == 1
			for k := range 8 {
				switch {
				case pending:
					e.escaped |= 1 << k
					pending = false
				case slashes&(1<<k) != 0:
					pending = true
				}
			}
			if pending {
				e.carry = 1
			}
			table[carry][slashes] = e
		}
	}
	return table
}()

// buildFlat decodes data, whose members scanFlatJSON returned, into
// Fields: strings, []any of strings, bool or nil, as the generic decoder
// gives them. sonic's validator lets through a bad escape, which its
// unquoting refuses: the generic decoder then answers.
func buildFlat(data []byte, members []flatMember) (*Fields, *HTTPError) {
	f := &Fields{}
	for _, m := range members {
		key, ok := flatString(m.key)
		if !ok {
			return decodeJSONGeneric(data)
		}
		value, ok := flatValue(m.value)
		if !ok {
			return decodeJSONGeneric(data)
		}
		f.set(key, value)
	}
	return f, nil
}

// flatValue decodes a member value of a flat object; ok is false for a bad
// escape.
func flatValue(raw []byte) (value any, ok bool) {
	switch raw[0] {
	case '"':
		return flatString(raw)
	case 't':
		return true, true
	case 'f':
		return false, true
	case 'n':
		return nil, true
	}
	list := []any{}
	for i := 1; ; {
		i = skipJSONSpace(raw, i)
		switch raw[i] {
		case ']':
			return list, true
		case ',':
			i++
		default:
			end := jsonStringEnd(raw, i)
			s, ok := flatString(raw[i:end])
			if !ok {
				return nil, false
			}
			list = append(list, s)
			i = end
		}
	}
}

// flatString decodes a string literal: without escapes, the body's own
// bytes (never modified once read); with them, sonic's unquoting (the
// generic decoder's), into a buffer of the literal's size. ok is false for
// a bad escape.
func flatString(lit []byte) (s string, ok bool) {
	inner := bytesString(lit[1 : len(lit)-1])
	if strings.IndexByte(inner, '\\') < 0 {
		return inner, true
	}
	s, err := unquote.String(inner)
	return s, err == 0
}

// flatHead is jsonHead for a flat body's members.
func flatHead(members []flatMember) *Fields {
	f := &Fields{metadataComplete: true}
	for _, m := range members {
		headMember(f, m.key, m.value)
	}
	return f
}
