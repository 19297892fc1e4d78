package transform

import (
	"strings"
	"testing"
)

func TestMayUseExponent(t *testing.T) {
	for src, want := range map[string]bool{
		"x = a ** b":                       true,
		"x**=2":                            true,
		"x = 2**-1":                        true,
		"/** @license MIT */ x = a * b":    false,
		"/*****************/":              false,
		"/* banner **/":                    false,
		"/*\nBundled license:\n  (**\n */": false,
		"x = a * b":                        false,
	} {
		if got := MayUseExponent(src); got != want {
			t.Errorf("MayUseExponent(%q) = %v, want %v", src, got, want)
		}
	}
}

// LowerForQuickJS turns `**` into calls of __gorender_pow (V8's pow for
// numbers, the engine's operator for BigInts), never Math.pow.
func TestLowerForQuickJSExponent(t *testing.T) {
	out, lowered := LowerForQuickJS("a.js", "var __pow = 1; function f(a, o) { o.p **= 2; return [a ** 2, 2n ** 3n, __pow]; }")
	if !lowered || strings.Contains(out, "Math.pow") || !strings.Contains(out, "= __gorender_pow;") || strings.Contains(out, "**") {
		t.Fatalf("lowered %v:\n%s", lowered, out)
	}
	code, _, err := LowerForQuickJSPositions("a.js", "x = a ** b")
	if err != nil || !strings.Contains(code, "= __gorender_pow;") {
		t.Fatalf("with positions: %v\n%s", err, code)
	}
}
