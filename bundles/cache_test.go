package bundles

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// newTestCache opens a cache at <tmp>/cache.
func newTestCache(t *testing.T) *Cache {
	t.Helper()
	c, err := Open(filepath.Join(t.TempDir(), "cache"), nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return c
}

// stage stages data in a new staging dir removed at test end.
func stage(t *testing.T, c *Cache, data []byte) string {
	t.Helper()
	s, err := c.NewStaging()
	if err != nil {
		t.Fatalf("NewStaging: %v", err)
	}
	t.Cleanup(func() { _ = s.Remove() })
	p, n, err := s.Stage(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("Stage: %v", err)
	}
	if n != int64(len(data)) {
		t.Fatalf("Stage size = %d, want %d", n, len(data))
	}
	return p
}

// storeBundle stages data and stores it as bundle id with the given assets
// (name → content).
func storeBundle(t *testing.T, c *Cache, id string, data []byte, assets map[string]string) StoreResult {
	t.Helper()
	up := Upload{Bundles: map[string]string{id: stage(t, c, data)}}
	for name, content := range assets {
		up.Assets = append(up.Assets, Asset{Name: name, Path: stage(t, c, []byte(content))})
	}
	res, err := c.Store(context.Background(), up)
	if err != nil {
		t.Fatalf("Store(%s): %v", id, err)
	}
	return res
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return string(b)
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestOpen(t *testing.T) {
	t.Chdir(t.TempDir())
	c, err := Open("rel/cache", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if !filepath.IsAbs(c.Root()) {
		t.Errorf("Root() = %q, want absolute", c.Root())
	}
	if fi, err := os.Stat(filepath.Join(c.Root(), "uploads")); err != nil || !fi.IsDir() {
		t.Errorf("uploads dir not created: %v", err)
	}
	if got, want := c.Dir("x"), filepath.Join(c.Root(), "x"); got != want {
		t.Errorf("Dir = %q, want %q", got, want)
	}
	if got, want := c.BundlePath("x"), filepath.Join(c.Root(), "x", "x.js"); got != want {
		t.Errorf("BundlePath = %q, want %q", got, want)
	}
	if _, err := Open("", nil); err == nil {
		t.Error("Open(\"\") succeeded")
	}
}

func TestHas(t *testing.T) {
	c := newTestCache(t)
	root := c.Root()
	snapshots := root + ".artifact-snapshots"

	// Regular file.
	writeFile(t, c.BundlePath("regular"), "r")
	// Relative symlink into <root>.artifact-snapshots/<id>/<id>.js, as the
	// pre-seed task and baked images lay it out.
	writeFile(t, filepath.Join(snapshots, "linked", "linked.js"), "l")
	if err := os.MkdirAll(c.Dir("linked"), 0o755); err != nil {
		t.Fatal(err)
	}
	rel := filepath.Join("..", "..", filepath.Base(snapshots), "linked", "linked.js")
	if err := os.Symlink(rel, c.BundlePath("linked")); err != nil {
		t.Fatal(err)
	}
	// Dangling relative symlink.
	if err := os.MkdirAll(c.Dir("dangling"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("..", "..", filepath.Base(snapshots), "nope", "nope.js"), c.BundlePath("dangling")); err != nil {
		t.Fatal(err)
	}
	// Directory at the bundle path.
	if err := os.MkdirAll(c.BundlePath("dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Lone lock file, as left by a writer killed before its rename.
	writeFile(t, filepath.Join(c.Dir("locked"), "locked.js.lock"), "")
	// Empty bundle directory.
	if err := os.MkdirAll(c.Dir("emptydir"), 0o755); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		id   string
		want bool
	}{
		{"regular", true},
		{"linked", true},
		{"dangling", false},
		{"dir", false},
		{"locked", false},
		{"emptydir", false},
		{"absent", false},
		{"../cache", false},
		{"uploads", false},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			if got := c.Has(tt.id); got != tt.want {
				t.Errorf("Has(%q) = %v, want %v", tt.id, got, tt.want)
			}
		})
	}

	b, err := c.ReadBundle("linked")
	if err != nil || string(b) != "l" {
		t.Errorf("ReadBundle(linked) = %q, %v; want \"l\"", b, err)
	}
}

func TestMissing(t *testing.T) {
	c := newTestCache(t)
	writeFile(t, c.BundlePath("a"), "a")
	writeFile(t, c.BundlePath("c"), "c")
	tests := []struct {
		name string
		ids  []string
		want []string
	}{
		{"all present", []string{"a", "c"}, nil},
		{"order kept", []string{"z", "a", "b", "c", "y"}, []string{"z", "b", "y"}},
		{"invalid counts as missing", []string{"../a", "a"}, []string{"../a"}},
		{"empty", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := c.Missing(tt.ids); !slices.Equal(got, tt.want) {
				t.Errorf("Missing(%q) = %q, want %q", tt.ids, got, tt.want)
			}
		})
	}
}

// TestMissingHeldBundle: Missing takes a bundle this process holds as
// present without looking at the disk, so one deleted by hand stays present
// until its last hold ends; Has always looks.
func TestMissingHeldBundle(t *testing.T) {
	c := newTestCache(t)
	writeFile(t, c.BundlePath("a"), "a")
	release1, err := c.Hold("a")
	if err != nil {
		t.Fatal(err)
	}
	release2, err := c.Hold("a")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(c.Dir("a")); err != nil {
		t.Fatal(err)
	}
	if c.Has("a") {
		t.Error("Has(a) after its directory was deleted")
	}
	for _, step := range []struct {
		name    string
		release func()
		want    []string
	}{
		{"two holds", func() {}, nil},
		{"one hold left", release1, nil},
		{"released twice", release1, nil},
		{"no hold", release2, []string{"a"}},
	} {
		step.release()
		if got := c.Missing([]string{"a"}); !slices.Equal(got, step.want) {
			t.Errorf("%s: Missing(a) = %q, want %q", step.name, got, step.want)
		}
	}
}

func TestReadBundle(t *testing.T) {
	c := newTestCache(t)
	writeFile(t, c.BundlePath("a"), "bundle a")
	tests := []struct {
		name    string
		id      string
		want    string
		wantErr func(error) bool
	}{
		{"present", "a", "bundle a", nil},
		{"absent", "b", "", func(err error) bool { return errors.Is(err, fs.ErrNotExist) }},
		{"invalid", "../a", "", func(err error) bool {
			var ine *InvalidNameError
			return errors.As(err, &ine) && ine.Kind == KindBundleID
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := c.ReadBundle(tt.id)
			if tt.wantErr != nil {
				if err == nil || !tt.wantErr(err) {
					t.Fatalf("ReadBundle(%q) error = %v, not the expected kind", tt.id, err)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("ReadBundle(%q) = %q, %v; want %q", tt.id, got, err, tt.want)
			}
		})
	}
}

func TestAssetExists(t *testing.T) {
	c := newTestCache(t)
	writeFile(t, filepath.Join(c.Dir("a"), "loadable-stats.json"), "{}")
	if err := os.MkdirAll(filepath.Join(c.Dir("a"), "subdir"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(c.Root(), "secret.json"), "{}")
	tests := []struct {
		id, name string
		want     bool
	}{
		{"a", "loadable-stats.json", true},
		{"a", "other.json", false},
		{"a", "subdir", false},
		{"b", "loadable-stats.json", false},
		{"a", "../secret.json", false},
		{"../a", "loadable-stats.json", false},
	}
	for _, tt := range tests {
		if got := c.AssetExists(tt.id, tt.name); got != tt.want {
			t.Errorf("AssetExists(%q, %q) = %v, want %v", tt.id, tt.name, got, tt.want)
		}
	}
}
