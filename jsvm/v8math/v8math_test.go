package v8math

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// sampleSize is the number of random arguments per function: a fixed few
// thousand in the normal run, V8MATH_SAMPLES=N for a larger one.
func sampleSize(t *testing.T) int {
	if s := os.Getenv("V8MATH_SAMPLES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			t.Fatalf("V8MATH_SAMPLES=%q: want a positive integer", s)
		}
		return n
	}
	return 3000
}

// edges are the arguments every function meets: zeros, subnormals,
// infinities, NaN, the extremes, and multiples of pi/2 (trig reduction).
func edges() []float64 {
	e := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(),
		5e-324, -5e-324, 2.2250738585072009e-308, 2.2250738585072014e-308, math.MaxFloat64, -math.MaxFloat64,
		1, -1, 0.5, -0.5, 2, -2, 1e-300, 1e300, 1e22, -1e22, 1e-8, 0.1, 709.782712893384, -745.1332191019411,
		710.4758600739439, 22, -22, 1e308, 0.9999999999999999, 1.0000000000000002, 3, -3, 10, 100}
	for k := -64; k <= 64; k++ {
		e = append(e, float64(k)*math.Pi/2, float64(k)*math.Pi/4, math.Nextafter(float64(k)*math.Pi/2, math.Inf(1)))
	}
	for _, p := range []int{20, 30, 50, 60, 100, 200, 500, 1000, 1023} {
		e = append(e, math.Ldexp(math.Pi, p), -math.Ldexp(1.2345, p), math.Ldexp(1, -p))
	}
	return e
}

// randomDouble draws across the whole range: random bit patterns (every
// exponent, subnormals, NaNs), moderate values, and values near 0 and 1.
func randomDouble(r *rand.Rand) float64 {
	switch r.Intn(6) {
	case 0:
		return math.Float64frombits(r.Uint64())
	case 1:
		return (r.Float64()*2 - 1) * 10
	case 2:
		return (r.Float64()*2 - 1) * 1000
	case 3:
		return (r.Float64()*2 - 1) * math.Ldexp(1, r.Intn(200)-100)
	case 4:
		return 1 + (r.Float64()*2-1)*math.Ldexp(1, -r.Intn(50))
	default:
		return (r.Float64()*2 - 1) * 1e6
	}
}

// powArgs covers pow's special cases: integer and half-integer exponents,
// negative bases, |x| near 1 with huge y, results near overflow/underflow.
func powArgs(r *rand.Rand) (float64, float64) {
	x, y := randomDouble(r), randomDouble(r)
	switch r.Intn(6) {
	case 0:
		y = float64(r.Intn(41) - 20)
	case 1:
		y = float64(r.Intn(21)-10) + 0.5
	case 2:
		x = 1 + (r.Float64()*2-1)*1e-10
		y = (r.Float64()*2 - 1) * 1e12
	case 3:
		x = r.Float64() * 10
		y = (r.Float64()*2 - 1) * 350
	case 4:
		x = -float64(r.Intn(20) + 1)
		y = float64(r.Intn(60) - 30)
	}
	return x, y
}

// nodeScript evaluates Math[name] over Float64Array arguments on stdin
// (one or two per call) and writes the Float64Array of results.
const nodeScript = `
const name = process.argv[1], arity = +process.argv[2];
const chunks = [];
process.stdin.on('data', c => chunks.push(c));
process.stdin.on('end', () => {
  const buf = Buffer.concat(chunks);
  const a = new Float64Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.length));
  const f = Math[name];
  const out = new Float64Array(a.length / arity);
  if (arity === 1) for (let i = 0; i < out.length; i++) out[i] = f(a[i]);
  else for (let i = 0; i < out.length; i++) out[i] = f(a[2*i], a[2*i+1]);
  process.stdout.write(Buffer.from(out.buffer));
});`

func nodeEval(t *testing.T, node, name string, arity int, args []float64) []float64 {
	t.Helper()
	in := new(bytes.Buffer)
	if err := binary.Write(in, binary.LittleEndian, args); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "-e", nodeScript, name, strconv.Itoa(arity))
	cmd.Stdin = in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node Math.%s: %v: %s", name, err, stderr.String())
	}
	res := make([]float64, len(out)/8)
	if err := binary.Read(bytes.NewReader(out), binary.LittleEndian, res); err != nil {
		t.Fatal(err)
	}
	if len(res) != len(args)/arity {
		t.Fatalf("node Math.%s: %d results for %d calls", name, len(res), len(args)/arity)
	}
	return res
}

// sameBits is equality of Float64 bits, every NaN being one NaN (JS cannot
// observe a NaN's payload).
func sameBits(a, b float64) bool {
	if a != a || b != b {
		return a != a && b != b
	}
	return math.Float64bits(a) == math.Float64bits(b)
}

