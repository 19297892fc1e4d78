package handlers

import (
	"net/url"
	"reflect"
	"strings"
	"testing"
)

// Differential fuzz targets: the fast decoders of the gem's JSON and form
// bodies against the generic ones they replace, which must give identical
// Fields or an identical error. Seed corpora: testdata/fuzz/<FuzzName>/.

// sameDecoding fails unless two decodings are identical.
func sameDecoding(t *testing.T, body string, got *Fields, gotErr *HTTPError, want *Fields, wantErr *HTTPError) {
	t.Helper()
	if (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("%q: error %v, want %v", body, gotErr, wantErr)
	}
	if wantErr != nil {
		if gotErr.Status != wantErr.Status || gotErr.Body != wantErr.Body {
			t.Fatalf("%q: error %d %q, want %d %q", body, gotErr.Status, gotErr.Body, wantErr.Status, wantErr.Body)
		}
		return
	}
	if !reflect.DeepEqual(got.entries, want.entries) || got.metadataComplete != want.metadataComplete ||
		got.namesCut != want.namesCut || got.namesBytes != want.namesBytes {
		t.Fatalf("%q: fields %+v, want %+v", body, *got, *want)
	}
}

func FuzzDecodeJSONFlat(f *testing.F) {
	f.Fuzz(func(t *testing.T, body string) {
		got, gotErr := DecodeJSONObject([]byte(body))
		want, wantErr := decodeJSONGeneric([]byte(body))
		sameDecoding(t, body, got, gotErr, want, wantErr)
		if members, ok := scanFlatJSON([]byte(body)); ok {
			head, headErr := jsonHead([]byte(body))
			if headErr != nil {
				t.Fatalf("%q: flat, but jsonHead refuses it: %v", body, headErr)
			}
			sameDecoding(t, body, flatHead(members), nil, head, nil)
		}
	})
}

// decodeFormGeneric is the form decoder the in-place one replaced: the
// reference of FuzzDecodeFormInPlace.
func decodeFormGeneric(data []byte) (*Fields, *HTTPError) {
	f := &Fields{}
	rest := string(data)
	for rest != "" {
		var pair string
		pair, rest, _ = strings.Cut(rest, "&")
		if pair == "" {
			continue
		}
		rawName, rawValue, _ := strings.Cut(pair, "=")
		name, err := url.QueryUnescape(rawName)
		if err != nil {
			return nil, badRequest("Invalid form body: %s.", echo(err.Error()))
		}
		value, err := url.QueryUnescape(rawValue)
		if err != nil {
			return nil, badRequest("Invalid form body: %s.", echo(err.Error()))
		}
		if name != "" {
			f.addString(name, value)
		}
	}
	return f, nil
}

func FuzzDecodeFormInPlace(f *testing.F) {
	f.Fuzz(func(t *testing.T, body string) {
		want, wantErr := decodeFormGeneric([]byte(body))
		got, gotErr := decodeForm([]byte(body))
		sameDecoding(t, body, got, gotErr, want, wantErr)
		for _, s := range []string{"a", "a+b%41", strings.Repeat("x%2B+", 5)} {
			if v, err := queryUnescapeInPlace([]byte(body + s)); err == nil {
				if want, _ := url.QueryUnescape(body + s); string(v) != want {
					t.Fatalf("%q: %q, want %q", body+s, v, want)
				}
			}
		}
	})
}

// TestFlatJSONTakesTheGemsBodies checks that the gem's bodies take the flat
// path (else the differential target compares the generic decoder with
// itself), including escapes and runs of backslashes at every offset of a
// word, and decode as the generic decoder decodes them.
func TestFlatJSONTakesTheGemsBodies(t *testing.T) {
	for offset := range 17 {
		for run := range 12 {
			text := strings.Repeat("x", offset) + strings.Repeat(`\\`, run) + `\"é\u2028\ud83d\ude00` + strings.Repeat(`\\`, run) + "y"
			body := `{"protocolVersion":"2.0.0","password":"pw","renderingRequest":"` + text + `","dependencyBundleTimestamps":["a\"b",""],"railsEnv":"production"}`
			if _, ok := scanFlatJSON([]byte(body)); !ok {
				t.Fatalf("%q does not take the flat path", body)
			}
			got, gotErr := DecodeJSONObject([]byte(body))
			want, wantErr := decodeJSONGeneric([]byte(body))
			sameDecoding(t, body, got, gotErr, want, wantErr)
		}
	}
}
