package quickjsengine

import (
	"errors"
	"fmt"

	"modernc.org/libc"
	lib "modernc.org/libquickjs"

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
	if qjsRawValue(&m).Ftag != int64(lib.EJS_TAG_OBJECT) {
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
		ok := fn.Ftag != int64(lib.EJS_TAG_EXCEPTION) &&
			lib.XJS_DefinePropertyValueStr(x.tls, x.ctx, qjsRawValue(&m), name, fn, lib.MJS_PROP_WRITABLE|lib.MJS_PROP_CONFIGURABLE) >= 0
		x.free(name)
		if !ok {
			exc := x.exception()
			exc.Free()
			return fmt.Errorf("define Math.%s: out of memory", f.name)
		}
	}
	return nil
}
