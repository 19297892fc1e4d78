package nodeengine

import (
	"context"
	"fmt"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/gorender/gorender/bench"
	"github.com/gorender/gorender/jsvm"
)

// FuzzAppendLatin1: a text goes as Latin-1 exactly when it is valid UTF-8
// with no character past U+00FF, and its Latin-1 bytes are its characters.
func FuzzAppendLatin1(f *testing.F) {
	for _, s := range []string{"", "abc", "café", "ÿ", "Ā", "✓", "😀", "a\xc3", "\xc3\x28", "\xc0\x80", "12345678é12345678", "x\u0080y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, ok, converted := appendLatin1([]byte("kept"), s)
		want := utf8.ValidString(s)
		ascii := true
		for _, r := range s {
			want = want && r <= 0xFF
			ascii = ascii && r < utf8.RuneSelf
		}
		if ok != want || converted != (ok && !ascii) {
			t.Fatalf("%q: ok %v converted %v, want ok %v", s, ok, converted, want)
		}
		if !converted {
			if string(out) != "kept" {
				t.Fatalf("%q: appended %q", s, out[4:])
			}
			return
		}
		var runes []rune
		for _, c := range out[4:] {
			runes = append(runes, rune(c))
		}
		if string(runes) != s {
			t.Fatalf("%q: Latin-1 %q", s, out[4:])
		}
	})
}

// TestLatin1Request: requests sent in Latin-1 and in UTF-8 render what
// their text says, renderingRequest included.
func TestLatin1Request(t *testing.T) {
	e, _ := newEngine(t, config{StubTimers: true})
	rt := load(t, e, "b", "", `var x;`)
	req := jsvm.NewRequest(map[string]jsvm.Runtime{"b": rt})
	for _, tc := range []struct {
		text   string
		latin1 bool
	}{{"ascii", true}, {"café ÿ \u0080 naïve", true}, {"café ✓", false}, {"😀 é", false}} {
		code := "'" + tc.text + "|' + [].map.call('" + tc.text + "', (c) => c.charCodeAt(0)).join(',') + '|' + renderingRequest.length"
		if _, _, latin1, done := compiledCode(code); latin1 != tc.latin1 {
			t.Fatalf("%q: latin1 %v, want %v", tc.text, latin1, tc.latin1)
		} else {
			done()
		}
		res, err := rt.Eval(context.Background(), code, req)
		if err != nil {
			t.Fatal(err)
		}
		units := utf16.Encode([]rune(tc.text))
		want := fmt.Sprintf("%s|%s|%d", tc.text, codesJoined(units), len(utf16.Encode([]rune(code))))
		if res.Body != want {
			t.Fatalf("%q: got %q, want %q", tc.text, res.Body, want)
		}
	}
}

func codesJoined(units []uint16) string {
	s := ""
	for i, u := range units {
		if i > 0 {
			s += ","
		}
		s += fmt.Sprint(u)
	}
	return s
}

// BenchmarkAppendLatin1: the check and conversion of the bench's pages.
func BenchmarkAppendLatin1(b *testing.B) {
	ws, err := bench.Workloads()
	if err != nil {
		b.Fatal(err)
	}
	for _, w := range ws[2:] {
		b.Run(w.Name, func(b *testing.B) {
			b.SetBytes(int64(len(w.Code)))
			var buf []byte
			for range b.N {
				buf, _, _ = appendLatin1(buf[:0], w.Code)
			}
		})
	}
}
