package transform

import (
	"strings"
	"testing"
)

// position is the line (1-based) and column (0-based, in UTF-16 code
// units) of the first occurrence of needle in src.
func position(t *testing.T, src, needle string) (int, int) {
	t.Helper()
	i := strings.Index(src, needle)
	if i < 0 {
		t.Fatalf("%q not in %q", needle, src)
	}
	line := 1 + strings.Count(src[:i], "\n")
	return line, utf16Len(src[strings.LastIndexByte(src[:i], '\n')+1 : i])
}

// TestRewritePositions: every rewrite's positions take a token of its
// output back to the same token in its input: esbuild's lowering (the
// source reformatted), the string builds' edits (columns after an edit on a
// minified line, lines after an edit that removed a line break), the
// CommonJS wrapper, and all of them chained as goja makes them; columns in
// UTF-16 code units after non-ASCII text, as source maps count them.
func TestRewritePositions(t *testing.T) {
	src := "var u='Grüße 😀';var f=async function(){await null;throw new Error('a')};\n" +
		`var w="中é😀";function r(c){let s="",o={push:function(x){return s+=` + "\n" + `x,!0}};c.forEach(x=>o.push(x));return s}var g=/\p{L}/u;throw new Error('b')` + "\n"
	lowered, lowering, err := LowerForGojaPositions("b.js", src, true)
	if err != nil {
		t.Fatal(err)
	}
	out, n, builds, err := RewriteStringBuildsPositions(lowered)
	if err != nil || n != 1 {
		t.Fatalf("string builds: %d, %v", n, err)
	}
	chain := Chain{lowering, builds, ModulePositions{}}
	wrapped := WrapModule(out)
	for _, token := range []string{"new Error('a')", "new Error('b')", "await null"} {
		inLine, inCol := position(t, src, token)
		outToken := strings.ReplaceAll(token, "'", `"`)
		outLine, outCol := position(t, wrapped, outToken)
		if line, col, ok := chain.Back(outLine, outCol); !ok || line != inLine || col != inCol {
			t.Errorf("%s at %d:%d: back at %d:%d (%v), want %d:%d", token, outLine, outCol, line, col, ok, inLine, inCol)
		}
	}
	if _, _, ok := chain.Back(1, 3); ok {
		t.Errorf("a position inside the wrapper's header was taken back")
	}
	if chain.Cost() <= 0 {
		t.Errorf("the chain costs %d bytes", chain.Cost())
	}

	// The string builds alone, on the minified source: the throw after the
	// edits, its line break removed by the first edit.
	out, n, builds, err = RewriteStringBuildsPositions(src)
	if err != nil || n != 1 {
		t.Fatalf("string builds: %d, %v", n, err)
	}
	inLine, inCol := position(t, src, "new Error('b')")
	outLine, outCol := position(t, out, "new Error('b')")
	if outLine == inLine && outCol == inCol {
		t.Fatalf("the edits moved nothing:\n%s", out)
	}
	if line, col, ok := builds.Back(outLine, outCol); !ok || line != inLine || col != inCol {
		t.Errorf("after the edits: back at %d:%d (%v), want %d:%d", line, col, ok, inLine, inCol)
	}
}

// TestLoweringPositionsInlineMap: esbuild applies a source map inline in its
// input (a data: URL); positions it took from that map are not the input's
// and are not answered.
func TestLoweringPositionsInlineMap(t *testing.T) {
	// {"version":3,"sources":["orig.js"],"mappings":"AAAA"}
	src := "async function f(){ await 1; throw new Error('x') }\n" +
		"//# sourceMappingURL=data:application/json;base64,eyJ2ZXJzaW9uIjozLCJzb3VyY2VzIjpbIm9yaWcuanMiXSwibWFwcGluZ3MiOiJBQUFBIn0=\n"
	out, p, err := LowerForQuickJSPositions("b.js", src)
	if err != nil {
		t.Fatal(err)
	}
	line, col := position(t, out, "new Error")
	if l, c, ok := p.Back(line, col); ok {
		t.Errorf("a position in orig.js taken as the input's: %d:%d", l, c)
	}
}
