// Package repo locates the gorender repository around the tools module and
// reads facts from its sources that the deploy checks compare against.
package repo

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// MainModule is the module path of the repository's root go.mod.
const MainModule = "github.com/gorender/gorender"

// Root returns the repository root: the nearest directory above the working
// directory whose go.mod declares MainModule.
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && ModulePath(data) == MainModule {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod of " + MainModule + " above the working directory")
		}
		dir = parent
	}
}

// ModulePath returns the module path declared by a go.mod file's contents.
func ModulePath(gomod []byte) string {
	for _, line := range strings.Split(string(gomod), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

// GoVersion returns the go directive of a go.mod file's contents.
func GoVersion(gomod []byte) string {
	for _, line := range strings.Split(string(gomod), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "go "); ok {
			return strings.TrimSpace(rest)
		}
	}
	return ""
}

var envName = regexp.MustCompile(`^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$`)

// EnvDirs are the packages whose string literals name gorender's
// configuration variables (config/settings.go, auth's password policy).
var EnvDirs = []string{"config", "auth"}

// EnvNames returns every string literal of the non-test Go files of EnvDirs
// that looks like an environment variable name (RENDERER_PORT, NODE_ENV):
// the variables gorender's configuration reads.
func EnvNames(root string) ([]string, error) {
	seen := map[string]bool{}
	fset := token.NewFileSet()
	for _, dir := range EnvDirs {
		files, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
		if err != nil {
			return nil, err
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("no Go files in %s", dir)
		}
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
			if err != nil {
				return nil, err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				if s, err := strconv.Unquote(lit.Value); err == nil && envName.MatchString(s) {
					seen[s] = true
				}
				return true
			})
		}
	}
	names := make([]string, 0, len(seen))
	for name := range seen {
		names = append(names, name)
	}
	sort.Strings(names)
	return names, nil
}
