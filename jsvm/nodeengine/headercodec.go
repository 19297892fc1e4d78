package nodeengine

import (
	"encoding/json"
	"slices"
	"strconv"
)

// A frame's header is JSON, and encoding/json's reflection was a large
// part of gorender's own work per render (about 3 µs of a hello render's
// 25 µs, encoding the render frame and decoding the done frame). The
// headers gorender sends and reads on the render path are flat and plain,
// so they are written and read here by hand; whatever this code does not
// take for certain goes through encoding/json, so that the result is
// always exactly encoding/json's (the tests compare both on every header
// and on fuzzed ones).

// appendHeader appends h as encoding/json's Marshal writes it, byte for
// byte: the fields in order, omitempty as tagged, map keys sorted, strings
// escaped as Marshal escapes them.
func appendHeader(b []byte, h *header) ([]byte, error) {
	b = append(b, `{"t":`...)
	b = appendJSONString(b, h.T)
	b = appendUintField(b, `,"r":`, h.R)
	b = appendStringField(b, `,"b":`, h.B)
	b = appendStringField(b, `,"name":`, h.Name)
	b = appendStringField(b, `,"file":`, h.File)
	b = appendStringField(b, `,"dir":`, h.Dir)
	b = appendStringField(b, `,"map":`, h.Map)
	if len(h.Set) > 0 {
		b = append(b, `,"set":{`...)
		var small [8]string
		keys := small[:0]
		for k := range h.Set {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, k)
			b = append(b, ':')
			b = appendJSONString(b, h.Set[k])
		}
		b = append(b, '}')
	}
	if h.Sink {
		b = append(b, `,"sink":true`...)
	}
	if h.Updates {
		b = append(b, `,"updates":true`...)
	}
	var err error
	if len(h.Host) > 0 {
		if b, err = appendMarshaled(b, `,"host":`, h.Host); err != nil {
			return nil, err
		}
	}
	b = appendStringField(b, `,"id":`, h.ID)
	b = appendUintField(b, `,"n":`, h.N)
	b = appendStringField(b, `,"why":`, h.Why)
	if h.Options != nil {
		if b, err = appendMarshaled(b, `,"options":`, h.Options); err != nil {
			return nil, err
		}
	}
	b = appendStringField(b, `,"node":`, h.Node)
	if h.PID != 0 {
		b = append(b, `,"pid":`...)
		b = strconv.AppendInt(b, int64(h.PID), 10)
	}
	b = appendStringField(b, `,"kind":`, h.Kind)
	b = appendStringField(b, `,"k":`, h.K)
	if len(h.Args) > 0 {
		if b, err = appendMarshaled(b, `,"args":`, h.Args); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// headerSize is about how long h's JSON is, to allocate its frame's head
// once.
func headerSize(h *header) int {
	n := 128 + len(h.T) + len(h.B) + len(h.Name) + len(h.File) + len(h.Dir) + len(h.Map) +
		len(h.ID) + len(h.Why) + len(h.Node) + len(h.Kind) + len(h.K)
	for k, v := range h.Set {
		n += len(k) + len(v) + 6
	}
	return n
}

func appendStringField(b []byte, key, s string) []byte {
	if s == "" {
		return b
	}
	return appendJSONString(append(b, key...), s)
}

func appendUintField(b []byte, key string, n uint64) []byte {
	if n == 0 {
		return b
	}
	return strconv.AppendUint(append(b, key...), n, 10)
}

func appendMarshaled(b []byte, key string, v any) ([]byte, error) {
	j, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(append(b, key...), j...), nil
}

// appendJSONString appends s as a JSON string: as is when every byte is
// printable ASCII that encoding/json leaves alone, else as encoding/json
// writes it (its escapes, HTML-safe, invalid UTF-8 replaced).
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if !plainByte(s[i]) {
			j, _ := json.Marshal(s) // a string always encodes
			return append(b, j...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// plainByte reports whether encoding/json writes c, in a string, as itself.
func plainByte(c byte) bool {
	return c >= 0x20 && c < 0x7f && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
}

// parseHeader reads a header of the plain shape the executor sends on the
// render path ({"kind":"body","t":"done","r":7}): one object, no
// whitespace, known keys spelled exactly, values that are plain strings,
// unsigned integers or booleans. It reports false for anything else, and
// the header is then left for encoding/json, whose result this is
// whenever it reports true.
func parseHeader(s []byte, h *header) bool {
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' {
		return false
	}
	i := 1
	if s[i] == '}' {
		return i == len(s)-1
	}
	for {
		kb, next, ok := plainString(s, i)
		key := string(kb) // no allocation: only compared
		if !ok || next >= len(s) || s[next] != ':' {
			return false
		}
		i = next + 1
		if i >= len(s) {
			return false
		}
		switch c := s[i]; {
		case c == '"':
			val, next, ok := plainString(s, i)
			if !ok {
				return false
			}
			var dst *string
			switch key {
			case "t":
				dst = &h.T
			case "b":
				dst = &h.B
			case "name":
				dst = &h.Name
			case "file":
				dst = &h.File
			case "dir":
				dst = &h.Dir
			case "map":
				dst = &h.Map
			case "id":
				dst = &h.ID
			case "why":
				dst = &h.Why
			case "node":
				dst = &h.Node
			case "kind":
				dst = &h.Kind
			case "k":
				dst = &h.K
			default:
				return false
			}
			*dst = internedValue(val)
			i = next
		case c >= '0' && c <= '9':
			j := i
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			digits := s[i:j]
			if len(digits) > 1 && digits[0] == '0' {
				return false // not JSON
			}
			n, err := strconv.ParseUint(string(digits), 10, 64)
			if err != nil {
				return false
			}
			switch key {
			case "r":
				h.R = n
			case "n":
				h.N = n
			case "pid":
				if n > uint64(maxInt) {
					return false
				}
				h.PID = int(n)
			default:
				return false
			}
			i = j
		case c == 't' || c == 'f':
			v := c == 't'
			lit := "false"
			if v {
				lit = "true"
			}
			if len(s)-i < len(lit) || string(s[i:i+len(lit)]) != lit {
				return false
			}
			switch key {
			case "sink":
				h.Sink = v
			case "updates":
				h.Updates = v
			default:
				return false
			}
			i += len(lit)
		default:
			return false
		}
		if i >= len(s) {
			return false
		}
		switch s[i] {
		case ',':
			i++
		case '}':
			return i == len(s)-1
		default:
			return false
		}
	}
}

const maxInt = int(^uint(0) >> 1)

// plainString reads the JSON string starting at s[i] (a quote) when it has
// no escapes and only printable ASCII; it returns its contents and the
// index after its closing quote.
func plainString(s []byte, i int) ([]byte, int, bool) {
	if i >= len(s) || s[i] != '"' {
		return nil, 0, false
	}
	for j := i + 1; j < len(s); j++ {
		switch c := s[j]; {
		case c == '"':
			return s[i+1 : j], j + 1, true
		case c < 0x20 || c >= 0x7f || c == '\\':
			return nil, 0, false
		}
	}
	return nil, 0, false
}

// internedValue is string(b), without an allocation for the frame types
// and answer kinds every render reads.
func internedValue(b []byte) string {
	switch string(b) {
	case "done":
		return "done"
	case "body":
		return "body"
	case "start":
		return "start"
	case "chunk":
		return "chunk"
	case "streamed":
		return "streamed"
	}
	return string(b)
}
