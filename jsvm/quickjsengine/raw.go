package quickjsengine

// The few places where the QuickJS host layer goes below modernc.org/quickjs's
// public API, to the C library it wraps (modernc.org/libquickjs). The public
// API has no ArrayBuffers, no promise state, no file name for evaluated code,
// no memory usage and no way to see a thrown value itself (only its text), all
// of which the environment needs. Everything here is pinned to
// modernc.org/quickjs v0.27.0: the layout of its VM and Value types is checked
// once (qjsLayout), and a mismatch makes engines.New("quickjs") fail with a
// clear error instead of touching memory it does not understand.
//
// Rules kept here: only functions that run no JavaScript are called directly,
// except eval and evalBytecode, which run on the VM's own goroutine with no Go
// function of ours able to panic through them (the host dispatcher recovers
// everything); every JSValue obtained here is either returned as a
// quickjs.Value the caller frees, or freed before returning. The interrupt
// handler is replaced by one that also stops a render at its memory limit
// and on its own flag, which VM.Interrupt's flag (cleared whenever Go calls
// into the VM afresh) cannot be relied on for.

import (
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"unsafe"

	"modernc.org/libc"
	lib "modernc.org/libquickjs"
	"modernc.org/quickjs"
)

// qjsValueLayout mirrors quickjs.Value: {vm *VM; v lib.TJSValue}.
type qjsValueLayout struct {
	vm *quickjs.VM
	v  lib.TJSValue
}

// qjsOffsets are the offsets of the VM internals the bridge reads.
type qjsOffsets struct {
	ctx     uintptr // VM.state.cContext (uintptr)
	runtime uintptr // VM.state.runtime (*runtime)
	rt      uintptr // runtime.cRuntime (uintptr)
	tls     uintptr // runtime.tls (*libc.TLS)
}

// qjsLayout checks, once, that modernc.org/quickjs has the layout the bridge
// was written for, and returns the offsets of the fields it reads.
var qjsLayout = sync.OnceValues(func() (qjsOffsets, error) {
	var off qjsOffsets
	fail := func(what string) (qjsOffsets, error) {
		return off, fmt.Errorf("modernc.org/quickjs %s: its internal layout is not the one gorender was built for (v0.27.0): %s", quickjsModuleVersion(), what)
	}
	vt := reflect.TypeOf(quickjs.Value{})
	if vt.NumField() != 2 || vt.Field(0).Name != "vm" || vt.Field(0).Type != reflect.TypeOf((*quickjs.VM)(nil)) ||
		vt.Field(1).Name != "v" || vt.Field(1).Type != reflect.TypeFor[lib.TJSValue]() ||
		vt.Size() != unsafe.Sizeof(qjsValueLayout{}) || vt.Field(1).Offset != unsafe.Offsetof(qjsValueLayout{}.v) {
		return fail("Value")
	}
	mt := reflect.TypeOf(quickjs.VM{})
	state, ok := mt.FieldByName("state")
	if !ok || state.Type.Kind() != reflect.Struct {
		return fail("VM.state")
	}
	ctx, ok := state.Type.FieldByName("cContext")
	if !ok || ctx.Type.Kind() != reflect.Uintptr {
		return fail("VM.state.cContext")
	}
	rtField, ok := state.Type.FieldByName("runtime")
	if !ok || rtField.Type.Kind() != reflect.Pointer || rtField.Type.Elem().Kind() != reflect.Struct {
		return fail("VM.state.runtime")
	}
	cRuntime, ok := rtField.Type.Elem().FieldByName("cRuntime")
	if !ok || cRuntime.Type.Kind() != reflect.Uintptr {
		return fail("runtime.cRuntime")
	}
	tls, ok := rtField.Type.Elem().FieldByName("tls")
	if !ok || tls.Type != reflect.TypeOf((*libc.TLS)(nil)) {
		return fail("runtime.tls")
	}
	off.ctx = state.Offset + ctx.Offset
	off.runtime = state.Offset + rtField.Offset
	off.rt = cRuntime.Offset
	off.tls = tls.Offset
	return off, nil
})

// quickjsModuleVersion is the linked modernc.org/quickjs version, for messages.
func quickjsModuleVersion() string {
	return "(QuickJS " + quickjs.Version() + ")"
}

// qjsRaw is what the bridge needs of one VM: its C context, runtime and TLS.
type qjsRaw struct {
	vm  *quickjs.VM
	tls *libc.TLS
	ctx uintptr
	rt  uintptr
}

