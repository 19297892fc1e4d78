package bundles

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadGeneration(t *testing.T) {
	c, err := Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"rorp-v2-s-aaa", "rorp-v2-r-bbb"} {
		if err := os.MkdirAll(c.Dir(id), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(c.BundlePath(id), []byte("1"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(c.Root(), ".current-generations")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, body string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	g, err := c.ReadGeneration(write("g1.json", `{"bundles": ["rorp-v2-s-aaa", "rorp-v2-r-bbb"]}`))
	if err != nil || g.ID != "g1" || strings.Join(g.Bundles, ",") != "rorp-v2-s-aaa,rorp-v2-r-bbb" {
		t.Fatalf("object form: %+v %v", g, err)
	}
	if g, err := c.ReadGeneration(write("g2.json", `["rorp-v2-s-aaa"]`)); err != nil || len(g.Bundles) != 1 {
		t.Fatalf("array form: %+v %v", g, err)
	}
	outside := filepath.Join(t.TempDir(), "g.json")
	_ = os.WriteFile(outside, []byte(`["rorp-v2-s-aaa"]`), 0o644)
	bad := map[string]string{
		"relative":       "g1.json",
		"outside":        outside,
		"not json":       write("g3.json", `bundles: all`),
		"empty":          write("g4.json", `{"bundles": []}`),
		"invalid id":     write("g5.json", `["../etc"]`),
		"missing bundle": write("g6.json", `["rorp-v2-s-zzz"]`),
		"no file":        filepath.Join(dir, "none.json"),
	}
	for name, path := range bad {
		if _, err := c.ReadGeneration(path); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
