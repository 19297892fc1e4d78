package bundles

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestValidID(t *testing.T) {
	hex64 := strings.Repeat("0123456789abcdef", 4)
	tests := []struct {
		name string
		id   string
		want bool
	}{
		{"server bundle v2", "rorp-v2-s-" + hex64, true},
		{"rsc bundle v2", "rorp-v2-r-" + hex64, true},
		{"md5 with env", "d41d8cd98f00b204e9800998ecf8427e-production", true},
		{"timestamp", "1700000000000", true},
		{"underscore first", "_x", true},
		{"dots inside", "a..b", true},
		{"single char", "a", true},
		{"max length", strings.Repeat("a", MaxIDLen), true},
		{"empty", "", false},
		{"dot", ".", false},
		{"dotdot", "..", false},
		{"hidden", ".x", false},
		{"dash first", "-x", false},
		{"traversal", "../x", false},
		{"slash", "a/b", false},
		{"backslash", `a\b`, false},
		{"colon", "a:b", false},
		{"space", "a b", false},
		{"newline", "a\n", false},
		{"NUL", "a\x00", false},
		{"unicode", "bündle", false},
		{"too long for lock file name", strings.Repeat("a", MaxIDLen+1), false},
		{"256 bytes", strings.Repeat("a", 256), false},
		{"the staging directory", "uploads", false},
		{"the staging directory, another case", "UpLoads", false},
		{"a name that only starts like it", "uploads2", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ValidID(tt.id); got != tt.want {
				t.Errorf("ValidID(%q) = %v, want %v", tt.id, got, tt.want)
			}
		})
	}
}

// FuzzIDShape: idShape accepts exactly what the id pattern of PROTOCOL.md
// §2 matches.
func FuzzIDShape(f *testing.F) {
	pattern := regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]*$`)
	for _, seed := range []string{"", "a", "_", ".", "-", "..", ".x", "-x", "x.", "x-", "a..b", "rorp-v2-s-0f", "a/b", "a b", "bündle", "a\x00", "Z9_.-", "[", "`", "{", "@", ":"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, id string) {
		if got, want := idShape(id), pattern.MatchString(id); got != want {
			t.Fatalf("idShape(%q) = %v, the pattern says %v", id, got, want)
		}
	})
}

// TestLayoutNamesAreNotIDs: every entry the cache makes in its root,
// except a stored bundle's directory, is a name no bundle id can take.
func TestLayoutNamesAreNotIDs(t *testing.T) {
	c := newTestCache(t)
	staging, err := c.NewStaging()
	if err != nil {
		t.Fatal(err)
	}
	path, _, err := staging.Stage(strings.NewReader("globalThis.x = 1;"))
	if err != nil {
		t.Fatal(err)
	}
	asset, _, err := staging.Stage(strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Store(t.Context(), Upload{Bundles: map[string]string{"bundle": path}, Assets: []Asset{{Name: "stats.json", Path: asset}}}); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(c.Root(), generationsDir), dirPerm); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(c.Root())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != "bundle" && ValidID(e.Name()) {
			t.Errorf("the cache root holds %q, which is a valid bundle id: reserve it in layoutNames or start it with '.'", e.Name())
		}
	}
	for _, name := range append(layoutNames, generationsDir, tmpPrefix+"x") {
		if ValidID(name) || ValidID(strings.ToUpper(name)) {
			t.Errorf("layout name %q is a valid bundle id", name)
		}
	}
}

func TestValidAssetName(t *testing.T) {
	tests := []struct {
		name  string
		asset string
		want  bool
	}{
		{"loadable stats", "loadable-stats.json", true},
		{"client manifest", "react-client-manifest.json", true},
		{"hidden file", ".hidden", true},
		{"dots inside", "a..b", true},
		{"spaces", "my file.json", true},
		{"unicode", "mänifest-ü.json", true},
		{"source map", "bundle.js.map", true},
		{"255 bytes", strings.Repeat("a", 255), true},
		{"empty", "", false},
		{"dot", ".", false},
		{"dotdot", "..", false},
		{"traversal", "../x", false},
		{"slash", "a/b", false},
		{"absolute", "/etc/passwd", false},
		{"backslash", `a\b`, false},
		{"windows traversal", `..\x`, false},
		{"colon", "c:x", false},
		{"NUL", "a\x00b", false},
		{"newline", "a\nb", false},
		{"tab", "a\tb", false},
		{"DEL", "a\x7fb", false},
		{"C1 control", "a\u0085b", false},
		{"invalid UTF-8", "a\xffb", false},
		{"256 bytes", strings.Repeat("a", 256), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ValidAssetName(tt.asset); got != tt.want {
				t.Errorf("ValidAssetName(%q) = %v, want %v", tt.asset, got, tt.want)
			}
		})
	}
}

func TestInvalidNameErrorMessage(t *testing.T) {
	tests := []struct {
		err  *InvalidNameError
		want string
	}{
		{&InvalidNameError{Kind: KindBundleID, Name: "../x"}, `invalid bundle id "../x"`},
		{&InvalidNameError{Kind: KindAssetName, Name: "a/b"}, `invalid asset filename "a/b"`},
		{&InvalidNameError{Kind: KindAssetName, Name: "x.js", Reason: "reserved for bundle x"}, `invalid asset filename "x.js": reserved for bundle x`},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}
