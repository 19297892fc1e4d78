package tests

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/gorender/gorender/gemclient"
)

// TestDependencyBundles renders on the React bundle with the RSC stub as a
// dependency bundle and calls into it with runOnOtherBundle (PROTOCOL.md §5
// step 2, §7), in every body encoding.
func TestDependencyBundles(t *testing.T) {
	t.Parallel()
	// One runtime per bundle, so that module state is observable.
	s := startServer(t, map[string]string{"RENDERER_WORKERS_COUNT": "1"})
	appID, rscID := newID("s"), newID("r")
	s.upload(t, map[string]string{appID: reactApp(t), rscID: rscStub(t)}, nil)

	eachTransport(t, func(t *testing.T, tr transport) {
		for _, enc := range encodings {
			t.Run(string(enc), func(t *testing.T) {
				send := gemRender(s.gem(tr), enc)
				r := send(t, gemclient.Render{BundleID: appID, Dependencies: []string{rscID},
					Code: fmt.Sprintf(`runOnOtherBundle(%q, "RscStub.payload('X')")`, rscID)})
				r.want(t, tr, http.StatusOK, `{"component":"X","from":"rsc-stub"}`)
				r.wantRenderHeaders(t)

				r = send(t, gemclient.Render{BundleID: appID, Dependencies: []string{rscID, newID("r")},
					Code: fmt.Sprintf(`runOnOtherBundle(%q, "RscStub.payload('X')")`, rscID)})
				r.want(t, tr, http.StatusGone, "No bundle uploaded")
				r.wantNoCacheText(t)
			})
		}

		t.Run("module state persists", func(t *testing.T) {
			last := 0
			for range 3 {
				r := s.render(t, tr, appID, fmt.Sprintf(`runOnOtherBundle(%q, "RscStub.increment()")`, rscID), rscID)
				r.wantStatus(t, tr, http.StatusOK)
				n, err := strconv.Atoi(r.Body)
				if err != nil || n <= last {
					t.Fatalf("RscStub.increment() answered %q after %d, want a growing counter", r.Body, last)
				}
				last = n
			}
		})

		t.Run("bundle outside the request's set", func(t *testing.T) {
			r := s.render(t, tr, appID, fmt.Sprintf(`runOnOtherBundle(%q, "1")`, rscID))
			r.wantPrefix(t, tr, http.StatusBadRequest, "JS code for rendering request was:")
			if !strings.Contains(r.Body, "is not in this request's bundle set") {
				t.Errorf("body does not say why: %s", clip(r.Body))
			}
		})
	})
}

// sharedContextProbe sets a value unique to the request, reads it back
// after round trips through the dependency bundle, and reports what every
// side saw.
const sharedContextProbe = `(function () {
  var before = sharedExecutionContext.size;
  sharedExecutionContext.set('who', %[1]q);
  var seenByOther = runOnOtherBundle(%[2]q, "RscStub.payload('x'); sharedExecutionContext.get('who')");
  runOnOtherBundle(%[2]q, "sharedExecutionContext.set('fromOther', 'other:' + sharedExecutionContext.get('who')); 1");
  return JSON.stringify({before: before, who: sharedExecutionContext.get('who'), seenByOther: seenByOther,
    fromOther: sharedExecutionContext.get('fromOther'), size: sharedExecutionContext.size});
})()`

// TestSharedExecutionContext runs concurrent requests that each fill their
// sharedExecutionContext: each sees only its own entries, shared with the
// dependency bundle it calls, and a new request starts empty (PROTOCOL.md §7).
func TestSharedExecutionContext(t *testing.T) {
	t.Parallel()
	s := startServer(t, nil)
	entryID, rscID := newID("s"), newID("r")
	s.upload(t, map[string]string{entryID: markerBundle("entry"), rscID: rscStub(t)}, nil)

	eachTransport(t, func(t *testing.T, tr transport) {
		const n = 20
		var wg sync.WaitGroup
		answers := make([]*gemclient.Response, n)
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() {
				who := fmt.Sprintf("%s-request-%d", tr.name, i)
				answers[i], errs[i] = s.gem(tr).RenderRaw(ctx(t), gemclient.Render{
					BundleID: entryID, Dependencies: []string{rscID}, Code: fmt.Sprintf(sharedContextProbe, who, rscID)})
			})
		}
		wg.Wait()
		for i := range n {
			r := fromGem(t, answers[i], errs[i])
			who := fmt.Sprintf("%s-request-%d", tr.name, i)
			want, _ := json.Marshal(map[string]any{
				"before": 0, "who": who, "seenByOther": who, "fromOther": "other:" + who, "size": 2,
			})
			r.wantStatus(t, tr, http.StatusOK)
			if !jsonEqual(t, r.Body, string(want)) {
				t.Errorf("request %d saw %s, want %s", i, r.Body, want)
			}
		}

		r := s.render(t, tr, entryID, `sharedExecutionContext.size + ' ' + typeof sharedExecutionContext.get('who')`, rscID)
		r.want(t, tr, http.StatusOK, "0 undefined")
	})
}

