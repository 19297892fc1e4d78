// Package test262 runs ECMAScript's conformance suite (tc39/test262) through
// gorender's engines, with Node.js 20 as the reference host: each test is
// compiled as a bundle (so goja's esbuild lowering applies as it does to a
// bundle) and evaluated in a fresh runtime of the environment a bundle gets;
// on Node each test runs in a fresh vm context. It reports the pass counts
// per directory and the tests Node passes that an engine fails, which a
// committed baseline explains (docs/test262.md).
package test262

import (
	"archive/tar"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Archive is the suite's file name in its directory (ArchiveEnv).
const Archive = "test262-be13516.tar.gz"

// ArchiveEnv names the directory holding Archive; unset, it is
// DefaultArchiveDir relative to the repository's root.
const ArchiveEnv = "GORENDER_TEST262_DIR"

// DefaultArchiveDir is where a clone beside the shared directory finds the
// suite, relative to the repository's root.
const DefaultArchiveDir = "../shared/test262"

// NodeEnv names the reference host's Node.js 20 binary; unset, node on PATH.
const NodeEnv = "GORENDER_TEST262_NODE"

// SampleArchive is the CI sample, committed in the package's testdata (so
// CI needs nothing outside the repository): the harness, the sampled tests
// of Archive, the whole suite's feature counts and test262's LICENSE
// (BSD-3-Clause). WriteSample makes it.
const SampleArchive = "testdata/sample-be13516.tar.gz"

// featureCountsFile, in a sample, holds the whole suite's feature counts:
// one "feature<TAB>count" a line.
const featureCountsFile = "features.tsv"

// Dirs are the suite's directories that are run, in report order (staging
// and harness's self-tests are not).
var Dirs = []string{"language", "built-ins", "intl402", "annexB"}

// Suite is an unpacked test262.
type Suite struct {
	Root    string            // holds harness/ and test/
	harness map[string]string // name -> text

	features     sync.Once
	featureCount map[string]int // feature -> tests of Dirs that list it
}

// Unpack unpacks archive (the whole suite, Archive, or the CI sample,
// SampleArchive) into cacheDir (once: a complete unpack leaves a marker)
// and opens it.
func Unpack(archive, cacheDir string) (*Suite, error) {
	dest := filepath.Join(cacheDir, strings.TrimSuffix(filepath.Base(archive), ".tar.gz"))
	marker := filepath.Join(dest, ".unpacked")
	if _, err := os.Stat(marker); err != nil {
		if err := unpack(archive, dest); err != nil {
			return nil, err
		}
		if err := os.WriteFile(marker, nil, 0o644); err != nil {
			return nil, err
		}
	}
	return Open(filepath.Join(dest, "test262"))
}

// unpack extracts the archive into a temporary directory beside dest, then
// renames it, so an interrupted unpack never looks complete.
func unpack(archive, dest string) error {
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("read %s: %w", archive, err)
	}
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dest), "unpack-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", archive, err)
		}
		name := path.Clean(h.Name)
		if !fs.ValidPath(name) {
			return fmt.Errorf("read %s: bad path %q", archive, h.Name)
		}
		target := filepath.Join(tmp, filepath.FromSlash(name))
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(target, 0o755)
		case tar.TypeReg:
			err = writeFile(target, tr)
		}
		if err != nil {
			return fmt.Errorf("unpack %s: %w", h.Name, err)
		}
	}
	os.RemoveAll(dest)
	return os.Rename(tmp, dest)
}

func writeFile(name string, r io.Reader) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Open opens an unpacked suite at root.
func Open(root string) (*Suite, error) {
	if _, err := os.Stat(filepath.Join(root, "harness", "assert.js")); err != nil {
		return nil, fmt.Errorf("not a test262 checkout: %w", err)
	}
	s := &Suite{Root: root, harness: map[string]string{}}
	files, err := filepath.Glob(filepath.Join(root, "harness", "*.js"))
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		s.harness[filepath.Base(f)] = string(b)
	}
	// The CI sample carries the whole suite's feature counts, so that its
	// tests are grouped as they are in the whole suite (Group).
	if b, err := os.ReadFile(filepath.Join(root, featureCountsFile)); err == nil {
		counts, err := parseFeatureCounts(string(b))
		if err != nil {
			return nil, err
		}
		s.features.Do(func() { s.featureCount = counts })
	}
	return s, nil
}

