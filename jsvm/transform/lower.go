// Package transform holds the source transforms the pure-Go engines apply to
// bundles before compiling them: esbuild's lowering of syntax an engine
// cannot parse or run (LowerForGoja, LowerForQuickJS), the CommonJS module
// wrapper (WrapModule), the rewrite of quadratic string builds for engines
// with flat strings (RewriteStringBuilds) and the \p{…} regex property
// escapes rewritten with Go's Unicode tables (RewritePropertyEscapes).
package transform

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"strings"

	"github.com/evanw/esbuild/pkg/api"
)

// What goja cannot parse or run, for esbuild: async generators and
// for await…of (either one anywhere is a syntax error for the whole bundle),
// the regex d and v flags, \p{…} property escapes (goja parses them and
// never matches; lowered literals become new RegExp calls, which the
// environment rewrites with Go's Unicode tables), using declarations and
// decorators. Everything else is left as written.
var gojaUnsupported = map[string]bool{
	"async-generator":                 false,
	"for-await":                       false,
	"regexp-match-indices":            false,
	"regexp-set-notation":             false,
	"regexp-unicode-property-escapes": false,
	"using":                           false,
	"decorators":                      false,
	"dynamic-import":                  false,
	"import-meta":                     false,
}

// LowerForGoja rewrites source so that goja parses it, with esbuild's
// Transform. The output keeps the source's semantics (it is formatted anew,
// so line numbers change). With propertyEscapes every u-flag regex literal
// becomes a RegExp constructor call (esbuild itself only notices \p{…}
// outside character classes), so that the environment's RegExp rewrites
// the escapes.
func LowerForGoja(name, source string, propertyEscapes bool) (string, error) {
	code, _, err := lower(name, source, gojaSupported(propertyEscapes), false)
	return code, err
}

// LowerForGojaPositions is LowerForGoja with the positions of its output
// in source, from esbuild's own source map: engines replay their lowering
// with it on the first error that needs a position in the bundle, rather
// than keep a map from every compile.
func LowerForGojaPositions(name, source string, propertyEscapes bool) (string, Positions, error) {
	return lower(name, source, gojaSupported(propertyEscapes), true)
}

func gojaSupported(propertyEscapes bool) map[string]bool {
	if !propertyEscapes {
		return gojaUnsupported
	}
	supported := maps.Clone(gojaUnsupported)
	supported["regexp-sticky-and-unicode-flags"] = false
	return supported
}

// lower transforms source with esbuild, the features supported marks false
// lowered; with positions, esbuild also writes its source map, and the
// positions of the output in source are returned.
func lower(name, source string, supported map[string]bool, positions bool) (string, Positions, error) {
	opts := api.TransformOptions{
		Loader:        api.LoaderJS,
		Target:        api.ESNext,
		Supported:     supported,
		Sourcefile:    name,
		Charset:       api.CharsetUTF8,
		LegalComments: api.LegalCommentsInline,
		LogLevel:      api.LogLevelSilent,
	}
	if positions {
		opts.Sourcemap = api.SourceMapExternal
		opts.SourcesContent = api.SourcesContentExclude
	}
	res := api.Transform(source, opts)
	if len(res.Errors) > 0 {
		msgs := make([]string, 0, len(res.Errors))
		for _, m := range res.Errors {
			loc := ""
			if m.Location != nil {
				loc = fmt.Sprintf("%d:%d: ", m.Location.Line, m.Location.Column)
			}
			msgs = append(msgs, loc+m.Text)
		}
		return "", nil, errors.New(strings.Join(msgs, "; "))
	}
	if !positions {
		return string(res.Code), nil, nil
	}
	p, err := newEsbuildPositions(name, res.Map)
	if err != nil {
		return "", nil, err
	}
	return string(res.Code), p, nil
}

// MayUsePropertyEscapes reports whether source may contain a \p{…} or
// \P{…} regex escape (a cheap over-approximation: string literals count too).
func MayUsePropertyEscapes(source string) bool {
	return strings.Contains(source, `\p{`) || strings.Contains(source, `\P{`)
}

