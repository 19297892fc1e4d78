package tests

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gorender/gorender/gemclient"
)

// TestAssetExists covers POST /asset-exists (PROTOCOL.md §6.4): auth only,
// no protocol check.
func TestAssetExists(t *testing.T) {
	t.Parallel()
	s := startServer(t, nil)
	id := newID("s")
	s.upload(t, map[string]string{id: markerBundle("x")}, map[string]string{"loadable-stats.json": "{}"})

	// post sends a JSON body to /asset-exists with a raw query.
	post := func(t *testing.T, tr transport, query, body string) *response {
		t.Helper()
		return s.post(t, tr, "/asset-exists"+query, "application/json", strings.NewReader(body), nil)
	}
	eachTransport(t, func(t *testing.T, tr transport) {
		gem := s.gem(tr)
		t.Run("some targets", func(t *testing.T) {
			r := must(t)(gem.AssetExists(ctx(t), "loadable-stats.json", []string{id, "other"}))
			r.want(t, tr, http.StatusOK, `{"exists":false,"results":[{"bundleHash":"`+id+`","exists":true},{"bundleHash":"other","exists":false}]}`)
			r.wantHeader(t, "Content-Type", "application/json; charset=utf-8")
			r.wantContentLength(t)
		})
		t.Run("every target", func(t *testing.T) {
			r := must(t)(gem.AssetExists(ctx(t), "loadable-stats.json", []string{id}))
			r.want(t, tr, http.StatusOK, `{"exists":true,"results":[{"bundleHash":"`+id+`","exists":true}]}`)
		})
		t.Run("absent file", func(t *testing.T) {
			r := must(t)(gem.AssetExists(ctx(t), "react-client-manifest.json", []string{id}))
			r.want(t, tr, http.StatusOK, `{"exists":false,"results":[{"bundleHash":"`+id+`","exists":false}]}`)
		})
		t.Run("no protocol check", func(t *testing.T) {
			for _, extra := range []string{``, `,"protocolVersion":"1.0.0"`} {
				r := post(t, tr, "?filename=loadable-stats.json", `{"password":"`+testPassword+`","targetBundles":["`+id+`"]`+extra+`}`)
				r.wantStatus(t, tr, http.StatusOK)
			}
		})
		t.Run("missing filename", func(t *testing.T) {
			for _, q := range []string{"", "?filename=", "?other=loadable-stats.json"} {
				r := post(t, tr, q, `{"password":"`+testPassword+`","targetBundles":["`+id+`"]}`)
				r.wantStatus(t, tr, http.StatusBadRequest)
			}
		})
		t.Run("bad filename", func(t *testing.T) {
			for _, name := range []string{"../x", "a/b", "..", `a\b`} {
				r := must(t)(gem.AssetExists(ctx(t), name, []string{id}))
				r.wantPrefix(t, tr, http.StatusBadRequest, "Invalid asset filename: ")
			}
			r := post(t, tr, "?filename="+url.QueryEscape("../"+id+"/"+id+".js"), `{"password":"`+testPassword+`","targetBundles":["`+id+`"]}`)
			r.wantStatus(t, tr, http.StatusBadRequest)
		})
		t.Run("missing targetBundles", func(t *testing.T) {
			for _, body := range []string{
				`{"password":"` + testPassword + `"}`,
				`{"password":"` + testPassword + `","targetBundles":[]}`,
				`{"password":"` + testPassword + `","targetBundles":null}`,
			} {
				r := post(t, tr, "?filename=loadable-stats.json", body)
				r.want(t, tr, http.StatusBadRequest, "No targetBundles provided. As of protocol version 2.0.0, targetBundles is required.")
			}
		})
		t.Run("targetBundles[]", func(t *testing.T) {
			r := post(t, tr, "?filename=loadable-stats.json", `{"password":"`+testPassword+`","targetBundles[]":["`+id+`"]}`)
			r.want(t, tr, http.StatusOK, `{"exists":true,"results":[{"bundleHash":"`+id+`","exists":true}]}`)
		})
		t.Run("wrong password", func(t *testing.T) {
			bad := s.gem(tr)
			bad.Password = "not-the-password"
			r := must(t)(bad.AssetExists(ctx(t), "loadable-stats.json", []string{id}))
			r.want(t, tr, http.StatusUnauthorized, "Wrong password")
			r.wantNoCacheText(t)
			bad.Password = ""
			must(t)(bad.AssetExists(ctx(t), "loadable-stats.json", []string{id})).want(t, tr, http.StatusUnauthorized, "Wrong password")
		})
	})
}

