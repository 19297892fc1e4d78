package transform

// A load-time rewrite of one accumulation pattern that is quadratic in goja.
//
// goja strings are flat: `s += chunk` copies s. react-dom's renderToString
// (React 18 and 19, every build: development and production, node and
// browser, as minified by terser or esbuild) collects the whole page that way:
//
//	function renderToStringImpl(children, options, ...) {
//	  var didFatal = false, fatalError = null, result = "", readyToStream = false;
//	  ...
//	  startFlowing(request, {
//	    push: function (chunk) { null !== chunk && (result += chunk); return true; },
//	    destroy: function (error) { didFatal = true; fatalError = error; }
//	  });
//	  ...
//	  return result;
//	}
//
// One push per chunk (thousands per page), each copying everything rendered
// so far: the 179 KB list page of the fixtures allocates 1.6 GB per render
// (18 MB rewritten) and renders more than ten times slower.
// RewriteStringBuilds finds that structure with goja's own parser (by shape,
// never by name, so minified bundles match) and turns the accumulator into
// an array:
//
//	result = ""          →  result = []
//	result += chunk      →  result.push(""+(chunk))
//	return result        →  return result.join("")
//
// `""+(x)` converts exactly as `s += x` does (ToPrimitive with the default
// hint, then ToString, at the same moment), so the joined string is the one
// the loop would have built, whatever the chunks are.
//
// What is an accumulator (all of it checked on the AST; anything else, or
// anything the analysis does not model, leaves the variable alone):
//   - a `var` or `let` declared directly in a function's body (not in a
//     nested block) with the initializer "" (or ''), declared nowhere else
//     in that function;
//   - every reference to it, in the function and in the closures it creates
//     (closures that shadow the name are skipped, block-scoped shadowing
//     leaves the variable alone), comes after the declaration, outside any
//     hoisted function declaration, and is either an append `v += e` whose
//     value is unused, made inside a function that is an object literal's
//     property (the destination's push/write method), or a plain read of the
//     value (replaced by `v.join("")`, so every read sees the same string);
//   - the function contains no `eval` and no `with`.
//
// The edits are applied with byte offsets to the original source: every
// other byte stays the same (on a minified one-line bundle, columns after an
// edit on the same line shift by a few characters). The output is parsed
// again and each edit checked before it is returned. The rewrite is
// idempotent: its output has no accumulator left.

import (
	"sort"
	"strings"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/parser"
)

// RewriteStringBuilds rewrites the string accumulators of react-dom's
// renderToString (and anything of the same shape, see above) into array
// pushes joined once at the read, and returns the new source and the number
// of accumulators rewritten. It is a pure function. err is non-nil only when
// src does not parse (as a script, nor as the body of a CommonJS module
// wrapper); the caller then keeps src. When nothing matches, or the rewritten
// source would not check out, it returns src unchanged and 0.
//
// Call it on the source goja will compile (after any lowering), once per
// bundle, before goja.Compile.
func RewriteStringBuilds(src string) (out string, rewrites int, err error) {
	out, r, err := rewriteStringBuilds(src)
	return out, len(r.accs), err
}

// RewriteStringBuildsPositions is RewriteStringBuilds with the positions
// of its output in src (on a minified one-line bundle, the columns after
// an edit shift).
func RewriteStringBuildsPositions(src string) (string, int, Positions, error) {
	out, r, err := rewriteStringBuilds(src)
	if err != nil {
		return src, 0, nil, err
	}
	return out, len(r.accs), shiftsOf(src, r.edits), nil
}

// rewrite is what rewriteStringBuilds changed: none when nothing.
type rewrite struct {
	accs  []*accumulator
	edits []edit
}

func rewriteStringBuilds(src string) (string, rewrite, error) {
	prg, shift, err := parseForRewrite(src)
	if err != nil {
		return src, rewrite{}, err
	}
	var accs []*accumulator
	forEachFunction(prg, func(f funcNode) {
		accs = append(accs, findAccumulators(src, shift, f)...)
	})
	if len(accs) == 0 {
		return src, rewrite{}, nil
	}
	var edits []edit
	for _, a := range accs {
		edits = append(edits, a.edits(src, shift)...)
	}
	sort.SliceStable(edits, func(i, j int) bool { return edits[i].at < edits[j].at })
	for i := 1; i < len(edits); i++ {
		if edits[i].at < edits[i-1].end {
			return src, rewrite{}, nil // overlapping edits: never expected, stay safe
		}
	}
	out := applyEdits(src, edits)
	if !verifyRewrite(src, out, shift, accs, edits) {
		return src, rewrite{}, nil
	}
	return out, rewrite{accs, edits}, nil
}

// commonJSPrefix wraps a bundle that only parses as a function body (a
// CommonJS module with a top-level return).
const commonJSPrefix = "(function(){"

// parseForRewrite parses src as a script, else as a CommonJS module body.
// shift is goja's base index (1) plus the length of the wrapper before src,
// so that an AST position maps to the offset int(idx) - shift in src. A
// hashbang line (which Node's CommonJS loader, and the engine, treat as a
// comment) is parsed as a comment of the same length.
func parseForRewrite(src string) (*ast.Program, int, error) {
	if strings.HasPrefix(src, "#!") {
		src = "//" + src[2:]
	}
	prg, err := parser.ParseFile(nil, "", src, 0, parser.WithDisableSourceMaps)
	if err == nil {
		return prg, 1, nil
	}
	if prg2, err2 := parser.ParseFile(nil, "", commonJSPrefix+src+"\n})", 0, parser.WithDisableSourceMaps); err2 == nil {
		return prg2, 1 + len(commonJSPrefix), nil
	}
	return nil, 0, err
}
