package docs

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
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
	// walkRepository skips dist, whose built third-party code (FormatJS)
	// cites ECMA-402's §n.
	err = walkRepository(func(path, text string) {
		for i, line := range strings.Split(text, "\n") {
			for _, m := range citation.FindAllStringSubmatch(line, -1) {
				cited++
				if !sections[m[1]] {
					t.Errorf("%s:%d cites §%s, which docs/PROTOCOL.md does not have", path, i+1, m[1])
				}
			}
		}
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

// docCitation is a reference to a document of docs/ from anywhere in the
// repository, optionally with a heading: `docs/limits.md`,
// `docs/compatibility.md "Streams across bundles"`, `docs/node-engine.md#scheduling`.
// The quoted heading must close on the same line.
var docCitation = regexp.MustCompile(`\bdocs/([\w./-]+\.md)(#[\w-]+)?(?: "([^"\n]*)("?))?`)

// bareReadme is a citation of the README without a file: the README no longer
// holds sections to cite ("README, Limits", `README "Metrics"`).
var bareReadme = regexp.MustCompile(`\bREADME\b(?:[^.]|$)`)

// TestDocCitationsResolve: every docs/<file>.md a source or document of the
// repository cites exists, and so does the heading or anchor it names; no
// source cites the README by section.
func TestDocCitationsResolve(t *testing.T) {
	docs := map[string]*document{}
	cited := 0
	err := walkRepository(func(path string, text string) {
		// This file names the forms it refuses.
		source := filepath.Ext(path) != ".md" && filepath.Base(path) != "citations_test.go"
		for i, line := range strings.Split(text, "\n") {
			if source && bareReadme.MatchString(line) {
				t.Errorf("%s:%d cites the README by section; cite the docs/*.md file that holds it: %s", path, i+1, strings.TrimSpace(line))
			}
			for _, m := range docCitation.FindAllStringSubmatch(line, -1) {
				cited++
				doc, err := loadDocument(docs, m[1])
				if err != nil {
					t.Errorf("%s:%d cites docs/%s, which does not exist", path, i+1, m[1])
					continue
				}
				if m[2] != "" && !doc.anchors[m[2][1:]] {
					t.Errorf("%s:%d cites docs/%s%s: no heading of that anchor", path, i+1, m[1], m[2])
				}
				switch {
				case m[3] == "" && m[4] == "":
				case m[4] == "":
					t.Errorf("%s:%d cites docs/%s with a heading that does not close on its line; keep a citation on one line", path, i+1, m[1])
				case !doc.headings[m[3]]:
					t.Errorf("%s:%d cites docs/%s %q: no such heading", path, i+1, m[1], m[3])
				}
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if cited < 30 {
		t.Fatalf("found %d citations of docs/*.md; the walk missed the sources", cited)
	}
}

// walkRepository calls visit with every source and document of the
// repository that may cite the docs, skipping built and third-party code.
func walkRepository(visit func(path, text string)) error {
	return filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", ".bin", ".cache", "node_modules", "dist": // .cache: test262, unpacked
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
		visit(path, string(b))
		return nil
	})
}

// A document is a Markdown file's headings, as written and as GitHub's
// anchors.
type document struct {
	headings map[string]bool
	anchors  map[string]bool
}

// loadDocument reads docs/<name> once.
func loadDocument(docs map[string]*document, name string) (*document, error) {
	if d, ok := docs[name]; ok {
		return d, nil
	}
	b, err := os.ReadFile(filepath.FromSlash(name))
	if err != nil {
		return nil, err
	}
	d := parseDocument(string(b))
	docs[name] = d
	return d, nil
}

// atxHeading is a Markdown heading line.
var atxHeading = regexp.MustCompile(`^#{1,6} +(.+?)\s*$`)

func parseDocument(text string) *document {
	d := &document{headings: map[string]bool{}, anchors: map[string]bool{}}
	fenced := false
	seen := map[string]int{}
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
		}
		m := atxHeading.FindStringSubmatch(line)
		if fenced || m == nil {
			continue
		}
		d.headings[m[1]] = true
		a := anchor(m[1])
		if n := seen[a]; n > 0 {
			d.anchors[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			d.anchors[a] = true
		}
		seen[a]++
	}
	return d
}

// anchor is GitHub's anchor of a heading: lower case, punctuation dropped,
// spaces as hyphens.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