// Test is one test file and what its front-matter says.
type Test struct {
	Path     string // under test/, with slashes: "built-ins/Array/length.js"
	Source   string
	Includes []string
	Flags    []string
	Features []string
	// NegativePhase and NegativeType: the error a negative test expects
	// ("parse" or "runtime"; "resolution" is for modules only).
	NegativePhase, NegativeType string
}

// Dir is the test's top directory ("built-ins").
func (t *Test) Dir() string { d, _, _ := strings.Cut(t.Path, "/"); return d }

// Has reports the flag.
func (t *Test) Has(flag string) bool { return slices.Contains(t.Flags, flag) }

// Modes are the modes a test runs in (INTERPRETING.md "flags"): strict
// only, sloppy only (noStrict, raw), or both; a test passes when every mode
// passes.
func (t *Test) Modes() []bool {
	switch {
	case t.Has("onlyStrict"):
		return []bool{true}
	case t.Has("noStrict"), t.Has("raw"):
		return []bool{false}
	}
	return []bool{false, true}
}

// HostNeed is what the test needs of the host beyond what every host here
// gives, or "" (the $262 functions the runner offers on Node only: see
// docs/test262.md "How a test runs").
func (t *Test) HostNeed() string {
	for _, need := range []string{"createRealm", "evalScript", "detachArrayBuffer"} {
		if strings.Contains(t.Source, "$262."+need) || (need == "detachArrayBuffer" && slices.Contains(t.Includes, "detachArrayBuffer.js")) {
			return "$262." + need
		}
	}
	return ""
}

// Skip says why no host here runs the test, or "": module tests (a bundle
// is a script), and tests of host hooks no host here offers ($262.agent's
// workers, IsHTMLDDA).
func (t *Test) Skip() string {
	switch {
	case t.Has("module"):
		return "module"
	case strings.Contains(t.Source, "$262.agent"):
		return "$262.agent"
	case strings.Contains(t.Source, "$262.IsHTMLDDA") || slices.Contains(t.Features, "IsHTMLDDA"):
		return "IsHTMLDDA"
	}
	return ""
}

// Load reads and parses one test.
func (s *Suite) Load(p string) (*Test, error) {
	b, err := os.ReadFile(filepath.Join(s.Root, "test", filepath.FromSlash(p)))
	if err != nil {
		return nil, err
	}
	t := &Test{Path: p, Source: string(b)}
	if err := t.parseFrontMatter(); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return t, nil
}

// parseFrontMatter reads the YAML between /*--- and ---*/: the keys used
// here only, as test262 writes them (flow lists, block lists, the negative
// mapping).
func (t *Test) parseFrontMatter() error {
	start := strings.Index(t.Source, "/*---")
	end := strings.Index(t.Source, "---*/")
	if start < 0 || end < start {
		return fmt.Errorf("no front-matter")
	}
	var key string
	for _, line := range strings.Split(t.Source[start+5:end], "\n") {
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		indented := line[0] == ' ' || line[0] == '\t'
		if !indented {
			k, v, ok := strings.Cut(trimmed, ":")
			if !ok {
				key = ""
				continue
			}
			key = k
			if list, ok := flowList(v); ok {
				t.add(key, list...)
			}
			continue
		}
		switch {
		case strings.HasPrefix(trimmed, "- "):
			t.add(key, strings.TrimSpace(trimmed[2:]))
		case key == "negative":
			k, v, _ := strings.Cut(trimmed, ":")
			switch v = strings.TrimSpace(v); k {
			case "phase":
				t.NegativePhase = v
			case "type":
				t.NegativeType = v
			}
		}
	}
	return nil
}

