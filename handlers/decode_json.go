package handlers

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"unsafe"

	"github.com/bytedance/sonic/ast"
	"github.com/bytedance/sonic/encoder"
)

// maxJSONDepth bounds the nesting of a JSON body, so that a hostile body
// cannot exhaust the stack.
const maxJSONDepth = 512

// DecodeJSONObject decodes a JSON object (a JSON body, or the first NDJSON
// line of an incremental render) into Fields, keeping the key order. It
// answers 400 `Invalid JSON body: <reason>` when data is not a JSON object.
// data must not change while the Fields are in use: strings may share its
// bytes.
func DecodeJSONObject(data []byte) (*Fields, *HTTPError) {
	if members, ok := scanFlatJSON(data); ok {
		return buildFlat(data, members)
	}
	return decodeJSONGeneric(data)
}

// decodeJSONGeneric is DecodeJSONObject for any JSON: every body that is
// not flat (scanFlatJSON), and every error.
func decodeJSONGeneric(data []byte) (*Fields, *HTTPError) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, badRequest("Invalid JSON body: the body is empty.")
	}
	if pos, ok := validJSON(data); !ok {
		return nil, badRequest("Invalid JSON body: %s.", syntaxError(data, pos))
	}
	b := &jsonBuilder{fields: &Fields{}}
	// data is never modified after this point, so it may back the strings.
	if err := ast.Preorder(unsafe.String(unsafe.SliceData(data), len(data)), b, nil); err != nil {
		if errors.Is(err, errNotObject) || errors.Is(err, errTooDeep) {
			return nil, badRequest("Invalid JSON body: %s.", err)
		}
		herr := badRequest("Invalid JSON body: malformed JSON.")
		herr.Cause = fmt.Errorf("decode JSON body: %w", err)
		return nil, herr
	}
	return b.fields, nil
}

// parseJSONValue parses one JSON value of any type.
func parseJSONValue(data []byte) (any, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("empty value")
	}
	if pos, ok := validJSON(data); !ok {
		return nil, errors.New(syntaxError(data, pos))
	}
	b := &jsonBuilder{anyRoot: true}
	if err := ast.Preorder(string(data), b, nil); err != nil {
		return nil, fmt.Errorf("decode JSON: %w", err)
	}
	return b.root, nil
}

// validJSON reports whether data is one valid JSON value (RFC 8259), else
// the offset of the first offending byte. sonic's validator lets raw control
// characters through inside strings, which JSON (and JSON.parse) forbids, so
// those are checked here. Invalid UTF-8 is let through.
func validJSON(data []byte) (pos int, ok bool) {
	if ok, pos := encoder.Valid(data); !ok {
		return pos, false
	}
	if !hasControlByte(data) {
		return 0, true // the gem's compact JSON: nothing to place
	}
	inString, escaped := false, false
	for i, c := range data {
		switch {
		case escaped:
			escaped = false
		case !inString:
			inString = c == '"'
		case c == '\\':
			escaped = true
		case c == '"':
			inString = false
		case c < 0x20:
			return i, false
		}
	}
	return 0, true
}

// hasControlByte reports whether data has a byte below 0x20, eight bytes at
// a time (a byte-by-byte string state machine was a third of decoding a
// 1.2 MB JSON body).
func hasControlByte(data []byte) bool {
	const highs, limit = 0x8080808080808080, 0x20 * 0x0101010101010101
	i := 0
	for ; i+8 <= len(data); i += 8 {
		x := binary.LittleEndian.Uint64(data[i:])
		// A byte is below 0x20 iff subtracting 0x20 borrows into its high bit
		// while its own high bit is clear.
		if (x-limit)&^x&highs != 0 {
			return true
		}
	}
	for ; i < len(data); i++ {
		if data[i] < 0x20 {
			return true
		}
	}
	return false
}

// syntaxError describes where data stops being valid JSON, without echoing it.
func syntaxError(data []byte, pos int) string {
	if pos < 0 || pos >= len(data) {
		return "unexpected end of JSON input"
	}
	return fmt.Sprintf("syntax error at byte offset %d", pos)
}

var (
	errNotObject = errors.New("expected a JSON object")
	errTooDeep   = fmt.Errorf("nested deeper than %d levels", maxJSONDepth)
)

// jsonBuilder is an ast.Visitor that builds Go values; the top-level object's
// members go, in order, into fields (or the whole value into root when
// anyRoot is set).
type jsonBuilder struct {
	fields  *Fields
	anyRoot bool
	root    any
	stack   []jsonFrame
}

// jsonFrame is an array or object under construction.
type jsonFrame struct {
	array  []any
	object map[string]any
	isObj  bool
	key    string
}

// value stores a completed value into its parent.
func (b *jsonBuilder) value(v any) error {
	n := len(b.stack)
	if n == 0 {
		if !b.anyRoot {
			return errNotObject
		}
		b.root = v
		return nil
	}
	top := &b.stack[n-1]
	switch {
	case !top.isObj:
		top.array = append(top.array, v)
	case n == 1 && !b.anyRoot:
		b.fields.set(top.key, v)
	default:
		top.object[top.key] = v
	}
	return nil
}

// push opens a container, bounding the depth.
func (b *jsonBuilder) push(frame jsonFrame) error {
	if len(b.stack) >= maxJSONDepth {
		return errTooDeep
	}
	b.stack = append(b.stack, frame)
	return nil
}

// pop closes the innermost container and stores it into its parent.
func (b *jsonBuilder) pop() error {
	n := len(b.stack)
	top := b.stack[n-1]
	b.stack = b.stack[:n-1]
	if n == 1 && !b.anyRoot {
		return nil // the top-level object's members are already in fields
	}
	if top.isObj {
		return b.value(top.object)
	}
	if top.array == nil {
		top.array = []any{}
	}
	return b.value(top.array)
}

// OnNull implements ast.Visitor.
func (b *jsonBuilder) OnNull() error { return b.value(nil) }

// OnBool implements ast.Visitor.
func (b *jsonBuilder) OnBool(v bool) error { return b.value(v) }

// OnString implements ast.Visitor.
func (b *jsonBuilder) OnString(v string) error { return b.value(v) }

// OnInt64 implements ast.Visitor.
func (b *jsonBuilder) OnInt64(_ int64, n json.Number) error { return b.value(n) }

// OnFloat64 implements ast.Visitor.
func (b *jsonBuilder) OnFloat64(_ float64, n json.Number) error { return b.value(n) }

// OnObjectBegin implements ast.Visitor.
func (b *jsonBuilder) OnObjectBegin(int) error {
	if len(b.stack) == 0 && !b.anyRoot {
		return b.push(jsonFrame{isObj: true})
	}
	return b.push(jsonFrame{isObj: true, object: map[string]any{}})
}

// OnObjectKey implements ast.Visitor.
func (b *jsonBuilder) OnObjectKey(key string) error {
	b.stack[len(b.stack)-1].key = key
	return nil
}

// OnObjectEnd implements ast.Visitor.
func (b *jsonBuilder) OnObjectEnd() error { return b.pop() }

// OnArrayBegin implements ast.Visitor.
func (b *jsonBuilder) OnArrayBegin(int) error {
	if len(b.stack) == 0 && !b.anyRoot {
		return errNotObject
	}
	return b.push(jsonFrame{})
}

// OnArrayEnd implements ast.Visitor.
func (b *jsonBuilder) OnArrayEnd() error { return b.pop() }
