package gojaengine

// Bounds on the Go recursion inside goja. goja counts JavaScript frames
// (SetMaxCallStackSize) but not the Go frames of its built-in functions:
// when a built-in reaches another built-in through a conversion or a
// callback that goja makes in Go (ToPrimitive calling toString, join calling
// each element's toString, a getter, Reflect.apply, a bound function), no
// JavaScript frame is pushed, and `o.toString = String.prototype.trim;
// String(o)` or String() of a deeply nested array grows the goroutine's
// stack until Go ends the process ("fatal error: stack overflow", which no
// recover can catch). goja stays unmodified: instead every built-in function
// of a runtime is wrapped, once, when the runtime is made, in a Go function
// that counts how many built-ins are running and throws a RangeError past
// maxNativeDepth. The wrapping replaces the function's Go entry point inside
// goja's function object (nativeFuncObject.f), which goja's public API does
// not reach: its layout is checked once (gojaNativeLayout) and a mismatch
// makes the engine refuse to start rather than touch memory it does not
// understand. The other recursions of goja's Go code (Array.prototype.flat,
// JSON.stringify and JSON.parse, Proxy chains) recurse inside one built-in
// and are bounded in nesting.js, run before env.js, with the host functions
// below.

import (
	_ "embed"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/dop251/goja"

	"github.com/gorender/gorender/jsvm/inproc"
)

// maxNativeDepth bounds how many goja built-in functions may run nested in
// one runtime. Legitimate code nests a few (a map callback calling a sort);
// each level costs about a kilobyte of Go stack. It is below half of
// maxCallStackSize (a built-in called from JavaScript takes a frame, its
// callback another) so that a recursion through built-ins ends with this
// catchable RangeError rather than goja's uncatchable stack overflow, whose
// unwinding through built-ins costs seconds (see maxCallStackSize).
const maxNativeDepth = 4000

// maxNesting bounds the nesting of data the guarded built-ins walk
// (JSON.stringify, JSON.parse, Array.prototype.flat, Proxy chains): about
// what V8's stack allows, far below what would strain goja's Go stack.
const maxNesting = 5000

// stackOverflowMessage is V8's text for a RangeError of exhausted stack.
const stackOverflowMessage = "Maximum call stack size exceeded"

type (
	gojaCall      = func(goja.FunctionCall) goja.Value
	gojaConstruct = func(args []goja.Value, newTarget *goja.Object) *goja.Object
)

// gojaLayout is where goja's function objects keep their Go entry points.
type gojaLayout struct {
	// call is the offset of the f field (func(goja.FunctionCall)
	// goja.Value) in each concrete type of built-in and bound function.
	call map[reflect.Type]uintptr
	// native is the built-in functions' type, and construct the offset of
	// their construct field (what new calls).
	native    reflect.Type
	construct uintptr
}

// gojaNativeLayout finds the layout by reflection on sample objects.
var gojaNativeLayout = sync.OnceValues(func() (*gojaLayout, error) {
	fail := func(what string) (*gojaLayout, error) {
		return nil, fmt.Errorf("github.com/dop251/goja: its internal layout is not the one gorender was built for: %s", what)
	}
	if _, ok := reflect.TypeFor[goja.Object]().FieldByName("self"); !ok {
		return fail("Object.self")
	}
	rt := goja.New()
	native := rt.ToValue(func(goja.FunctionCall) goja.Value { return nil }).(*goja.Object)
	bound, err := rt.RunString("(function () {}).bind(null)")
	if err != nil {
		return nil, err
	}
	layout := &gojaLayout{call: map[reflect.Type]uintptr{}}
	for _, sample := range []struct {
		obj  *goja.Object
		name string
	}{{native, "nativeFuncObject"}, {bound.(*goja.Object), "boundFuncObject"}} {
		impl := gojaImpl(sample.obj)
		if impl.Kind() != reflect.Pointer || impl.Type().Elem().Kind() != reflect.Struct || impl.Type().Elem().Name() != sample.name {
			return fail(sample.name + ": not the object's implementation")
		}
		st := impl.Type().Elem()
		f, ok := st.FieldByName("f")
		if !ok || f.Type != reflect.TypeFor[gojaCall]() {
			return fail(sample.name + ".f")
		}
		layout.call[impl.Type()] = fieldOffset(st, f.Index)
		if sample.name == "nativeFuncObject" {
			c, ok := st.FieldByName("construct")
			if !ok || c.Type != reflect.TypeFor[gojaConstruct]() {
				return fail(sample.name + ".construct")
			}
			layout.native, layout.construct = impl.Type(), fieldOffset(st, c.Index)
		}
	}
	return layout, nil
})

