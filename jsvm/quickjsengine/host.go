package quickjsengine

// The Go half of the QuickJS engine's layer: one Go function, the
// dispatcher, that quickjs.js turns into one JavaScript function per host
// function (inproc.Functions, by index). One dispatcher per runtime, not
// one Go function per host function: the wrapper registers Go functions in
// a process-wide table of 32,767 entries.

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"modernc.org/quickjs"

	"github.com/gorender/gorender/jsvm/inproc"
)

// The dispatcher's own ops (quickjs.js), below the host functions' indexes.
const (
	opTakeError = -1 // the failure of the host call that returned FAIL
	opThrown    = -2 // (message, stack): the exception of the js call in progress
	opDraining  = -3 // are promise jobs running (inAsyncJob)
)

// dispatch is the Go function behind the host functions. It never panics
// into the engine: a panic fails the call and retires the runtime.
func (v *vm) dispatch(argv ...quickjs.Value) (ret quickjs.Value) {
	defer func() {
		if p := recover(); p != nil {
			if e, ok := p.(argError); ok {
				ret = v.failWith(&inproc.HostError{Name: "InternalError", Message: fmt.Sprintf("a host function's argument could not be read: %v", e.err)})
				return
			}
			// The call into JavaScript in progress fails with it, and the
			// runtime is retired (with the others of its render:
			// inproc's check). A host function that failed on another
			// runtime's panic (failOnPanic) passes that one on.
			hp, ok := p.(*inproc.HostPanic)
			if !ok {
				hp = &inproc.HostPanic{Value: p}
			}
			v.hostPanic = hp
			ret = v.failWith(&inproc.HostError{Name: "Error", Message: hp.Error()})
		}
	}()
	a := args{v: v, a: argv}
	if len(argv) == 0 {
		return quickjs.UndefinedValue
	}
	op := int(inproc.Int(a, 0))
	a.a = argv[1:]
	switch {
	case op == opTakeError:
		e := v.hostErr
		v.hostErr = nil
		if e == nil {
			e = &inproc.HostError{Name: "Error", Message: "host call failed"}
		}
		b, _ := json.Marshal(e)
		return v.str(string(b))
	case op == opThrown:
		v.thrown = &inproc.Exception{Message: a.String(0), Stack: a.String(1)}
		return quickjs.UndefinedValue
	case op == opDraining:
		return v.x.value(qjsBool(v.draining))
	case op >= 0 && op < len(inproc.Functions):
		return inproc.ValueOf(inproc.Functions[op].Fn(v.host, a), hostValues{v})
	}
	return quickjs.UndefinedValue
}

// args are a host function's arguments (inproc.Args), borrowed: valid
// during the call only.
type args struct {
	v *vm
	a []quickjs.Value
}

func (a args) any(i int) any {
	if i >= len(a.a) {
		return quickjs.Undefined{}
	}
	x, err := a.a[i].Any()
	if err != nil {
		// Not "undefined" in its place: a string too large to copy out
		// of the runtime's memory became the text "undefined".
		panic(argError{err})
	}
	return x
}

// argError is the panic of an argument the engine could not hand to Go
// (its copy did not fit the runtime's memory): the call throws, and the
// runtime goes on, as after any allocation that failed.
type argError struct{ err error }

func (a args) value(i int) *quickjs.Value {
	if i >= len(a.a) || a.a[i].IsUndefined() {
		return nil
	}
	return &a.a[i]
}

func (a args) String(i int) string {
	switch x := a.any(i).(type) {
	case string:
		return x
	case quickjs.Undefined:
		return "undefined"
	case nil:
		return "null"
	default:
		return fmt.Sprint(x)
	}
}

func (a args) Number(i int) float64 {
	switch x := a.any(i).(type) {
	case int:
		return float64(x)
	case float64:
		return x
	case bool:
		if x {
			return 1
		}
		return 0
	}
	return math.NaN()
}

