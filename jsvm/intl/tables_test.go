package intl

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// canonical is JSON text re-encoded with its objects' keys in the order
// JavaScript lists them, with each table marker of f replaced by the table's
// object.
func canonical(t *testing.T, text []byte, f *localeFile) string {
	t.Helper()
	var b strings.Builder
	var walk func(text []byte)
	walk = func(text []byte) {
		text = bytes.TrimSpace(text)
		switch text[0] {
		case '{':
			keys, values, err := objectMembers(text)
			if err != nil {
				t.Fatal(err)
			}
			byKey := map[string]json.RawMessage{}
			for i, k := range keys {
				byKey[k] = values[i]
			}
			b.WriteByte('{')
			for _, k := range jsKeyOrder(keys) {
				kk, _ := json.Marshal(k)
				b.Write(kk)
				b.WriteByte(':')
				walk(byKey[k])
				b.WriteByte(',')
			}
			b.WriteByte('}')
		case '[':
			var items []json.RawMessage
			if err := json.Unmarshal(text, &items); err != nil {
				t.Fatal(err)
			}
			b.WriteByte('[')
			for _, it := range items {
				walk(it)
				b.WriteByte(',')
			}
			b.WriteByte(']')
		default:
			var v any
			if err := json.Unmarshal(text, &v); err != nil {
				t.Fatal(err)
			}
			if s, ok := v.(string); ok && f != nil && strings.HasPrefix(s, tableMarker) {
				tb := f.tables[strings.TrimPrefix(s, tableMarker)]
				if tb == nil {
					t.Fatalf("marker %q names no table", s)
				}
				b.WriteByte('{')
				for _, k := range strings.Split(tb.keys, "\n") {
					kk, _ := json.Marshal(k)
					b.Write(kk)
					b.WriteByte(':')
					walk([]byte(tb.entries[k]))
					b.WriteByte(',')
				}
				b.WriteByte('}')
				return
			}
			out, _ := json.Marshal(v)
			b.Write(out)
		}
	}
	walk(text)
	return b.String()
}

// Every locale file of the kinds with tables splits into the data a runtime
// parses and the tables Go keeps, which together are the file's data, keys
// in the order JavaScript lists them; and the interval formats hold what findIntervalFormat's
// patch (build.mjs) relies on: every key but intervalFormatFallback (a
// string) holds an object.
func TestLocaleTables(t *testing.T) {
	a, err := loadArchive()
	if err != nil {
		t.Fatal(err)
	}
	for kind := range tablePaths {
		files := make([]string, 0, len(a.index.Entries[kind]))
		for file := range a.index.Entries[kind] {
			files = append(files, file)
		}
		slices.Sort(files)
		if len(files) < 500 {
			t.Fatalf("%s: %d locales", kind, len(files))
		}
		for i, file := range files {
			f, err := readLocale(kind, file)
			if err != nil {
				t.Fatal(err)
			}
			if kind == "datetimeformat" {
				iv := f.tables["intervalFormats"]
				if iv == nil {
					t.Fatalf("%s: no intervalFormats table", file)
				}
				for k, v := range iv.entries {
					if (k == "intervalFormatFallback") != (v[0] == '"') || (k != "intervalFormatFallback" && v[0] != '{') {
						t.Fatalf("%s: intervalFormats[%q] = %.40s", file, k, v)
					}
				}
			}
			if i%15 != 0 { // reassembling is slow: a fifteenth of them
				continue
			}
			whole, err := a.entry(kind, file)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(f.top, `"timeZoneName":{`) || strings.Contains(f.top, `"currencies":{`) {
				t.Fatalf("%s %s: a table left in the data a runtime parses", kind, file)
			}
			if got, want := canonical(t, []byte(f.top), f), canonical(t, []byte(whole), nil); got != want {
				t.Fatalf("%s %s: split data reassembles differently", kind, file)
			}
		}
	}
	// LocaleKeys and LocaleEntry answer what the table holds.
	keys, err := LocaleKeys("numberformat", "de", "currencies")
	if err != nil || !strings.Contains("\n"+keys+"\n", "\nEUR\n") {
		t.Fatalf("de's currencies: %v", err)
	}
	eur, ok, err := LocaleEntry("numberformat", "de", "currencies", "EUR")
	if err != nil || !ok || !strings.Contains(eur, `"symbol":"€"`) {
		t.Fatalf("de's EUR: %q %v %v", eur, ok, err)
	}
	if _, ok, err := LocaleEntry("numberformat", "de", "currencies", "XXQ"); ok || err != nil {
		t.Fatalf("an absent key: %v %v", ok, err)
	}
	if _, err := LocaleKeys("numberformat", "de", "nope"); err == nil {
		t.Fatal("keys of a table that does not exist")
	}
	if got := jsKeyOrder([]string{"b", "10", "a", "2", "02", "4294967295", "0"}); !slices.Equal(got, []string{"0", "2", "10", "b", "a", "02", "4294967295"}) {
		t.Errorf("JavaScript's key order: %q", got)
	}
}
