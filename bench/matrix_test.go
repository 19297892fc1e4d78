package bench

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gorender/gorender/jsvm"
	"github.com/gorender/gorender/jsvm/engines"
	"github.com/gorender/gorender/jsvm/transform"
)

// stackAttrs are the attributes where development builds of react-dom put
// error messages and stack traces (engine-specific text).
var stackAttrs = regexp.MustCompile(`( data-(?:c?stck|msg)=)"[^"]*"`)

// TestRewriteMatrix checks transform.RewriteStringBuilds on every shape of
// react-dom's renderToString: React 18 and 19, development and production,
// unminified, minified by esbuild and by terser. Each bundle has exactly one
// site, and the rewritten bundle renders in goja what Node rendered from the
// bundle as built. The matrix is built by bash bench/matrix.sh (it needs
// Node), which runs this test with GORENDER_REWRITE_MATRIX=<its output>.
func TestRewriteMatrix(t *testing.T) {
	dir := os.Getenv("GORENDER_REWRITE_MATRIX")
	if dir == "" {
		t.Skip("GORENDER_REWRITE_MATRIX not set: run bash bench/matrix.sh")
	}
	var manifest struct {
		Node     string            `json:"node"`
		Versions map[string]string `json:"versions"`
		Requests []string          `json:"requests"`
		Bundles  []struct {
			Bundle string `json:"bundle"`
		} `json:"bundles"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &manifest); err != nil {
		t.Fatal(err)
	}
	t.Logf("Node %s, %v", manifest.Node, manifest.Versions)
	e, err := engines.New("goja", jsvm.Options{StubTimers: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, bundle := range manifest.Bundles {
		name := strings.TrimSuffix(bundle.Bundle, ".js")
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join(dir, bundle.Bundle))
			if err != nil {
				t.Fatal(err)
			}
			out, n, err := transform.RewriteStringBuilds(string(src))
			if err != nil {
				t.Fatal(err)
			}
			if n != 1 {
				t.Fatalf("rewrites = %d, want 1", n)
			}
			if again, n2, _ := transform.RewriteStringBuilds(out); n2 != 0 || again != out {
				t.Fatal("not idempotent")
			}
			rt := loadedRuntime(t, e, out)
			defer rt.Close()
			var built jsvm.Runtime
			for _, req := range manifest.Requests {
				code, err := os.ReadFile(filepath.Join(dir, req+".request.js"))
				if err != nil {
					t.Fatal(err)
				}
				want, err := os.ReadFile(filepath.Join(dir, name+"."+req+".html"))
				if err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				res, err := rt.Eval(context.Background(), string(code), jsvm.NewRequest(nil))
				if err != nil {
					t.Fatalf("%s: %v", req, err)
				}
				took := time.Since(start)
				got, node := res.Body, string(want)
				if stackAttrs.MatchString(node) {
					// Development builds put JS stack traces in the
					// fallback's attributes: V8's and goja's differ.
					got, node = stackAttrs.ReplaceAllString(got, "$1"), stackAttrs.ReplaceAllString(node, "$1")
				}
				if got != node {
					t.Fatalf("%s: rewritten bundle in goja differs from Node:\n got %.300q\nwant %.300q", req, got, node)
				}
				if built == nil {
					built = loadedRuntime(t, e, string(src))
					defer built.Close()
				}
				start = time.Now()
				before, err := built.Eval(context.Background(), string(code), jsvm.NewRequest(nil))
				if err != nil {
					t.Fatalf("%s as built: %v", req, err)
				}
				if before.Body != res.Body {
					// Stack columns after the edit on the same line move by
					// a few characters (a terser bundle is one line).
					if stackAttrs.ReplaceAllString(before.Body, "$1") != got {
						t.Fatalf("%s: the rewritten bundle renders differently from the bundle as built", req)
					}
					t.Logf("%s: same as built except for stack columns in data-stck", req)
				}
				if req == "list" {
					t.Logf("%s: %d bytes, rewritten %v, as built %v", req, len(res.Body), took.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
				}
			}
		})
	}
}