func (a args) Bool(i int) bool {
	b, _ := a.any(i).(bool)
	return b
}

// Bytes is the memory of an ArrayBuffer argument, not copied (hashing or
// decoding a large buffer copied it onto the Go heap, outside QuickJS's
// memory limit): no JavaScript runs during the call, which is as long as
// inproc.Args promises it.
func (a args) Bytes(i int) ([]byte, bool) {
	if p := a.value(i); p != nil {
		return a.v.x.arrayBufferInPlace(p)
	}
	return nil, false
}

func (a args) Uint8Array(i int) ([]byte, bool) {
	if p := a.value(i); p != nil {
		return a.v.x.uint8ArrayData(p)
	}
	return nil, false
}

func (a args) Primitive(i int) any {
	switch x := a.any(i).(type) {
	case int:
		return float64(x)
	case string, bool, float64, nil:
		return x
	case quickjs.Undefined:
		return nil
	default:
		return fmt.Sprint(x)
	}
}

// hostValues makes QuickJS values of host function replies
// (inproc.Values); a thrown error is the FAIL sentinel quickjs.js throws on.
type hostValues struct{ v *vm }

func (m hostValues) Undefined() quickjs.Value       { return quickjs.UndefinedValue }
func (m hostValues) Null() quickjs.Value            { return m.v.x.value(qjsNull) }
func (m hostValues) Bool(b bool) quickjs.Value      { return m.v.x.value(qjsBool(b)) }
func (m hostValues) Number(f float64) quickjs.Value { return m.v.vm.NewFloat64(f) }
func (m hostValues) String(s string) quickjs.Value  { return m.v.str(s) }
func (m hostValues) JSON(text string) quickjs.Value { return m.v.json(text) }

func (m hostValues) Throw(e *inproc.HostError) quickjs.Value { return m.v.failWith(e) }

func (m hostValues) Bytes(b []byte) quickjs.Value {
	value, err := m.v.x.newArrayBuffer(b)
	if err != nil {
		return m.v.failWith(outOfMemory)
	}
	return value
}

// Array goes through JSON: one conversion in C instead of one call into the
// engine per element.
func (m hostValues) Array(items []any) quickjs.Value {
	text, err := json.Marshal(items)
	if err != nil {
		return m.v.failWith(&inproc.HostError{Name: "Error", Message: err.Error()})
	}
	return m.v.json(string(text))
}

func (m hostValues) Script(name, code, errorName string) quickjs.Value {
	value, err := m.v.RunScript(name, code)
	if err != nil {
		return m.v.failWith(&inproc.HostError{Name: errorName, Message: err.Error()})
	}
	return value
}

func (m hostValues) RunProgram(name string) quickjs.Value {
	bc, err := programAsset(name)
	if err != nil {
		return m.v.failWith(&inproc.HostError{Name: "SyntaxError", Message: err.Error()})
	}
	value, err := m.v.evalBytecode(bc)
	if err != nil {
		return m.v.failWith(&inproc.HostError{Name: "Error", Message: err.Error()})
	}
	return value
}

// outOfMemory is the error of a value the engine could not allocate.
var outOfMemory = &inproc.HostError{Name: "InternalError", Message: "out of memory"}

// failWith makes the dispatcher's answer a failure: quickjs.js throws e.
func (v *vm) failWith(e *inproc.HostError) quickjs.Value {
	v.hostErr = e
	return v.fail.Dup()
}

func (v *vm) str(s string) quickjs.Value {
	value, err := v.vm.NewString(s)
	if err != nil {
		return v.failWith(outOfMemory)
	}
	return value
}

func (v *vm) json(text string) quickjs.Value {
	value, err := v.x.parseJSON(text)
	if err != nil {
		if errors.Is(err, errOOM) {
			return v.failWith(outOfMemory)
		}
		return v.failWith(&inproc.HostError{Name: "Error", Message: err.Error()})
	}
	return value
}
