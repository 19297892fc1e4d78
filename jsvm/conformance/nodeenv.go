package conformance

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gorender/gorender/jsvm"
)

func renderErr(t *testing.T, err error) *jsvm.RenderError {
	t.Helper()
	var re *jsvm.RenderError
	if !errors.As(err, &re) {
		t.Fatalf("error = %v, want *RenderError", err)
	}
	return re
}

func testFSIsConfinedToTheBundleDirectory(t *testing.T, engine string) {
	rt, dir := loadSnippetRuntime(t, engine, jsvm.Options{})
	outside := filepath.Join(filepath.Dir(dir), "outside.txt")
	tests := []struct{ name, code, want string }{
		{"companion beside the bundle", `require('fs').readFileSync(require('path').join(__dirname, 'loadable-stats.json'), 'utf8')`,
			`{"publicPath":"/packs/","chunks":{"main":["main.js"]}}` + "\n"},
		{"relative to cwd = bundle dir", `require('fs').readFileSync('sub/inner.txt', 'utf8') + process.cwd().endsWith('bundle-dir')`, "inner\ntrue"},
		{"symlink inside pointing inside", `require('fs').readFileSync(__dirname + '/inner-link', 'utf8')`, "inner\n"},
		{"dot-dot", `(() => { try { return require('fs').readFileSync(__dirname + '/../outside.txt', 'utf8'); } catch (e) { return e.code + ' ' + e.syscall + ' ' + e.errno; } })()`, "ENOENT open -2"},
		{"dot-dot hidden in the middle", `(() => { try { return require('fs').readFileSync(__dirname + '/sub/../../outside.txt', 'utf8'); } catch (e) { return e.code; } })()`, "ENOENT"},
		{"absolute elsewhere", `(() => { try { return require('fs').readFileSync(` + jsString(outside) + `, 'utf8'); } catch (e) { return e.code + ' ' + e.message.split(',')[0]; } })()`, "ENOENT ENOENT: no such file or directory"},
		{"system file", `(() => { try { return require('fs').readFileSync('/etc/passwd', 'utf8'); } catch (e) { return e.code; } })()`, "ENOENT"},
		{"symlink pointing out", `(() => { try { return require('fs').readFileSync(__dirname + '/escape-link', 'utf8'); } catch (e) { return e.code; } })()`, "ENOENT"},
		{"stat through symlink pointing out", `(() => { try { require('fs').statSync(__dirname + '/escape-link'); return 'stat'; } catch (e) { return e.code; } })()`, "ENOENT"},
		{"exists through symlink pointing out", `String(require('fs').existsSync(__dirname + '/escape-link'))`, "false"},
		{"readdir of the parent", `(() => { try { return require('fs').readdirSync(__dirname + '/..').join(); } catch (e) { return e.code; } })()`, "ENOENT"},
		{"NUL byte", `(() => { try { return require('fs').readFileSync(__dirname + '/loadable-stats.json\0/../../outside.txt'); } catch (e) { return e.code; } })()`, "ERR_INVALID_ARG_VALUE"},
		{"directory read", `(() => { try { return require('fs').readFileSync(__dirname); } catch (e) { return e.code; } })()`, "EISDIR"},
		{"write", `(() => { try { require('fs').writeFileSync(__dirname + '/new.txt', 'x'); return 'wrote'; } catch (e) { return e.code + ' ' + e.message; } })()`,
			"EROFS EROFS: read-only file system, open 'new.txt'"},
		// Errors name paths relative to the bundle directory, never the
		// server's cache path (they reach 400 answers).
		{"error paths are relative", `(() => { const fs = require('fs'), path = require('path'); const m = []; for (const p of [path.join(__dirname, 'missing.json'), path.join(__dirname, '..', 'other', 'x.json'), __dirname + '/sub/../nope', 'rel/missing.txt']) { try { fs.readFileSync(p); } catch (e) { m.push(e.message + ' ' + e.path); } } try { fs.statSync(__dirname + '/nope'); } catch (e) { m.push(e.message); } try { fs.mkdirSync(path.join(__dirname, '..', 'made')); } catch (e) { m.push(e.message); } return m.join('|'); })()`,
			"ENOENT: no such file or directory, open 'missing.json' missing.json|ENOENT: no such file or directory, open '../other/x.json' ../other/x.json|" +
				"ENOENT: no such file or directory, open 'nope' nope|ENOENT: no such file or directory, open 'rel/missing.txt' rel/missing.txt|" +
				"ENOENT: no such file or directory, stat 'nope'|EROFS: read-only file system, mkdir '../made'"},
		{"mkdir", `(() => { try { require('fs').mkdirSync(__dirname + '/d'); return 'made'; } catch (e) { return e.code; } })()`, "EROFS"},
		{"async read outside", `new Promise((resolve) => require('fs').readFile('/etc/hostname', (err) => resolve(err ? err.code : 'read')))`, "ENOENT"},
		{"promises read outside", `require('fs/promises').readFile('/etc/hostname').then(() => 'read', (e) => e.code)`, "ENOENT"},
		{"realpath stays in the directory as given", `require('fs').realpathSync(__dirname + '/inner-link') === __dirname + '/sub/inner.txt' ? 'ok' : 'bad'`, "ok"},
		{"require a file beside the bundle", `(() => { const h = require('./helper'); return h.twice(21) + ' ' + h.dir + ' ' + require('./data.json').n + ' ' + (require('./helper.js') === h); })()`, "42 bundle-dir 7 true"},
		{"require a file outside", `(() => { try { require('../outside.txt'); return 'loaded'; } catch (e) { return e.code; } })()`, "MODULE_NOT_FOUND"},
		{"module objects", `(() => { const h = require('./helper'), file = require.resolve('./helper'), m = require.cache[file]; return [file === __dirname + '/helper.js', require.resolve('node:fs'), m.exports === h, m.loaded, m.id === file, m.parent === require.main, require.main.children.includes(m), require.main.filename === __filename, require.resolve.paths('x') === null].join(' '); })()`,
			"true node:fs true true true true true true true"},
		{"require's argument", `[5, ''].map((id) => { try { require(id); return 'loaded'; } catch (e) { return e.name + ' ' + e.code; } }).join(', ')`, "TypeError ERR_INVALID_ARG_TYPE, TypeError ERR_INVALID_ARG_VALUE"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := evalSnippet(t, rt, tc.code)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "new.txt")); !os.IsNotExist(err) {
		t.Fatal("a write reached the disk")
	}
}

