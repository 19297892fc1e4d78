package quickjsengine

import (
	"errors"
	"fmt"
	"math"
	"unsafe"

	"modernc.org/libc"
	lib "modernc.org/libquickjs"
	"modernc.org/quickjs"

	"github.com/gorender/gorender/jsvm/v8math"
)

// qjsMathFunc is one of Math's functions as QuickJS calls a C function of
// one (f1) or two (f2) doubles: the engine converts the arguments with
// ToNumber and boxes the result itself, as for its own Math.sin.
type qjsMathFunc struct {
	name   string
	length int32
	f1     func(*libc.TLS, float64) float64
	f2     func(*libc.TLS, float64, float64) float64
}

// qjsMathFuncs are made once per process and never freed: C function
// objects of every runtime point at them.
var qjsMathFuncs = func() []qjsMathFunc {
	var fs []qjsMathFunc
	for _, f := range v8math.Unary {
		compute := f.F
		fs = append(fs, qjsMathFunc{name: f.Name, length: 1,
			f1: func(_ *libc.TLS, x float64) float64 { return compute(x) }})
	}
	for _, f := range v8math.Binary {
		compute := f.F
		fs = append(fs, qjsMathFunc{name: f.Name, length: 2,
			f2: func(_ *libc.TLS, x, y float64) float64 { return compute(x, y) }})
	}
	return fs
}()

// useV8Math replaces Math's transcendental functions, whose last bits
// QuickJS takes from the translated C library, with C functions of the same
// name, length and property attributes (writable, configurable, not
// enumerable) that compute V8's (jsvm/v8math).
func (x qjsRaw) useV8Math() error {
	global := x.value(lib.XJS_GetGlobalObject(x.tls, x.ctx))
	defer global.Free()
	mathName := x.cBytes("Math")
	if mathName == 0 {
		return errOOM
	}
	m := x.value(lib.XJS_GetPropertyStr(x.tls, x.ctx, qjsRawValue(&global), mathName))
	x.free(mathName)
	defer m.Free()
	if qjsNormTag(qjsRawValue(&m)) != lib.EJS_TAG_OBJECT {
		return errors.New("built-in Math missing")
	}
	for _, f := range qjsMathFuncs {
		name := x.cBytes(f.name)
		if name == 0 {
			return errOOM
		}
		ptr, cproto := qjsFuncPtr(f.f1), lib.TJSCFunctionEnum(lib.EJS_CFUNC_f_f)
		if f.f2 != nil {
			ptr, cproto = qjsFuncPtr(f.f2), lib.TJSCFunctionEnum(lib.EJS_CFUNC_f_f_f)
		}
		fn := lib.XJS_NewCFunction2(x.tls, x.ctx, ptr, name, f.length, cproto, 0)
		ok := !qjsIsException(fn) &&
			lib.XJS_DefinePropertyValueStr(x.tls, x.ctx, qjsRawValue(&m), name, fn, lib.MJS_PROP_WRITABLE|lib.MJS_PROP_CONFIGURABLE) >= 0
		x.free(name)
		if !ok {
			exc := x.exception()
			exc.Free()
			return fmt.Errorf("define Math.%s: out of memory", f.name)
		}
	}
	return x.useV8Radix(&global)
}

// useV8Radix replaces Number.prototype.toString by a C function (name
// toString, length 1, writable and configurable as the built-in) that
// writes V8's digits for a number and a radix other than 10, QuickJS's
// differing in the last digits for radices that are not powers of two. It
// calls QuickJS's own toString, which it holds as its function data, for
// everything else: no radix or radix 10, an invalid radix, a this that is
// neither a number nor a Number object.
func (x qjsRaw) useV8Radix(global *quickjs.Value) error {
	get := func(obj *quickjs.Value, name string) (quickjs.Value, error) {
		p := x.cBytes(name)
		if p == 0 {
			return quickjs.Value{}, errOOM
		}
		defer x.free(p)
		v := x.value(lib.XJS_GetPropertyStr(x.tls, x.ctx, qjsRawValue(obj), p))
		if qjsNormTag(qjsRawValue(&v)) != lib.EJS_TAG_OBJECT {
			v.Free()
			return quickjs.Value{}, fmt.Errorf("built-in %s missing", name)
		}
		return v, nil
	}
	number, err := get(global, "Number")
	if err != nil {
		return err
	}
	defer number.Free()
	proto, err := get(&number, "prototype")
	if err != nil {
		return err
	}
	defer proto.Free()
	own, err := get(&proto, "toString")
	if err != nil {
		return err
	}
	valueOf, err := get(&proto, "valueOf")
	if err != nil {
		own.Free()
		return err
	}
	var slot lib.TJSValue
	data := libc.Xmalloc(x.tls, libc.Tsize_t(2*unsafe.Sizeof(slot)))
	if data == 0 {
		own.Free()
		valueOf.Free()
		return errOOM
	}
	*(*lib.TJSValue)(cptr(data)) = qjsRawValue(&own)
	*(*lib.TJSValue)(cptr(data + unsafe.Sizeof(slot))) = qjsRawValue(&valueOf)
	fn := lib.XJS_NewCFunctionData(x.tls, x.ctx, qjsFuncPtr(qjsNumberToString), 1, 0, 2, data) // holds its own references
	x.free(data)
	own.Free()
	valueOf.Free()
	if qjsIsException(fn) {
		exc := x.exception()
		exc.Free()
		return errOOM
	}
	const method = "toString"
	name, nameStr := x.cBytes("name"), x.cBytes(method)
	defer x.free(name)
	defer x.free(nameStr)
	if name == 0 || nameStr == 0 {
		v := x.value(fn)
		v.Free()
		return errOOM
	}
	if lib.XJS_DefinePropertyValueStr(x.tls, x.ctx, fn, name, lib.XJS_NewStringLen(x.tls, x.ctx, nameStr, libc.Tsize_t(len(method))), lib.MJS_PROP_CONFIGURABLE) < 0 ||
		lib.XJS_DefinePropertyValueStr(x.tls, x.ctx, qjsRawValue(&proto), nameStr, fn, lib.MJS_PROP_WRITABLE|lib.MJS_PROP_CONFIGURABLE) < 0 {
		exc := x.exception()
		exc.Free()
		return errors.New("define Number.prototype.toString: out of memory")
	}
	return nil
}

