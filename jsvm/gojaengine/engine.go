// Package gojaengine is the goja engine (github.com/dop251/goja, the
// default): a jsvm.Engine whose runtimes are the render flow of
// jsvm/inproc over goja's primitives.
//
// goja parses most bundles as they are; what it cannot parse or run is
// lowered by esbuild first (jsvm/transform), and react-dom's quadratic
// string builds are rewritten into array joins, since goja's strings are
// flat. Its memory is the Go heap's (GOMEMLIMIT, RENDERER_MAX_HEAP).
package gojaengine

import (
	"fmt"
	"sync"
	"time"

	"github.com/dlclark/regexp2/v2"
	"github.com/dop251/goja"
	"github.com/dop251/goja/parser"

	"github.com/gorender/gorender/jsvm"
	"github.com/gorender/gorender/jsvm/inproc"
	"github.com/gorender/gorender/jsvm/jsenv"
	"github.com/gorender/gorender/jsvm/transform"
)

// Name is the engine's name.
const Name = "goja"

// maxCallStackSize bounds JS recursion (Node's default allows about 11k
// frames); past it a render fails instead of growing the Go stack. It is
// also what an exception unwinding through calls goja made from Go (map
// callbacks, getters) costs: goja re-raises it once per such call, each
// time across the whole Go stack, so the unwinding grows with the square of
// the depth (an endless getter recursion unwinds in about a second at 10000
// frames, half a minute at 20000, with no interrupt able to stop it).
const maxCallStackSize = 10000

// The environment, compiled once per process and shared by every runtime.
var (
	envProgram = sync.OnceValues(func() (*goja.Program, error) {
		return goja.Compile("gorender-env.js", jsenv.Env, true)
	})
	builtinsProgram = sync.OnceValues(func() (*goja.Program, error) {
		return goja.Compile("gorender-builtins-es.js", jsenv.Builtins, true)
	})
	bridgeProgram = sync.OnceValues(func() (*goja.Program, error) {
		return goja.Compile("gorender-bridge.js", jsenv.Bridge, true)
	})
	nodeEnvProgram = sync.OnceValues(func() (*goja.Program, error) {
		return goja.Compile("gorender-node-env.js", jsenv.NodeEnv, false)
	})
	// programs are jsenv.Programs, compiled on first use.
	programs sync.Map // name -> func() (*goja.Program, error)
)

// embeddedProgram returns the compiled jsenv.Programs[name].
func embeddedProgram(name string) (*goja.Program, error) {
	f, _ := programs.LoadOrStore(name, sync.OnceValues(func() (*goja.Program, error) {
		return goja.Compile("gorender-"+name+".js", jsenv.Programs[name], false)
	}))
	return f.(func() (*goja.Program, error))()
}

// regexpMatchTimeout is set once per process, by the first goja engine.
var regexpMatchTimeout sync.Once

// boundRegexpMatches bounds every regular expression match of goja's
// backtracking engine (regexp2: lookarounds, backreferences) to d, the
// first time it is called in the process. goja checks for interrupts
// between instructions, not inside a match, so a catastrophic pattern
// (/^(a+)+(?=b)c$/ on 34 a's: hours of backtracking) ran on after its
// render was answered, a quarantined runtime burning a core. regexp2 ends a
// match at its timeout and goja reports that as no match: d is at least the
// longest any render runs before it is interrupted
// (jsvm.Options.RegexpMatchTimeout), so a match it ends belongs to a render
// that is already being stopped. regexp2 copies the bound into a pattern
// when it compiles it, from a package variable; goja's patterns are shared
// by the runtimes of a program, so it is set once, before this engine
// compiles anything. Patterns Go's regexp runs (no backtracking) take linear
// time and need no bound.
func boundRegexpMatches(d time.Duration) {
	if d <= 0 {
		return
	}
	regexpMatchTimeout.Do(func() { regexp2.DefaultMatchTimeout = d })
}

// Engine is the goja engine.
type Engine struct {
	opts jsvm.Options
}

// New returns the goja engine with the environment opts describes.
func New(opts jsvm.Options) (*Engine, error) {
	boundRegexpMatches(opts.RegexpMatchTimeout)
	if _, err := gojaNativeLayout(); err != nil {
		return nil, err
	}
	if _, err := envProgram(); err != nil {
		return nil, fmt.Errorf("compile the render environment: %w", err)
	}
	if _, err := bridgeProgram(); err != nil {
		return nil, fmt.Errorf("compile the render environment: %w", err)
	}
	if opts.SupportModules {
		if _, err := nodeEnvProgram(); err != nil {
			return nil, fmt.Errorf("compile the Node environment: %w", err)
		}
	}
	return &Engine{opts: opts}, nil
}

// Name is "goja".
func (e *Engine) Name() string { return Name }

// program is goja's compiled form of a bundle.
type program struct {
	prg *goja.Program
	// lowered: rewritten by esbuild before goja could parse it.
	lowered bool
	// propertyEscapes: may build \p{…} regexes, which need the rewrite.
	propertyEscapes bool
	// stringBuilds: quadratic string accumulators rewritten into array
	// joins (transform.RewriteStringBuilds).
	stringBuilds int
	// codeSum: the inproc.Checksum of the code compiled, before the
	// CommonJS wrapper, when it is not the bundle.
	codeSum uint32
	// columns indexes the text compiled (goja counts columns in bytes).
	columns *inproc.Columns
}

