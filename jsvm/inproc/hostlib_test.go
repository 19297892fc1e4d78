package inproc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestUTF8DecodeStreamingAtEverySplit(t *testing.T) {
	full := []byte("aé€😀z\xf0\x9f\x98\x80")
	want, _, _ := utf8Decode(nil, full, false, false)
	for i := 0; i <= len(full); i++ {
		for j := i; j <= len(full); j++ {
			var got string
			var pending []byte
			for _, part := range [][]byte{full[:i], full[i:j], full[j:]} {
				s, rest, ok := utf8Decode(pending, part, true, false)
				if !ok {
					t.Fatal("not ok")
				}
				got += s
				pending = rest
			}
			s, _, _ := utf8Decode(pending, nil, false, false)
			got += s
			if got != want {
				t.Fatalf("split %d,%d: %q want %q", i, j, got, want)
			}
		}
	}
	if _, _, ok := utf8Decode(nil, []byte{0x61, 0xc3}, false, true); ok {
		t.Fatal("fatal decode of a truncated sequence succeeded")
	}
}

// TestReadFileBound: a file larger than one allocation may be is not read
// (a RangeError with Node's code ERR_FS_FILE_TOO_LARGE); one at the bound is.
func TestReadFileBound(t *testing.T) {
	dir := t.TempDir()
	bundle := filepath.Join(dir, "bundle.js")
	for name, size := range map[string]int{"bundle.js": 1, "fits.json": 1024, "large.json": 1025} {
		if err := os.WriteFile(filepath.Join(dir, name), make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fsys := newBundleFS(bundle)
	if b, ferr := fsys.readFile(filepath.Join(dir, "fits.json"), 1024); ferr != nil || len(b) != 1024 {
		t.Errorf("a file of 1024 bytes under a bound of 1024: %d bytes, %v", len(b), ferr)
	}
	_, ferr := fsys.readFile(filepath.Join(dir, "large.json"), 1024)
	if ferr == nil {
		t.Fatal("a file of 1025 bytes under a bound of 1024 was read")
	}
	if e := ferr.hostError(); e.Name != "RangeError" || ferr.Code != "ERR_FS_FILE_TOO_LARGE" || !strings.Contains(e.Message, "RENDERER_MAX_ALLOCATION") {
		t.Errorf("a file over the bound: %s %s %q, want a RangeError ERR_FS_FILE_TOO_LARGE naming RENDERER_MAX_ALLOCATION", e.Name, ferr.Code, e.Message)
	}
}