// qjsNumberToString is the C function useV8Radix installs; data[0] is
// QuickJS's own Number.prototype.toString, data[1] its own
// Number.prototype.valueOf (a Number object's number, as the specification's
// thisNumberValue reads it: no JavaScript runs).
func qjsNumberToString(tls *libc.TLS, ctx uintptr, this lib.TJSValue, argc int32, argv uintptr, _ int32, data uintptr) lib.TJSValue {
	own := *(*lib.TJSValue)(cptr(data))
	valueOf := *(*lib.TJSValue)(cptr(data + unsafe.Sizeof(own)))
	isNumber := func(v lib.TJSValue) bool {
		t := qjsNormTag(v)
		return t == lib.EJS_TAG_INT || t == lib.EJS_TAG_FLOAT64
	}
	if argc < 1 {
		return lib.XJS_Call(tls, ctx, own, this, argc, argv)
	}
	arg := *(*lib.TJSValue)(cptr(argv))
	if qjsNormTag(arg) == lib.EJS_TAG_UNDEFINED {
		return lib.XJS_Call(tls, ctx, own, this, argc, argv)
	}
	if qjsNormTag(this) == lib.EJS_TAG_OBJECT && lib.XJS_GetClassID(tls, this) == lib.EJS_CLASS_NUMBER {
		if this = lib.XJS_Call(tls, ctx, valueOf, this, 0, 0); qjsIsException(this) {
			return this
		}
	}
	if !isNumber(this) {
		return lib.XJS_Call(tls, ctx, own, this, argc, argv)
	}
	// The radix is converted once, in order after this (an object's
	// valueOf runs here, and QuickJS's own is then given its result).
	bp := tls.Alloc(16)
	defer tls.Free(16)
	if lib.XJS_ToFloat64(tls, ctx, bp, this) != 0 {
		return lib.XJS_Call(tls, ctx, own, this, argc, argv)
	}
	object := qjsNormTag(arg) == lib.EJS_TAG_OBJECT
	if lib.XJS_ToFloat64(tls, ctx, bp+8, arg) != 0 {
		if object {
			return qjsException
		}
		return lib.XJS_Call(tls, ctx, own, this, argc, argv)
	}
	value, radix := *(*float64)(cptr(bp)), math.Trunc(*(*float64)(cptr(bp + 8)))
	if !(radix >= 2 && radix <= 36) || radix == 10 {
		if !object {
			return lib.XJS_Call(tls, ctx, own, this, argc, argv)
		}
		if radix == 10 {
			return lib.XJS_Call(tls, ctx, own, this, 0, 0)
		}
		// An invalid radix: QuickJS's own throws its RangeError for
		// false (radix 0) as for any other.
		invalid := tls.Alloc(int(unsafe.Sizeof(arg)))
		defer tls.Free(int(unsafe.Sizeof(arg)))
		*(*lib.TJSValue)(cptr(invalid)) = qjsBool(false)
		return lib.XJS_Call(tls, ctx, own, this, 1, invalid)
	}
	s := v8math.FormatRadix(value, int(radix))
	buf := tls.Alloc(len(s))
	defer tls.Free(len(s))
	copy(unsafe.Slice((*byte)(cptr(buf)), len(s)), s)
	return lib.XJS_NewStringLen(tls, ctx, buf, libc.Tsize_t(len(s)))
}
