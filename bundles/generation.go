package bundles

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// generationsDir holds pre-seed declarations under the cache root.
const generationsDir = ".current-generations"

// maxManifestBytes bounds a declaration: it lists bundle ids, nothing more.
const maxManifestBytes = 1 << 20

// Generation is a pre-seed declaration: the bundles a deploy ships in the
// cache, to load before the renderer reports ready.
type Generation struct {
	ID      string   // the declaration's file name without .json
	Bundles []string // bundle ids, in the declared order
}

// ReadGeneration reads and validates the declaration at path, which must be
// an absolute path to <root>/.current-generations/<generation id>.json. The
// file is JSON: {"bundles": ["<id>", ...]} (a bare array of ids is accepted
// too). Every id must be valid and present in the cache.
func (c *Cache) ReadGeneration(path string) (*Generation, error) {
	if !filepath.IsAbs(path) {
		return nil, fmt.Errorf("current-generation manifest %q: want an absolute path", path)
	}
	dir := filepath.Join(c.root, generationsDir)
	if filepath.Dir(filepath.Clean(path)) != dir || filepath.Ext(path) != ".json" {
		return nil, fmt.Errorf("current-generation manifest %q: want %s/<generation id>.json", path, dir)
	}
	ids, err := readDeclaration(path)
	if err != nil {
		return nil, fmt.Errorf("current-generation manifest: %w", err)
	}
	var problems []error
	for _, id := range ids {
		switch {
		case !ValidID(id):
			problems = append(problems, fmt.Errorf("bundle id %q is not valid", id))
		case !c.Has(id):
			problems = append(problems, fmt.Errorf("bundle %s is not in the cache (%s)", id, c.BundlePath(id)))
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("current-generation manifest %s: %w", path, errors.Join(problems...))
	}
	return &Generation{ID: strings.TrimSuffix(filepath.Base(path), ".json"), Bundles: ids}, nil
}

// readDeclaration reads the bundle ids of the declaration at path.
func readDeclaration(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxManifestBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(raw) > maxManifestBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, maxManifestBytes)
	}
	ids, err := parseGeneration(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ids, nil
}

func parseGeneration(raw []byte) ([]string, error) {
	var ids []string
	if err := json.Unmarshal(raw, &ids); err != nil {
		var doc struct {
			Bundles []string `json:"bundles"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			return nil, fmt.Errorf(`want JSON {"bundles": ["<bundle id>", ...]}: %w`, err)
		}
		ids = doc.Bundles
	}
	if len(ids) == 0 {
		return nil, errors.New("it declares no bundles")
	}
	return ids, nil
}
