package jsvm

// The Go half of the QuickJS host layer: one Go function (the dispatcher)
// that quickjs_host.js builds the host object from. It only converts values;
// the work is in host.go and eventloop.go, as for goja.
//
// One dispatcher per runtime, not one Go function per host function: the
// wrapper registers Go functions in a process-wide table of 32,767 entries.

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"modernc.org/quickjs"

	"github.com/gorender/gorender/jsvm/eventloop"
	"github.com/gorender/gorender/jsvm/transform"
)

// qjsHostOps names the dispatcher's ops, in order (quickjs_host.js reads
// them by name).
var qjsHostOps = []string{
	"takeError", "thrown", "report", "draining",
	"setTimer", "setImmediate", "clearTimer", "timerRef", "timerHasRef", "timerRefresh",
	"lowerAsync",
	"processEnv", "processInfo", "hrtime", "now", "timeOrigin",
	"fsRead", "fsReadText", "fsStat", "fsReaddir", "fsRealpath", "compileModule",
	"randomBytes", "randomUUID", "hash",
	"utf8Encode", "utf8EncodeInto", "utf8Decode", "utf8Rest", "utf8Length",
	"sharedGet", "sharedSet", "sharedHas", "sharedRemove", "sharedClear", "sharedKeys", "hostFunc",
	"runOnOther",
	"streamChunk", "streamEnd", "streamError",
	"intlLoad", "intlLocaleData", "intlZoneOffset", "intlDefaultTimeZone", "intlDefaultLocale", "intlCollate", "intlCaseMap",
}

const (
	opTakeError = iota
	opThrown
	opReport
	opDraining
	opSetTimer
	opSetImmediate
	opClearTimer
	opTimerRef
	opTimerHasRef
	opTimerRefresh
	opLowerAsync
	opProcessEnv
	opProcessInfo
	opHrtime
	opNow
	opTimeOrigin
	opFsRead
	opFsReadText
	opFsStat
	opFsReaddir
	opFsRealpath
	opCompileModule
	opRandomBytes
	opRandomUUID
	opHash
	opUTF8Encode
	opUTF8EncodeInto
	opUTF8Decode
	opUTF8Rest
	opUTF8Length
	opSharedGet
	opSharedSet
	opSharedHas
	opSharedRemove
	opSharedClear
	opSharedKeys
	opHostFunc
	opRunOnOther
	opStreamChunk
	opStreamEnd
	opStreamError
	opIntlLoad
	opIntlLocaleData
	opIntlZoneOffset
	opIntlDefaultTimeZone
	opIntlDefaultLocale
	opIntlCollate
	opIntlCaseMap
	opCount
)

func init() {
	if len(qjsHostOps) != opCount {
		panic("jsvm: qjsHostOps and the op constants differ")
	}
}

// qjsArgs are the arguments of one dispatcher call (borrowed: valid during
// the call only).
type qjsArgs []quickjs.Value

func (a qjsArgs) any(i int) any {
	if i >= len(a) {
		return quickjs.Undefined{}
	}
	v, err := a[i].Any()
	if err != nil {
		return quickjs.Undefined{}
	}
	return v
}

func (a qjsArgs) str(i int) string {
	switch v := a.any(i).(type) {
	case string:
		return v
	case quickjs.Undefined:
		return "undefined"
	case nil:
		return "null"
	default:
		return fmt.Sprint(v)
	}
}

func (a qjsArgs) num(i int) float64 {
	switch v := a.any(i).(type) {
	case int:
		return float64(v)
	case float64:
		return v
	case bool:
		if v {
			return 1
		}
	}
	return math.NaN()
}

func (a qjsArgs) int(i int) int64 {
	f := a.num(i)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return int64(f)
}

func (a qjsArgs) bool(i int) bool {
	b, _ := a.any(i).(bool)
	return b
}

func (a qjsArgs) value(i int) *quickjs.Value {
	if i >= len(a) || a[i].IsUndefined() {
		return nil
	}
	return &a[i]
}

// sharedKey is a sharedExecutionContext key as the host keeps it.
func (a qjsArgs) sharedKey(i int) any {
	switch v := a.any(i).(type) {
	case int:
		return float64(v)
	case string, bool, float64:
		return v
	}
	return fmt.Sprint(a.any(i))
}