// fieldOffset is the offset of the (possibly promoted) field at index in st.
func fieldOffset(st reflect.Type, index []int) uintptr {
	var off uintptr
	t := st
	for _, i := range index {
		field := t.Field(i)
		off += field.Offset
		t = field.Type
	}
	return off
}

// gojaImpl is the implementation behind a goja object (its self field).
func gojaImpl(o *goja.Object) reflect.Value {
	v := reflect.ValueOf(o).Elem().FieldByName("self")
	if v.IsNil() {
		return reflect.Value{}
	}
	return v.Elem()
}

// gojaEntry returns where o keeps its Go entry point, or nil when o is not a
// built-in or bound function.
func gojaEntry(layout *gojaLayout, o *goja.Object) *gojaCall {
	impl := gojaImpl(o)
	if !impl.IsValid() {
		return nil
	}
	off, ok := layout.call[impl.Type()]
	if !ok {
		return nil
	}
	return (*gojaCall)(unsafe.Add(unsafe.Pointer(impl.Pointer()), off))
}

// gojaConstructEntry returns where the built-in o keeps what new calls, or
// nil when o is not a built-in.
func gojaConstructEntry(layout *gojaLayout, o *goja.Object) *gojaConstruct {
	impl := gojaImpl(o)
	if !impl.IsValid() || impl.Type() != layout.native {
		return nil
	}
	return (*gojaConstruct)(unsafe.Add(unsafe.Pointer(impl.Pointer()), layout.construct))
}

// nativeGuard counts the built-in functions running in one runtime.
type nativeGuard struct {
	vm     *goja.Runtime
	layout *gojaLayout
	depth  int
}

// guard wraps o's Go entry point, if o is a built-in or bound function and
// not wrapped yet, in one that counts and bounds the nesting of built-ins.
func (g *nativeGuard) guard(o *goja.Object, seen map[*gojaCall]struct{}) {
	entry := gojaEntry(g.layout, o)
	if entry == nil || *entry == nil {
		return
	}
	if _, done := seen[entry]; done {
		return
	}
	seen[entry] = struct{}{}
	*entry = g.wrap(*entry)
}

func (g *nativeGuard) wrap(call gojaCall) gojaCall {
	return func(c goja.FunctionCall) goja.Value {
		if g.depth >= maxNativeDepth {
			panic(g.rangeError(stackOverflowMessage))
		}
		g.depth++
		defer func() { g.depth-- }()
		return call(c)
	}
}

// rangeError makes a RangeError through the constructor's construct path,
// which is not wrapped: it works at the depth limit.
func (g *nativeGuard) rangeError(message string) *goja.Object {
	ctor, ok := goja.AssertConstructor(g.vm.Get("RangeError"))
	if !ok {
		return g.vm.NewTypeError(message)
	}
	o, err := ctor(nil, g.vm.ToValue(message))
	if err != nil {
		return g.vm.NewTypeError(message)
	}
	return o
}

//go:embed guard.js
var gojaGuardSource string

// gojaBuiltins is a program that returns goja's built-in functions (see
// guard.js), made once per process.
var gojaBuiltins = sync.OnceValues(func() (*goja.Program, error) {
	v, err := goja.New().RunScript("gorender-guard.js", gojaGuardSource)
	if err != nil {
		return nil, err
	}
	var exprs []string
	if err := goja.New().ExportTo(v, &exprs); err != nil {
		return nil, err
	}
	return goja.Compile("gorender-builtins.js", "[\n"+strings.Join(exprs, ",\n")+"\n]", true)
})

