package intl

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
)

// Expected values in this file were recorded from Node 20.20.2 (ICU 78.2,
// CLDR 48): node -e 'words.sort(new Intl.Collator(locale).compare)' and
// the like. Where golang.org/x/text answers otherwise the case is listed
// in docs/intl.md instead.

var collationWords = []string{"zebra", "Zoë", "äpple", "Apple", "banana", "cherry", "apple", "Äpfel", "résumé", "resume",
	"item10", "item9", "ch", "cz", "h", "ı", "i", "İ", "ö", "z", "côte", "coté", "ñ", "n", "o", "ß", "ss", "x-ray", "xray"}

func TestCollationOrderAsNode(t *testing.T) {
	latin := []string{"Äpfel", "apple", "Apple", "äpple", "banana", "ch", "cherry", "coté", "côte", "cz", "h", "i", "İ", "item10", "item9", "ı",
		"n", "ñ", "o", "ö", "resume", "résumé", "ss", "ß", "x-ray", "xray", "z", "zebra", "Zoë"}
	for _, tc := range []struct {
		locale string
		want   []string
	}{
		{"en", latin},
		{"de", latin},
		{"es", latin},
		{"fr", latin},
		{"pl", latin},
		{"ru", latin},
		{"ar", latin},
		{"he", latin},
		{"tr", []string{"Äpfel", "apple", "Apple", "äpple", "banana", "ch", "cherry", "coté", "côte", "cz", "h", "ı", "i", "İ", "item10", "item9",
			"n", "ñ", "o", "ö", "resume", "résumé", "ss", "ß", "x-ray", "xray", "z", "zebra", "Zoë"}},
		{"cs", []string{"Äpfel", "apple", "Apple", "äpple", "banana", "coté", "côte", "cz", "h", "ch", "cherry", "i", "İ", "item10", "item9", "ı",
			"n", "ñ", "o", "ö", "resume", "résumé", "ss", "ß", "x-ray", "xray", "z", "zebra", "Zoë"}},
		{"de-u-co-phonebk", []string{"Äpfel", "äpple", "apple", "Apple", "banana", "ch", "cherry", "coté", "côte", "cz", "h", "i", "İ", "item10", "item9", "ı",
			"n", "ñ", "o", "ö", "resume", "résumé", "ss", "ß", "x-ray", "xray", "z", "zebra", "Zoë"}},
	} {
		var cs Collators
		got := slices.Clone(collationWords)
		slices.SortStableFunc(got, func(a, b string) int {
			return cs.Compare(tc.locale, CollatorOptions{Sensitivity: "variant", CaseFirst: "false"}, a, b)
		})
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s:\n got  %q\n want %q", tc.locale, got, tc.want)
		}
	}
}

func TestCollationOptionsAsNode(t *testing.T) {
	var cs Collators
	// [sensitivity base, accent, case, variant] for each pair, in en.
	pairs := [][2]string{{"a", "á"}, {"a", "A"}, {"a", "b"}, {"ä", "a"}}
	want := [][4]int{{0, -1, 0, -1}, {0, 0, -1, -1}, {-1, -1, -1, -1}, {0, 1, 0, 1}}
	for i, p := range pairs {
		for j, s := range []string{"base", "accent", "case", "variant"} {
			if got := cs.Compare("en", CollatorOptions{Sensitivity: s, CaseFirst: "false"}, p[0], p[1]); got != want[i][j] {
				t.Errorf("compare(%q, %q) with sensitivity %s = %d, want %d", p[0], p[1], s, got, want[i][j])
			}
		}
	}
	sorted := func(locale string, o CollatorOptions, words ...string) []string {
		w := slices.Clone(words)
		slices.SortStableFunc(w, func(a, b string) int { return cs.Compare(locale, o, a, b) })
		return w
	}
	variant := CollatorOptions{Sensitivity: "variant", CaseFirst: "false"}
	if got, want := sorted("en", CollatorOptions{Sensitivity: "variant", CaseFirst: "upper"}, "a", "A", "b", "B", "aa", "Aa"), []string{"A", "a", "Aa", "aa", "B", "b"}; !slices.Equal(got, want) {
		t.Errorf("caseFirst upper: %q, want %q", got, want)
	}
	if got, want := sorted("en", CollatorOptions{Sensitivity: "variant", CaseFirst: "false", Numeric: true}, "x10", "x9", "x1", "x100"), []string{"x1", "x9", "x10", "x100"}; !slices.Equal(got, want) {
		t.Errorf("numeric: %q, want %q", got, want)
	}
	if got := cs.Compare("en", CollatorOptions{Sensitivity: "variant", CaseFirst: "false", IgnorePunctuation: true}, "a-b", "ab"); got != 0 {
		t.Errorf("ignorePunctuation: compare(a-b, ab) = %d, want 0", got)
	}
	if got := cs.Compare("en", variant, "a-b", "ab"); got == 0 {
		t.Errorf("without ignorePunctuation a-b and ab are equal")
	}
}