func testBundleSymlinkedIntoSnapshotsIsReadable(t *testing.T, engine string) {
	// <cache>/<id>/<id>.js may be a relative symlink into
	// <cache>.artifact-snapshots/<id>/: the bundle may still read itself.
	root := t.TempDir()
	snap := filepath.Join(root, "cache.artifact-snapshots", "b1")
	dir := filepath.Join(root, "cache", "b1")
	for _, d := range []string{snap, dir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	src := `globalThis.size = () => require('fs').readFileSync(__filename).length + ' ' + require('path').basename(__filename);`
	if err := os.WriteFile(filepath.Join(snap, "b1.js"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../cache.artifact-snapshots/b1/b1.js", filepath.Join(dir, "b1.js")); err != nil {
		t.Fatal(err)
	}
	e := NodeEngine(t, engine, jsvm.Options{})
	rt := LoadProgram(t, e, Compile(t, e, "b1", filepath.Join(dir, "b1.js"), src))
	if got := MustEval(t, rt, `size()`); got != fmt.Sprintf("%d b1.js", len(src)) {
		t.Fatalf("got %q", got)
	}
}

func testProcessEnv(t *testing.T, engine string) {
	rt, _ := loadSnippetRuntime(t, engine, jsvm.Options{})
	want := os.Getenv("NODE_ENV")
	if want == "" {
		if _, set := os.LookupEnv("NODE_ENV"); !set {
			want = "production"
		}
	}
	got := MustEval(t, rt, `JSON.stringify([process.env.NODE_ENV, 'RENDERER_PASSWORD' in process.env, process.env.PATH === undefined])`)
	if got != fmt.Sprintf(`[%q,false,false]`, want) {
		t.Fatalf("got %s", got)
	}
}

// Pending timers of one render never fire in the next one.
func testTimersDoNotLeakIntoTheNextRender(t *testing.T, engine string) {
	for _, opts := range []jsvm.Options{{SupportModules: true}, {StubTimers: false}} {
		t.Run(fmt.Sprintf("supportModules=%v", opts.SupportModules), func(t *testing.T) {
			e, err := NewEngine(engine, opts)
			if err != nil {
				t.Fatal(err)
			}
			rt := NewLoaded(t, e, "b1", `globalThis.fired = [];`)
			if got := MustEval(t, rt, `setTimeout(() => fired.push('timeout'), 20); setInterval(() => fired.push('interval'), 5); setImmediate(() => fired.push('immediate')); 'first'`); got != "first" {
				t.Fatal(got)
			}
			got := MustEval(t, rt, `new Promise((resolve) => setTimeout(() => resolve(JSON.stringify(fired)), 60))`)
			if got != "[]" {
				t.Fatalf("timers of the first render fired in the second: %s", got)
			}
		})
	}
}

func testRealTimerErrors(t *testing.T, engine string) {
	e := NodeEngine(t, engine, jsvm.Options{})
	rt := NewLoaded(t, e, "b1", `var x = 1;`)
	_, err := Eval(t, rt, `new Promise((resolve) => setTimeout(() => { throw new TypeError('boom in timer'); }, 1))`)
	if re := renderErr(t, err); re.Kind != jsvm.KindJS || !strings.Contains(re.Text, "EXCEPTION MESSAGE:\nboom in timer") || !strings.Contains(re.Text, "TypeError: boom in timer") {
		t.Fatalf("timer exception: %v", re.Text)
	}
	_, err = Eval(t, rt, `new Promise(() => { queueMicrotask(() => { throw new Error('boom in microtask'); }); setTimeout(() => {}, 50); })`)
	if re := renderErr(t, err); re.Kind != jsvm.KindJS || !strings.Contains(re.Text, "boom in microtask") {
		t.Fatalf("microtask exception: %v", re.Text)
	}
	_, err = Eval(t, rt, `new Promise(() => {})`)
	if re := renderErr(t, err); re.Kind != jsvm.KindJS || !strings.Contains(re.Text, "never settled") {
		t.Fatalf("unsettled: %v", re.Text)
	}
	// An hour: the timer is never due before the render ends, however
	// slowly it starts (at 50 ms a render slowed by -race and load found
	// it due at its first turn and ran it, as Node runs a due unref'd
	// timer while its loop is alive). Should unref not work, the render
	// ends at Eval's deadline instead.
	_, err = Eval(t, rt, `new Promise((resolve) => setTimeout(resolve, 3600e3).unref())`)
	if re := renderErr(t, err); !strings.Contains(re.Text, "never settled") {
		t.Fatalf("unref'd timer kept the render alive: %v", re.Text)
	}
	if rt.Broken() {
		t.Fatal("runtime broken by ordinary errors")
	}
	if got := MustEval(t, rt, `new Promise((resolve) => setTimeout(() => resolve('still fine'), 1))`); got != "still fine" {
		t.Fatal(got)
	}

	ctx, cancel := renderDeadline(100 * time.Millisecond)
	defer cancel()
	req := jsvm.NewRequest(nil)
	started := time.Now()
	_, err = rt.Eval(ctx, `new Promise((resolve) => setTimeout(resolve, 60000))`, req)
	if re := renderErr(t, err); re.Kind != jsvm.KindTimeout || re.Text != jsvm.TimeoutText(100*time.Millisecond) {
		t.Fatalf("timeout: %v %q", re.Kind, re.Text)
	}
	if time.Since(started) > 2*time.Second {
		t.Fatal("the sleeping loop did not stop at the deadline")
	}
	// The deadline passed while the loop slept (unless a slow machine was
	// still running the render's JavaScript then, which retires the
	// runtime): a runtime kept serves the next render, and the abandoned
	// render's timer never fires in it. TestStreamRequestGoneWhileWaiting-
	// KeepsRuntime makes the idle case certain.
	if rt.Broken() {
		return
	}
	if got := MustEval(t, rt, `new Promise((resolve) => setTimeout(() => resolve('after the timeout'), 1))`); got != "after the timeout" {
		t.Fatal(got)
	}
}

// Console history belongs to its render: work of an earlier render that
// resumes later logs into the earlier render's history.
func testConsoleHistoryNeverCrossesRenders(t *testing.T, engine string) {
	e := NodeEngine(t, engine, jsvm.Options{ReplayAsyncLogs: true})
	rt := NewLoaded(t, e, "b1", `var gate = null;`)
	first := MustEval(t, rt, `
		gate = new Promise((resolve) => { globalThis.release = resolve; });
		(async () => { await gate; console.log('late, from render 1'); })();
		console.log('render 1');
		JSON.stringify(console.history)`)
	if first != `[{"level":"log","arguments":["[SERVER] render 1"]}]` {
		t.Fatal(first)
	}
	second := MustEval(t, rt, `(async () => {
		release();
		await new Promise((resolve) => setTimeout(resolve, 1));
		console.log('render 2');
		return JSON.stringify(console.history);
	})()`)
	if second != `[{"level":"log","arguments":["[SERVER] render 2"]}]` {
		t.Fatalf("histories crossed: %s", second)
	}
}

// react-on-rails keeps a reference to console.history before awaiting; with
// REPLAY_SERVER_ASYNC_OPERATION_LOGS the awaited work's logs land in it,
// without it they do not (upstream resets console.history after the
// synchronous part).
func testReplayAsyncLogs(t *testing.T, engine string) {
	code := `(() => {
		const captured = console.history;
		console.log('sync');
		const p = (async () => {
			await null;
			console.info('after await');
			await new Promise((resolve) => setTimeout(resolve, 1));
			console.warn('after timer');
			return JSON.stringify(captured.map((e) => e.arguments[0]));
		})();
		console.history = [];
		return p;
	})()`
	for _, tc := range []struct {
		opts jsvm.Options
		want string
	}{
		{jsvm.Options{SupportModules: true, ReplayAsyncLogs: true}, `["[SERVER] sync","[SERVER] after await","[SERVER] after timer"]`},
		{jsvm.Options{SupportModules: true}, `["[SERVER] sync"]`},
		{jsvm.Options{StubTimers: true, ReplayAsyncLogs: true}, ""},
	} {
		e, err := NewEngine(engine, tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		rt := NewLoaded(t, e, "b1", `var x;`)
		got, err := Eval(t, rt, code)
		if tc.want == "" {
			// Stub timers: the timer never fires, so the promise never settles.
			if err == nil || !strings.Contains(err.Error(), "never settled") {
				t.Fatalf("stub timers: %q %v", got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Fatalf("%+v: got %q %v, want %q", tc.opts, got, err, tc.want)
		}
	}
}

func testAsyncLocalStorageAcrossAwaitsAndRenders(t *testing.T, engine string) {
	e := NodeEngine(t, engine, jsvm.Options{})
	rt := NewLoaded(t, e, "b1", `
		const { AsyncLocalStorage } = require('async_hooks');
		const als = new AsyncLocalStorage();
		globalThis.renderWith = (id) => als.run({ id }, async () => {
			const seen = [als.getStore().id];
			await null;
			seen.push(als.getStore().id);
			await Promise.resolve();
			seen.push(als.getStore().id);
			await new Promise((resolve) => setTimeout(resolve, 2));
			seen.push(als.getStore().id);
			await new Promise((resolve) => setImmediate(resolve));
			seen.push(als.getStore().id);
			await new Promise((resolve) => process.nextTick(resolve));
			seen.push(als.getStore().id);
			return seen.join(',');
		});
		globalThis.peek = () => String(als.getStore() && als.getStore().id);
		globalThis.enter = (id) => { als.enterWith({ id }); return peek(); };
	`)
	if got := MustEval(t, rt, `renderWith('A')`); got != "A,A,A,A,A,A" {
		t.Fatalf("render A: %s", got)
	}
	if got := MustEval(t, rt, `renderWith('B').then((s) => s + ' ' + peek())`); got != "B,B,B,B,B,B undefined" {
		t.Fatalf("render B: %s", got)
	}
	if got := MustEval(t, rt, `Promise.all([renderWith('C'), renderWith('D')]).then((a) => a.join(' '))`); got != "C,C,C,C,C,C D,D,D,D,D,D" {
		t.Fatalf("concurrent: %s", got)
	}
	if got := MustEval(t, rt, `enter('E')`); got != "E" {
		t.Fatal(got)
	}
	if got := MustEval(t, rt, `peek()`); got != "undefined" {
		t.Fatalf("enterWith of one render leaked into the next: %s", got)
	}
}

func testUnsupportedModuleFailsClearly(t *testing.T, engine string) {
	e := NodeEngine(t, engine, jsvm.Options{})
	p, err := e.Compile("b1", "", `const cp = require('child_process');`)
	if err != nil {
		t.Fatal(err)
	}
	rt, _ := e.NewRuntime()
	err = rt.Load(context.Background(), p)
	if err == nil || !strings.Contains(err.Error(), "Cannot find module 'child_process'") ||
		!strings.Contains(err.Error(), "serves these built-ins (also as node:<name>): assert, async_hooks, buffer, crypto") {
		t.Fatalf("load error = %v", err)
	}
}

func testUnicodePropertyEscapes(t *testing.T, engine string) {
	src := `globalThis.props = () => JSON.stringify([/\p{Lu}/u.test("É"), /^\p{Script=Greek}+$/u.test("αβγ"), "a1-b2_ü".match(/[\p{L}\d]+/gu), "x é 😀".replace(/\P{L}/gu, "."), /^\p{ID_Start}\p{ID_Continue}*$/u.test("ñame1"), new RegExp("\\p{Ll}+", "u").exec("ABcdE")[0], /\p{Nd}/u.test("٣"), /^[\p{Alphabetic}]+$/u.test("Straße"), /^\P{Lu}+$/u.test("abc")]);
globalThis.emoji = () => /\p{Extended_Pictographic}/u.test("😀");`
	e := NodeEngine(t, engine, jsvm.Options{})
	rt := NewLoaded(t, e, "props", src)
	// Recorded from Node 20.
	if got := MustEval(t, rt, `props()`); got != `[true,true,["a1","b2","ü"],"x.é..",true,"cd",true,true,true]` {
		t.Fatalf("got %s", got)
	}
	if engine != "goja" {
		// QuickJS's regex engine and V8's have the Unicode tables
		// themselves, emoji properties included: nothing is rewritten.
		if got := MustEval(t, rt, `emoji() + ' ' + (RegExp.__gorenderPatched === undefined)`); got != "true true" {
			t.Fatalf("emoji: %s", got)
		}
	} else {
		// goja's rewrite takes the emoji properties from Node's tables
		// (transform/unicodeprops_gen.go); one nobody has is an error
		// naming the gap, not a class that never matches.
		if got := MustEval(t, rt, `emoji()`); got != "true" {
			t.Fatalf("emoji: %s", got)
		}
		_, err := Eval(t, rt, `new RegExp('\\p{Nonsense}', 'u')`)
		if re := renderErr(t, err); !strings.Contains(re.Text, `no Unicode data for \p{Nonsense}`) {
			t.Fatalf("unknown property: %q", re.Text)
		}
	}
	// A regex that is not a property escape keeps working, and instanceof
	// and constructor checks hold with the patched RegExp.
	if got := MustEval(t, rt, `[/a/ instanceof RegExp, new RegExp('b') instanceof RegExp, /a/.constructor === RegExp, 'a-b'.split(/-/).length].join()`); got != "true,true,true,2" {
		t.Fatal(got)
	}
}
