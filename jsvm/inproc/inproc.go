// Package inproc is the render flow of the engines that run JavaScript in
// gorender's own process (goja, quickjs), written once above the few
// primitives each of them supplies (VM): run a program or a script, call
// into the environment, read a string or a promise's state, free a value,
// interrupt. Everything a render means (PROTOCOL.md §5, §7, §8) lives here,
// once: settling promises on the event loop, stringifying, streams and
// their idle limit, incremental updates, sharedExecutionContext and
// runOnOtherBundle across the runtimes of a request, classifying
// interrupts and limits, every answer text; so do the host functions of the
// environment (one table, Functions) and, in jsvm/jsenv's bridge.js, the
// JavaScript both engines share.
//
// An engine package supplies its VM and its compiled form of a program, and
// wraps them with NewRuntime; a Runtime is a jsvm.Runtime.
package inproc

import (
	"fmt"
	"hash/crc32"
	"unsafe"

	"github.com/gorender/gorender/jsvm"
	"github.com/gorender/gorender/jsvm/transform"
)

// VM is one engine runtime as the render flow uses it: a JavaScript global
// environment with jsenv's bridge installed (its ops callable by Op), on
// one goroutine at a time (Interrupt excepted). V is the engine's value
// type.
//
// Errors of RunProgram, RunScript and Call are *Exception (a JavaScript
// exception, as text), *Stopped (the engine stopped running JavaScript: an
// interrupt or a limit), or anything else for a failure of the engine
// itself; after the last two the runtime is retired.
type VM[V any] interface {
	// RunProgram evaluates a compiled bundle at top level and returns its
	// completion value (for a CommonJS bundle, the module's wrapper).
	RunProgram(p *Program) (V, error)
	// RunScript compiles and evaluates code as a global script named name
	// and returns its completion value.
	RunScript(name, code string) (V, error)
	// Call calls one of the bridge's ops with arguments that are strings,
	// float64, int64, bool or values of this VM.
	Call(op Op, args ...any) (V, error)
	// String is the Go string of a JavaScript string value.
	String(v V) (string, error)
	// IsUndefined reports whether v is undefined.
	IsUndefined(v V) bool
	// PromiseState is the state of v, NotAPromise when it is none.
	PromiseState(v V) PromiseState
	// PromiseResult is the value or reason of a settled promise.
	PromiseResult(v V) V
	// Free releases v (nothing for engines whose values the Go garbage
	// collector manages); v is the zero value afterwards.
	Free(v *V)
	// Interrupt stops the JavaScript running now, and any later, with an
	// error that is *Stopped. It may be called from any goroutine.
	Interrupt()
	// OverLimit reports a runtime that keeps more than its limits after a
	// render (the answer's text in Stopped.Limit), nil when within them or
	// when the engine has none.
	OverLimit() *Stopped
	// Idle is called when a load or a render ended.
	Idle()
	// Close releases the engine runtime.
	Close()
}

// Op is an op of the bridge (jsenv's bridge.js) the flow calls.
type Op int

// The ops of the bridge, in the order of OpNames.
const (
	OpBegin        Op = iota // (code): a render's per-render globals
	OpAfterSync              // the end of a render's synchronous part
	OpEnd                    // clear the per-render globals
	OpFire                   // (id, last): a timer or an immediate is due
	OpKind                   // (value) → "string", "nil", "stream", "promise", "thenable" or "other"
	OpToPromise              // (value) → a promise adopting it
	OpStringify              // (value) → JSON.stringify(value)
	OpErrorParts             // (thrown) → JSON [message, stack]
	OpPump                   // (stream): forward its chunks to the stream host functions
	OpAbortStream            // (reason): abort the stream being pumped
	OpExportValue            // (value) → its JSON description for another runtime
	OpExportShared           // (key) → the description of this runtime's shared entry
	OpResetShared            // forget this runtime's shared entries
	OpReset                  // forget the render's timer callbacks and stream
	OpRunModule              // (wrapper, filename, dirname): run the bundle as the main CommonJS module
	OpPatchRegExp            // rewrite \p{…} escapes in RegExp (engines without them)
	OpCrossPump              // (stream, id) → "node" or "web": pump a stream another runtime receives (crossstream.go)
	OpCrossResume            // (id): resume that pump
	OpCrossAbort             // (id, reason): cancel that stream
	OpCrossFlow              // (id): feed queued chunks into the stream this runtime received
)

// OpNames are the names of the bridge's ops, by Op.
var OpNames = []string{
	"begin", "afterSync", "end", "fire", "kind", "toPromise", "stringify", "errorParts",
	"pump", "abortStream", "exportValue", "exportShared", "resetShared", "reset", "runModule", "patchRegExp",
	"crossPump", "crossResume", "crossAbort", "crossFlow",
}

