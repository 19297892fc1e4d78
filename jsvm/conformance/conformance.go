// Package conformance is the suite every JavaScript engine runs: the
// behaviour of the environment a bundle expects (PROTOCOL.md §5, §7, §8)
// through the jsvm boundary only, with the React fixture bundles of
// tests/testdata and their goldens recorded from Node. An engine package
// runs it from a test:
//
//	func TestConformance(t *testing.T) { conformance.Run(t, conformance.Of("goja", New)) }
//
// Its helpers (fixtures, loaded runtimes) serve the engines' own tests too.
package conformance

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"
	"testing"
	"time"

	"github.com/gorender/gorender/jsvm"
)

// Engine is an engine under test (see Of).
type Engine struct {
	Name string
	New  func(opts jsvm.Options) (jsvm.Engine, error)
	// SlowUnderRace skips the tests that load the fixture bundles when the
	// race detector is on: it instruments an engine translated from C
	// (quickjs) too, which makes them about ten times slower. Such an
	// engine runs the suite without -race as well (scripts/test.sh).
	SlowUnderRace bool
	// IntlBuilds, when the engine builds Intl in a runtime on first use
	// (the pure-Go engines: inproc.IntlBuilds), counts those builds.
	IntlBuilds func() int64
	// OwnIntl, for an engine whose Intl is its runtime's own (node: V8's
	// ICU), reports the versions of that ICU and of its time zone data: the
	// Intl matrix excuses none of its cases when they are the goldens' and
	// is skipped, naming them, when they are not.
	OwnIntl func() (icu, tz string, err error)
	// OneBundlePerRuntime: a runtime loads one program only (node: a
	// runtime is a lease on processes that hold a context per bundle), so
	// the checks that load a second program into a runtime are skipped.
	OneBundlePerRuntime bool
	// CompilesAtLoad: the engine compiles a bundle where it runs it (node:
	// in each process), so a syntax error fails its Load, not its Compile.
	CompilesAtLoad bool
	// NodeSnippetAnswers are the engine's answers to the Node environment's
	// snippets (by name) where they differ from Node's by design, each with
	// its reason (docs/node-engine.md "Differences from goja and quickjs").
	NodeSnippetAnswers map[string]Difference
}

// Difference is an engine's answer where it differs from Node's by design.
type Difference struct {
	Answer, Reason string
}

// Of is the engine name that open makes, for Run.
func Of[E jsvm.Engine](name string, open func(jsvm.Options) (E, error)) Engine {
	return Engine{Name: name, New: func(opts jsvm.Options) (jsvm.Engine, error) {
		e, err := open(opts)
		if err != nil {
			return nil, err
		}
		return e, nil
	}}
}

