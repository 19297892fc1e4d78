//go:build !(386 || arm)

package quickjsengine

import (
	"unsafe"

	lib "modernc.org/libquickjs"
)

// qjsException is JS_EXCEPTION: what a C function returns once it threw.
var qjsException = lib.TJSValue{Ftag: lib.EJS_TAG_EXCEPTION}

// qjsIsException reports whether an engine call failed (JS_EXCEPTION).
func qjsIsException(v lib.TJSValue) bool { return v.Ftag == lib.EJS_TAG_EXCEPTION }

// qjsBool is JS_NewBool: the payload zero-extended over the union.
func qjsBool(b bool) lib.TJSValue {
	v := lib.TJSValue{Ftag: lib.EJS_TAG_BOOL}
	if b {
		*(*uint64)(unsafe.Pointer(&v)) = 1
	}
	return v
}

var qjsNull = lib.TJSValue{Ftag: lib.EJS_TAG_NULL}

// qjsNormTag is JS_VALUE_GET_NORM_TAG: the value's tag, any double being
// JS_TAG_FLOAT64.
func qjsNormTag(v lib.TJSValue) int64 { return v.Ftag }
