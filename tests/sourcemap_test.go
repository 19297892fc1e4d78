package tests

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// The source-mapped fixture (tests/testdata/sourcemap, built by its
// build.go with esbuild): a bundle minified onto one line whose
// sourceMappingURL names sourcemap-app.js.map beside it.
func sourceMapApp(t *testing.T) (bundle, sourceMap string) {
	return testdata(t, "sourcemap/bundles/sourcemap-app.js"), testdata(t, "sourcemap/bundles/sourcemap-app.js.map")
}

// Where the fixture's sources throw and ask for their stack (lines of
// tests/testdata/sourcemap/src).
const (
	greetThrows      = "src/greeting.js:8:"
	whereAsksStack   = "src/index.js:11:"
	sourceMapMessage = "greet: no user given"
)

// TestSourceMaps: a render error's 400 body shows the stack in the
// bundle's original files and lines, from a source map uploaded beside
// the bundle: the one its sourceMappingURL names, or the companion
// <bundle>.js.map; getStackTrace() answers in original files too (not on
// node, whose JavaScript runs in another process); the same
// with RENDERER_SUPPORT_MODULES (the CommonJS wrapper shifts the one line
// of a minified bundle). Without a map the frames stay in the bundle.
func TestSourceMaps(t *testing.T) {
	t.Parallel()
	bundle, sourceMap := sourceMapApp(t)
	withoutURL := regexp.MustCompile(`//# sourceMappingURL=.*\n?$`).ReplaceAllString(bundle, "")
	if withoutURL == bundle {
		t.Fatal("the fixture has no sourceMappingURL comment")
	}
	for _, modules := range []string{"false", "true"} {
		t.Run("support-modules="+modules, func(t *testing.T) {
			t.Parallel()
			s := startServer(t, map[string]string{"RENDERER_SUPPORT_MODULES": modules})
			h2 := transports[0]
			named, companion, none := newID("s"), newID("s"), newID("s")
			s.upload(t, map[string]string{named: bundle}, map[string]string{"sourcemap-app.js.map": sourceMap})
			s.upload(t, map[string]string{companion: withoutURL}, map[string]string{companion + ".js.map": sourceMap})
			s.upload(t, map[string]string{none: bundle}, nil)

			for _, id := range []string{named, companion} {
				r := s.render(t, h2, id, "SourceMapApp.greet(null)")
				r.wantStatus(t, h2, http.StatusBadRequest)
				if !strings.Contains(r.Body, sourceMapMessage) || !strings.Contains(r.Body, greetThrows) {
					t.Errorf("bundle %s: the error's stack does not show %s:\n%s", id, greetThrows, r.Body)
				}
				if strings.Contains(r.Body, id+".js:") {
					t.Errorf("bundle %s: a frame still in the bundle:\n%s", id, r.Body)
				}
				r = s.render(t, h2, id, "SourceMapApp.where()")
				r.wantStatus(t, h2, http.StatusOK)
				switch {
				case testEngine == "node":
					// Not mapped on node (README "Source maps"): the stack as Node gives it.
					if !strings.Contains(r.Body, id+".js:") {
						t.Errorf("bundle %s: getStackTrace() on node: %s", id, r.Body)
					}
				case !strings.Contains(r.Body, whereAsksStack):
					t.Errorf("bundle %s: getStackTrace() does not show %s:\n%s", id, whereAsksStack, r.Body)
				}
			}

			r := s.render(t, h2, none, "SourceMapApp.greet(null)")
			r.wantStatus(t, h2, http.StatusBadRequest)
			if strings.Contains(r.Body, "src/greeting.js") || !strings.Contains(r.Body, none+".js:1:") {
				t.Errorf("without its map, the stack should stay in the bundle (%s.js:1:...):\n%s", none, r.Body)
			}
		})
	}
}