// TestArrayFieldKeyRule checks the k / k[] rule of PROTOCOL.md §3.2 on
// dependencyBundleTimestamps: either spelling works, k wins over k[].
func TestArrayFieldKeyRule(t *testing.T) {
	t.Parallel()
	s := startServer(t, nil)
	entryID, depID, missingID := newID("s"), newID("r"), newID("r")
	s.upload(t, map[string]string{entryID: markerBundle("entry"), depID: rscStub(t)}, nil)
	code := fmt.Sprintf(`runOnOtherBundle(%q, "RscStub.payload('dep')")`, depID)
	const rendered = `{"component":"dep","from":"rsc-stub"}`

	const k = "dependencyBundleTimestamps"
	cases := []struct {
		name   string
		deps   []field
		status int
	}{
		{"k as array", []field{{k, []string{depID}}}, http.StatusOK},
		{"k as one string", []field{{k, depID}}, http.StatusOK},
		{"k[]", []field{{k + "[]", []string{depID}}}, http.StatusOK},
		{"k wins over k[] (k missing bundle)", []field{{k, []string{missingID}}, {k + "[]", []string{depID}}}, http.StatusGone},
		{"k wins over k[] (k[] missing bundle)", []field{{k + "[]", []string{missingID}}, {k, []string{depID}}}, http.StatusOK},
		{"indexed k[0] is ignored", []field{{k + "[0]", missingID}, {k, []string{depID}}}, http.StatusOK},
	}
	eachTransport(t, func(t *testing.T, tr transport) {
		for _, enc := range []encoding{encJSON, encForm, encMultipart} {
			for _, c := range cases {
				t.Run(string(enc)+"/"+c.name, func(t *testing.T) {
					fields := append(metaFields(testPassword, "2.0.0"), field{"renderingRequest", code})
					r := s.renderFields(t, tr, enc, entryID, append(fields, c.deps...))
					if c.status == http.StatusOK {
						r.want(t, tr, http.StatusOK, rendered)
					} else {
						r.want(t, tr, http.StatusGone, "No bundle uploaded")
					}
				})
			}
		}
		// The raw encoding has one spelling: a JSON array header.
		for _, c := range []struct {
			dep    string
			status int
		}{{depID, http.StatusOK}, {missingID, http.StatusGone}} {
			t.Run("raw/header "+strconv.Itoa(c.status), func(t *testing.T) {
				fields := append(metaFields(testPassword, "2.0.0"), field{"renderingRequest", code}, field{k, []string{c.dep}})
				r := s.renderFields(t, tr, encRaw, entryID, fields)
				r.wantStatus(t, tr, c.status)
			})
		}
	})
}

// TestMaxVMPoolSize: a render whose bundle set is larger than
// MAX_VM_POOL_SIZE is refused with 410 (PROTOCOL.md §11).
func TestMaxVMPoolSize(t *testing.T) {
	t.Parallel()
	s := startServer(t, map[string]string{"MAX_VM_POOL_SIZE": "1"})
	entryID, depID := newID("s"), newID("r")
	s.upload(t, map[string]string{entryID: markerBundle("entry"), depID: rscStub(t)}, nil)
	eachTransport(t, func(t *testing.T, tr transport) {
		r := s.render(t, tr, entryID, "MARKER", depID)
		r.want(t, tr, http.StatusGone, "Too many bundles uploaded. The maximum allowed is 1.")
		r.wantNoCacheText(t)
		s.render(t, tr, entryID, "MARKER").want(t, tr, http.StatusOK, "entry")
	})
}

// TestBundleDeletedByHand: a loaded bundle renders from memory after its
// files are deleted by hand (the render path does not look at the disk for
// a bundle the process holds, docs/PROTOCOL.md §4); once MAX_VM_POOL_SIZE
// evicts it, its next render answers 410, and an upload brings it back.
func TestBundleDeletedByHand(t *testing.T) {
	t.Parallel()
	eachTransport(t, func(t *testing.T, tr transport) {
		s := startServer(t, map[string]string{"MAX_VM_POOL_SIZE": "1"})
		kept, other := newID("s"), newID("s")
		s.upload(t, map[string]string{kept: markerBundle("kept"), other: markerBundle("other")}, nil)
		s.render(t, tr, kept, "MARKER").want(t, tr, http.StatusOK, "kept")
		if err := os.RemoveAll(filepath.Join(s.cache, kept)); err != nil {
			t.Fatal(err)
		}
		s.render(t, tr, kept, "MARKER").want(t, tr, http.StatusOK, "kept")
		s.render(t, tr, other, "MARKER").want(t, tr, http.StatusOK, "other") // evicts kept
		r := s.render(t, tr, kept, "MARKER")
		r.want(t, tr, http.StatusGone, "No bundle uploaded")
		r.wantNoCacheText(t)
		s.upload(t, map[string]string{kept: markerBundle("kept")}, nil)
		s.render(t, tr, kept, "MARKER").want(t, tr, http.StatusOK, "kept")
	})
}

