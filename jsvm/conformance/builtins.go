package conformance

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/gorender/gorender/jsvm"
)

// builtinsBundle is loaded as a bundle, so that its code goes through the
// engine's compile step as a bundle's does (goja rewrites `**` there).
const builtinsBundle = `
globalThis.powCases = function () {
  var out = [], xs = [2, 10, 1.1, -3, 0.5, 7.25, 1e-3, 123.456, -0, NaN, Infinity], ys = [0.5, -4, 3.7, 1 / 3, -0.5, 2, 9, -7.5, 0.1, 30];
  for (var i = 0; i < xs.length; i++) for (var j = 0; j < ys.length; j++) out.push(xs[i] ** ys[j]);
  var a = 1.1, o = { p: 1.7, q: [2.3] }, k = 'p';
  a **= 3.7; o.p **= -2.2; o[k] **= 0.3; o.q[0] **= 1.9;
  out.push(a, o.p, o.q[0], (1 + 0.1) ** (2 * 1.5), 2 ** 3 ** 0.5, (-2) ** 2, 2n ** 64n, { valueOf() { return 1.1 } } ** '3.7');
  var order = [], x = { valueOf() { order.push('x'); return 1.3 } }, y = { valueOf() { order.push('y'); return 2.9 } };
  out.push(x ** y, order.join(''));
  try { 1n ** 2 } catch (e) { out.push(e.name) }
  class C { static s = 1.1 ** 1.1; #p = 1.2 ** 1.2; m(z = 1.3 ** 1.3) { return [z, this.#p, ` + "`${1.4 ** 1.4}`" + `]; } get [1.5 ** 1.5]() { return 1; } }
  var f = (q) => q ** 1.6, obj = { k: 1.7 ** 1.7, [1.8 ** 1.8]: 0 };
  out.push(C.s, new C().m().join(), f(1.9), obj.k, Object.keys(obj)[1], Object.getOwnPropertyNames(C.prototype)[2], true ? 2.1 ** 2.1 : 0, [...[2.2]].map((v) => v ** v)[0]);
  label: for (var i = 0; i < 1; i++) { switch (i) { case 0: out.push(2.3 ** 2.3); } }
  return out.map(String).join(' ');
};
globalThis.emojiCases = function () {
  var s = 'a1😀#©👍🏽\u200d♀️';
  return [s.replace(/\p{Emoji}/gu, '.'), s.replace(/\p{Extended_Pictographic}/gu, '.'), s.replace(/\p{Emoji_Presentation}/gu, '.'),
    s.replace(/\P{Emoji}/gu, '.'), s.replace(/[\p{Emoji_Modifier}\p{EComp}]/gu, '.'), s.replace(/\p{Cased}/gu, '.'),
    'Ⅻa' + s.replace(/\p{Changes_When_Uppercased}/gu, '.'), /^\p{XID_Start}\p{XIDC}*$/u.test('ñame1'), /\p{Math}/u.test('+')].join(' ');
};
`