// Open makes an engine with open, failing t on an error.
func Open[E any](t testing.TB, open func(jsvm.Options) (E, error), opts jsvm.Options) E {
	t.Helper()
	e, err := open(opts)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// cases are the suite, by name.
var cases = []struct {
	name string
	run  func(t *testing.T, engine string)
}{
	{"EvalResults", testEvalResults},
	{"MathMatchesV8", testMathMatchesV8},
	{"NumberToStringRadixMatchesV8", testNumberToStringRadixMatchesV8},
	{"NumberFormattingMatchesNode", testNumberFormattingMatchesNode},
	{"PerRenderGlobalsCleared", testPerRenderGlobalsCleared},
	{"TimeoutInterruptsAndRetires", testTimeoutInterruptsAndRetires},
	{"SharedContextAndRunOnOtherBundle", testSharedContextAndRunOnOtherBundle},
	{"RunOnOtherBundleNesting", testRunOnOtherBundleNesting},
	{"RunOnOtherBundleCallsBack", testRunOnOtherBundleCallsBack},
	{"LoadErrors", testLoadErrors},
	{"SupportModulesGoldens", testSupportModulesGoldens},
	{"SupportModulesStreamKind", testSupportModulesStreamKind},
	{"PlainGoldens", testPlainGoldens},
	{"NodeEnvironmentMatchesNode", testNodeEnvironmentMatchesNode},
	{"FSIsConfinedToTheBundleDirectory", testFSIsConfinedToTheBundleDirectory},
	{"BundleSymlinkedIntoSnapshotsIsReadable", testBundleSymlinkedIntoSnapshotsIsReadable},
	{"ProcessEnv", testProcessEnv},
	{"TimersDoNotLeakIntoTheNextRender", testTimersDoNotLeakIntoTheNextRender},
	{"RealTimerErrors", testRealTimerErrors},
	{"ConsoleHistoryNeverCrossesRenders", testConsoleHistoryNeverCrossesRenders},
	{"ReplayAsyncLogs", testReplayAsyncLogs},
	{"AsyncLocalStorageAcrossAwaitsAndRenders", testAsyncLocalStorageAcrossAwaitsAndRenders},
	{"UnsupportedModuleFailsClearly", testUnsupportedModuleFailsClearly},
	{"IntlLoadsOnFirstUse", testIntlLoadsOnFirstUse},
	{"IntlParsesFormatsInUse", testIntlParsesFormatsInUse},
	{"IntlMatrix", testIntlMatrix},
	{"IntlProcessDefaults", testIntlProcessDefaults},
	{"UnicodePropertyEscapes", testUnicodePropertyEscapes},
	{"BuiltinsMatchNode", testBuiltinsMatchNode},
	{"StreamGoldens", testStreamGoldens},
	{"StreamClientGoneAbortsAndKeepsRuntime", testStreamClientGoneAbortsAndKeepsRuntime},
	{"StreamRequestGoneWhileWaitingKeepsRuntime", testStreamRequestGoneWhileWaitingKeepsRuntime},
	{"StreamIdleTimeout", testStreamIdleTimeout},
	{"StreamWithoutSinkIsAnError", testStreamWithoutSinkIsAnError},
	{"StreamChunkPastMaxAllocation", testStreamChunkPastMaxAllocation},
	{"IncrementalUpdatesGolden", testIncrementalUpdatesGolden},
	{"IncrementalUpdateInOtherBundle", testIncrementalUpdateInOtherBundle},
	{"StreamsCrossBundles", testStreamsCrossBundles},
	{"CrossStreamFlowsAsProduced", testCrossStreamFlowsAsProduced},
	{"CrossStreamStopsWithTheRender", testCrossStreamStopsWithTheRender},
	{"CrossStreamNeedsNodeEnvironment", testCrossStreamNeedsNodeEnvironment},
	{"CrossStreamHostileProducer", testCrossStreamHostileProducer},
	{"CrossStreamChunkTooLarge", testCrossStreamChunkTooLarge},
	{"CrossStreamCount", testCrossStreamCount},
	{"CrossStreamHostileObject", testCrossStreamHostileObject},
	{"CrossStreamChunkPastMaxAllocation", testCrossStreamChunkPastMaxAllocation},
	{"CrossStreamTwoConsumers", testCrossStreamTwoConsumers},
	{"CrossStreamBackFromATimer", testCrossStreamBackFromATimer},
	{"RunOnOtherBundleTimersLastTheRender", testRunOnOtherBundleTimersLastTheRender},
	{"RunOnOtherBundleTwiceBeginsEachCall", testRunOnOtherBundleTwiceBeginsEachCall},
	{"RunOnOtherBundleIntoAwaitingEntry", testRunOnOtherBundleIntoAwaitingEntry},
}

// Run runs the suite on e, one subtest per case. An engine with processes
// of its own (node: interface{ Close() }) is closed at the end of the case
// that made it.
func Run(t *testing.T, e Engine) {
	register(e)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			defer closeEngines()
			c.run(t, e.Name)
		})
	}
}

// made are the engines NewEngine made that must be closed (closeEngines).
var made struct {
	sync.Mutex
	closers []interface{ Close() }
}

func closeEngines() {
	made.Lock()
	closers := made.closers
	made.closers = nil
	made.Unlock()
	for _, c := range closers {
		c.Close()
	}
}

// registered are the engines under test, by name.
var registered sync.Map // name -> Engine

func register(e Engine) { registered.Store(e.Name, e) }

// engineOptions are the options each engine made here was made with, for
// the fixture cache.
var engineOptions sync.Map // jsvm.Engine -> jsvm.Options

// NewEngine makes the registered engine name with opts.
func NewEngine(name string, opts jsvm.Options) (jsvm.Engine, error) {
	v, ok := registered.Load(name)
	if !ok {
		return nil, fmt.Errorf("engine %q is not under test", name)
	}
	e, err := v.(Engine).New(opts)
	if err != nil {
		return nil, err
	}
	engineOptions.Store(e, opts)
	if c, ok := e.(interface{ Close() }); ok {
		made.Lock()
		made.closers = append(made.closers, c)
		made.Unlock()
	}
	return e, nil
}

// RaceEnabled reports a test binary built with -race.
var RaceEnabled = func() bool {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "-race" && s.Value == "true" {
				return true
			}
		}
	}
	return false
}()

// raceSkip is why a fixture test is skipped under the race detector.
const raceSkip = "tested without -race (scripts/test.sh runs it): the race detector makes this engine's translated C about 10× slower"

// skipSlowUnderRace skips t on an engine that is too slow under the race
// detector for the fixture bundles.
func skipSlowUnderRace(t testing.TB, engine string) {
	t.Helper()
	if v, ok := registered.Load(engine); ok && v.(Engine).SlowUnderRace && RaceEnabled {
		t.Skip(raceSkip)
	}
}

// renderDeadline is a render's context with a deadline after limit, given
// as the worker gives it (a *jsvm.DeadlineError cause): the timeout answer
// names the limit itself. (Without the cause it names the time from the
// render's start to the deadline, less than the limit by however long the
// caller took to call Eval: jsvm's TestInterruptedError covers that.)
func renderDeadline(limit time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(context.Background(), limit, &jsvm.DeadlineError{Limit: limit})
}