// TestFilePartBeforePassword: a file part that arrives before a password
// that passes is refused with 401 before any byte reaches the disk
// (PROTOCOL.md §6.1, gorender's rule).
func TestFilePartBeforePassword(t *testing.T) {
	t.Parallel()
	s := startServer(t, nil)
	eachTransportSerial(t, func(t *testing.T, tr transport) {
		cases := []struct {
			name     string
			password []part // after the file part
		}{
			{"wrong password after", []part{textPart("password", "not-the-password")}},
			{"no password", nil},
			{"right password after", []part{textPart("password", testPassword)}},
		}
		for _, c := range cases {
			for _, route := range []string{"/upload-assets", "render"} {
				t.Run(c.name+"/"+strings.Trim(route, "/"), func(t *testing.T) {
					id := newID("s")
					path := route
					parts := []part{textPart("protocolVersion", "2.0.0"), textPart("gemVersion", gemVersion)}
					if route == "render" {
						path = "/bundles/" + id + "/render/x"
						parts = append(parts, textPart("renderingRequest", "MARKER"))
					}
					parts = append(parts,
						filePart("bundle_"+id, id+".js", markerBundle("must not be stored")),
						filePart("assetsToCopy0", "loadable-stats.json", "{}"))
					ct, body := multipartBody(append(parts, c.password...)...)
					r := s.post(t, tr, path, ct, body, nil)
					r.want(t, tr, http.StatusUnauthorized, "Wrong password")
					r.wantNoCacheText(t)
					if got := s.cacheEntries(t, ""); !slices.Equal(got, []string{"uploads"}) {
						t.Errorf("cache holds %v, want only uploads/", got)
					}
					s.wantStagingEmpty(t)
				})
			}
		}
	})
}

// TestConcurrentUploadsOneID sends 50 concurrent uploads of one bundle id,
// each with different contents: all succeed, exactly one is stored whole,
// and it is the one renders run (PROTOCOL.md §6.3, first writer wins).
func TestConcurrentUploadsOneID(t *testing.T) {
	t.Parallel()
	s := startServer(t, nil)
	eachTransportSerial(t, func(t *testing.T, tr transport) {
		const n = 50
		id := newID("s")
		bundles := make([]string, n)
		for i := range bundles {
			// Different sizes too, so a torn write cannot pass for a whole one.
			bundles[i] = markerBundle(fmt.Sprintf("upload-%d", i)) + "// " + strings.Repeat("x", i*1000) + "\n"
		}
		gem := s.gem(tr)
		var wg sync.WaitGroup
		answers := make([]*gemclient.Response, n)
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() {
				answers[i], errs[i] = gem.UploadAssets(ctx(t), map[string][]byte{id: []byte(bundles[i])},
					map[string][]byte{"loadable-stats.json": []byte(fmt.Sprintf(`{"upload":%d}`, i))})
			})
		}
		wg.Wait()
		for i := range n {
			fromGem(t, answers[i], errs[i]).want(t, tr, http.StatusOK, "")
		}

		if got := s.cacheEntries(t, id); !slices.Equal(got, []string{"loadable-stats.json", id + ".js", id + ".js.sum"}) {
			t.Errorf("bundle directory holds %v, want exactly the bundle, its record and its companion (no lock or temp files)", got)
		}
		stored := s.readCacheFile(t, id+"/"+id+".js")
		winner := slices.Index(bundles, stored)
		if winner < 0 {
			t.Fatalf("stored bundle (%d bytes) is none of the uploads", len(stored))
		}
		if stats := s.readCacheFile(t, id+"/loadable-stats.json"); !strings.HasPrefix(stats, `{"upload":`) {
			t.Errorf("companion file torn: %q", stats)
		}
		s.wantStagingEmpty(t)
		for _, other := range transports {
			s.render(t, other, id, "MARKER").want(t, other, http.StatusOK, fmt.Sprintf("upload-%d", winner))
		}
	})
}
