package conformance

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/gorender/gorender/jsvm/v8math"
)

// mathBundle evaluates Math[name] over arguments given as Float64 bits
// (hex), answering bits, so that no number formatting stands between the
// engine's Math and the comparison.
const mathBundle = `
function mathBits(name, arity, args) {
  var dv = new DataView(new ArrayBuffer(8)), f = Math[name], out = [];
  function num(h) { dv.setUint32(0, parseInt(h.slice(0, 8), 16)); dv.setUint32(4, parseInt(h.slice(8), 16)); return dv.getFloat64(0); }
  function hex(x) { dv.setFloat64(0, x); return (dv.getUint32(0) + 0x100000000).toString(16).slice(1) + (dv.getUint32(4) + 0x100000000).toString(16).slice(1); }
  for (var i = 0; i < args.length; i += arity) {
    out.push(hex(arity === 1 ? f(num(args[i])) : f(num(args[i]), num(args[i + 1]))));
  }
  return JSON.stringify(out);
}
function mathShape(name) {
  var d = Object.getOwnPropertyDescriptor(Math, name), f = Math[name];
  var n = Object.getOwnPropertyDescriptor(f, 'name'), l = Object.getOwnPropertyDescriptor(f, 'length');
  return [d.writable, d.enumerable, d.configurable, f.name, n.writable, n.enumerable, n.configurable,
    f.length, l.writable, l.enumerable, l.configurable, typeof f.prototype, Object.keys(Math).length].join(' ');
}
`

// mathSample is a seeded sample of arguments: the edges (zeros,
// subnormals, infinities, NaN, multiples of pi/2, huge trig arguments) and
// random doubles across the range.
func mathSample(r *rand.Rand, n int) []float64 {
	s := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(), 5e-324, -5e-324,
		2.2250738585072014e-308, math.MaxFloat64, 1, -1, 0.5, 2, 10, 1e22, 1e300, -1e-300, 709.78, -745.13, 22, 0.1}
	for k := -8; k <= 8; k++ {
		s = append(s, float64(k)*math.Pi/2, math.Nextafter(float64(k)*math.Pi/4, 0))
	}
	for i := 0; i < n; i++ {
		switch i % 4 {
		case 0:
			s = append(s, math.Float64frombits(r.Uint64()))
		case 1:
			s = append(s, (r.Float64()*2-1)*10)
		case 2:
			s = append(s, (r.Float64()*2-1)*math.Ldexp(1, r.Intn(120)-60))
		default:
			s = append(s, 1+(r.Float64()*2-1)*math.Ldexp(1, -r.Intn(40)))
		}
	}
	return s
}

func bitsHex(x float64) string { return fmt.Sprintf("%016x", math.Float64bits(x)) }