// guardNatives wraps every built-in function of the runtime (guard.js
// lists them), and makes Function.prototype.bind wrap
// the functions it returns, so that a chain of bound functions counts too.
func (v *vm) guardNatives() error {
	layout, err := gojaNativeLayout()
	if err != nil {
		return err
	}
	prg, err := gojaBuiltins()
	if err != nil {
		return err
	}
	list, err := v.rt.RunProgram(prg)
	if err != nil {
		return err
	}
	g := &nativeGuard{vm: v.rt, layout: layout}
	fns := list.ToObject(v.rt)
	n := int(fns.Get("length").ToInteger())
	seen := make(map[*gojaCall]struct{}, n)
	for i := 0; i < n; i++ {
		if o, ok := fns.Get(strconv.Itoa(i)).(*goja.Object); ok {
			g.guard(o, seen)
		}
	}
	bind, ok := v.rt.Get("Function").ToObject(v.rt).Get("prototype").ToObject(v.rt).Get("bind").(*goja.Object)
	if !ok {
		return errors.New("built-in bind (Function.prototype.bind) missing")
	}
	entry := gojaEntry(layout, bind)
	if entry == nil {
		return errors.New("built-in bind (Function.prototype.bind) is not a native function")
	}
	guardedBind := *entry
	*entry = func(c goja.FunctionCall) goja.Value {
		bound := guardedBind(c)
		if o, ok := bound.(*goja.Object); ok {
			if e := gojaEntry(layout, o); e != nil && *e != nil {
				*e = g.wrap(*e)
			}
		}
		return bound
	}
	v.natives = g
	return v.limitAllocations(layout)
}

// typedArrays are goja's typed array constructors and their element sizes.
var typedArrays = map[string]int64{
	"Int8Array": 1, "Uint8Array": 1, "Uint8ClampedArray": 1, "Int16Array": 2, "Uint16Array": 2,
	"Int32Array": 4, "Uint32Array": 4, "Float32Array": 4, "Float64Array": 8, "BigInt64Array": 8, "BigUint64Array": 8,
}