func flowList(v string) ([]string, bool) {
	v = strings.TrimSpace(v)
	if !strings.HasPrefix(v, "[") || !strings.HasSuffix(v, "]") {
		return nil, false
	}
	var out []string
	for _, item := range strings.Split(v[1:len(v)-1], ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out, true
}

func (t *Test) add(key string, items ...string) {
	switch key {
	case "includes":
		t.Includes = append(t.Includes, items...)
	case "flags":
		t.Flags = append(t.Flags, items...)
	case "features":
		t.Features = append(t.Features, items...)
	}
}

// Paths lists the tests of Dirs, sorted (fixtures, which tests import, are
// not tests).
func (s *Suite) Paths() ([]string, error) {
	var out []string
	for _, d := range Dirs {
		root := filepath.Join(s.Root, "test", d)
		err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() || !strings.HasSuffix(p, ".js") || strings.Contains(p, "_FIXTURE") {
				return err
			}
			rel, err := filepath.Rel(filepath.Join(s.Root, "test"), p)
			out = append(out, filepath.ToSlash(rel))
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	slices.Sort(out)
	return out, nil
}

// Sample is n of paths chosen with seed, in paths' order: the same for the
// same suite, n and seed.
func Sample(paths []string, n int, seed uint64) []string {
	if n >= len(paths) {
		return paths
	}
	r := rand.New(rand.NewPCG(seed, seed))
	picked := slices.Clone(paths)
	r.Shuffle(len(picked), func(i, j int) { picked[i], picked[j] = picked[j], picked[i] })
	picked = picked[:n]
	slices.Sort(picked)
	return picked
}

// Harness returns a harness file's text (all are read at Open, so a Suite
// is safe for concurrent use).
func (s *Suite) Harness(name string) (string, error) {
	if text, ok := s.harness[name]; ok {
		return text, nil
	}
	return "", fmt.Errorf("no harness file %q", name)
}

// Source is the program a host evaluates for t in a mode (after its own
// $262 prelude): "use strict" first in strict mode, then the harness files
// (assert.js and sta.js, doneprintHandle.js for async tests, then the
// test's includes), then the test; a raw test as it is.
func (s *Suite) Source(t *Test, strict bool) (string, error) {
	if t.Has("raw") {
		return t.Source, nil
	}
	var b strings.Builder
	if strict {
		b.WriteString("\"use strict\";\n")
	}
	files := []string{"assert.js", "sta.js"}
	if t.Has("async") {
		files = append(files, "doneprintHandle.js")
	}
	for _, name := range append(files, t.Includes...) {
		text, err := s.Harness(name)
		if err != nil {
			return "", fmt.Errorf("%s: %w", t.Path, err)
		}
		b.WriteString(text)
		b.WriteString("\n")
	}
	b.WriteString(t.Source)
	return b.String(), nil
}

// featureCounts counts the tests of Dirs that list each feature (read once;
// a test that cannot be read counts for nothing).
func (s *Suite) featureCounts() map[string]int {
	s.features.Do(func() {
		s.featureCount = map[string]int{}
		paths, _ := s.Paths()
		for _, p := range paths {
			if t, err := s.Load(p); err == nil {
				for _, f := range t.Features {
					s.featureCount[f]++
				}
			}
		}
	})
	return s.featureCount
}

// WriteSample writes to w, as a gzipped tar that Unpack reads, the
// harness, the tests at paths, the suite's feature counts and its LICENSE,
// in a fixed order with fixed times: the same suite and paths give the same
// bytes.
func (s *Suite) WriteSample(w io.Writer, paths []string) error {
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	add := func(name string, data []byte) error {
		h := &tar.Header{Name: "test262/" + name, Mode: 0o644, Size: int64(len(data)), ModTime: time.Unix(0, 0), Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	var names []string
	for name := range s.harness {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if err := add("harness/"+name, []byte(s.harness[name])); err != nil {
			return err
		}
	}
	for _, p := range paths {
		b, err := os.ReadFile(filepath.Join(s.Root, "test", filepath.FromSlash(p)))
		if err != nil {
			return err
		}
		if err := add("test/"+p, b); err != nil {
			return err
		}
	}
	counts := s.featureCounts()
	features := slices.Sorted(maps.Keys(counts))
	var tsv strings.Builder
	for _, f := range features {
		fmt.Fprintf(&tsv, "%s\t%d\n", f, counts[f])
	}
	if err := add(featureCountsFile, []byte(tsv.String())); err != nil {
		return err
	}
	license, err := os.ReadFile(filepath.Join(s.Root, "LICENSE"))
	if err != nil {
		return fmt.Errorf("the suite's LICENSE goes with every copy of its tests: %w", err)
	}
	if err := add("LICENSE", license); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

// parseFeatureCounts reads featureCountsFile's text.
func parseFeatureCounts(text string) (map[string]int, error) {
	counts := map[string]int{}
	for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		f, n, ok := strings.Cut(line, "\t")
		count, err := strconv.Atoi(n)
		if !ok || err != nil {
			return nil, fmt.Errorf("%s: bad line %q", featureCountsFile, line)
		}
		counts[f] = count
	}
	return counts, nil
}
