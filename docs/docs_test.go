package docs

import (
	"errors"
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// markdownLink is a Markdown link's target: [text](target). The text may
// span lines.
var markdownLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocLinksResolve: every relative link of the repository's Markdown
// files reaches a file or directory, and its #anchor a heading of the
// document it names.
func TestDocLinksResolve(t *testing.T) {
	docs := map[string]*document{}
	links := 0
	err := walkRepository(func(path, text string) {
		if filepath.Ext(path) != ".md" {
			return
		}
		for _, m := range markdownLink.FindAllStringSubmatch(stripCode(text), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			links++
			file, frag, _ := strings.Cut(target, "#")
			resolved := path
			if file != "" {
				resolved = filepath.Join(filepath.Dir(path), filepath.FromSlash(file))
				if _, err := os.Stat(resolved); err != nil {
					t.Errorf("%s links to %s, which does not exist", path, target)
					continue
				}
			}
			if frag == "" {
				continue
			}
			doc, err := loadDocument(docs, resolved)
			if err != nil {
				t.Errorf("%s links to %s: %v", path, target, err)
				continue
			}
			if !doc.anchors[frag] {
				t.Errorf("%s links to %s: %s has no heading of that anchor", path, target, file)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if links < 100 {
		t.Fatalf("found %d relative links; the walk missed the documents", links)
	}
}

// codeSpan is inline code or a fenced block, where brackets are not links.
var codeSpan = regexp.MustCompile("(?s)```.*?```|`[^`\n]*`")

func stripCode(text string) string {
	return codeSpan.ReplaceAllString(text, "")
}

// TestReadmeIsShortAndReachesEveryDoc: README.md stays a five-minute read
// (at most 250 lines) and every document in docs/ is reached from it by
// relative links, directly or through other documents.
func TestReadmeIsShortAndReachesEveryDoc(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(readme), "\n"); n > 250 {
		t.Errorf("README.md has %d lines; keep it at most 250 and move the rest into docs/", n)
	}
	reached := map[string]bool{}
	queue := []string{filepath.Clean("../README.md")}
	for len(queue) > 0 {
		path := queue[0]
		queue = queue[1:]
		if reached[path] {
			continue
		}
		reached[path] = true
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		for _, m := range markdownLink.FindAllStringSubmatch(stripCode(string(b)), -1) {
			file, _, _ := strings.Cut(m[1], "#")
			if file == "" || strings.Contains(file, "://") || filepath.Ext(file) != ".md" {
				continue
			}
			queue = append(queue, filepath.Join(filepath.Dir(path), filepath.FromSlash(file)))
		}
	}
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".md" {
			return err
		}
		if !reached[filepath.Join("..", "docs", path)] {
			t.Errorf("docs/%s is not linked from README.md or from a document it links to", filepath.ToSlash(path))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// packageRow is a row of ARCHITECTURE.md's package table: the packages
// (backticked, several in one cell), the packages of this module they
// import, what they own.
var packageRow = regexp.MustCompile("(?m)^\\| ((?:`[^`]+`(?:, )?)+) \\| ([^|]*) \\| ")

const module = "github.com/gorender/gorender/"

// TestArchitectureNamesEveryPackage: every package of the module (what
// `go list ./...` prints) has a row in ARCHITECTURE.md's package table, and
// the row's imports column lists exactly the module's packages it imports
// (its non-test files, on this platform), so the table cannot drift from
// the code. Tools, a module of its own, has a row too.
func TestArchitectureNamesEveryPackage(t *testing.T) {
	arch, err := os.ReadFile("ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string][]string{}
	for _, m := range packageRow.FindAllStringSubmatch(string(arch), -1) {
		imports := backticked(m[2])
		for _, p := range backticked(m[1]) {
			documented[p] = imports
		}
	}
	packages := 0
	err = filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		name := d.Name()
		if path != ".." && (name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		rel := filepath.ToSlash(strings.TrimPrefix(path, "../"))
		if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && path != ".." {
			if _, ok := documented[rel]; !ok {
				t.Errorf("ARCHITECTURE.md's package table has no row for the module %s", rel)
			}
			return filepath.SkipDir
		}
		pkg, err := build.Default.ImportDir(path, 0)
		if err != nil {
			var none *build.NoGoError
			if errors.As(err, &none) {
				return nil
			}
			return err
		}
		packages++
		var want []string
		for _, imp := range pkg.Imports {
			if p, ok := strings.CutPrefix(imp, module); ok {
				want = append(want, p)
			}
		}
		got, ok := documented[rel]
		switch {
		case !ok:
			t.Errorf("ARCHITECTURE.md's package table has no row for %s (imports %v)", rel, want)
		case !slices.Equal(got, want):
			t.Errorf("ARCHITECTURE.md says %s imports %v; it imports %v", rel, got, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if packages < 20 {
		t.Fatalf("found %d packages; the walk missed the module", packages)
	}
}

// backticked returns the `names` of a table cell, sorted.
func backticked(cell string) []string {
	var names []string
	for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(cell, -1) {
		names = append(names, m[1])
	}
	slices.Sort(names)
	return names
}