// PromiseState is the state of a promise.
type PromiseState int

// Promise states.
const (
	NotAPromise PromiseState = iota
	Pending
	Fulfilled
	Rejected
)

// Exception is a JavaScript exception, as text: the host never keeps the
// thrown value itself.
type Exception struct {
	Message, Stack string
	// Fatal marks an exception after which the engine's state is unknown
	// (goja's call stack overflow): the runtime is retired.
	Fatal bool
}

func (e *Exception) Error() string { return e.Message }

// Stopped is JavaScript the engine stopped: its context ended (Interrupt),
// or the runtime passed one of its limits. The runtime is retired.
type Stopped struct {
	// Limit is the answer's text when a limit stopped it ("" for an
	// interrupt).
	Limit string
}

func (e *Stopped) Error() string {
	if e.Limit != "" {
		return e.Limit
	}
	return jsvm.ErrInterrupted.Error()
}

// Program is a bundle an in-process engine compiled.
type Program struct {
	name string
	// Path is the bundle file on disk, "" when there is none.
	Path string
	// Module reports a bundle compiled as the CommonJS wrapper
	// (SupportModules): loading it runs the wrapper as the main module.
	Module bool
	// Code is the engine's compiled form.
	Code any
	// columns takes the engine's columns in the compiled text to UTF-16
	// (nil: they are UTF-16's).
	columns *Columns
	// rewrites replays the rewrites the engine made to the bundle before
	// compiling it (SetRewrites); nil when it made none but the wrapper.
	rewrites func(source string) (string, transform.Chain, error)
	// The size and checksum of the source the rewrites were made to, and
	// the checksum of the code they made.
	size         int
	sum, codeSum uint32
}

// SetRewrites records that the engine rewrote source (the bundle as
// uploaded) into code whose Checksum is code before compiling it, and how to
// make those rewrites again with their positions (esbuild's lowering, string
// builds, the wrapper, in the order made; replay returns the code again):
// jsvm/sourcemap replays them on the first error that needs a position in
// the bundle, rather than every compile keeping their maps.
func (p *Program) SetRewrites(source string, code uint32, replay func(source string) (string, transform.Chain, error)) {
	p.rewrites, p.size, p.sum, p.codeSum = replay, len(source), Checksum(source), code
}

// Checksum is a cheap checksum of a source (CRC-32C), to tell that a
// replayed rewrite is the one compiled.
func Checksum(source string) uint32 {
	return crc32.Update(0, crcTable, unsafe.Slice(unsafe.StringData(source), len(source)))
}

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// Rewritten reports whether the engine rewrote the bundle beyond the
// CommonJS wrapper (jsvm.BundlePositions).
func (p *Program) Rewritten() bool { return p.rewrites != nil }

// BundlePosition takes a position of a program the engine did not rewrite
// back to the bundle as uploaded (jsvm.BundlePositions): the CommonJS
// wrapper's header shifts line 1. Columns are UTF-16 code units, as the
// runtime's stacks show them (Columns) and source maps count them.
func (p *Program) BundlePosition(line, column int) (int, int, bool) {
	if p.Module {
		return transform.ModulePositions{}.Back(line, column)
	}
	return line, column, true
}

// ReplayRewrites makes the engine's rewrites again on source, the bundle as
// uploaded, and returns how the compiled program's positions go back to it
// and the memory that holds (jsvm.BundlePositions).
func (p *Program) ReplayRewrites(source string) (func(line, column int) (int, int, bool), int64, error) {
	if p.rewrites == nil {
		return p.BundlePosition, 0, nil
	}
	if len(source) != p.size || Checksum(source) != p.sum {
		return nil, 0, fmt.Errorf("bundle %s: its file is not the source that was compiled", p.name)
	}
	code, chain, err := p.rewrites(source)
	if err != nil {
		return nil, 0, fmt.Errorf("bundle %s: replay its rewrites: %w", p.name, err)
	}
	if Checksum(code) != p.codeSum {
		return nil, 0, fmt.Errorf("bundle %s: its rewrites replayed are not the code compiled", p.name)
	}
	return chain.Back, chain.Cost(), nil
}

// NewProgram returns the program of bundle name; columns indexes the text
// the engine compiled (NewColumns).
func NewProgram(name, path string, module bool, code any, columns *Columns) *Program {
	return &Program{name: name, Path: path, Module: module, Code: code, columns: columns}
}

// Name is the bundle id the program was compiled for.
func (p *Program) Name() string { return p.name }

// programOf returns p as a program of an in-process engine.
func programOf(p jsvm.Program, engine string) (*Program, error) {
	prg, ok := p.(*Program)
	if !ok {
		return nil, fmt.Errorf("load bundle: program %T is not a %s program", p, engine)
	}
	return prg, nil
}
