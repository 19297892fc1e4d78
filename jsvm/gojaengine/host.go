package gojaengine

import (
	"errors"

	"github.com/dop251/goja"

	"github.com/gorender/gorender/jsvm/inproc"
)

// bindHost makes the host functions (inproc.Functions) callable from
// JavaScript: one native function each, converting arguments and replies.
func (v *vm) bindHost() *goja.Object {
	raw := v.rt.NewObject()
	for _, f := range inproc.Functions {
		fn := f.Fn
		if err := raw.Set(f.Name, func(c goja.FunctionCall) goja.Value {
			return inproc.ValueOf(fn(v.host, args{c}), hostValues{v})
		}); err != nil {
			panic(err)
		}
	}
	return raw
}

// args are a host function's arguments (inproc.Args).
type args struct{ c goja.FunctionCall }

func (a args) String(i int) string  { return a.c.Argument(i).String() }
func (a args) Number(i int) float64 { return a.c.Argument(i).ToFloat() }
func (a args) Bool(i int) bool      { return a.c.Argument(i).ToBoolean() }

func (a args) Bytes(i int) ([]byte, bool) {
	if ab, ok := a.c.Argument(i).Export().(goja.ArrayBuffer); ok {
		return ab.Bytes(), true
	}
	return nil, false
}

// Uint8Array is the array itself, whose export aliases its bytes: reading
// .buffer, .byteOffset and .byteLength in JavaScript costs more in goja than
// encoding into it (React's streaming renderers call encodeInto per chunk).
func (a args) Uint8Array(i int) ([]byte, bool) {
	b, ok := a.c.Argument(i).Export().([]byte)
	return b, ok
}

func (a args) Primitive(i int) any {
	switch x := a.c.Argument(i).Export().(type) {
	case int64:
		return float64(x)
	case string, bool, float64, nil:
		return x
	default:
		return a.String(i)
	}
}

// hostValues makes goja values of host function replies (inproc.Values);
// a thrown error is a panic goja turns into the JavaScript exception.
type hostValues struct{ v *vm }

func (m hostValues) Undefined() goja.Value        { return goja.Undefined() }
func (m hostValues) Null() goja.Value             { return goja.Null() }
func (m hostValues) Bool(b bool) goja.Value       { return m.v.rt.ToValue(b) }
func (m hostValues) Number(f float64) goja.Value  { return m.v.rt.ToValue(f) }
func (m hostValues) String(s string) goja.Value   { return m.v.rt.ToValue(s) }
func (m hostValues) Bytes(b []byte) goja.Value    { return m.v.rt.ToValue(m.v.rt.NewArrayBuffer(b)) }
func (m hostValues) Array(items []any) goja.Value { return m.v.array(items) }
func (m hostValues) Throw(e *inproc.HostError) goja.Value {
	panic(m.v.newError(e))
}

func (m hostValues) JSON(text string) goja.Value {
	value, err := m.v.jsonParse(goja.Undefined(), m.v.rt.ToValue(text))
	if err != nil {
		panic(err)
	}
	return value
}

func (m hostValues) Script(name, code, errorName string) goja.Value {
	value, err := m.v.rt.RunScript(name, code)
	if err == nil {
		return value
	}
	if errors.As(err, new(*goja.InterruptedError)) {
		panic(err)
	}
	panic(m.v.newError(&inproc.HostError{Name: errorName, Message: m.v.error(err).Error()}))
}

func (m hostValues) RunProgram(name string) goja.Value {
	prg, err := embeddedProgram(name)
	if err != nil {
		panic(m.v.newError(&inproc.HostError{Name: "SyntaxError", Message: err.Error()}))
	}
	value, err := m.v.rt.RunProgram(prg)
	if err != nil {
		panic(err)
	}
	return value
}

// array makes a JavaScript array of strings, numbers, bools, nulls and
// nested arrays.
func (v *vm) array(items []any) goja.Value {
	values := make([]any, len(items))
	for i, item := range items {
		switch item := item.(type) {
		case []any:
			values[i] = v.array(item)
		case nil:
			values[i] = goja.Null()
		default:
			values[i] = item
		}
	}
	return v.rt.NewArray(values...)
}

// newError makes the error a failed host call throws.
func (v *vm) newError(e *inproc.HostError) *goja.Object {
	var o *goja.Object
	if c, ok := goja.AssertConstructor(v.rt.Get(e.Name)); ok {
		if obj, err := c(nil, v.rt.ToValue(e.Message)); err == nil {
			o = obj
		}
	}
	if o == nil {
		o = v.rt.NewTypeError(e.Message)
	}
	for _, p := range e.Props {
		_ = o.Set(p.Name, p.Value)
	}
	return o
}