func newQJSRaw(vm *quickjs.VM) (qjsRaw, error) {
	off, err := qjsLayout()
	if err != nil {
		return qjsRaw{}, err
	}
	base := unsafe.Pointer(vm)
	runtime := *(*unsafe.Pointer)(unsafe.Add(base, off.runtime))
	if runtime == nil {
		return qjsRaw{}, errors.New("quickjs: the VM is closed")
	}
	return qjsRaw{
		vm:  vm,
		ctx: *(*uintptr)(unsafe.Add(base, off.ctx)),
		rt:  *(*uintptr)(unsafe.Add(runtime, off.rt)),
		tls: *(**libc.TLS)(unsafe.Add(runtime, off.tls)),
	}, nil
}

// cptr turns an address in C memory (which the Go garbage collector does not
// manage) into a pointer.
func cptr(p uintptr) unsafe.Pointer { return unsafe.Add(nil, p) }

// qjsRawValue returns the JSValue a quickjs.Value holds (borrowed).
func qjsRawValue(v *quickjs.Value) lib.TJSValue {
	return (*qjsValueLayout)(unsafe.Pointer(v)).v
}

// value wraps a JSValue the caller owns into a quickjs.Value, which takes
// over that reference.
func (x qjsRaw) value(v lib.TJSValue) quickjs.Value {
	var out quickjs.Value
	*(*qjsValueLayout)(unsafe.Pointer(&out)) = qjsValueLayout{vm: x.vm, v: v}
	return out
}

// cBytes copies b into C memory (NUL-terminated); free it with x.free.
func (x qjsRaw) cBytes(b string) uintptr {
	p := libc.Xmalloc(x.tls, libc.Tsize_t(len(b)+1))
	if p == 0 {
		return 0
	}
	dst := unsafe.Slice((*byte)(cptr(p)), len(b)+1)
	copy(dst, b)
	dst[len(b)] = 0
	return p
}

func (x qjsRaw) free(p uintptr) { libc.Xfree(x.tls, p) }

// errOOM is a failure to get C memory for a host operation.
var errOOM = errors.New("out of memory")

// exception takes the pending exception out of the context.
func (x qjsRaw) exception() quickjs.Value {
	return x.value(lib.XJS_GetException(x.tls, x.ctx))
}

// eval evaluates source as global code named filename (flags: 0 runs it,
// lib.MJS_EVAL_FLAG_COMPILE_ONLY returns the compiled function). On an
// exception it returns ok false and the thrown value.
func (x qjsRaw) eval(source, filename string, flags int32) (v quickjs.Value, ok bool, err error) {
	src := x.cBytes(source)
	if src == 0 {
		return v, false, errOOM
	}
	defer x.free(src)
	name := x.cBytes(filename)
	if name == 0 {
		return v, false, errOOM
	}
	defer x.free(name)
	r := lib.XJS_Eval(x.tls, x.ctx, src, lib.Tsize_t(len(source)), name, lib.MJS_EVAL_TYPE_GLOBAL|flags)
	if qjsIsException(r) {
		return x.exception(), false, nil
	}
	return x.value(r), true, nil
}

// compile compiles source as global code named filename into bytecode.
func (x qjsRaw) compile(source, filename string) ([]byte, *quickjs.Error, error) {
	fn, ok, err := x.eval(source, filename, lib.MJS_EVAL_FLAG_COMPILE_ONLY)
	if err != nil {
		return nil, nil, err
	}
	defer fn.Free()
	if !ok {
		return nil, quickjs.ErrorFromValue(fn), nil
	}
	const sizeofSize = int(unsafe.Sizeof(libc.Tsize_t(0)))
	plen := x.tls.Alloc(sizeofSize)
	defer x.tls.Free(sizeofSize)
	p := lib.XJS_WriteObject(x.tls, x.ctx, plen, qjsRawValue(&fn), lib.MJS_WRITE_OBJ_BYTECODE)
	if p == 0 {
		ex := x.exception()
		defer ex.Free()
		return nil, quickjs.ErrorFromValue(ex), nil
	}
	n := int(*(*libc.Tsize_t)(cptr(plen)))
	out := make([]byte, n)
	copy(out, unsafe.Slice((*byte)(cptr(p)), n))
	lib.Xjs_free(x.tls, x.ctx, p)
	return out, nil, nil
}

// evalBytecode runs bytecode made by compile. On an exception it returns ok
// false and the thrown value.
func (x qjsRaw) evalBytecode(bc []byte) (v quickjs.Value, ok bool, err error) {
	buf := x.cBytes(unsafe.String(unsafe.SliceData(bc), len(bc)))
	if buf == 0 {
		return v, false, errOOM
	}
	defer x.free(buf)
	obj := lib.XJS_ReadObject(x.tls, x.ctx, buf, lib.Tsize_t(len(bc)), lib.MJS_READ_OBJ_BYTECODE)
	if qjsIsException(obj) {
		return x.exception(), false, nil
	}
	r := lib.XJS_EvalFunction(x.tls, x.ctx, obj) // takes over obj
	if qjsIsException(r) {
		return x.exception(), false, nil
	}
	return x.value(r), true, nil
}