// builtinSnippets are expressions whose value (awaited, as text) Node 20
// and the engine must give byte for byte; a throw answers its error's name
// (messages differ by engine).
// gaps names, by engine, the snippets on which it still differs from Node,
// with the reason (docs/compatibility.md "Built-ins against Node 20"):
// there the test wants a difference, so that closing one makes it fail
// until the entry goes.
var builtinSnippets = []struct {
	name, code string
	gaps       map[string]string
}{
	{"exponent in a bundle", `powCases()`, nil},
	{"exponent in a rendering request", `[1.1 ** 3.7, 10 ** -4, (0.7 ** 1.3) ** 2.1].join(' ')`, nil},
	{"JSON.parse out of range", `JSON.stringify([JSON.parse('1e400'), JSON.parse('-1e400'), JSON.parse('[1e309, -2e308, 1e-400, 5e-324]'), JSON.parse('{"a": 123456789012345678901234567890e300}', (k, v) => typeof v === 'number' ? String(v) : v)].map(String))`, nil},
	{"JSON.stringify replacer array and indent", `JSON.stringify({ a: [1, { b: 2, c: 3 }], b: 'x', 1: 'one', c: { a: 1 } }, ['a', 'b', 1, 'c'], 2)`, nil},
	{"JSON.stringify replacer function and indent", `JSON.stringify({ a: [1, { b: 2, c: 3 }], b: 'x', d: undefined, e: () => 1, f: new Date(0), g: [undefined, function () {}] }, function (k, v) { return typeof v === 'number' ? v * 2 : k === 'b' ? undefined : v }, '\t')`, nil},
	{"JSON.stringify indent bounds", `[JSON.stringify({ a: [], b: {}, c: [[]] }, null, 20), JSON.stringify([1, [2]], null, 'abcdefghijklmn'), JSON.stringify({ a: 1 }, null, new Number(3)), JSON.stringify({ a: 1 }, null, new String('--')), JSON.stringify({ a: 1 }, null, -1), JSON.stringify([1, {}], null, 0.9), JSON.stringify({ a: 1 }, null, 'ü→\uD83D\uDE00abcdefghij'), JSON.stringify(['\uD800', 'é\n"'], null, 1)].join('|')`, nil},
	{"JSON.stringify replacer this and key order", `JSON.stringify({ b: 1, a: { y: 2, x: 3 } }, function (k, v) { return k === '' ? v : Array.isArray(this) + k + ':' + JSON.stringify(v) }, 1)`, nil},
	{"String isWellFormed and toWellFormed", `['ab\uD800', 'a\uDC00b', '\uD83D\uDE00', '', 'x\uD800\uD800'].map((s) => s.isWellFormed() + ':' + Array.from(s.toWellFormed(), (c) => c.codePointAt(0).toString(16)).join('.')).join(' ') + ' ' + String.prototype.isWellFormed.length + String.prototype.toWellFormed.name + Object.keys(String.prototype).length`, nil},
	{"Array change-by-copy", `[[3, 1, 2].toSorted().join(), [1, 2].toReversed().join(), [1, 2, 3].toSpliced(1, 1, 'x').join(), [1, 2].with(-1, 9).join(), [1, 2, 3].findLast((x) => x < 3), [1, 2, 3].findLastIndex((x) => x > 5), new Int8Array([3, -1]).toSorted().join(), new Uint8Array([1, 2]).with(0, 7).join()].join(' ')`, nil},
	{"groupBy and fromAsync as in Node 20", `[typeof Object.groupBy, typeof Map.groupBy, typeof Array.fromAsync].join()`, nil},
	{"WeakRef", `(() => { const t = { a: 1 }, r = new WeakRef(t); return [r.deref() === t, new WeakRef({ b: 2 }).deref().b, Object.prototype.toString.call(r), typeof WeakRef.prototype.deref, WeakRef.length, WeakRef.name].join() })()`, nil},
	{"WeakRef errors", `[() => WeakRef({}), () => new WeakRef(1), () => WeakRef.prototype.deref.call({})].map((f) => { try { f(); return 'ok' } catch (e) { return e.name } }).join()`, nil},
	{"FinalizationRegistry", `(() => { const f = new FinalizationRegistry(() => {}), t = {}, tok = {}; return [f.register(t, 1, tok), f.unregister(tok), f.unregister({}), Object.prototype.toString.call(f), FinalizationRegistry.length, (() => { try { f.register(t, t); return 'ok' } catch (e) { return e.name } })()].join() })()`, nil},
	{"RegExp d flag", `(() => { const m = new RegExp('a(?<n>b)?(c)', 'dg').exec('xxac'); return JSON.stringify([m.indices, m.indices.groups, new RegExp('a', 'd').hasIndices, new RegExp('a', 'gd').flags]) })()`,
		map[string]string{"goja": "goja's regex engines report no capture positions"}},
	{"RegExp emoji and other binary properties", `emojiCases()`, nil},
	{"RegExp case folding under iu", `[/\u212A/iu.test('k'), /ſ/iu.test('S'), /[a-z]/iu.test('\u212A'), /ß/iu.test('ẞ'), /Σ/iu.test('ς')].join()`, nil},
	{"RegExp case folding under i without u", `[/\u212A/i.test('k'), /ſ/i.test('S'), /[a-z]/i.test('\u212A')].join()`,
		map[string]string{"goja": "goja folds cases under /i as under /iu (Unicode simple case folding, not toUpperCase)"}},
	{"Date toString zone name", `[new Date(0).toString(), new Date(1e12).toTimeString(), String(new Date(86400000))].join('|')`, nil},
	{"structuredClone error is a DOMException", `(() => { try { structuredClone({ f() {} }) } catch (e) { return [e instanceof DOMException, e.name, e.code, e.constructor.name, e instanceof Error].join() } })()`,
		map[string]string{"node": "the executor's structuredClone is its main realm's, as in a node:vm context: its DOMException is no instance of the bundle context's Error"}},
	{"template objects are frozen", `(() => { function tag(s) { return [Object.isFrozen(s), Object.isFrozen(s.raw), s.raw[0]] } return tag` + "`a\\n${1}b`" + `.join() })()`, nil},
	{"resizable ArrayBuffer", `(() => { const b = new ArrayBuffer(2, { maxByteLength: 8 }); b.resize(4); return [b.byteLength, b.resizable, b.maxByteLength, new Uint8Array(b).length].join() })()`,
		map[string]string{"goja": "goja's ArrayBuffer has a fixed length (an engine change)"}},
	{"arguments and caller of a sloppy function", `(() => { function f() { return [typeof f.arguments, f.arguments && f.arguments.length, typeof f.caller] } function g() { return f(1, 2) } return g().join() })()`,
		map[string]string{"goja": "the engine keeps no activation a function object could read", "quickjs": "the engine keeps no activation a function object could read"}},
	{"Error.captureStackTrace", `(() => { const o = { name: 'E', message: 'm' }; Error.captureStackTrace(o); const d = Object.getOwnPropertyDescriptor(o, 'stack'); class A extends Error { constructor(m) { super(m); this.name = 'A'; Error.captureStackTrace(this, A) } } const a = new A('x'); return [typeof o.stack, o.stack.split('\n')[0], Object.keys(o), typeof d.value, d.writable, d.enumerable, d.configurable, Error.captureStackTrace.length, a.stack.split('\n')[0], Object.keys(a), (() => { try { Error.captureStackTrace(1) } catch (e) { return e.name } })()].join() })()`, nil},
	{"JSON.stringify of wrappers, holes, keys and toJSON", `JSON.stringify([-0, new Number(3), new String('s'), new Boolean(false), [,1], { 2: 'b', 1: 'a', x: 1, [Symbol()]: 2 }, { toJSON(k) { return 'k=' + k } }, '\u2028\u2029', '\x7f\x00'])`, nil},
	{"JSON.stringify replacer array of duplicates and wrappers", `JSON.stringify({ a: 1, b: 2, 1: 3 }, ['b', 'b', 1, new String('a'), new Number(1), {}])`, nil},
	{"JSON.parse reviver", `JSON.stringify(JSON.parse('{"a":[1,{"b":2}],"c":"d"}', function (k, v) { if (k === 'b') return undefined; if (Array.isArray(v)) return v.length; return v }))`, nil},
	{"JSON.parse numbers and __proto__", `[' [1] ', '"\\u0000"', '1E2', '-0', '0.0000001', '123456789012345678901234567890', '{"__proto__": 1}'].map((t) => { const v = JSON.parse(t); return typeof v === 'object' ? JSON.stringify(Object.keys(v)) + Object.getPrototypeOf(v) : String(v) + (Object.is(v, -0) ? '(-0)' : '') }).join('|')`, nil},
	{"JSON.parse errors", `['{a:1}', '[1,]', '01', '"\t"', '', '[1] x', "'a'", 'NaN'].map((t) => { try { JSON.parse(t); return 'ok' } catch (e) { return e.name } }).join()`, nil},
	{"JSON.stringify nested empties and surrogates", `JSON.stringify({ a: [{}, [], { b: [] }], c: { d: {} } }, null, '\t') + JSON.stringify([new Date(0)], null, 2) + JSON.stringify('\uD83D\uDE00\uDE00')`, nil},
	{"JSON.stringify errors", `(() => { try { JSON.stringify({ a: 1n }) } catch (e) { return e.name } })() + (() => { const o = {}; o.o = o; try { JSON.stringify(o) } catch (e) { return e.name } })()`, nil},
	{"String methods", `['abc'.at(-1), 'a'.padStart(3, 'xy'), 'aXbX'.replaceAll('X', '$&$&'), 'x'.localeCompare('y'), 'ǅ'.toLowerCase(), 'ß'.toUpperCase(), 'İ'.toLowerCase().length, 'a,b,,c'.split(',', 2).join('|'), '  x '.trimEnd() + '|', String.raw({ raw: ['a', 'b'] }, 1, 2), 'abc'.substr(-2, 1), 'x'.repeat(0) === '', '%E4'.length, encodeURIComponent('ä €'), escape('ä'), 'a-b_c'.normalize('NFD')].join(' ')`, nil},
	{"Array methods", `[[1, [2, [3, [4]]]].flat(2).join(), Array.from({ length: 3 }, (_, i) => i * 2).join(), [3, 1, 10, 2].sort().join(), [1, 2, 3].includes(NaN), [NaN].includes(NaN), [NaN].indexOf(NaN), Array.prototype.concat.call(1, 2).length, [1, 2, 3].reduceRight((a, b) => a + b), [5, 1, 4].sort((a, b) => b - a).join(), [,].length, Object.keys([, 1]).join(), [1, 2].entries().toString(), Array.of(7).length, [0, 1].find((x) => x) ].join(' ')`, nil},
	{"Number parsing and printing", `[(0.1).toFixed(20), (1e21).toFixed(2), (123.456).toPrecision(4), Number.parseFloat('1e-7'), (25).toString(36), Number('0x1f'), Number('  12  '), Number(''), Number('1_000'), parseInt('0x1f'), parseInt('08'), Number.MAX_SAFE_INTEGER + 2, 2 ** 53 + 1, (-1.5).toFixed(0), (1.45).toFixed(1), 0.1 + 0.2, 1 / 3, -1e-7, 1e21, 123e-20, Number.EPSILON, Number.MIN_VALUE].join(' ')`, nil},
	{"Date parsing and printing", `[new Date(2020, 0, 1).toISOString(), new Date('2020-01-01').getTime(), new Date('2020-01-01T00:00').getTime(), Date.UTC(2020, 0), new Date(0).toUTCString(), new Date(0).toDateString(), new Date(NaN).getTime(), String(new Date(NaN)), Date.parse('Thu, 01 Jan 1970 00:00:00 GMT'), Date.parse('2020-13-01'), new Date(8.64e15 + 1).getTime(), new Date(0).toJSON(), new Date(2020, 1, 30).getDate(), Date.parse('March 7, 2021'), Date.parse('2021/03/07'), Date.parse('2021-03-07 10:00')].join(' ')`, nil},
	{"RegExp basics", `['aBc'.replace(/b/i, '[$&]'), 'a1b2'.replace(/\d/g, (d) => d * 2), 'x'.match(/(?<n>x)/).groups.n, 'aaa'.lastIndexOf('a'), /\bé/u.test('é'), /[\s\S]/.test('\u2028'), 'a\nb'.match(/^b$/m)[0], /(a)|(b)/.exec('b').join(), 'abc'.split(/(b)/).join(), /\cJ/.test('\n'), RegExp('[').source || 1].join(' ')`, nil},
	{"toString(radix) of Number objects and radix objects", `(() => { let calls = 0; const r = { valueOf() { calls++; return 3 } }; const many = []; for (let i = 1; i < 60; i++) many.push(new Number(Math.sin(i) * 10 ** (i % 7)).toString(3 + i % 30), (i / 7).toString({ valueOf: () => 3 + i % 30 })); return [many.join(' '), new Number(0.1).toString(3), (0.1).toString(r), Number.prototype.toString.call(new Number(-1 / 3), 7), new Number(255).toString(16), new Number(0.7).toString({ valueOf: () => 10 }), (0.3).toString(new Number(5)), calls, (() => { try { return (1).toString({ valueOf: () => 37 }) } catch (e) { return e.name } })(), (() => { try { return Number.prototype.toString.call({}, r) } catch (e) { return e.name + calls } })()].join() })()`, nil},
	{"SharedArrayBuffer and Atomics", `(() => { const s = new SharedArrayBuffer(8), a = new Int32Array(s); Atomics.add(a, 0, 5); Atomics.sub(a, 0, 2); return [s.byteLength, Object.prototype.toString.call(s), Atomics.load(a, 0), Atomics.exchange(a, 1, 4), Atomics.compareExchange(a, 1, 4, 9), a.join(), Atomics.isLockFree(4), Object.prototype.toString.call(Atomics)].join() })()`, nil},
	// An index is read as ToIndex does: NaN and undefined are 0, a fraction
	// is truncated; past the length (or negative) is a RangeError.
	{"Atomics index", `(() => { const a = new Int32Array(new SharedArrayBuffer(8)); a[1] = 7; const r = []; for (const i of [NaN, undefined, 1.5, '1', -0.5, { valueOf() { return 1; } }, 2, -1, Infinity]) { try { r.push(Atomics.load(a, i)); } catch (e) { r.push(e.name); } } return r.join(); })()`, nil},
}