func TestCollatorsAreBounded(t *testing.T) {
	var cs Collators
	for i := 0; i < 3*maxCollators; i++ {
		cs.Compare("en", CollatorOptions{Sensitivity: strings.Repeat("x", i)}, "a", "b")
		if len(cs.byKey) > maxCollators {
			t.Fatalf("%d collators kept, at most %d", len(cs.byKey), maxCollators)
		}
	}
}

func TestCaseMapAsNode(t *testing.T) {
	for _, tc := range []struct {
		lang, in string
		upper    bool
		want     string
	}{
		{"tr", "istanbul ıi", true, "İSTANBUL Iİ"},
		{"az", "i", true, "İ"},
		{"el", "άλφα", true, "ΑΛΦΑ"},
		{"de", "straße", true, "STRASSE"},
		{"en", "ŉ ǰ", true, "ʼN J̌"},
		{"tr", "İSTANBUL I", false, "istanbul ı"},
		{"az", "I", false, "ı"},
		{"lt", "ÌÍĨ", false, "i̇̀i̇́i̇̃"},
		{"el", "ΣΊΣΥΦΟΣ", false, "σίσυφος"},
		{"en", "ΣΊΣΥΦΟΣ İ", false, "σίσυφος i̇"},
	} {
		if got := CaseMap(tc.lang, tc.in, tc.upper); got != tc.want {
			t.Errorf("CaseMap(%q, %q, upper=%v) = %q, want %q", tc.lang, tc.in, tc.upper, got, tc.want)
		}
	}
}

func TestZoneOffset(t *testing.T) {
	for _, tc := range []struct {
		zone   string
		ms     float64
		offset float64
		dst    bool
	}{
		{"America/New_York", 1709647629000, -5 * 3600e3, false}, // 2024-03-05
		{"America/New_York", 1720188429000, -4 * 3600e3, true},  // 2024-07-05
		{"Asia/Calcutta", 1709647629000, 5.5 * 3600e3, false},   // ICU's name of Asia/Kolkata
		{"Asia/Kathmandu", 1709647629000, 5.75 * 3600e3, false},
		{"Europe/Moscow", 1338508800000, 4 * 3600e3, false}, // 2012: MSK was UTC+4
		{"UTC", 0, 0, false},
		{"Etc/GMT+5", 0, -5 * 3600e3, false},
	} {
		off, dst, ok := ZoneOffset(tc.zone, tc.ms)
		if !ok || off != tc.offset || dst != tc.dst {
			t.Errorf("ZoneOffset(%s, %v) = %v, %v, %v; want %v, %v", tc.zone, tc.ms, off, dst, ok, tc.offset, tc.dst)
		}
	}
	for _, bad := range []string{"Mars/Olympus", "", "Local", "../../etc/passwd"} {
		if _, _, ok := ZoneOffset(bad, 0); ok {
			t.Errorf("ZoneOffset(%q) is ok", bad)
		}
	}
	if _, _, ok := ZoneOffset("UTC", math.NaN()); ok {
		t.Error("ZoneOffset at NaN is ok")
	}
}