func findNode(t *testing.T) string {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node on PATH (scripts/install-node.sh): the oracle is Node 20's V8")
	}
	out, err := exec.Command(node, "--version").Output()
	if err != nil || !strings.HasPrefix(string(out), "v20.") {
		t.Skipf("node --version = %q, %v: the port is V8 11.3's (Node 20); other V8 versions compute pow differently", out, err)
	}
	return node
}

// TestMatchesNode compares every function with Node 20, bit for bit, on the
// edge arguments and a seeded random sample (V8MATH_SAMPLES sets its size).
func TestMatchesNode(t *testing.T) {
	node := findNode(t)
	n := sampleSize(t)
	r := rand.New(rand.NewSource(20261207))
	for _, fn := range Unary {
		name, f := fn.Name, fn.F
		args := append(edges(), make([]float64, n)...)
		for i := len(args) - n; i < len(args); i++ {
			args[i] = randomDouble(r)
		}
		want := nodeEval(t, node, name, 1, args)
		bad := 0
		for i, x := range args {
			if got := f(x); !sameBits(got, want[i]) {
				if bad++; bad <= 5 {
					t.Errorf("Math.%s(%v [%#x]) = %v [%#x], Node %v [%#x]", name, x, math.Float64bits(x),
						got, math.Float64bits(got), want[i], math.Float64bits(want[i]))
				}
			}
		}
		if bad > 0 {
			t.Errorf("Math.%s: %d of %d differ from Node", name, bad, len(args))
		}
	}
	for _, fn := range Binary {
		name, f := fn.Name, fn.F
		e := edges()
		var args []float64
		for _, x := range e { // every pair of edges
			for _, y := range e[:40] {
				args = append(args, x, y)
			}
		}
		for i := 0; i < n; i++ {
			var x, y float64
			if name == "pow" {
				x, y = powArgs(r)
			} else {
				x, y = randomDouble(r), randomDouble(r)
			}
			args = append(args, x, y)
		}
		want := nodeEval(t, node, name, 2, args)
		bad := 0
		for i := range want {
			x, y := args[2*i], args[2*i+1]
			if got := f(x, y); !sameBits(got, want[i]) {
				if bad++; bad <= 5 {
					t.Errorf("Math.%s(%v, %v) = %v [%#x], Node %v [%#x]", name, x, y,
						got, math.Float64bits(got), want[i], math.Float64bits(want[i]))
				}
			}
		}
		if bad > 0 {
			t.Errorf("Math.%s: %d of %d differ from Node", name, bad, len(want))
		}
	}
}

// radixScript answers x.toString(radix) for each (bits, radix) on stdin,
// one JSON array in, one out.
const radixScript = `
const chunks = [];
process.stdin.on('data', c => chunks.push(c));
process.stdin.on('end', () => {
  const dv = new DataView(new ArrayBuffer(8));
  const out = JSON.parse(Buffer.concat(chunks).toString()).map(([h, r]) => {
    dv.setUint32(0, parseInt(h.slice(0, 8), 16)); dv.setUint32(4, parseInt(h.slice(8), 16));
    return dv.getFloat64(0).toString(r);
  });
  process.stdout.write(JSON.stringify(out));
});`

// TestFormatRadixMatchesNode compares FormatRadix with Node's
// Number.prototype.toString(radix) for every radix from 2 to 36 on the edges
// and a seeded random sample (V8MATH_SAMPLES scales it too).
func TestFormatRadixMatchesNode(t *testing.T) {
	node := findNode(t)
	r := rand.New(rand.NewSource(36))
	xs := edges()
	for i := 0; i < sampleSize(t)/10; i++ {
		xs = append(xs, randomDouble(r), float64(r.Int63n(1<<53)), r.Float64(), float64(r.Intn(100000))/100)
	}
	type call struct {
		x     float64
		radix int
	}
	var calls []call
	var in [][2]any
	for _, x := range xs {
		for radix := 2; radix <= 36; radix++ {
			if radix == 10 {
				continue // the shortest round trip, not this algorithm
			}
			calls = append(calls, call{x, radix})
			in = append(in, [2]any{fmt.Sprintf("%016x", math.Float64bits(x)), radix})
		}
	}
	body, _ := json.Marshal(in)
	cmd := exec.Command(node, "-e", radixScript)
	cmd.Stdin = bytes.NewReader(body)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var want []string
	if err := json.Unmarshal(out, &want); err != nil || len(want) != len(calls) {
		t.Fatalf("node answered %d of %d: %v", len(want), len(calls), err)
	}
	bad := 0
	for i, c := range calls {
		if got := FormatRadix(c.x, c.radix); got != want[i] {
			if bad++; bad <= 5 {
				t.Errorf("(%v).toString(%d) = %q, Node %q", c.x, c.radix, got, want[i])
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d differ from Node", bad, len(calls))
	}
}
