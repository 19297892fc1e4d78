package handlers

import (
	"encoding/json"
	"strings"

	"github.com/bytedance/sonic"

	"github.com/gorender/gorender/auth"
)

// Fields is every field of a request, whatever its encoding (PROTOCOL.md
// §3.1), in arrival order, with the getters of §3.2.
//
// A value keeps the shape its encoding gives it:
//   - JSON body: string, bool, json.Number, nil (null), []any or
//     map[string]any; a repeated key keeps its first position and its last
//     value, as JSON.parse does;
//   - form and multipart bodies: []string, one element per occurrence;
//   - raw JS request: string (the body and the headers), []any (the
//     dependency bundle header).
//
// A field may also carry a deferred error (a malformed header), reported only
// when the field is read with CheckedString, Strings or Bool, so that the
// prechecks of §4 answer first. Scalar getters read the first value of a repeated
// form or multipart field.
type Fields struct {
	// Files are the multipart file parts, already streamed to the Stager,
	// in arrival order.
	Files []StagedFile

	entries []field
	// index maps a name to its entry once there are more than
	// scannedFields; fewer are found by a scan.
	index map[string]int
	// metadataComplete is set when every metadata field is already known
	// even though the body is not read yet (a raw JS request's headers, the
	// head of a JSON or form body): a missing protocolVersion is then final
	// for EarlyPrecheck.
	metadataComplete bool
	// namesCut is set when a head stopped recording names (noteName).
	namesCut   bool
	namesBytes int
}

// StagedFile is a multipart file part that was streamed to the Stager.
type StagedFile struct {
	// Field is the part's form name (e.g. "bundle_<id>", "assetsToCopy0").
	Field string
	// Filename is the part's filename parameter exactly as sent (not
	// sanitised: validate it before using it as a path).
	Filename string
	// Path is where the Stager wrote the part's bytes.
	Path string
	// Size is the number of bytes written.
	Size int64
}

// field is one received name with its value and deferred error.
type field struct {
	name     string
	value    any
	hasValue bool
	err      *HTTPError
	// unlisted marks a precheck field a head read after it stopped
	// recording names (namesCut): its value counts, but it is not among
	// the Names, which stay the prefix of the body's names the head saw.
	unlisted bool
}

// scannedFields is the most entries found by a scan rather than through
// index. A request of the gem has 6 to 8 fields: a scan of 8 names is
// cheaper than building a map per request.
const scannedFields = 8

// entry returns the field received under name.
func (f *Fields) entry(name string) (*field, bool) {
	if f == nil {
		return nil, false
	}
	if f.index == nil {
		for i := range f.entries {
			if f.entries[i].name == name {
				return &f.entries[i], true
			}
		}
		return nil, false
	}
	i, ok := f.index[name]
	if !ok {
		return nil, false
	}
	return &f.entries[i], true
}

// slot returns the field for name, appending a new one if it was not seen.
func (f *Fields) slot(name string) *field {
	if e, ok := f.entry(name); ok {
		return e
	}
	if f.entries == nil {
		f.entries = make([]field, 0, scannedFields)
	}
	f.entries = append(f.entries, field{name: name, unlisted: f.namesCut})
	switch {
	case f.index != nil:
		f.index[name] = len(f.entries) - 1
	case len(f.entries) > scannedFields:
		f.index = make(map[string]int, 2*len(f.entries))
		for i, e := range f.entries {
			f.index[e.name] = i
		}
	}
	return &f.entries[len(f.entries)-1]
}

// addString appends one occurrence of a form or multipart field.
func (f *Fields) addString(name, value string) {
	e := f.slot(name)
	list, _ := e.value.([]string)
	e.value, e.hasValue = append(list, value), true
}

// set stores a JSON or raw-request value, replacing an earlier one.
func (f *Fields) set(name string, value any) {
	e := f.slot(name)
	e.value, e.hasValue = value, true
}

// noteName records a received name without its value, as a head does,
// until the names recorded fill what an error answer echoes
// (maxEchoedBytes): the rest are only counted as cut, so that a body of
// many names costs no more than its echo.
func (f *Fields) noteName(name string) {
	if _, seen := f.entry(name); seen || f.namesCut {
		return
	}
	if f.namesBytes+len(name) > maxEchoedBytes {
		f.namesCut = true
		return
	}
	f.namesBytes += len(name) + len(", ")
	f.slot(name)
}

// setError records a field that was received but whose value is unusable:
// it reads as absent in the prechecks and as err in the shape checks.
func (f *Fields) setError(name string, err *HTTPError) {
	e := f.slot(name)
	e.value, e.hasValue, e.err = nil, false, err
}

// Names returns the received field names, in arrival order, each once.
func (f *Fields) Names() []string {
	if f == nil {
		return nil
	}
	names := make([]string, 0, len(f.entries))
	for _, e := range f.entries {
		if !e.unlisted {
			names = append(names, e.name)
		}
	}
	return names
}

// SafeNames returns Names without the sensitive ones (auth.IsSensitiveName),
// for error bodies.
func (f *Fields) SafeNames() []string {
	var names []string
	for _, name := range f.Names() {
		if !auth.IsSensitiveName(name) {
			names = append(names, name)
		}
	}
	return names
}

// Lookup returns the value received under name (see Fields for its
// possible types); ok is false when the field is absent or carries only a
// deferred error.
func (f *Fields) Lookup(name string) (value any, ok bool) {
	e, found := f.entry(name)
	if !found || !e.hasValue {
		return nil, false
	}
	return e.value, true
}

