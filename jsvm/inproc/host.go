package inproc

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync/atomic"
	"time"

	"github.com/gorender/gorender/jsvm"
	"github.com/gorender/gorender/jsvm/eventloop"
	"github.com/gorender/gorender/jsvm/intl"
	"github.com/gorender/gorender/jsvm/transform"
)

// Host is the Go side of one runtime's environment: the state its host
// functions serve (timers, the bundle's file system, the request being
// rendered, the stream being answered). Engines bind Functions to it and
// call them on the runtime's goroutine.
type Host struct {
	engine string
	opts   jsvm.Options
	rt     hostRuntime // the runtime this host serves
	loop   *eventloop.Loop
	fs     *bundleFS
	alloc  AllocLimit // bounds single allocations for JavaScript

	// The render being evaluated (nil between renders): its context and
	// request, the shared context whose entries this runtime's JavaScript
	// holds, and the host functions handed out for it.
	ctx       context.Context
	req       *jsvm.Request
	sharedFor *jsvm.SharedContext
	hostFuncs []jsvm.HostFunc

	// uncaught is the first exception of a callback with no caller (a
	// microtask, a nextTick): it fails the render.
	uncaught *Exception
	// panicked is the panic that retired the runtime (retireRender).
	panicked *HostPanic
	stream   *streamState
	// The streams crossing runtimes (crossstream.go) this runtime receives
	// and produces, by id.
	crossIn, crossOut map[int64]*crossStream

	// collators serve Intl.Collator and localeCompare.
	collators intl.Collators
}

// Engine is the name of the engine the host serves.
func (h *Host) Engine() string { return h.engine }

// Options are the options of the environment.
func (h *Host) Options() jsvm.Options { return h.opts }

// ensureLoop returns the runtime's event loop, making one when timers are
// stubbed.
func (h *Host) ensureLoop() *eventloop.Loop {
	if h.loop == nil {
		h.loop = eventloop.New()
	}
	return h.loop
}

// Function is a host function: the JavaScript environment calls it by Name
// (bridge.js puts it on the host object), and Fn answers on the runtime's
// goroutine. Adding one is adding an entry to Functions.
type Function struct {
	Name string
	Fn   func(h *Host, a Args) Reply
}

// Args are the arguments of a host function call, as the engine received
// them; the bridge has already converted them to the types listed for each
// function. Byte slices are valid during the call only.
type Args interface {
	// String is argument i as a string ("undefined" when missing).
	String(i int) string
	// Number is argument i as a number (NaN when it is none).
	Number(i int) float64
	// Bool is argument i when it is a boolean, else false.
	Bool(i int) bool
	// Bytes is the content of argument i when it is an ArrayBuffer.
	Bytes(i int) ([]byte, bool)
	// Uint8Array is the memory of argument i, to write into, when it is a
	// Uint8Array.
	Uint8Array(i int) ([]byte, bool)
	// Primitive is argument i as a string, float64, bool or nil (null or
	// undefined).
	Primitive(i int) any
}

// Int is argument i as an integer (truncated; 0 for NaN and infinities).
func Int(a Args, i int) int64 {
	f := a.Number(i)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return int64(f)
}

// Reply is what a host function returns to JavaScript.
type Reply struct {
	Kind  ReplyKind
	Str   string  // String, JSON; the script's name (Script), the program's (Program)
	Num   float64 // Number
	Bool  bool    // Bool
	Bytes []byte  // Bytes: the content of a new ArrayBuffer
	Items []any   // Array: strings, numbers, bools, nil and nested []any
	Code  string  // Script
	Err   *HostError
}

// ReplyKind is the kind of a Reply.
type ReplyKind int

// The kinds of replies; engines convert each to a value of their own.
const (
	ReplyUndefined ReplyKind = iota
	ReplyNull
	ReplyBool
	ReplyNumber
	ReplyString
	ReplyBytes   // a new ArrayBuffer
	ReplyArray   // a new array
	ReplyJSON    // the value JSON.parse makes of Str
	ReplyThrow   // throw Err
	ReplyScript  // the completion value of Code run as a global script named Str; an error is thrown as Err.Name
	ReplyProgram // the completion value of jsenv.Programs[Str], compiled once per process
)

