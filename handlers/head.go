package handlers

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strings"
)

// A JSON or form body carries its password inside, so the prechecks run on
// its head before it is decoded: the top-level field names and the values of
// the fields the prechecks read, taken from the bytes without building the
// rest. Decoding builds Go values many times larger than their text (a
// 2-byte array element costs about 32), which must not happen before the
// password passed.

// precheckFields are the fields whose values the prechecks read.
var precheckFields = [...]string{"password", "protocolVersion"}

func isPrecheckField(name string) bool {
	return name == precheckFields[0] || name == precheckFields[1]
}

// rawJSON is a precheck field whose JSON value is an array or object, kept
// as its compacted text (Fields.Text returns it).
type rawJSON string

// jsonHead reads the head of a JSON object body: every top-level name (up
// to maxEchoedBytes of them, then Fields.namesCut) and the values of the
// precheck fields. It answers the same 400s as DecodeJSONObject for a body
// that is not a JSON object.
func jsonHead(data []byte) (*Fields, *HTTPError) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, badRequest("Invalid JSON body: the body is empty.")
	}
	if pos, ok := validJSON(data); !ok {
		return nil, badRequest("Invalid JSON body: %s.", syntaxError(data, pos))
	}
	i := skipJSONSpace(data, 0)
	if data[i] != '{' {
		return nil, badRequest("Invalid JSON body: %s.", errNotObject)
	}
	f := &Fields{metadataComplete: true}
	for i++; ; {
		i = skipJSONSpace(data, i)
		switch data[i] {
		case '}':
			return f, nil
		case ',':
			i++
			continue
		}
		keyEnd := jsonStringEnd(data, i)
		key := data[i:keyEnd]
		i = skipJSONSpace(data, keyEnd) + 1 // past ':'
		i = skipJSONSpace(data, i)
		valueEnd, tooDeep := jsonValueEnd(data, i)
		if tooDeep {
			return nil, badRequest("Invalid JSON body: %s.", errTooDeep)
		}
		headMember(f, key, data[i:valueEnd])
		i = valueEnd
	}
}

// headMember records one member of a valid JSON object in a head: its name,
// and its value if it is a precheck field.
func headMember(f *Fields, keyLiteral, value []byte) {
	key := jsonStringValue(keyLiteral)
	if isPrecheckField(key) {
		f.set(key, jsonHeadValue(value))
	} else {
		f.noteName(key)
	}
}

// jsonHeadValue is a precheck field's value: a scalar as the decoder gives
// it, an array or object as rawJSON.
func jsonHeadValue(raw []byte) any {
	switch raw[0] {
	case '"':
		return jsonStringValue(raw)
	case 't':
		return true
	case 'f':
		return false
	case 'n':
		return nil
	case '[', '{':
		var compact bytes.Buffer
		_ = json.Compact(&compact, raw)
		return rawJSON(compact.String())
	default:
		return json.Number(raw)
	}
}

// skipJSONSpace returns the index of the first non-space byte from i.
func skipJSONSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}

// jsonStringValue returns the text of a valid JSON string literal, as the
// body's decoder reads it (invalid UTF-8 kept as sent, not replaced).
func jsonStringValue(lit []byte) string {
	inner := lit[1 : len(lit)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return string(inner)
	}
	v, _ := parseJSONValue(lit)
	s, _ := v.(string)
	return s
}

// jsonValueEnd returns the index just past the valid JSON value starting at
// i, a member of the top-level object, and whether the body then nests
// deeper than maxJSONDepth (the decoder's bound, which counts that object).
func jsonValueEnd(data []byte, i int) (end int, tooDeep bool) {
	switch data[i] {
	case '"':
		return jsonStringEnd(data, i), false
	case '[', '{':
		depth := 0
		for j := i; ; j++ {
			switch data[j] {
			case '"':
				j = jsonStringEnd(data, j) - 1
			case '[', '{':
				depth++
				if depth >= maxJSONDepth {
					return 0, true
				}
			case ']', '}':
				depth--
				if depth == 0 {
					return j + 1, false
				}
			}
		}
	default:
		j := i
		for j < len(data) && !strings.ContainsRune(",}] \t\r\n", rune(data[j])) {
			j++
		}
		return j, false
	}
}

// formHead reads the head of a URL-encoded form body: every name (up to
// maxEchoedBytes of them) and the first value of the precheck fields. It
// answers the same 400 as decodeForm for a bad escape in what it reads.
func formHead(data []byte) (*Fields, *HTTPError) {
	f := &Fields{metadataComplete: true}
	rest := data
	for len(rest) > 0 {
		var pair []byte
		pair, rest, _ = bytes.Cut(rest, []byte{'&'})
		if len(pair) == 0 {
			continue
		}
		rawName, rawValue, _ := bytes.Cut(pair, []byte{'='})
		if f.namesCut && !mayBePrecheckField(rawName) {
			continue
		}
		name, err := url.QueryUnescape(string(rawName))
		if err != nil {
			return nil, badRequest("Invalid form body: %s.", echo(err.Error()))
		}
		switch {
		case name == "":
		case isPrecheckField(name):
			if _, seen := f.Lookup(name); seen {
				continue
			}
			value, err := url.QueryUnescape(string(rawValue))
			if err != nil {
				return nil, badRequest("Invalid form body: %s.", echo(err.Error()))
			}
			f.addString(name, value)
		default:
			f.noteName(name)
		}
	}
	return f, nil
}

// mayBePrecheckField reports whether an escaped form name may decode to a
// precheck field (the names are short: anything longer with escapes is
// still checked).
func mayBePrecheckField(raw []byte) bool {
	return len(raw) <= 3*len("protocolVersion")
}