// dispatch is the Go function behind the host object. It never panics into
// the engine: a panic retires the runtime and fails the call.
func (r *qjsRuntime) dispatch(args ...quickjs.Value) (ret quickjs.Value) {
	defer func() {
		if p := recover(); p != nil {
			r.broken = true
			ret = r.failWith(&qjsHostError{Name: "Error", Message: fmt.Sprintf("internal error in the JavaScript host: %v", p)})
		}
	}()
	a := qjsArgs(args)
	if len(a) == 0 {
		return quickjs.UndefinedValue
	}
	op := int(a.int(0))
	a = a[1:]
	switch op {
	case opTakeError:
		e := r.hostErr
		r.hostErr = nil
		if e == nil {
			e = &qjsHostError{Name: "Error", Message: "host call failed"}
		}
		b, _ := json.Marshal(e)
		return r.str(string(b))
	case opThrown:
		r.thrown = &qjsJSError{message: a.str(0), stack: a.str(1)}
	case opReport:
		if r.uncaught == nil {
			r.uncaught = &qjsJSError{message: a.str(0), stack: a.str(1)}
		}
	case opDraining:
		return r.bool(r.draining)

	case opSetTimer:
		loop := r.ensureLoop()
		repeat := a.bool(1)
		ms := a.num(0)
		if math.IsNaN(ms) {
			ms = 0
		}
		var id int64
		id = loop.SetTimer(time.Duration(ms*float64(time.Millisecond)), repeat, func() error { return r.fire(id, !repeat) })
		return r.vm.NewFloat64(float64(id))
	case opSetImmediate:
		var id int64
		id = r.ensureLoop().SetImmediate(func() error { return r.fire(id, true) })
		return r.vm.NewFloat64(float64(id))
	case opClearTimer:
		if r.loop != nil {
			r.loop.ClearTimer(a.int(0))
		}
	case opTimerRef:
		if r.loop != nil {
			r.loop.SetRef(a.int(0), a.bool(1))
		}
	case opTimerHasRef:
		return r.bool(r.loop != nil && r.loop.HasRef(a.int(0)))
	case opTimerRefresh:
		if r.loop != nil {
			r.loop.RefreshTimer(a.int(0))
		}
	case opLowerAsync:
		src, _ := transform.LowerAwait("anonymous", a.str(0))
		return r.str(src)

	case opProcessEnv:
		env := map[string]string{}
		keys := []string{}
		for _, kv := range r.engine.opts.ProcessEnv() {
			if _, dup := env[kv[0]]; !dup {
				keys = append(keys, kv[0])
			}
			env[kv[0]] = kv[1]
		}
		// In the order of the environment, as goja's object has it.
		var b strings.Builder
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			kj, _ := json.Marshal(k)
			vj, _ := json.Marshal(env[k])
			b.Write(kj)
			b.WriteByte(':')
			b.Write(vj)
		}
		b.WriteByte('}')
		return r.str(b.String())
	case opProcessInfo:
		b, _ := json.Marshal([]any{nodeCompatVersion, runtime.GOOS, nodeArch(), os.Getpid(), "quickjs"})
		return r.str(string(b))
	case opHrtime:
		ns := time.Since(processStart).Nanoseconds()
		return r.str(fmt.Sprintf("[%d,%d]", ns/1e9, ns%1e9))
	case opNow:
		return r.vm.NewFloat64(float64(time.Since(processStart).Nanoseconds()) / 1e6)
	case opTimeOrigin:
		return r.vm.NewFloat64(float64(processStart.UnixNano()) / 1e6)

	case opFsRead:
		b, ferr := r.fs.readFile(a.str(0))
		if ferr != nil {
			return r.failWith(qjsFSError(ferr))
		}
		return r.arrayBuffer(b)
	case opFsReadText:
		b, ferr := r.fs.readFile(a.str(0))
		if ferr != nil {
			return r.failWith(qjsFSError(ferr))
		}
		text, _, _ := utf8Decode(nil, b, false, false)
		return r.str(text)
	case opFsStat:
		st, ferr := r.fs.stat(a.str(0))
		if ferr != nil {
			return r.failWith(qjsFSError(ferr))
		}
		b, _ := json.Marshal([]any{st.IsDir, st.Size, st.Mode, st.MtimeMs})
		return r.str(string(b))
	case opFsReaddir:
		entries, ferr := r.fs.readDir(a.str(0))
		if ferr != nil {
			return r.failWith(qjsFSError(ferr))
		}
		sort.Slice(entries, func(i, j int) bool { return entries[i].Name < entries[j].Name })
		out := make([][2]any, len(entries))
		for i, e := range entries {
			out[i] = [2]any{e.Name, e.IsDir}
		}
		b, _ := json.Marshal(out)
		return r.str(string(b))
	case opFsRealpath:
		p, ferr := r.fs.realpath(a.str(0))
		if ferr != nil {
			return r.failWith(qjsFSError(ferr))
		}
		return r.str(p)
	case opCompileModule:
		name := filepath.Base(a.str(1))
		v, err := r.evalScript(name, transform.WrapModule(a.str(0)))
		if err != nil {
			return r.failWith(&qjsHostError{Name: "SyntaxError", Message: err.Error()})
		}
		return v

	case opRandomBytes:
		return r.arrayBuffer(randomBytes(int(max(0, a.int(0)))))
	case opRandomUUID:
		return r.str(randomUUID())
	case opHash:
		var key []byte
		if k := a.value(1); k != nil {
			key, _ = r.x.arrayBuffer(k)
		}
		h, ok := newHash(a.str(0), key)
		if !ok {
			return r.failWith(&qjsHostError{Name: "Error", Message: "Digest method not supported"})
		}
		d := a.value(2)
		if d == nil {
			return quickjs.UndefinedValue
		}
		data, ok := r.x.arrayBuffer(d)
		if !ok {
			return quickjs.UndefinedValue
		}
		h.Write(data)
		return r.arrayBuffer(h.Sum(nil))

	case opUTF8Encode:
		return r.arrayBuffer([]byte(a.str(0)))
	case opUTF8EncodeInto:
		s := a.str(0)
		buf := a.value(1)
		var b []byte
		ok := false
		if buf != nil {
			b, ok = r.x.writableArrayBuffer(buf)
		}
		if !ok {
			return r.failWith(&qjsHostError{Name: "TypeError", Message: "encodeInto: destination is not an ArrayBuffer"})
		}
		off, n := int(a.int(2)), int(a.int(3))
		if off < 0 || n < 0 || off+n > len(b) {
			return r.failWith(&qjsHostError{Name: "TypeError", Message: "encodeInto: destination out of range"})
		}
		read, written := utf8EncodeInto(s, b[off:off+n])
		return r.str(fmt.Sprintf("[%d,%d]", read, written))
	case opUTF8Length:
		return r.vm.NewFloat64(float64(len(a.str(0))))
	case opUTF8Decode:
		var chunk []byte
		if buf := a.value(0); buf != nil {
			b, ok := r.x.arrayBuffer(buf)
			if ok {
				off, n := int(a.int(1)), int(a.int(2))
				if off < 0 || n < 0 || off+n > len(b) {
					return r.failWith(&qjsHostError{Name: "TypeError", Message: "decode: input out of range"})
				}
				chunk = b[off : off+n]
			}
		}
		var pending []byte
		for _, c := range a.str(3) {
			pending = append(pending, byte(c))
		}
		text, rest, ok := utf8Decode(pending, chunk, a.bool(4), a.bool(5))
		r.utf8Rest = rest
		if !ok {
			return r.null()
		}
		return r.str(text)
	case opUTF8Rest:
		rest := r.utf8Rest
		r.utf8Rest = nil
		runes := make([]rune, len(rest))
		for i, b := range rest {
			runes[i] = rune(b)
		}
		return r.str(string(runes))

	case opSharedGet:
		return r.sharedGet(a.sharedKey(0))
	case opSharedSet:
		if r.req != nil {
			r.req.Shared.Set(a.sharedKey(0), SharedEntry{Owner: r})
		}
	case opSharedHas:
		ok := false
		if r.req != nil {
			_, ok = r.req.Shared.Get(a.sharedKey(0))
		}
		return r.bool(ok)
	case opSharedRemove:
		return r.bool(r.req != nil && r.req.Shared.Delete(a.sharedKey(0)))
	case opSharedClear:
		if r.req != nil {
			r.req.Shared.Clear()
		}
	case opSharedKeys:
		keys := []any{}
		if r.req != nil {
			keys = append(keys, r.req.Shared.Keys()...)
		}
		b, err := json.Marshal(keys)
		if err != nil {
			b = []byte("[]")
		}
		return r.str(string(b))
	case opHostFunc:
		idx := int(a.int(0))
		var args []string
		_ = json.Unmarshal([]byte(a.str(1)), &args)
		if idx >= 0 && idx < len(r.hostFuncs) {
			r.hostFuncs[idx](args...)
		}

	case opRunOnOther:
		v, herr := r.runOnOther(a.str(0), a.str(1))
		if herr != nil {
			return r.failWith(herr)
		}
		return v

	case opStreamChunk:
		r.streamChunk(a)
	case opStreamEnd:
		if r.pumping != nil {
			r.pumping.ended = true
		}
	case opStreamError:
		if r.pumping != nil && r.pumping.err == nil {
			r.pumping.err = &qjsJSError{message: a.str(0), stack: a.str(1)}
		}

	case opIntlLoad, opIntlLocaleData, opIntlZoneOffset, opIntlDefaultTimeZone, opIntlDefaultLocale, opIntlCollate, opIntlCaseMap:
		return r.intlOp(op, a)
	}
	return quickjs.UndefinedValue
}