// Replies.
func Undefined() Reply             { return Reply{Kind: ReplyUndefined} }
func Null() Reply                  { return Reply{Kind: ReplyNull} }
func Bool(b bool) Reply            { return Reply{Kind: ReplyBool, Bool: b} }
func Number(f float64) Reply       { return Reply{Kind: ReplyNumber, Num: f} }
func String(s string) Reply        { return Reply{Kind: ReplyString, Str: s} }
func Bytes(b []byte) Reply         { return Reply{Kind: ReplyBytes, Bytes: b} }
func Array(items ...any) Reply     { return Reply{Kind: ReplyArray, Items: items} }
func JSON(text string) Reply       { return Reply{Kind: ReplyJSON, Str: text} }
func Throw(e *HostError) Reply     { return Reply{Kind: ReplyThrow, Err: e} }
func RunProgram(name string) Reply { return Reply{Kind: ReplyProgram, Str: name} }
func Script(name, code, errorName string) Reply {
	return Reply{Kind: ReplyScript, Str: name, Code: code, Err: &HostError{Name: errorName}}
}

// Values makes an engine's values of host function replies; ValueOf
// converts a Reply with it.
type Values[V any] interface {
	Undefined() V
	Null() V
	Bool(b bool) V
	Number(f float64) V
	String(s string) V
	// Bytes is a new ArrayBuffer holding a copy of b.
	Bytes(b []byte) V
	// Array is a new array of strings, float64, bools, nils and nested
	// []any.
	Array(items []any) V
	// JSON is the value JSON.parse makes of text.
	JSON(text string) V
	// Throw makes the host function throw e.
	Throw(e *HostError) V
	// Script is the completion value of code run as a global script named
	// name; a failure throws an error named errorName with its message.
	Script(name, code, errorName string) V
	// RunProgram is the completion value of jsenv.Programs[name].
	RunProgram(name string) V
}

// ValueOf is r as a value of the engine m makes values for.
func ValueOf[V any](r Reply, m Values[V]) V {
	switch r.Kind {
	case ReplyNull:
		return m.Null()
	case ReplyBool:
		return m.Bool(r.Bool)
	case ReplyNumber:
		return m.Number(r.Num)
	case ReplyString:
		return m.String(r.Str)
	case ReplyBytes:
		return m.Bytes(r.Bytes)
	case ReplyArray:
		return m.Array(r.Items)
	case ReplyJSON:
		return m.JSON(r.Str)
	case ReplyThrow:
		return m.Throw(r.Err)
	case ReplyScript:
		return m.Script(r.Str, r.Code, r.Err.Name)
	case ReplyProgram:
		return m.RunProgram(r.Str)
	}
	return m.Undefined()
}

// HostError is a failed host call, thrown in JavaScript as an error of the
// named constructor (Error when there is none of that name) with Message
// and the extra properties Props, in order.
type HostError struct {
	Name    string `json:"name"`
	Message string `json:"message"`
	Props   []Prop `json:"props,omitempty"`
}

// Prop is a property of a thrown error: [name, value] in JSON.
type Prop struct {
	Name  string
	Value any
}

// MarshalJSON writes the property as [name, value].
func (p Prop) MarshalJSON() ([]byte, error) { return json.Marshal([2]any{p.Name, p.Value}) }

// throwf throws an error of the named constructor.
func throwf(name, format string, args ...any) Reply {
	return Throw(&HostError{Name: name, Message: fmt.Sprintf(format, args...)})
}

