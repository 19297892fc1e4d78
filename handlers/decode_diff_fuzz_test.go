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

// TestQueryUnescapeDense checks the in-place decoder against
// url.QueryUnescape where its dense loop runs (after four escapes, 72 bytes
// or more before the end): a '+' (and a '*' after it, which a borrow from
// it could flag), a '%' with good or bad hex digits, and a '%' one or two
// bytes before the end, at every offset of a word and of a 64-byte block,
// after a long run or many escapes, and at every distance from the end.
func TestQueryUnescapeDense(t *testing.T) {
	const prefix = "%28%29%7B%7D" // four escapes: the output lags eight bytes
	for _, middle := range []string{"", strings.Repeat("%2B+x%22", 9)} {
		for _, tail := range []string{"+", "%41", "%C3%A9", "%4G", "%G1", "%", "%4", "++%2B%25", "%41%4", "+*", "%25*+*%2A"} {
			for before := range 140 {
				for after := range 90 {
					s := prefix + strings.Repeat("a", before) + middle + tail + strings.Repeat("b", after)
					got, gotErr := queryUnescapeInPlace([]byte(s))
					want, wantErr := url.QueryUnescape(s)
					if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
						t.Fatalf("%q: error %v, want %v", s, gotErr, wantErr)
					}
					if gotErr == nil && string(got) != want {
						t.Fatalf("%q: %q, want %q", s, got, want)
					}
				}
			}
		}
	}
}

// TestFlatJSONControlBytes checks the flat path's check of control bytes
// in strings, which sonic's validator lets through: a string with one, raw
// or escaped, at every offset of a word, its quote in the same word or the
// next, goes to the generic decoder (an error); whitespace after a string,
// in the same word, stays flat.
func TestFlatJSONControlBytes(t *testing.T) {
	for offset := range 17 {
		pad := strings.Repeat("x", offset)
		for _, c := range []string{"\x00", "\n", "\t", "\x1f", "\\\n"} {
			for _, in := range []string{`"renderingRequest":"` + pad + c + `y"`, `"renderingRequest":"` + pad + c + `yyyyyyyyy"`, `"a":["` + pad + c + `"]`, `"` + pad + c + `":"v"`} {
				body := `{"password":"pw",` + in + `}`
				if _, ok := scanFlatJSON([]byte(body)); ok {
					t.Fatalf("%q: flat, with a control byte in a string", body)
				}
				got, gotErr := DecodeJSONObject([]byte(body))
				want, wantErr := decodeJSONGeneric([]byte(body))
				if wantErr == nil {
					t.Fatalf("%q: the generic decoder accepts it", body)
				}
				sameDecoding(t, body, got, gotErr, want, wantErr)
			}
		}
		for _, ws := range []string{"\n", "\t", "\r\n "} {
			body := `{"renderingRequest":"` + pad + `"` + ws + `,` + ws + `"list":["` + pad + `"` + ws + `]` + ws + `}`
			if _, ok := scanFlatJSON([]byte(body)); !ok {
				t.Fatalf("%q: not flat", body)
			}
			got, gotErr := DecodeJSONObject([]byte(body))
			want, wantErr := decodeJSONGeneric([]byte(body))
			sameDecoding(t, body, got, gotErr, want, wantErr)
		}
	}
}