// failWith makes the dispatcher's answer a failure: the host layer throws e.
func (r *qjsRuntime) failWith(e *qjsHostError) quickjs.Value {
	r.hostErr = e
	return r.fail.Dup()
}

func (r *qjsRuntime) str(s string) quickjs.Value {
	v, err := r.vm.NewString(s)
	if err != nil {
		return r.failWith(&qjsHostError{Name: "InternalError", Message: "out of memory"})
	}
	return v
}

func (r *qjsRuntime) bool(b bool) quickjs.Value { return r.x.value(qjsBool(b)) }

func (r *qjsRuntime) null() quickjs.Value { return r.x.value(qjsNull) }

func (r *qjsRuntime) arrayBuffer(b []byte) quickjs.Value {
	v, err := r.x.newArrayBuffer(b)
	if err != nil {
		return r.failWith(&qjsHostError{Name: "InternalError", Message: "out of memory"})
	}
	return v
}

// qjsFSError is the Node-style Error of a failed file system call.
func qjsFSError(e *fsError) *qjsHostError {
	return &qjsHostError{Name: "Error", Message: e.Message, Props: map[string]any{
		"errno": e.Errno, "code": e.Code, "syscall": e.Syscall, "path": e.Path,
	}}
}

// fire runs a due timer or immediate (last: it will not run again).
func (r *qjsRuntime) fire(id int64, last bool) error {
	return r.call(qjsFire, id, last)
}