// Compile parses the bundle with goja; if goja cannot parse it (async
// generators, for await, regex flags it lacks) or it may use \p{…} regex
// escapes, the bundle is first lowered with esbuild. Parsing first keeps the
// common case free of the transform and keeps the bundle's own line numbers.
// Unless KeepStringBuilds, react-dom's quadratic string builds are rewritten
// into array joins before compiling.
func (e *Engine) Compile(name, path, source string) (jsvm.Program, error) {
	p := &program{propertyEscapes: transform.MayUsePropertyEscapes(source)}
	src := source
	if p.propertyEscapes {
		lowered, err := transform.LowerForGoja(name+".js", source, true)
		if err != nil {
			return nil, fmt.Errorf("compile bundle %s: %v", name, err)
		}
		src, p.lowered = lowered, true
	}
	prg, err := e.compileBundle(p, name, src)
	if err != nil && !p.lowered {
		lowered, lerr := transform.LowerForGoja(name+".js", source, false)
		if lerr != nil {
			// A real syntax error: goja's message is about the bundle as sent.
			return nil, fmt.Errorf("compile bundle %s: %w", name, err)
		}
		p.lowered = true
		var lowErr error
		if prg, lowErr = e.compileBundle(p, name, lowered); lowErr != nil {
			return nil, fmt.Errorf("compile bundle %s: %w (and after lowering it with esbuild for goja: %v)", name, err, lowErr)
		}
		err = nil
	}
	if err != nil {
		return nil, fmt.Errorf("compile bundle %s: %w", name, err)
	}
	p.prg = prg
	prog := inproc.NewProgram(name, path, e.opts.SupportModules, p, p.columns)
	if p.lowered || p.stringBuilds > 0 {
		prog.SetRewrites(source, p.codeSum, func(source string) (string, transform.Chain, error) {
			return p.replay(name, source, e.opts.SupportModules)
		})
	}
	return prog, nil
}

// replay makes Compile's rewrites of source again, with their positions:
// the same lowering, string builds and wrapper, in the same order. It
// returns the code compiled before the wrapper (codeSum's).
func (p *program) replay(name, source string, module bool) (string, transform.Chain, error) {
	var chain transform.Chain
	if p.lowered {
		lowered, positions, err := transform.LowerForGojaPositions(name+".js", source, p.propertyEscapes)
		if err != nil {
			return "", nil, err
		}
		source, chain = lowered, append(chain, positions)
	}
	if p.stringBuilds > 0 {
		out, n, positions, err := transform.RewriteStringBuildsPositions(source)
		if err != nil || n != p.stringBuilds {
			return "", nil, fmt.Errorf("string builds rewritten again: %d, not %d (%v)", n, p.stringBuilds, err)
		}
		source, chain = out, append(chain, positions)
	}
	if module {
		chain = append(chain, transform.ModulePositions{})
	}
	return source, chain, nil
}

// compileBundle compiles src, rewritten by RewriteStringBuilds unless the
// engine keeps string builds. The rewrite parses src itself and returns it
// unchanged when it does not parse or nothing matches; should the rewritten
// source ever fail to compile, src is compiled as it is.
func (e *Engine) compileBundle(p *program, name, src string) (*goja.Program, error) {
	if !e.opts.KeepStringBuilds {
		if out, n, err := transform.RewriteStringBuilds(src); err == nil && n > 0 {
			if prg, columns, err := e.compile(name, out); err == nil {
				p.stringBuilds, p.codeSum, p.columns = n, inproc.Checksum(out), columns
				return prg, nil
			}
		}
	}
	prg, columns, err := e.compile(name, src)
	if err == nil && p.lowered {
		p.codeSum = inproc.Checksum(src)
	}
	p.columns = columns
	return prg, err
}

// compile compiles a bundle's source, as the CommonJS wrapper with
// SupportModules, and indexes the columns of the text compiled.
func (e *Engine) compile(name, source string) (*goja.Program, *inproc.Columns, error) {
	if e.opts.SupportModules {
		source = transform.WrapModule(source)
	}
	// goja would read and parse a source map its sourceMappingURL names
	// (relative to the working directory, eagerly, unbounded) and report
	// mapped positions; jsvm/sourcemap maps every engine's errors instead,
	// lazily and within a bound, from the bundle's own positions.
	ast, err := goja.Parse(name+".js", source, parser.WithDisableSourceMaps)
	if err != nil {
		return nil, nil, err
	}
	if transform.MayUseExponent(source) {
		rewriteExponents(ast, source)
	}
	prg, err := goja.CompileAST(ast, false)
	if err != nil {
		return nil, nil, err
	}
	return prg, inproc.NewColumns(source, inproc.UTF8Bytes), nil
}

// StringBuilds reports how many quadratic string builds were rewritten in a
// program this engine compiled (for tests and logs).
func StringBuilds(p jsvm.Program) int {
	if ip, ok := p.(*inproc.Program); ok {
		if gp, ok := ip.Code.(*program); ok {
			return gp.stringBuilds
		}
	}
	return 0
}

// NewRuntime makes a runtime with the environment installed.
func (e *Engine) NewRuntime() (jsvm.Runtime, error) {
	rt, err := inproc.NewRuntime(Name, inproc.UTF8Bytes, e.opts, func(h *inproc.Host) (inproc.VM[goja.Value], error) {
		return newVM(h)
	})
	if err != nil {
		return nil, fmt.Errorf("install the render environment: %w", err)
	}
	return rt, nil
}