// Node's defaults from the same variables (TZ=... LANG=... node -p
// 'Intl.DateTimeFormat().resolvedOptions()'): see also env-tokyo-de in
// tests/testdata/intl.
func TestDefaults(t *testing.T) {
	env := func(kv ...string) func(string) (string, bool) {
		return func(k string) (string, bool) {
			for i := 0; i < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1], true
				}
			}
			return "", false
		}
	}
	for _, tc := range []struct {
		env  func(string) (string, bool)
		want string
	}{
		{env("LANG", "de_DE.UTF-8"), "de-DE"},
		{env("LANG", "C.UTF-8"), "en-US"},
		{env("LANG", "POSIX"), "en-US"},
		{env(), "en-US"},
		{env("LANG", "de_DE.UTF-8", "LC_MESSAGES", "fr_FR.UTF-8"), "fr-FR"},
		{env("LANG", "de_DE.UTF-8", "LC_MESSAGES", "fr_FR.UTF-8", "LC_ALL", "pt_BR.UTF-8"), "pt-BR"},
		{env("LANG", "de_DE.UTF-8", "LC_NUMERIC", "fr_FR.UTF-8"), "de-DE"},
	} {
		if got := DefaultLocale(tc.env); got != tc.want {
			t.Errorf("DefaultLocale = %q, want %q", got, tc.want)
		}
	}
	for _, tc := range []struct {
		env  func(string) (string, bool)
		want string
	}{
		{env("TZ", "Europe/Berlin"), "Europe/Berlin"},
		{env("TZ", ":Asia/Tokyo"), "Asia/Tokyo"},
		{env("TZ", ""), "Etc/Unknown"},
	} {
		if got := DefaultTimeZone(tc.env); got != tc.want {
			t.Errorf("DefaultTimeZone = %q, want %q", got, tc.want)
		}
	}
}

// Every locale's data in the archive is the JSON the polyfill's own
// locale-data file adds (checked at build time against the npm files); here:
// entries assemble into JSON, and the kinds hold hundreds of locales.
func TestLocaleDataArchive(t *testing.T) {
	a, err := loadArchive()
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for kind, files := range a.index.Entries {
		names := make([]string, 0, len(files))
		for file := range files {
			names = append(names, file)
		}
		slices.Sort(names)
		counts[kind] = len(names)
		// A tenth of them (assembling each one decompresses its blocks):
		// every block is used by some locale, and the stride meets most.
		for i, file := range names {
			if i%10 != 0 {
				continue
			}
			s, err := LocaleData(kind, file)
			if err != nil {
				t.Fatal(err)
			}
			if !json.Valid([]byte(s)) {
				t.Fatalf("%s %s: not JSON", kind, file)
			}
		}
	}
	for _, kind := range []string{"numberformat", "datetimeformat", "displaynames", "listformat", "relativetimeformat"} {
		if counts[kind] < 500 {
			t.Errorf("%s: %d locales", kind, counts[kind])
		}
	}
	if counts["pluralrules"] < 200 {
		t.Errorf("pluralrules: %d locales", counts["pluralrules"])
	}
	if _, err := LocaleData("numberformat", "xx-nope"); err == nil {
		t.Error("data for an unknown locale")
	}
	var de struct {
		Numbers struct {
			Symbols map[string]struct {
				Group string `json:"group"`
			} `json:"symbols"`
		} `json:"numbers"`
	}
	s, _ := LocaleData("numberformat", "de")
	if err := json.Unmarshal([]byte(s), &de); err != nil || de.Numbers.Symbols["latn"].Group != "." {
		t.Errorf("de's grouping separator: %+v %v", de.Numbers.Symbols["latn"], err)
	}
}
