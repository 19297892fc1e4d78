package jsvm

import (
	"errors"
	"fmt"
	"maps"
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

// lowerForGoja rewrites source so that goja parses it, with esbuild's
// Transform. The output keeps the source's semantics (it is formatted anew,
// so line numbers change). With propertyEscapes every u-flag regex literal
// becomes a RegExp constructor call (esbuild itself only notices \p{…}
// outside character classes), so that the environment's RegExp rewrites
// the escapes.
func lowerForGoja(name, source string, propertyEscapes bool) (string, error) {
	supported := gojaUnsupported
	if propertyEscapes {
		supported = maps.Clone(gojaUnsupported)
		supported["regexp-sticky-and-unicode-flags"] = false
	}
	res := api.Transform(source, api.TransformOptions{
		Loader:        api.LoaderJS,
		Target:        api.ESNext,
		Supported:     supported,
		Sourcefile:    name,
		Charset:       api.CharsetUTF8,
		LegalComments: api.LegalCommentsInline,
		LogLevel:      api.LogLevelSilent,
	})
	if len(res.Errors) > 0 {
		msgs := make([]string, 0, len(res.Errors))
		for _, m := range res.Errors {
			loc := ""
			if m.Location != nil {
				loc = fmt.Sprintf("%d:%d: ", m.Location.Line, m.Location.Column)
			}
			msgs = append(msgs, loc+m.Text)
		}
		return "", errors.New(strings.Join(msgs, "; "))
	}
	return string(res.Code), nil
}

// mayUsePropertyEscapes reports whether source may contain a \p{…} or
// \P{…} regex escape (a cheap over-approximation: string literals count too).
func mayUsePropertyEscapes(source string) bool {
	return strings.Contains(source, `\p{`) || strings.Contains(source, `\P{`)
}