// arrayBufferInPlace is the memory of an ArrayBuffer value, not copied:
// valid until JavaScript runs again.
func (x qjsRaw) arrayBufferInPlace(v *quickjs.Value) ([]byte, bool) {
	raw := qjsRawValue(v)
	if lib.XJS_GetClassID(x.tls, raw) != lib.EJS_CLASS_ARRAY_BUFFER {
		return nil, false
	}
	return x.arrayBufferData(raw)
}

// arrayBufferData is the memory of an ArrayBuffer, valid until JavaScript
// runs again.
func (x qjsRaw) arrayBufferData(raw lib.TJSValue) ([]byte, bool) {
	const sizeofSize = int(unsafe.Sizeof(libc.Tsize_t(0)))
	psize := x.tls.Alloc(sizeofSize)
	defer x.tls.Free(sizeofSize)
	p := lib.XJS_GetArrayBuffer(x.tls, x.ctx, psize, raw)
	if p == 0 {
		// Detached: drop the TypeError it threw.
		if lib.XJS_HasException(x.tls, x.ctx) != 0 {
			ex := x.exception()
			ex.Free()
		}
		return nil, false
	}
	n := int(*(*libc.Tsize_t)(cptr(psize)))
	if n == 0 {
		return []byte{}, true
	}
	return unsafe.Slice((*byte)(cptr(p)), n), true
}

// uint8ArrayData is the memory a Uint8Array views, to write into, valid
// until JavaScript runs again.
func (x qjsRaw) uint8ArrayData(v *quickjs.Value) ([]byte, bool) {
	raw := qjsRawValue(v)
	if lib.XJS_GetClassID(x.tls, raw) != lib.EJS_CLASS_UINT8_ARRAY {
		return nil, false
	}
	const sizeofSize = int(unsafe.Sizeof(libc.Tsize_t(0)))
	p := x.tls.Alloc(2 * sizeofSize)
	defer x.tls.Free(2 * sizeofSize)
	buf := lib.XJS_GetTypedArrayBuffer(x.tls, x.ctx, raw, p, p+uintptr(sizeofSize), 0)
	if qjsIsException(buf) {
		ex := x.exception()
		ex.Free()
		return nil, false
	}
	// The array keeps its buffer alive: this reference is not needed.
	defer lib.XFreeValue(x.tls, x.ctx, buf)
	off := int(*(*libc.Tsize_t)(cptr(p)))
	n := int(*(*libc.Tsize_t)(cptr(p + uintptr(sizeofSize))))
	data, ok := x.arrayBufferData(buf)
	if !ok || off < 0 || n < 0 || off+n > len(data) {
		return nil, false
	}
	return data[off : off+n], true
}

// parseJSON returns the value JSON.parse makes of text.
func (x qjsRaw) parseJSON(text string) (quickjs.Value, error) {
	buf := x.cBytes(text)
	if buf == 0 {
		return quickjs.Value{}, errOOM
	}
	defer x.free(buf)
	name := x.cBytes("<host>")
	if name == 0 {
		return quickjs.Value{}, errOOM
	}
	defer x.free(name)
	r := lib.XJS_ParseJSON(x.tls, x.ctx, buf, lib.Tsize_t(len(text)), name)
	if qjsIsException(r) {
		ex := x.exception()
		ex.Free()
		return quickjs.Value{}, errors.New("the host's JSON does not parse")
	}
	return x.value(r), nil
}

// newArrayBuffer returns a new ArrayBuffer holding a copy of b.
func (x qjsRaw) newArrayBuffer(b []byte) (quickjs.Value, error) {
	buf := x.cBytes(unsafe.String(unsafe.SliceData(b), len(b)))
	if buf == 0 {
		return quickjs.Value{}, errOOM
	}
	defer x.free(buf)
	r := lib.XJS_NewArrayBufferCopy(x.tls, x.ctx, buf, lib.Tsize_t(len(b)))
	if qjsIsException(r) {
		ex := x.exception()
		ex.Free()
		return quickjs.Value{}, errOOM
	}
	return x.value(r), nil
}

// Promise states as JS_PromiseState reports them.
const (
	qjsNotAPromise      = -1
	qjsPromisePending   = 0
	qjsPromiseFulfilled = 1
	qjsPromiseRejected  = 2
)