// testMathMatchesV8 renders, through the engine, every Math function whose
// last bits V8 computes its own way, on a seeded sample, and compares the
// Float64 bits with jsvm/v8math (which its own test proves equal to Node
// 20's); and checks the functions look like the built-ins they replace.
func testMathMatchesV8(t *testing.T, engine string) {
	e := newEngine(t, engine)
	rt := NewLoaded(t, e, "math", mathBundle)
	r := rand.New(rand.NewSource(30))
	check := func(name string, arity int, args []float64, want func(i int) float64) {
		t.Helper()
		hexArgs := make([]string, len(args))
		for i, a := range args {
			hexArgs[i] = bitsHex(a)
		}
		argsJSON, _ := json.Marshal(hexArgs)
		out := MustEval(t, rt, fmt.Sprintf("mathBits(%q, %d, %s)", name, arity, argsJSON))
		var got []string
		if err := json.Unmarshal([]byte(out), &got); err != nil || len(got) != len(args)/arity {
			t.Fatalf("Math.%s: answer %.200q: %v", name, out, err)
		}
		bad := 0
		for i, h := range got {
			b, err := strconv.ParseUint(h, 16, 64)
			if err != nil {
				t.Fatalf("Math.%s: answer %q: %v", name, h, err)
			}
			g, w := math.Float64frombits(b), want(i)
			if !(g == w && math.Signbit(g) == math.Signbit(w) || g != g && w != w) {
				if bad++; bad <= 3 {
					t.Errorf("Math.%s(%v) = %v [%s], V8 %v [%s]", name, args[i*arity:i*arity+arity], g, h, w, bitsHex(w))
				}
			}
		}
		if bad > 0 {
			t.Errorf("Math.%s: %d of %d differ from V8", name, bad, len(got))
		}
	}
	for _, f := range v8math.Unary {
		args := mathSample(r, 300)
		check(f.Name, 1, args, func(i int) float64 { return f.F(args[i]) })
		if got, want := MustEval(t, rt, fmt.Sprintf("mathShape(%q)", f.Name)), "true false true "+f.Name+" false false true 1 false false true undefined 0"; got != want {
			t.Errorf("Math.%s's shape: %s, want (as V8) %s", f.Name, got, want)
		}
	}
	for _, f := range v8math.Binary {
		xs, ys := mathSample(r, 300), mathSample(r, 300)
		r.Shuffle(len(ys), func(i, j int) { ys[i], ys[j] = ys[j], ys[i] })
		var args []float64
		for i := range xs {
			args = append(args, xs[i], ys[i])
		}
		for y := -6.0; y <= 6; y += 0.5 { // pow's integer and half-integer exponents
			args = append(args, 10, y, -3, y, 1.1, y)
		}
		check(f.Name, 2, args, func(i int) float64 { return f.F(args[2*i], args[2*i+1]) })
		if got, want := MustEval(t, rt, fmt.Sprintf("mathShape(%q)", f.Name)), "true false true "+f.Name+" false false true 2 false false true undefined 0"; got != want {
			t.Errorf("Math.%s's shape: %s, want (as V8) %s", f.Name, got, want)
		}
	}
	// A value passes through ToNumber as for the built-in.
	if got := MustEval(t, rt, `[Math.sin('1'), Math.pow({valueOf() { return 2 }}, '10'), Math.atan2(), Math.cbrt(null)].join()`); got != strings.Join([]string{fmt.Sprint(v8math.Sin(1)), "1024", "NaN", "0"}, ",") {
		t.Errorf("Math on non-numbers: %s", got)
	}
}

// radixBundle answers x.toString(radix) for arguments given as Float64 bits.
const radixBundle = `
function radixStrings(args, radices) {
  var dv = new DataView(new ArrayBuffer(8)), out = [];
  for (var i = 0; i < args.length; i++) {
    dv.setUint32(0, parseInt(args[i].slice(0, 8), 16)); dv.setUint32(4, parseInt(args[i].slice(8), 16));
    var x = dv.getFloat64(0);
    for (var j = 0; j < radices.length; j++) out.push(x.toString(radices[j]));
  }
  return JSON.stringify(out);
}
`

