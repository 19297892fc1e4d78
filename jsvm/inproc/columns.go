package inproc

import (
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gorender/gorender/jsvm/sourcemap"
)

// Unit is what an engine counts a stack frame's column in.
type Unit int

const (
	// UTF8Bytes: goja counts the bytes of the compiled line.
	UTF8Bytes Unit = iota
	// CodePoints: QuickJS counts characters (a character outside the
	// Basic Multilingual Plane is one, where UTF-16 has two units).
	CodePoints
)

// Columns takes the columns an engine reports in one compiled text to
// UTF-16 code units, which V8 (the node engine, Node.js) and source maps
// count in. It holds, for the lines where the two differ, one shift at the
// end of every run of non-ASCII characters: nothing (nil) for a text where
// they never differ, such as an ASCII-only bundle.
type Columns struct {
	lines []lineShifts // by line
	n     int          // shifts, for Cost
}

// lineShifts is a line's shifts, by column.
type lineShifts struct {
	line   int
	shifts []shift
}

// shift: from the engine's column at on (0-based), the UTF-16 column is the
// engine's minus delta.
type shift struct{ at, delta int32 }

// NewColumns indexes text, compiled by an engine that counts columns in
// unit; nil when its columns are UTF-16's already.
func NewColumns(text string, unit Unit) *Columns {
	first := firstNonASCII(text)
	if first < 0 {
		return nil
	}
	c := &Columns{}
	line := 1 + strings.Count(text[:first], "\n")
	lineStart := strings.LastIndexByte(text[:first], '\n') + 1
	var cur []shift
	engine, delta := 0, 0 // the engine's column at i, and its excess over UTF-16's
	pos := lineStart
	flush := func() {
		if len(cur) > 0 {
			c.lines = append(c.lines, lineShifts{line: line, shifts: cur})
			c.n += len(cur)
			cur = nil
		}
	}
	inRun := false
	for pos < len(text) {
		b := text[pos]
		if b < utf8.RuneSelf {
			if inRun {
				cur = appendShift(cur, engine, delta)
			}
			inRun = false
			if b == '\n' {
				flush()
				line++
				engine, delta = 0, 0
			} else {
				engine++
			}
			pos++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[pos:])
		units := 1
		if r >= 0x10000 {
			units = 2
		}
		n := size
		if unit == CodePoints {
			n = 1
		}
		engine += n
		delta += n - units
		inRun = true
		pos += size
	}
	if inRun {
		cur = appendShift(cur, engine, delta)
	}
	flush()
	if c.n == 0 {
		return nil
	}
	return c
}

// appendShift adds a shift at the end of a run unless the delta did not
// change.
func appendShift(s []shift, at, delta int) []shift {
	last := 0
	if len(s) > 0 {
		last = int(s[len(s)-1].delta)
	}
	if delta == last {
		return s
	}
	return append(s, shift{at: int32(at), delta: int32(delta)})
}

// firstNonASCII is the offset of text's first byte above ASCII, -1 when
// there is none.
func firstNonASCII(text string) int {
	for i := 0; i < len(text); i++ {
		if text[i] >= utf8.RuneSelf {
			return i
		}
	}
	return -1
}

// UTF16 is the UTF-16 column (0-based) of the engine's column (0-based) on
// a line (1-based). A column inside a run of non-ASCII characters (where no
// token starts, but after a Unicode space) moves by the runs before it only.
func (c *Columns) UTF16(line, column int) int {
	if c == nil {
		return column
	}
	i := sort.Search(len(c.lines), func(i int) bool { return c.lines[i].line >= line })
	if i == len(c.lines) || c.lines[i].line != line {
		return column
	}
	s := c.lines[i].shifts
	j := sort.Search(len(s), func(j int) bool { return int(s[j].at) > column })
	if j == 0 {
		return column
	}
	return column - int(s[j-1].delta)
}

// Cost is about how much memory the index holds, in bytes.
func (c *Columns) Cost() int64 {
	if c == nil {
		return 0
	}
	return int64(c.n)*8 + int64(len(c.lines))*32
}

// utf16Frames rewrites the columns of stack's frames in the files columns
// knows (nil for files whose columns are UTF-16's) to UTF-16 code units.
func utf16Frames(stack string, columns func(file string) *Columns) string {
	if !strings.Contains(stack, ":") {
		return stack
	}
	return sourcemap.ReplaceFrames(stack, func(f sourcemap.Frame) (string, bool) {
		c := columns(f.File)
		if c == nil || f.Dir != "" || f.Column < 1 {
			return "", false
		}
		return f.File + ":" + strconv.Itoa(f.Line) + ":" + strconv.Itoa(c.UTF16(f.Line, f.Column-1)+1) + f.PC, true
	})
}
