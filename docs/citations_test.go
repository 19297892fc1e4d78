package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// sectionHeading is a numbered heading of PROTOCOL.md: "## 5. The render
// endpoint" or "### 6.3 Storing".
var sectionHeading = regexp.MustCompile(`(?m)^#{2,3} (\d+(?:\.\d+)?)\.? `)

// citation is a section reference: "PROTOCOL.md §6.3", "§2–§9", "(§8)".
// Every § in the repository names a section of PROTOCOL.md.
var citation = regexp.MustCompile(`§(\d+(?:\.\d+)?)`)

// TestProtocolCitationsResolve: every §n in the repository's sources and
// documents names a section that docs/PROTOCOL.md has.
func TestProtocolCitationsResolve(t *testing.T) {
	protocol, err := os.ReadFile("PROTOCOL.md")
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]bool{}
	for _, m := range sectionHeading.FindAllStringSubmatch(string(protocol), -1) {
		sections[m[1]] = true
	}
	if len(sections) < 13 {
		t.Fatalf("PROTOCOL.md has %d numbered sections, want at least 13: %v", len(sections), sections)
	}
	cited := 0
	err = filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", ".bin", "node_modules", "dist":
				// dist holds built third-party code (FormatJS cites ECMA-402's §n).
				return filepath.SkipDir
			}
			return nil
		}
		if !citingFile(d.Name()) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			for _, m := range citation.FindAllStringSubmatch(line, -1) {
				cited++
				if !sections[m[1]] {
					t.Errorf("%s:%d cites §%s, which docs/PROTOCOL.md does not have", path, i+1, m[1])
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if cited < 100 {
		t.Fatalf("found %d citations; the walk missed the sources", cited)
	}
}

// citingFile reports whether a file of that name is a source or document
// that may cite PROTOCOL.md.
func citingFile(name string) bool {
	switch filepath.Ext(name) {
	case ".go", ".js", ".mjs", ".md", ".sh", ".yaml", ".yml", ".tpl", ".txt":
		return true
	}
	return name == "Dockerfile"
}