// Functions are the host functions of the environment, the same for every
// in-process engine: the first column is the name bridge.js and the
// environment call, the arguments are as the bridge passes them.
var Functions = []Function{
	// The render flow's own.
	{"report", func(h *Host, a Args) Reply { // (message, stack): an uncaught exception
		if h.uncaught == nil {
			h.uncaught = &Exception{Message: a.String(0), Stack: a.String(1)}
		}
		return Undefined()
	}},
	{"mapStack", func(h *Host, a Args) Reply { // (stack) → the stack in UTF-16 columns, in original sources (getStackTrace)
		stack := h.rt.utf16(a.String(0))
		if h.opts.MapStack == nil {
			return String(stack)
		}
		return String(h.opts.MapStack(stack))
	}},
	{"runOnOther", func(h *Host, a Args) Reply { // (bundleId, code) → description, or null: run it here
		text, here, herr := h.rt.runOnOther(a.String(0), a.String(1))
		h.failOnPanic()
		switch {
		case herr != nil:
			return Throw(herr)
		case here:
			return Null()
		}
		return String(text)
	}},
	{"runHere", func(h *Host, a Args) Reply { // (code): runOnOtherBundle of this runtime's own bundle
		return Script("runOnOtherBundle", a.String(0), "Error")
	}},
	{"runOnOtherDone", func(h *Host, a Args) Reply { // runHere's call has ended
		if h.req != nil {
			h.req.UnnestRunOnOther()
		}
		return Undefined()
	}},
	{"streamChunk", func(h *Host, a Args) Reply { // (string | ArrayBuffer)
		if b, ok := a.Bytes(0); ok {
			h.streamChunk(b)
		} else {
			h.streamChunk([]byte(a.String(0)))
		}
		return Undefined()
	}},
	// A stream crossing runtimes (crossstream.go): the producer's side.
	{"crossChunk", func(h *Host, a Args) Reply { // (id, string | ArrayBuffer) → whether the producer may go on
		if b, ok := a.Bytes(1); ok {
			return Bool(h.crossPut(Int(a, 0), bytesChunk(b)))
		}
		return Bool(h.crossPut(Int(a, 0), textChunk(a.String(1))))
	}},
	{"crossEnd", func(h *Host, a Args) Reply { // (id)
		h.crossPut(Int(a, 0), crossItem{end: true})
		return Undefined()
	}},
	{"crossError", func(h *Host, a Args) Reply { // (id, message)
		message := a.String(1)
		h.crossPut(Int(a, 0), crossItem{end: true, failed: &message})
		return Undefined()
	}},
	// The consumer's side.
	{"crossTake", func(h *Host, a Args) Reply { // (id) → chunk, null, ["end"] or ["error", message]
		return h.crossTake(Int(a, 0))
	}},
	{"crossWant", func(h *Host, a Args) Reply { // (id): the stream wants chunks again
		if cs := h.crossIn[Int(a, 0)]; cs != nil && len(cs.items) > 0 {
			cs.flow()
		}
		return Undefined()
	}},
	{"crossCancel", func(h *Host, a Args) Reply { // (id)
		h.crossCancel(Int(a, 0))
		return Undefined()
	}},
	{"streamEnd", func(h *Host, a Args) Reply {
		if h.stream != nil {
			h.stream.ended = true
		}
		return Undefined()
	}},
	{"streamError", func(h *Host, a Args) Reply { // (message, stack)
		if h.stream != nil && h.stream.err == nil {
			h.stream.err = &Exception{Message: a.String(0), Stack: a.String(1)}
		}
		return Undefined()
	}},

	// sharedExecutionContext (keys as bridge.js sharedKey makes them).
	{"sharedGet", func(h *Host, a Args) Reply { return h.sharedGet(sharedKey(a, 0)) }},
	{"sharedSet", func(h *Host, a Args) Reply {
		if h.req != nil {
			h.req.Shared.Set(sharedKey(a, 0), jsvm.SharedEntry{Owner: h.rt})
		}
		return Undefined()
	}},
	{"sharedHas", func(h *Host, a Args) Reply {
		ok := false
		if h.req != nil {
			_, ok = h.req.Shared.Get(sharedKey(a, 0))
		}
		return Bool(ok)
	}},
	{"sharedRemove", func(h *Host, a Args) Reply {
		return Bool(h.req != nil && h.req.Shared.Delete(sharedKey(a, 0)))
	}},
	{"sharedClear", func(h *Host, a Args) Reply {
		if h.req != nil {
			h.req.Shared.Clear()
		}
		return Undefined()
	}},
	{"sharedKeys", func(h *Host, a Args) Reply {
		keys := []any{}
		if h.req != nil {
			keys = append(keys, h.req.Shared.Keys()...)
		}
		return Array(keys...)
	}},
	{"hostFunc", func(h *Host, a Args) Reply { // (index, JSON args): a jsvm.HostFunc
		idx := int(Int(a, 0))
		var args []string
		_ = json.Unmarshal([]byte(a.String(1)), &args)
		if idx >= 0 && idx < len(h.hostFuncs) {
			h.hostFuncs[idx](args...)
		}
		return Undefined()
	}},

	// Timers (ids; bridge.js keeps the callbacks).
	{"setTimer", func(h *Host, a Args) Reply { // (ms, repeat) → id
		ms := a.Number(0)
		if math.IsNaN(ms) {
			ms = 0
		}
		repeat := a.Bool(1)
		var id int64
		id = h.ensureLoop().SetTimer(time.Duration(ms*float64(time.Millisecond)), repeat, func() error { return h.rt.fire(id, !repeat) })
		return Number(float64(id))
	}},
	{"setImmediate", func(h *Host, a Args) Reply { // () → id
		var id int64
		id = h.ensureLoop().SetImmediate(func() error { return h.rt.fire(id, true) })
		return Number(float64(id))
	}},
	{"clearTimer", func(h *Host, a Args) Reply {
		if h.loop != nil {
			h.loop.ClearTimer(Int(a, 0))
		}
		return Undefined()
	}},
	{"timerRef", func(h *Host, a Args) Reply { // (id, on)
		if h.loop != nil {
			h.loop.SetRef(Int(a, 0), a.Bool(1))
		}
		return Undefined()
	}},
	{"timerHasRef", func(h *Host, a Args) Reply {
		return Bool(h.loop != nil && h.loop.HasRef(Int(a, 0)))
	}},
	{"timerRefresh", func(h *Host, a Args) Reply {
		if h.loop != nil {
			h.loop.RefreshTimer(Int(a, 0))
		}
		return Undefined()
	}},

	// Source transforms for engines that lack a feature.
	{"rewriteRegExp", func(h *Host, a Args) Reply { // (pattern) → pattern without \p{…}
		out, err := transform.RewritePropertyEscapes(a.String(0))
		if err != nil {
			return throwf("SyntaxError", "%s", err.Error())
		}
		return String(out)
	}},
	{"lowerAwait", func(h *Host, a Args) Reply { // (source) → source with await lowered
		src, _ := transform.LowerForQuickJS("anonymous", a.String(0))
		return String(src)
	}},

	// The Node-compatible environment: process facts and clocks.
	{"processEnv", func(h *Host, a Args) Reply { return JSON(processEnvJSON(h.opts.ProcessEnv())) }},
	{"processInfo", func(h *Host, a Args) Reply {
		return Array(nodeCompatVersion, runtime.GOOS, nodeArch(), float64(os.Getpid()), h.engine)
	}},
	{"hrtime", func(h *Host, a Args) Reply {
		ns := time.Since(processStart).Nanoseconds()
		return Array(float64(ns/1e9), float64(ns%1e9))
	}},
	{"now", func(h *Host, a Args) Reply {
		return Number(float64(time.Since(processStart).Nanoseconds()) / 1e6)
	}},
	{"timeOrigin", func(h *Host, a Args) Reply { return Number(float64(processStart.UnixNano()) / 1e6) }},

	// The bundle's read-only file system.
	{"fsRead", func(h *Host, a Args) Reply {
		b, ferr := h.fs.readFile(a.String(0), h.alloc)
		if ferr != nil {
			return Throw(ferr.hostError())
		}
		return Bytes(b)
	}},
	{"fsReadText", func(h *Host, a Args) Reply {
		b, ferr := h.fs.readFile(a.String(0), h.alloc)
		if ferr != nil {
			return Throw(ferr.hostError())
		}
		text, _, _ := utf8Decode(nil, b, false, false)
		return String(text)
	}},
	{"fsStat", func(h *Host, a Args) Reply {
		st, ferr := h.fs.stat(a.String(0))
		if ferr != nil {
			return Throw(ferr.hostError())
		}
		return Array(st.IsDir, float64(st.Size), float64(st.Mode), st.MtimeMs)
	}},
	{"fsReaddir", func(h *Host, a Args) Reply {
		entries, ferr := h.fs.readDir(a.String(0))
		if ferr != nil {
			return Throw(ferr.hostError())
		}
		sort.Slice(entries, func(i, j int) bool { return entries[i].Name < entries[j].Name })
		out := make([]any, len(entries))
		for i, e := range entries {
			out[i] = []any{e.Name, e.IsDir}
		}
		return Array(out...)
	}},
	{"fsRealpath", func(h *Host, a Args) Reply {
		p, ferr := h.fs.realpath(a.String(0))
		if ferr != nil {
			return Throw(ferr.hostError())
		}
		return String(p)
	}},
	{"compileModule", func(h *Host, a Args) Reply { // (source, filename) → the CommonJS wrapper
		return Script(filepath.Base(a.String(1)), transform.WrapModule(a.String(0)), "SyntaxError")
	}},

	// Crypto.
	{"randomBytes", func(h *Host, a Args) Reply {
		n := max(0, Int(a, 0))
		if r := h.checkAlloc("randomBytes", n); r != nil {
			return *r
		}
		return Bytes(randomBytes(int(n)))
	}},
	{"randomUUID", func(h *Host, a Args) Reply { return String(randomUUID()) }},
	{"hash", func(h *Host, a Args) Reply { // (algorithm, key ArrayBuffer | undefined, data ArrayBuffer | undefined)
		key, _ := a.Bytes(1)
		hash, ok := newHash(a.String(0), key)
		if !ok {
			return throwf("Error", "Digest method not supported")
		}
		data, ok := a.Bytes(2)
		if !ok {
			return Undefined()
		}
		hash.Write(data)
		return Bytes(hash.Sum(nil))
	}},

	// Intl (jsvm/intl: install.js, run by bridge.js, builds it on first use).
	{"intlInstaller", func(h *Host, a Args) Reply { // () → install.js's function of the host object
		return RunProgram("intl-install")
	}},
	{"intlLoad", func(h *Host, a Args) Reply { // () → Intl's install function
		intlBuilds.Add(1)
		return RunProgram("intl")
	}},
	{"intlLocaleData", func(h *Host, a Args) Reply { // (kind, file) → the locale's data (JSON text)
		s, err := intl.LocaleData(a.String(0), a.String(1))
		if err != nil {
			return throwf("Error", "%s", err.Error())
		}
		return String(s)
	}},
	{"intlLocaleKeys", func(h *Host, a Args) Reply { // (kind, file, path) → a table's keys, joined by "\n"
		s, err := intl.LocaleKeys(a.String(0), a.String(1), a.String(2))
		if err != nil {
			return throwf("Error", "%s", err.Error())
		}
		return String(s)
	}},
	{"intlLocaleEntry", func(h *Host, a Args) Reply { // (kind, file, path, key) → an entry of a table (JSON text) | undefined
		s, ok, err := intl.LocaleEntry(a.String(0), a.String(1), a.String(2), a.String(3))
		if err != nil {
			return throwf("Error", "%s", err.Error())
		}
		if !ok {
			return Undefined()
		}
		return String(s)
	}},
	{"intlZoneOffset", func(h *Host, a Args) Reply { // (zone, ms) → [offset, dst] | null
		off, dst, ok := intl.ZoneOffset(a.String(0), a.Number(1))
		if !ok {
			return Null()
		}
		return Array(off, dst)
	}},
	{"intlDefaultTimeZone", func(h *Host, a Args) Reply {
		_, tz := intl.ProcessDefaults()
		return String(tz)
	}},
	{"intlDefaultLocale", func(h *Host, a Args) Reply {
		l, _ := intl.ProcessDefaults()
		return String(l)
	}},
	{"intlCollate", func(h *Host, a Args) Reply { // (locale, sensitivity, caseFirst, numeric, ignorePunctuation, a, b) → -1 | 0 | 1
		o := intl.CollatorOptions{Sensitivity: a.String(1), CaseFirst: a.String(2), Numeric: a.Bool(3), IgnorePunctuation: a.Bool(4)}
		return Number(float64(h.collators.Compare(a.String(0), o, a.String(5), a.String(6))))
	}},
	{"intlCaseMap", func(h *Host, a Args) Reply { // (language, text, upper)
		return String(intl.CaseMap(a.String(0), a.String(1), a.Bool(2)))
	}},

	// UTF-8. bridge.js refuses strings longer than an allocation may be
	// before they are handed over (hostString); their UTF-8 may still be
	// up to three times as long.
	{"utf8Encode", func(h *Host, a Args) Reply {
		s := a.String(0)
		if r := h.checkAlloc("UTF-8 encoding", int64(len(s))); r != nil {
			return *r
		}
		return Bytes([]byte(s))
	}},
	{"utf8Length", func(h *Host, a Args) Reply { return Number(float64(len(a.String(0)))) }},
	{"utf8EncodeInto", func(h *Host, a Args) Reply { // (string, Uint8Array) → [read, written]
		dst, ok := a.Uint8Array(1)
		if !ok {
			return throwf("TypeError", "encodeInto: destination is not a Uint8Array")
		}
		read, written := utf8EncodeInto(a.String(0), dst)
		return Array(float64(read), float64(written))
	}},
	{"utf8Decode", func(h *Host, a Args) Reply { // (ArrayBuffer | undefined, offset, length, pending as char codes, stream, fatal) → [text, pending | null] | null
		var chunk []byte
		if b, ok := a.Bytes(0); ok {
			off, n := int(Int(a, 1)), int(Int(a, 2))
			if off < 0 || n < 0 || off+n > len(b) {
				return throwf("TypeError", "decode: input out of range")
			}
			if r := h.checkAlloc("UTF-8 decoding", int64(n)); r != nil {
				return *r
			}
			chunk = b[off : off+n]
		}
		var pending []byte
		for _, c := range a.String(3) {
			pending = append(pending, byte(c))
		}
		text, rest, ok := utf8Decode(pending, chunk, a.Bool(4), a.Bool(5))
		if !ok {
			return Null()
		}
		var restValue any
		if len(rest) > 0 {
			items := make([]any, len(rest))
			for i, b := range rest {
				items[i] = float64(b)
			}
			restValue = items
		}
		return Array(text, restValue)
	}},
}