// ensureLoop returns the runtime's event loop, making one when timers are
// stubbed: streams and incremental updates need a loop for posted work and
// promise jobs even where JS timers do nothing.
func (r *qjsRuntime) ensureLoop() *eventloop.Loop {
	if r.loop == nil {
		r.loop = eventloop.New()
	}
	return r.loop
}

// sharedGet answers sharedExecutionContext.get: true when this runtime holds
// the value (quickjs_host.js has it), else a description of the value
// (quickjs_host.js importValue), or undefined.
func (r *qjsRuntime) sharedGet(key any) quickjs.Value {
	if r.req == nil {
		return quickjs.UndefinedValue
	}
	e, ok := r.req.Shared.Get(key)
	if !ok {
		return quickjs.UndefinedValue
	}
	if e.Owner == nil {
		return r.str(r.hostValue(e.Value))
	}
	owner, ok := e.Owner.(*qjsRuntime)
	if !ok || owner.broken {
		return quickjs.UndefinedValue
	}
	if owner == r {
		return r.bool(true)
	}
	text, err := owner.jsString(qjsExportShared, key)
	if err != nil {
		return quickjs.UndefinedValue
	}
	return r.str(text)
}

// hostValue describes a value the host put into a shared context
// (SharedContext.SetHost).
func (r *qjsRuntime) hostValue(v any) string {
	var d any
	switch v := v.(type) {
	case HostSet:
		d = map[string]any{"s": []string(v)}
	case HostFunc:
		r.hostFuncs = append(r.hostFuncs, v)
		d = map[string]any{"f": len(r.hostFuncs) - 1}
	case nil:
		d = map[string]any{"p": nil}
	default:
		d = map[string]any{"p": v}
	}
	b, err := json.Marshal(d)
	if err != nil {
		return `{"u":1}`
	}
	return string(b)
}