// Text returns the text of a field whatever its type, ignoring a deferred
// error: a string as is (the first one of a repeated form field), a number
// or boolean as written, an array or object as compact JSON. present is
// false when the field is absent or null. The prechecks use it.
func (f *Fields) Text(name string) (text string, present bool) {
	v, ok := f.Lookup(name)
	if !ok {
		return "", false
	}
	switch v := v.(type) {
	case nil:
		return "", false
	case string:
		return v, true
	case []string:
		if len(v) == 0 {
			return "", false
		}
		return v[0], true
	case bool:
		if v {
			return "true", true
		}
		return "false", true
	case json.Number:
		return string(v), true
	case rawJSON:
		return string(v), true
	default:
		text, err := sonic.MarshalString(v)
		if err != nil {
			return "", true
		}
		return text, true
	}
}

// TypeOf names the type of a field as JavaScript's typeof would:
// "undefined" (absent), "string", "number", "boolean" or "object" (null,
// array, object).
func (f *Fields) TypeOf(name string) string {
	v, ok := f.Lookup(name)
	if !ok {
		return "undefined"
	}
	switch v.(type) {
	case string, []string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "boolean"
	default:
		return "object"
	}
}

// CheckedString reads a field that must be a string (unlike Text, which
// turns any value into text). present is false when the field is absent or
// null; err is the field's deferred error, or a 400
// `Invalid "<name>" field in render request.` when the value is not a string.
func (f *Fields) CheckedString(name string) (value string, present bool, err *HTTPError) {
	e, found := f.entry(name)
	if !found {
		return "", false, nil
	}
	if e.err != nil {
		return "", false, e.err
	}
	switch v := e.value.(type) {
	case nil:
		return "", false, nil
	case string:
		return v, true, nil
	case []string:
		if len(v) == 0 {
			return "", false, nil
		}
		return v[0], true, nil
	default:
		return "", true, invalidField(name)
	}
}

// Strings reads an array field with the convention of PROTOCOL.md §3.2: name
// first, then name+"[]" (name wins when both are present). A JSON array of
// strings or a repeated form/multipart field is used as is; a single
// non-empty string is a one-element list; missing, null or an empty string
// is absent (nil, nil). Indexed names (name+"[0]") are ignored. Any other
// value, or a deferred error, is returned as err.
func (f *Fields) Strings(name string) ([]string, *HTTPError) {
	for _, key := range []string{name, name + "[]"} {
		list, present, err := f.stringsAt(key)
		if err != nil {
			return nil, err
		}
		if present {
			return list, nil
		}
	}
	return nil, nil
}

// stringsAt reads one key of Strings.
func (f *Fields) stringsAt(key string) (list []string, present bool, err *HTTPError) {
	e, found := f.entry(key)
	if !found {
		return nil, false, nil
	}
	if e.err != nil {
		return nil, false, e.err
	}
	switch v := e.value.(type) {
	case nil:
		return nil, false, nil
	case string:
		if v == "" {
			return nil, false, nil
		}
		return []string{v}, true, nil
	case []string:
		if len(v) == 0 || (len(v) == 1 && v[0] == "") {
			return nil, false, nil
		}
		return append([]string(nil), v...), true, nil
	case []any:
		list := make([]string, 0, len(v))
		for _, item := range v {
			s, ok := item.(string)
			if !ok {
				return nil, true, invalidField(key)
			}
			list = append(list, s)
		}
		return list, true, nil
	default:
		return nil, true, invalidField(key)
	}
}

// Bool reads a boolean field (PROTOCOL.md §3.2): JSON true/false or the
// strings "true"/"false"; absent or null is false; anything else, or a
// deferred error, is a 400 `Invalid "<name>" field in render request.`.
func (f *Fields) Bool(name string) (bool, *HTTPError) {
	e, found := f.entry(name)
	if !found {
		return false, nil
	}
	if e.err != nil {
		return false, e.err
	}
	var s string
	switch v := e.value.(type) {
	case nil:
		return false, nil
	case bool:
		return v, nil
	case string:
		s = v
	case []string:
		if len(v) == 0 {
			return false, nil
		}
		s = v[0]
	default:
		return false, invalidField(name)
	}
	switch s {
	case "true":
		return true, nil
	case "false":
		return false, nil
	default:
		return false, invalidField(name)
	}
}

// deferredError returns the deferred error of the field name, if any.
func (f *Fields) deferredError(name string) *HTTPError {
	if e, found := f.entry(name); found {
		return e.err
	}
	return nil
}

// EchoNames is what error answers list of the received field names:
// comma-separated without the sensitive ones, "(none)" when there are none,
// at most maxEchoedBytes of them, then ", ...".
func (f *Fields) EchoNames() string {
	return joinNames(f.SafeNames(), f != nil && f.namesCut)
}

// joinNames formats names for an error body: comma-separated, or "(none)";
// past maxEchoedBytes, or when cut, it ends with "...".
func joinNames(names []string, cut bool) string {
	if len(names) == 0 && !cut {
		return "(none)"
	}
	var b strings.Builder
	for i, name := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		if b.Len()+len(name) > maxEchoedBytes {
			b.WriteString(truncateEcho(name, max(0, maxEchoedBytes-b.Len())))
			return b.String()
		}
		b.WriteString(name)
	}
	if cut {
		if len(names) > 0 {
			b.WriteString(", ")
		}
		b.WriteString("...")
	}
	return b.String()
}