// testBuiltinsMatchNode renders every builtinSnippets expression through
// the engine and in Node 20 (node on PATH, the oracle), and compares the
// text.
func testBuiltinsMatchNode(t *testing.T, engine string) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node on PATH (scripts/install-node.sh): Node is the oracle")
	}
	wrap := func(code string) string {
		return "(() => { try { return Promise.resolve(" + code + ").then(String, (e) => 'threw ' + e.name) } catch (e) { return 'threw ' + e.name } })()"
	}
	var calls []string
	for _, s := range builtinSnippets {
		calls = append(calls, wrap(s.code))
	}
	script := builtinsBundle + "Promise.all([\n" + strings.Join(calls, ",\n") + "\n]).then((r) => process.stdout.write(JSON.stringify(r)))"
	out, err := exec.Command(node, "-e", script).Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var want []string
	if err := json.Unmarshal(out, &want); err != nil || len(want) != len(builtinSnippets) {
		t.Fatalf("node's answer %.300q: %v", out, err)
	}
	rt := NewLoaded(t, NodeEngine(t, engine, jsvm.Options{}), "builtins", builtinsBundle)
	for i, s := range builtinSnippets {
		t.Run(s.name, func(t *testing.T) {
			got, err := Eval(t, rt, wrap(s.code))
			if err != nil {
				t.Fatalf("error: %v", err)
			}
			if reason, ok := s.gaps[engine]; ok {
				if got == want[i] {
					t.Fatalf("answers as Node now: drop the listed gap (%s)", reason)
				}
				t.Logf("known gap (%s):\ngot  %q\nnode %q", reason, got, want[i])
				return
			}
			if got != want[i] {
				t.Errorf("\ngot  %q\nnode %q", got, want[i])
			}
		})
	}
}
