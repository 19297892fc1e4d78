//go:build 386 || arm

package quickjsengine

import lib "modernc.org/libquickjs"

// On 32-bit targets a JSValue is NaN-boxed, with the tag in the high word.

// qjsException is JS_EXCEPTION: what a C function returns once it threw.
var qjsException = lib.TJSValue(uint64(uint32(lib.EJS_TAG_EXCEPTION)) << 32)

// qjsIsException reports whether an engine call failed (JS_EXCEPTION).
func qjsIsException(v lib.TJSValue) bool { return int32(v>>32) == lib.EJS_TAG_EXCEPTION }

// qjsBool is JS_NewBool.
func qjsBool(b bool) lib.TJSValue {
	v := lib.TJSValue(uint64(uint32(lib.EJS_TAG_BOOL)) << 32)
	if b {
		v |= 1
	}
	return v
}

var qjsNull = lib.TJSValue(uint64(uint32(lib.EJS_TAG_NULL)) << 32)

// qjsNormTag is JS_VALUE_GET_NORM_TAG: the value's tag, any double (a
// NaN-boxed word whose high half is not a tag) being JS_TAG_FLOAT64.
func qjsNormTag(v lib.TJSValue) int64 {
	tag := int32(v >> 32)
	if uint32(tag-lib.EJS_TAG_FIRST) >= uint32(lib.EJS_TAG_FLOAT64-lib.EJS_TAG_FIRST) {
		return lib.EJS_TAG_FLOAT64
	}
	return int64(tag)
}