// limitAllocations bounds goja's built-ins that allocate, in one call, as
// much as their caller asks (allocLimit): ArrayBuffer and typed arrays of a
// length, String.prototype.repeat, padStart and padEnd, join. Strings also
// stop at V8's longest (RangeError "Invalid string length", as in Node).
// Arguments whose conversion runs JavaScript (valueOf, toString) are
// converted once here and handed on converted.
func (v *vm) limitAllocations(layout *gojaLayout) error {
	rt := v.rt
	builtin := func(path ...string) (*goja.Object, error) {
		v := rt.GlobalObject().Get(path[0])
		for _, name := range path[1:] {
			o, ok := v.(*goja.Object)
			if !ok {
				return nil, fmt.Errorf("%s missing", strings.Join(path, "."))
			}
			v = o.Get(name)
		}
		o, ok := v.(*goja.Object)
		if !ok {
			return nil, fmt.Errorf("%s missing", strings.Join(path, "."))
		}
		return o, nil
	}
	wrapConstruct := func(name string, wrap func(gojaConstruct) gojaConstruct) error {
		o, err := builtin(name)
		if err != nil {
			return err
		}
		entry := gojaConstructEntry(layout, o)
		if entry == nil || *entry == nil {
			return fmt.Errorf("%s is not a built-in constructor", name)
		}
		*entry = wrap(*entry)
		return nil
	}
	wrapMethod := func(ctor, method string, wrap func(gojaCall) gojaCall) error {
		o, err := builtin(ctor, "prototype", method)
		if err != nil {
			return err
		}
		entry := gojaEntry(layout, o)
		if entry == nil || *entry == nil {
			return fmt.Errorf("%s.prototype.%s is not a built-in", ctor, method)
		}
		*entry = wrap(*entry)
		return nil
	}
	invalidLength := func(units float64) {
		if units > maxStringLength {
			panic(v.newError(&inproc.HostError{Name: "RangeError", Message: "Invalid string length"}))
		}
	}
	checkUnits := func(what string, units float64) {
		invalidLength(units)
		v.checkAlloc(what, int64(units))
	}

	if err := wrapConstruct("ArrayBuffer", func(construct gojaConstruct) gojaConstruct {
		return func(args []goja.Value, newTarget *goja.Object) *goja.Object {
			if len(args) > 0 {
				n := args[0].ToNumber()
				args = append([]goja.Value{n}, args[1:]...)
				v.checkAlloc("Array buffer allocation failed", int64(min(n.ToFloat(), math.MaxInt64)))
			}
			return construct(args, newTarget)
		}
	}); err != nil {
		return err
	}
	for name, size := range typedArrays {
		if err := wrapConstruct(name, func(construct gojaConstruct) gojaConstruct {
			return func(args []goja.Value, newTarget *goja.Object) *goja.Object {
				if len(args) > 0 {
					if _, source := args[0].(*goja.Object); !source {
						n := args[0].ToNumber().ToFloat()
						v.checkAlloc("Array buffer allocation failed", int64(min(n*float64(size), math.MaxInt64)))
					}
				}
				return construct(args, newTarget)
			}
		}); err != nil {
			return err
		}
	}
	// thisString converts a method's this once (undefined and null are
	// left for the built-in to refuse).
	thisString := func(c goja.FunctionCall) (goja.FunctionCall, float64, bool) {
		if goja.IsUndefined(c.This) || goja.IsNull(c.This) {
			return c, 0, false
		}
		s := c.This.ToString()
		c.This = s
		return c, float64(s.(goja.String).Length()), true
	}
	// argNumber converts argument i to a number once.
	argNumber := func(c *goja.FunctionCall, i int) float64 {
		if i >= len(c.Arguments) {
			return math.NaN()
		}
		args := append([]goja.Value(nil), c.Arguments...)
		args[i] = args[i].ToNumber()
		c.Arguments = args
		return args[i].ToFloat()
	}
	if err := wrapMethod("String", "repeat", func(call gojaCall) gojaCall {
		return func(c goja.FunctionCall) goja.Value {
			c, units, ok := thisString(c)
			if ok {
				if count := argNumber(&c, 0); units > 0 && count > 1 && !math.IsInf(count, 1) {
					checkUnits("String.prototype.repeat", units*math.Trunc(count))
				}
			}
			return call(c)
		}
	}); err != nil {
		return err
	}
	for _, method := range []string{"padStart", "padEnd"} {
		if err := wrapMethod("String", method, func(call gojaCall) gojaCall {
			return func(c goja.FunctionCall) goja.Value {
				c, units, ok := thisString(c)
				if ok {
					if length := argNumber(&c, 0); length > units {
						if len(c.Arguments) > 1 && !goja.IsUndefined(c.Arguments[1]) {
							c.Arguments[1] = c.Arguments[1].ToString()
						}
						checkUnits("String.prototype."+method, math.Trunc(length))
					}
				}
				return call(c)
			}
		}); err != nil {
			return err
		}
	}
	// join: at least the separators, for an array (whose length reading
	// runs no JavaScript) and a separator that is not an object.
	return wrapMethod("Array", "join", func(call gojaCall) gojaCall {
		return func(c goja.FunctionCall) goja.Value {
			if a, ok := c.This.(*goja.Object); ok && a.ClassName() == "Array" {
				sep := 1.0
				if s := c.Argument(0); !goja.IsUndefined(s) {
					if _, object := s.(*goja.Object); object {
						return call(c)
					}
					sep = float64(s.ToString().(goja.String).Length())
				}
				if n := a.Get("length").ToFloat(); n > 1 {
					checkUnits("Array.prototype.join", (n-1)*sep)
				}
			}
			return call(c)
		}
	})
}

// maxStringLength is V8's longest string in UTF-16 units (2^29 - 24):
// Node throws RangeError "Invalid string length" past it.
const maxStringLength = 1<<29 - 24

// maxJSONLength is the longest text JSON.stringify makes, in UTF-16 units:
// V8's longest string (2^29 - 24). Past it, a RangeError as in Node, before
// goja's buffer grows: shared subobjects make the text grow exponentially
// with the data (a = {x: a, y: a}, sixty times).
const maxJSONLength = maxStringLength

// jsonStringify is one JSON.stringify in progress (see installJSONBounds).
type jsonStringify struct {
	// path is the objects being serialized, outermost first.
	path []*goja.Object
	// replacer is the caller's replacer function, or nil.
	replacer goja.Callable
	length   int64
	calls    int
}

// nestingSource bounds goja's JSON, Array.prototype.flat and Proxy chains
// with the host functions of installJSONBounds.
//
//go:embed nesting.js
var nestingSource string

var nestingProgram = sync.OnceValues(func() (*goja.Program, error) {
	return goja.Compile("gorender-nesting.js", nestingSource, true)
})