// testNumberToStringRadixMatchesV8 renders x.toString(radix) through the
// engine for every radix but 10 on a seeded sample and compares the text
// with jsvm/v8math.FormatRadix (proven equal to Node 20's); and checks the
// method keeps the built-in's shape and errors.
func testNumberToStringRadixMatchesV8(t *testing.T, engine string) {
	e := newEngine(t, engine)
	rt := NewLoaded(t, e, "radix", radixBundle)
	r := rand.New(rand.NewSource(36))
	xs := mathSample(r, 120)
	for i := 0; i < 40; i++ {
		xs = append(xs, float64(r.Intn(1000000))/100, -r.Float64(), float64(r.Int63n(1<<53)))
	}
	var radices []int
	for radix := 2; radix <= 36; radix++ {
		if radix != 10 {
			radices = append(radices, radix)
		}
	}
	hexArgs := make([]string, len(xs))
	for i, x := range xs {
		hexArgs[i] = bitsHex(x)
	}
	argsJSON, _ := json.Marshal(hexArgs)
	radicesJSON, _ := json.Marshal(radices)
	var got []string
	out := MustEval(t, rt, fmt.Sprintf("radixStrings(%s, %s)", argsJSON, radicesJSON))
	if err := json.Unmarshal([]byte(out), &got); err != nil || len(got) != len(xs)*len(radices) {
		t.Fatalf("answer %.200q: %v", out, err)
	}
	bad := 0
	for i, x := range xs {
		for j, radix := range radices {
			if g, w := got[i*len(radices)+j], v8math.FormatRadix(x, radix); g != w {
				if bad++; bad <= 3 {
					t.Errorf("(%v).toString(%d) = %q, V8 %q", x, radix, g, w)
				}
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d differ from V8", bad, len(got))
	}
	for _, c := range []struct{ code, want string }{
		{`var d = Object.getOwnPropertyDescriptor(Number.prototype, 'toString'), f = Number.prototype.toString;
		  [d.writable, d.enumerable, d.configurable, f.name, f.length, typeof f.prototype].join()`, "true,false,true,toString,1,undefined"},
		{`[(255).toString(16), (-0.5).toString(2), (0).toString(2), (-0).toString(36), (NaN).toString(2), (-Infinity).toString(3), (12.5).toString(), (1/3).toString(10), (0.5).toString('3')].join()`,
			"ff,-0.1,0,0,NaN,-Infinity,12.5,0.3333333333333333," + v8math.FormatRadix(0.5, 3)},
		{`var calls = 0; [(255).toString({valueOf() { calls++; return 16 }}), calls].join()`, "ff,1"},
		{`try { (1).toString(1) } catch (e) { e.name }`, "RangeError"},
		{`try { (1).toString(37) } catch (e) { e.name }`, "RangeError"},
		{`try { Number.prototype.toString.call('1', 2) } catch (e) { e.name }`, "TypeError"},
	} {
		if got := MustEval(t, rt, c.code); got != c.want {
			t.Errorf("%s = %s, want (as V8) %s", c.code, got, c.want)
		}
	}
}

// formatSource formats each argument (Float64 bits) every way V8 prints a
// number: String, toFixed, toPrecision, toExponential, toString(radix) and
// parseFloat of the results.
const formatSource = `
function formatAll(args) {
  var dv = new DataView(new ArrayBuffer(8)), out = [];
  for (var i = 0; i < args.length; i++) {
    dv.setUint32(0, parseInt(args[i].slice(0, 8), 16)); dv.setUint32(4, parseInt(args[i].slice(8), 16));
    var x = dv.getFloat64(0), r = [String(x)];
    [0, 1, 2, 5, 10, 20].forEach(function (d) { r.push(x.toFixed(d)); });
    [1, 2, 5, 10, 17, 21].forEach(function (p) { r.push(x.toPrecision(p)); });
    [undefined, 0, 1, 5, 15, 20].forEach(function (d) { r.push(x.toExponential(d)); });
    [2, 3, 7, 16, 36].forEach(function (radix) { r.push(x.toString(radix)); });
    r.push(String(parseFloat(String(x))), String(parseFloat(' ' + x.toPrecision(21) + 'xyz')), String(parseFloat(x.toExponential(3) + '5')));
    out.push(r);
  }
  return JSON.stringify(out);
}
`

// testNumberFormattingMatchesNode renders the formatting of a seeded sample
// of numbers through the engine and in Node 20 (node on PATH), and compares
// the text.
func testNumberFormattingMatchesNode(t *testing.T, engine string) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node on PATH (scripts/install-node.sh): Node is the oracle")
	}
	r := rand.New(rand.NewSource(21))
	xs := append(mathSample(r, 400), -96, -0.96, -96404194643.9092, 2.5, -2.5, 0.5, 1.005, 1.45, 8.345, 99.995, 1e21, 1e-7, 123.456)
	for i := 0; i < 200; i++ {
		xs = append(xs, float64(r.Intn(2000000)-1000000)/1000, (r.Float64()-0.5)*math.Pow(10, float64(r.Intn(40)-20)))
	}
	hexArgs := make([]string, len(xs))
	for i, x := range xs {
		hexArgs[i] = bitsHex(x)
	}
	argsJSON, _ := json.Marshal(hexArgs)
	call := fmt.Sprintf("formatAll(%s)", argsJSON)
	want, err := exec.Command(node, "-e", formatSource+"process.stdout.write("+call+")").Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	rt := NewLoaded(t, newEngine(t, engine), "format", formatSource)
	got := MustEval(t, rt, call)
	var g, w [][]string
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("engine's answer: %v", err)
	}
	if err := json.Unmarshal(want, &w); err != nil || len(w) != len(g) {
		t.Fatalf("node's answer (%d rows, engine %d): %v", len(w), len(g), err)
	}
	bad := 0
	for i := range w {
		for j := range w[i] {
			if g[i][j] != w[i][j] {
				if bad++; bad <= 5 {
					t.Errorf("x = %s, call %d: %q, Node %q", w[i][0], j, g[i][j], w[i][j])
				}
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d formatted numbers differ from Node", bad, len(w)*len(w[0]))
	}
}
