//go:build ignore

// Builds the source-mapped fixture with esbuild's Go API (the version in
// go.mod): bundles/sourcemap-app.js, minified onto one line, ending with
// `//# sourceMappingURL=sourcemap-app.js.map`, and that external map (its
// sources relative to it). Deterministic. Run from the repository root:
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
	result := api.Build(api.BuildOptions{
		AbsWorkingDir:     mustAbs(dir),
		EntryPoints:       []string{"src/index.js"},
		Bundle:            true,
		Outfile:           "bundles/sourcemap-app.js",
		Format:            api.FormatIIFE,
		Target:            api.ES2017,
		MinifyWhitespace:  true,
		MinifySyntax:      true,
		MinifyIdentifiers: true,
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
