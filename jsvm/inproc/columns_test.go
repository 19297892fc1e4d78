package inproc

import (
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

// TestColumns: every column of a text with 2-, 3- and 4-byte characters on
// some lines where a token can start (not inside a run of non-ASCII
// characters) goes from the engine's unit (bytes, code points) to the
// UTF-16 column, counted here from the text itself; ASCII-only text, and
// text without characters outside the BMP for code points, need no index.
func TestColumns(t *testing.T) {
	text := "var a='ééé中';f()\nplain();\n'😀x😀é'+g()\né"
	for _, unit := range []Unit{UTF8Bytes, CodePoints} {
		c := NewColumns(text, unit)
		if c == nil {
			t.Fatalf("unit %d: no index", unit)
		}
		for i, line := range strings.Split(text, "\n") {
			engine, u16, prev := 0, 0, rune(0)
			for _, r := range line {
				if got := c.UTF16(i+1, engine); prev < utf8.RuneSelf && got != u16 {
					t.Errorf("unit %d, line %d, column %d before %q: UTF-16 %d, want %d", unit, i+1, engine, r, got, u16)
				}
				if unit == UTF8Bytes {
					engine += utf8.RuneLen(r)
				} else {
					engine++
				}
				u16 += utf16.RuneLen(r)
				prev = r
			}
		}
	}
	for _, tc := range []struct {
		text string
		unit Unit
	}{{"plain ascii\nfn()", UTF8Bytes}, {"plain ascii\nfn()", CodePoints}, {"'ééé中'+f()", CodePoints}} {
		if c := NewColumns(tc.text, tc.unit); c != nil || c.Cost() != 0 || c.UTF16(1, 7) != 7 {
			t.Errorf("%q in unit %d: an index %v, want none", tc.text, tc.unit, c)
		}
	}
}

// TestUTF16Frames: the frames of goja's form (with its program counter)
// and QuickJS's, in a file with an index, get UTF-16 columns, and so does
// any other position jsvm/sourcemap would map (after "@" here); a file
// with a directory (never an in-process engine's) and others stay.
func TestUTF16Frames(t *testing.T) {
	c := NewColumns("var s='éé';\nvar t='😀';f()", UTF8Bytes)
	stack := "Error: x@b.js:1:12\n\tat f (b.js:1:12(3))\n\tat b.js:2:14\n    at g (other.js:1:12)\n\tat renderingRequest:1:2(1)\n\tat h (lib/b.js:1:12)"
	want := "Error: x@b.js:1:10\n\tat f (b.js:1:10(3))\n\tat b.js:2:12\n    at g (other.js:1:12)\n\tat renderingRequest:1:2(1)\n\tat h (lib/b.js:1:12)"
	got := utf16Frames(stack, func(file string) *Columns {
		if file == "b.js" {
			return c
		}
		return nil
	})
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
