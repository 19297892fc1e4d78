//go:build ignore

// Builds the source-mapped fixtures with esbuild's Go API (the version in
// go.mod): bundles/sourcemap-app.js (from src/index.js),
// bundles/sourcemap-rewritten.js (from src/rewritten.js) and
// bundles/sourcemap-unicode.js (from src/unicode.js, its non-ASCII text
// kept as UTF-8), each minified onto one line, ending with
// `//# sourceMappingURL=<bundle>.js.map`, and that external map (its sources
// relative to it). Deterministic. Run from the repository root:
//
//	go run tests/testdata/sourcemap/build.go
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/evanw/esbuild/pkg/api"
)

func main() {
	dir := filepath.Join("tests", "testdata", "sourcemap")
	build(dir, "src/index.js", "bundles/sourcemap-app.js", api.ES2017, api.CharsetDefault)
	// \p{…} needs ES2018; the bundle keeps async/await (ES2017).
	build(dir, "src/rewritten.js", "bundles/sourcemap-rewritten.js", api.ES2020, api.CharsetDefault)
	// UTF-8 kept, as terser keeps it: columns after it differ in bytes.
	build(dir, "src/unicode.js", "bundles/sourcemap-unicode.js", api.ES2020, api.CharsetUTF8)
}

func build(dir, entry, out string, target api.Target, charset api.Charset) {
	result := api.Build(api.BuildOptions{
		AbsWorkingDir:     mustAbs(dir),
		EntryPoints:       []string{entry},
		Bundle:            true,
		Outfile:           out,
		Format:            api.FormatIIFE,
		Target:            target,
		MinifyWhitespace:  true,
		MinifySyntax:      true,
		MinifyIdentifiers: true,
		Charset:           charset,
		Sourcemap:         api.SourceMapLinked,
		SourcesContent:    api.SourcesContentInclude,
		Write:             true,
		LogLevel:          api.LogLevelWarning,
	})
	if len(result.Errors) > 0 {
		fmt.Fprintln(os.Stderr, result.Errors)
		os.Exit(1)
	}
}

func mustAbs(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		panic(err)
	}
	return abs
}