// LowerForQuickJS returns source lowered by esbuild where it needs it, and
// whether it was: await (async functions, async generators, for await) to
// generators and then, when it contains await, since QuickJS runs await
// without calling then, so code that awaits would lose the async context
// its host layer carries across promise reactions; and `**` (with `**=`)
// to calls of Math.pow, when it may contain one, since QuickJS's operator
// computes its C library's pow and Math.pow is V8's (jsvm/v8math). A
// source esbuild cannot parse is returned as it is, for the engine to
// report its syntax error.
func LowerForQuickJS(name, source string) (string, bool) {
	if !mayAwait(source) && !MayUseExponent(source) {
		return source, false
	}
	code, _, err := lower(name, source, quickjsUnsupported, false)
	if err != nil {
		return source, false
	}
	return powHelper(code), true
}

// powHelperLine is esbuild's helper for a lowered `**`, which it writes
// before the code: Math.pow, which throws on BigInts.
var powHelperLine = regexp.MustCompile(`(?m)^var __pow[0-9]* = (Math\.pow);$`)

// powHelper points esbuild's helper at __gorender_pow
// (jsvm/jsenv/builtins.js): V8's pow for numbers, the engine's operator
// for BigInts.
func powHelper(code string) string {
	loc := powHelperLine.FindStringSubmatchIndex(code)
	if loc == nil {
		return code
	}
	return code[:loc[2]] + "__gorender_pow" + code[loc[3]:]
}

// LowerForQuickJSPositions is LowerForQuickJS (for a source it lowered) with
// the positions of its output in source, from esbuild's own source map.
func LowerForQuickJSPositions(name, source string) (string, Positions, error) {
	code, positions, err := lower(name, source, quickjsUnsupported, true)
	return powHelper(code), positions, err
}

// mayAwait reports whether source contains the word await.
func mayAwait(source string) bool {
	return strings.Contains(source, "await") && awaitWord.MatchString(source)
}

// MayUseExponent reports whether source may hold a `**` operator: a `**`
// with neither `*`, `/`, `(` nor a quote next to it, and space on both
// sides or on neither, as formatters and minifiers write the operator. A
// comment's `/**`, `**/` and `****` banners, esbuild's `(**` of bundled
// licenses, and Markdown's bold in a string (" **bold** ", "**bold**") are
// not operators. A false positive costs a transform that changes nothing
// else; an operator written otherwise (`a **b`) keeps the engine's own.
func MayUseExponent(source string) bool {
	for i := 0; ; {
		j := strings.Index(source[i:], "**")
		if j < 0 {
			return false
		}
		j += i
		before, after := byte(' '), byte(' ')
		if j > 0 {
			before = source[j-1]
		}
		if j+2 < len(source) {
			after = source[j+2]
		}
		if !strings.ContainsRune("*/(\"'`", rune(before)) && !strings.ContainsRune("*/\"'`", rune(after)) && isSpace(before) == isSpace(after) {
			return true
		}
		i = j + 1
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

var quickjsUnsupported = map[string]bool{"async-await": false, "async-generator": false, "for-await": false, "exponent-operator": false}

var awaitWord = regexp.MustCompile(`\bawait\b`)

// ModuleHeader opens the CommonJS wrapper. It is on the first line of the
// source, so line numbers in stacks are the bundle's own; columns on the
// first line shift by its length (ModulePositions takes them back).
const ModuleHeader = "(function (exports, require, module, __filename, __dirname) {"

// WrapModule wraps a CommonJS module's source as the function Node's loader
// calls (exports, require, module, __filename, __dirname).
func WrapModule(source string) string {
	// A hashbang line is a comment for Node's loader.
	if len(source) > 1 && source[0] == '#' && source[1] == '!' {
		source = "//" + source[2:]
	}
	return ModuleHeader + source + "\n})"
}