// intlBuilds counts the runtimes that built Intl (host.intlLoad).
var intlBuilds atomic.Int64

// IntlBuilds is how many times a runtime of this process built Intl: a page
// that never touches it pays nothing (the conformance suite checks it).
func IntlBuilds() int64 { return intlBuilds.Load() }

// sharedKey is a sharedExecutionContext key as the host keeps it: a string,
// float64 or bool.
func sharedKey(a Args, i int) any {
	switch v := a.Primitive(i).(type) {
	case string, bool, float64:
		return v
	case nil:
		return "null"
	default:
		return fmt.Sprint(v)
	}
}

// fire runs a due timer or immediate in JavaScript (last: it will not run
// again).
func (r *Runtime[V]) fire(id int64, last bool) error {
	return r.callDrop(OpFire, id, last)
}

// processEnvJSON is process.env as a JSON object, in the order of env.
func processEnvJSON(env [][2]string) string {
	b := []byte{'{'}
	for i, kv := range env {
		if i > 0 {
			b = append(b, ',')
		}
		k, _ := json.Marshal(kv[0])
		v, _ := json.Marshal(kv[1])
		b = append(append(append(b, k...), ':'), v...)
	}
	return string(append(b, '}'))
}

// EnvOptions are env.js's and bridge.js's options (JSON) for opts: the
// timer rule, console replay and its bounds, the allocation bound, how much
// of an error's text an answer echoes.
func EnvOptions(opts jsvm.Options) string {
	lines, bytes := opts.ConsoleBounds()
	b, _ := json.Marshal(map[string]any{
		"stubTimers":      !opts.RealTimers(),
		"replayAsyncLogs": opts.ReplayAsyncLogs,
		"maxAllocation":   NewAllocLimit(opts),
		"consoleMaxLines": lines,
		"consoleMaxBytes": bytes,
		"errorTextMax":    jsvm.MaxErrorTextLength,
	})
	return string(b)
}