func (x qjsRaw) promiseState(v *quickjs.Value) int {
	return int(lib.XJS_PromiseState(x.tls, x.ctx, qjsRawValue(v)))
}

// promiseResult returns the value or reason of a settled promise.
func (x qjsRaw) promiseResult(v *quickjs.Value) quickjs.Value {
	return x.value(lib.XJS_PromiseResult(x.tls, x.ctx, qjsRawValue(v)))
}

// mallocSize is the bytes the VM has allocated now.
func (x qjsRaw) mallocSize() int64 {
	return qjsMallocSize(x.rt)
}

func qjsMallocSize(rt uintptr) int64 {
	return int64((*lib.TJSRuntime)(cptr(rt)).Fmalloc_ctx.Fmalloc_state.Fmalloc_size)
}

// runGC runs the cycle collector.
func (x qjsRaw) runGC() { lib.XJS_RunGC(x.tls, x.rt) }

// qjsMemoryUsage is what JS_ComputeMemoryUsage reports, in part.
type qjsMemoryUsage struct {
	MallocSize  int64 // bytes allocated
	MallocCount int64 // live allocations
	Objects     int64
	Strings     int64
	Atoms       int64
	Shapes      int64
}

func (x qjsRaw) memoryUsage() qjsMemoryUsage {
	size := int(unsafe.Sizeof(lib.TJSMemoryUsage{}))
	p := x.tls.Alloc(size)
	defer x.tls.Free(size)
	lib.XJS_ComputeMemoryUsage(x.tls, x.rt, p)
	u := (*lib.TJSMemoryUsage)(cptr(p))
	return qjsMemoryUsage{
		MallocSize:  int64(u.Fmalloc_size),
		MallocCount: int64(u.Fmalloc_count),
		Objects:     int64(u.Fobj_count),
		Strings:     int64(u.Fstr_count),
		Atoms:       int64(u.Fatom_count),
		Shapes:      int64(u.Fshape_count),
	}
}

// qjsControl is the interrupt handler's state, in C memory: the handler runs
// inside the engine with only a C pointer to it.
type qjsControl struct {
	wrapperFlag uintptr // modernc.org/quickjs's own interrupt flag (int32), set by VM.Interrupt
	stop        int32   // set when the render's context ends
	exceeded    int32   // set when the handler stopped the VM for memory
	memLimit    int64   // stop the VM when it has allocated more (0: never)
}

// installControl replaces the VM's interrupt handler by qjsInterruptHandler,
// which also honours the wrapper's own interrupt flag; restore puts the
// wrapper's handler back (before Close) and frees the control block.
func (x qjsRaw) installControl(memLimit int64) (ctl uintptr, restore func()) {
	r := (*lib.TJSRuntime)(cptr(x.rt))
	origHandler, origOpaque := r.Finterrupt_handler, r.Finterrupt_opaque
	ctl = libc.Xcalloc(x.tls, 1, libc.Tsize_t(unsafe.Sizeof(qjsControl{})))
	if ctl == 0 {
		return 0, func() {}
	}
	c := (*qjsControl)(cptr(ctl))
	c.wrapperFlag = origOpaque // the wrapper's interruptData starts with its flag
	c.memLimit = memLimit
	lib.XJS_SetInterruptHandler(x.tls, x.rt, qjsFuncPtr(qjsInterruptHandler), ctl)
	return ctl, func() {
		lib.XJS_SetInterruptHandler(x.tls, x.rt, origHandler, origOpaque)
		libc.Xfree(x.tls, ctl)
	}
}

// qjsInterruptHandler is called by the engine now and then while JavaScript
// runs; a non-zero answer stops it with an uncatchable error.
func qjsInterruptHandler(tls *libc.TLS, rt, opaque uintptr) int32 {
	c := (*qjsControl)(cptr(opaque))
	if c.wrapperFlag != 0 && atomic.LoadInt32((*int32)(cptr(c.wrapperFlag))) != 0 {
		return 1
	}
	if atomic.LoadInt32(&c.stop) != 0 {
		return 1
	}
	if c.memLimit > 0 && qjsMallocSize(rt) > c.memLimit {
		atomic.StoreInt32(&c.exceeded, 1)
		return 1
	}
	return 0
}

// qjsFuncPtr is how the translated C code refers to a Go function: the data
// word of an interface holding it.
func qjsFuncPtr(f any) uintptr {
	type iface [2]uintptr
	return (*iface)(unsafe.Pointer(&f))[1]
}

// qjsFree frees v unless it holds nothing (the zero Value, or
// quickjs.UndefinedValue, which belong to no VM).
func qjsFree(v *quickjs.Value) {
	if v.VM() != nil {
		v.Free()
	}
}