// jsonEqual compares two JSON texts as values.
func jsonEqual(t *testing.T, a, b string) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal([]byte(a), &x); err != nil {
		t.Errorf("not JSON: %v: %s", err, clip(a))
		return false
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Fatalf("not JSON: %v: %s", err, clip(b))
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

// TestReservedBundleIDs: a bundle id that names an entry of the cache
// layout is refused wherever an id arrives, in any letter case: id
// "uploads" was stored at <cache>/uploads/uploads.js, so a render of it had
// the staging directory, with other clients' uploads in flight, as its fs
// root (issue 12 item 6). Before the fix the upload answered 200.
func TestReservedBundleIDs(t *testing.T) {
	t.Parallel()
	s := startServer(t, map[string]string{"RENDERER_SUPPORT_MODULES": "true"})
	real := newID("s")
	s.upload(t, map[string]string{real: markerBundle("real")}, nil)
	const reason = ". The bundle cache uses this name for itself."
	eachTransportSerial(t, func(t *testing.T, tr transport) {
		for _, id := range []string{"uploads", "UPLOADS", "Uploads"} {
			t.Run(id, func(t *testing.T) {
				want := "Invalid bundle id: " + strconv.Quote(id) + reason
				up := must(t)(s.gem(tr).UploadAssets(ctx(t), map[string][]byte{id: []byte(`require('fs').readdirSync(__dirname)`)}, nil))
				up.want(t, tr, http.StatusBadRequest, want)
				s.render(t, tr, id, "1").want(t, tr, http.StatusBadRequest, want)
				s.render(t, tr, real, "MARKER", id).want(t, tr, http.StatusBadRequest, want)
				must(t)(s.gem(tr).AssetExists(ctx(t), "a.json", []string{id})).want(t, tr, http.StatusBadRequest, want)
			})
		}
		if _, err := os.Stat(filepath.Join(s.cache, "uploads", "uploads.js")); err == nil {
			t.Errorf("a bundle was stored in the staging directory")
		}
		s.wantStagingEmpty(t)
	})
}

// TestFSErrorsNameNoServerPath: a render that fails on an fs call answers a
// 400 whose message and stack name the path relative to the bundle
// directory, never the server's cache path (PROTOCOL.md §5), whether the
// host refused the read (a missing companion, a sibling bundle's file) or
// the environment refused a write. Before this the 400 said
// `ENOENT: no such file or directory, open '<cache>/<id>/missing.json'`.
func TestFSErrorsNameNoServerPath(t *testing.T) {
	t.Parallel()
	s := startServer(t, map[string]string{"RENDERER_SUPPORT_MODULES": "true"})
	id := newID("s")
	s.upload(t, map[string]string{id: markerBundle("fs") +
		"globalThis.read = function (p) { return require('fs').readFileSync(require('path').join(__dirname, p), 'utf8'); };\n" +
		"globalThis.write = function (p) { require('fs').writeFileSync(require('path').join(__dirname, p), 'x'); };\n"}, nil)
	eachTransport(t, func(t *testing.T, tr transport) {
		for code, want := range map[string]string{
			"read('missing.json')":         "ENOENT: no such file or directory, open 'missing.json'",
			"read('../other/stats.json')":  "ENOENT: no such file or directory, open '../other/stats.json'",
			"write('out.txt')":             "EROFS: read-only file system, open 'out.txt'",
			"write('../../elsewhere.txt')": "EROFS: read-only file system, open '../../elsewhere.txt'",
		} {
			r := s.render(t, tr, id, code)
			r.wantStatus(t, tr, http.StatusBadRequest)
			if !strings.Contains(r.Body, "EXCEPTION MESSAGE:\n"+want+"\n") {
				t.Errorf("%s: the 400 does not say %q:\n%s", code, want, clip(r.Body))
			}
			// On the node engine V8's stack frames name the bundle's and the
			// executor's files by their paths (docs/node-engine.md);
			// the message names none.
			shown := r.Body
			if testEngine == "node" {
				shown, _, _ = strings.Cut(r.Body, "\n\nSTACK:\n")
			}
			if dir := filepath.Dir(s.cache); strings.Contains(shown, dir) {
				t.Errorf("%s: the 400 names the server's path %s:\n%s", code, dir, clip(r.Body))
			}
		}
	})
}