// boundNesting runs nesting.js in the runtime, before the environment: what
// env.js and the bundle then find of JSON, flat and Proxy is bounded.
func (v *vm) boundNesting() error {
	fn, err := v.runCompiled(nestingProgram)
	if err != nil {
		return err
	}
	install, ok := goja.AssertFunction(fn)
	if !ok {
		return errors.New("nesting.js is not a function")
	}
	host := v.rt.NewObject()
	if err := v.installJSONBounds(host); err != nil {
		return err
	}
	_, err = install(goja.Undefined(), host)
	return err
}

// installJSONBounds adds to nesting.js's host object what bounds goja's JSON:
// jsonStringify(value, replacer, space) runs goja's JSON.stringify with a
// replacer of the host's that follows the nesting and the length of the
// text; jsonNestingExceeds(text) scans a text JSON.parse is about to read.
func (v *vm) installJSONBounds(h *goja.Object) error {
	rt := v.rt
	stringify, ok := goja.AssertFunction(rt.Get("JSON").ToObject(rt).Get("stringify"))
	if !ok {
		return errors.New("JSON.stringify missing")
	}
	var active []*jsonStringify
	tooDeep := func() *goja.Object {
		return v.newError(&inproc.HostError{Name: "RangeError", Message: fmt.Sprintf("%s (JSON.stringify: data nested deeper than %d levels)", stackOverflowMessage, maxNesting)})
	}
	replacer := rt.ToValue(func(c goja.FunctionCall) goja.Value {
		s := active[len(active)-1]
		key, value := c.Argument(0), c.Argument(1)
		if s.replacer != nil {
			v, err := s.replacer(c.This, key, value)
			if err != nil {
				panic(err)
			}
			value = v
		}
		s.calls++
		if s.calls&1023 == 0 && v.interrupted.Load() {
			// Unwind goja's stringify: the engine's interrupt, pending,
			// then stops the render.
			panic(v.newError(&inproc.HostError{Name: "Error", Message: "JSON.stringify: the render was interrupted"}))
		}
		if k, ok := key.(goja.String); ok {
			s.length += int64(k.Length()) + 4
		}
		if v, ok := value.(goja.String); ok {
			s.length += int64(v.Length()) + 2
		}
		if s.length > maxJSONLength {
			panic(v.newError(&inproc.HostError{Name: "RangeError", Message: "Invalid string length"}))
		}
		holder, _ := c.This.(*goja.Object)
		for n := len(s.path); n > 0 && s.path[n-1] != holder; n-- {
			s.path = s.path[:n-1]
		}
		if o, ok := value.(*goja.Object); ok {
			if len(s.path) >= maxNesting {
				panic(tooDeep())
			}
			s.path = append(s.path, o)
		}
		return value
	})
	set := func(name string, v any) error { return h.Set(name, v) }
	if err := set("maxNesting", maxNesting); err != nil {
		return err
	}
	if err := set("jsonStringify", func(c goja.FunctionCall) goja.Value {
		s := &jsonStringify{}
		if fn, ok := goja.AssertFunction(c.Argument(1)); ok {
			s.replacer = fn
		}
		active = append(active, s)
		defer func() { active = active[:len(active)-1] }()
		out, err := stringify(goja.Undefined(), c.Argument(0), replacer, c.Argument(2))
		if err != nil {
			panic(err)
		}
		return out
	}); err != nil {
		return err
	}
	return set("jsonNestingExceeds", func(c goja.FunctionCall) goja.Value {
		return rt.ToValue(jsonNestingExceeds(c.Argument(0).String(), maxNesting))
	})
}

// jsonNestingExceeds reports whether the JSON text opens more than limit
// arrays and objects at once (strings skipped).
func jsonNestingExceeds(text string, limit int) bool {
	depth := 0
	inString := false
	for i := 0; i < len(text); i++ {
		c := text[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '[', '{':
			if depth++; depth > limit {
				return true
			}
		case ']', '}':
			depth--
		}
	}
	return false
}

// checkAlloc throws a RangeError in JavaScript when n bytes are more than
// one allocation may take (inproc.AllocLimit).
func (v *vm) checkAlloc(what string, n int64) {
	if msg := v.host.AllocLimit().Exceeded(what, n); msg != "" {
		panic(v.newError(&inproc.HostError{Name: "RangeError", Message: msg}))
	}
}
