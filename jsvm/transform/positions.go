package transform

import (
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/go-sourcemap/sourcemap"
)

// Positions takes a position in the output of one rewrite (line 1-based,
// column 0-based) back to the same place in its input; ok false when the
// output position has no counterpart there (code the rewrite added).
type Positions interface {
	Back(line, column int) (int, int, bool)
	// Cost is about how much memory the map holds, in bytes.
	Cost() int64
}

// Chain is the positions of rewrites applied one after the other, first
// rewrite first: Back goes through them last to first.
type Chain []Positions

// Back takes a position of the last rewrite's output to the first one's
// input.
func (c Chain) Back(line, column int) (int, int, bool) {
	for i := len(c) - 1; i >= 0; i-- {
		var ok bool
		if line, column, ok = c[i].Back(line, column); !ok {
			return 0, 0, false
		}
	}
	return line, column, true
}

// Cost is the memory of every map in the chain.
func (c Chain) Cost() int64 {
	var n int64
	for _, p := range c {
		n += p.Cost()
	}
	return n
}

// pos is a line (1-based) and column (0-based, in UTF-16 code units, as
// source maps and V8 count them) in a source.
type pos struct{ line, column int }

func (p pos) before(q pos) bool {
	return p.line < q.line || p.line == q.line && p.column < q.column
}

// advance is the position after text, read from p.
func (p pos) advance(text string) pos {
	if n := strings.Count(text, "\n"); n > 0 {
		return pos{p.line + n, utf16Len(text[strings.LastIndexByte(text, '\n')+1:])}
	}
	return pos{p.line, p.column + utf16Len(text)}
}

// utf16Len is the length of text in UTF-16 code units.
func utf16Len(text string) int {
	n := len(text)
	for i := 0; i < len(text); i++ {
		if text[i] >= utf8.RuneSelf {
			n = i
			for _, r := range text[i:] {
				n += utf16.RuneLen(r)
			}
			break
		}
	}
	return n
}

// span is one edit in both sources: [out0, out1) of the output replaced
// [in0, in1) of the input.
type span struct{ out0, out1, in0, in1 pos }

// Shifts is the positions of a rewrite made of edits at byte offsets
// (RewriteStringBuilds, WrapModule), in UTF-16 columns: between two edits
// the text is the input's, moved by the edits before it.
type Shifts []span

// shiftsOf returns the positions of src rewritten by edits (sorted, not
// overlapping).
func shiftsOf(src string, edits []edit) Shifts {
	out := make(Shifts, 0, len(edits))
	in, o := pos{line: 1}, pos{line: 1}
	last := 0
	for _, e := range edits {
		between := src[last:e.at]
		in, o = in.advance(between), o.advance(between)
		s := span{out0: o, in0: in}
		in, o = in.advance(src[e.at:e.end]), o.advance(e.text)
		s.out1, s.in1 = o, in
		out = append(out, s)
		last = e.end
	}
	return out
}

// Back takes a position of the rewritten source to the input: a position
// inside an edit's new text goes to where that edit starts in the input.
func (s Shifts) Back(line, column int) (int, int, bool) {
	p := pos{line, column}
	// The last edit that starts at or before p.
	i := len(s) - 1
	for i >= 0 && p.before(s[i].out0) {
		i--
	}
	if i < 0 {
		return line, column, true
	}
	e := s[i]
	switch {
	case p.before(e.out1):
		return e.in0.line, e.in0.column, true
	case p.line == e.out1.line:
		return e.in1.line, e.in1.column + p.column - e.out1.column, true
	default:
		return e.in1.line + p.line - e.out1.line, p.column, true
	}
}

// Cost is the memory of the edits.
func (s Shifts) Cost() int64 { return int64(len(s)) * 64 }

// ModulePositions is the positions of WrapModule: its header shifts line 1.
// A position inside the header has no counterpart.
type ModulePositions struct{}

// Back takes a position of the wrapped module to the module's source.
func (ModulePositions) Back(line, column int) (int, int, bool) {
	if line == 1 {
		column -= len(ModuleHeader)
		if column < 0 {
			return 0, 0, false
		}
	}
	return line, column, true
}

// Cost is nothing: the wrapper is the same for every module.
func (ModulePositions) Cost() int64 { return 0 }

// parsedMapCost is the memory of a parsed source map per byte of its JSON
// (without sourcesContent): the decoded mappings are 24-byte structs, one
// per 4-8 bytes of base64 VLQ (jsvm/sourcemap measured 5.4-6.0).
const parsedMapCost = 6

// esbuildPositions is the positions of an esbuild transform: its own
// source map, whose only source is the input.
type esbuildPositions struct {
	consumer *sourcemap.Consumer
	input    string // the input's name in the map (the transform's Sourcefile)
	cost     int64
}

func newEsbuildPositions(input string, sourceMap []byte) (*esbuildPositions, error) {
	c, err := sourcemap.Parse("", sourceMap)
	if err != nil {
		return nil, fmt.Errorf("esbuild's source map: %w", err)
	}
	return &esbuildPositions{consumer: c, input: input, cost: int64(len(sourceMap)) * parsedMapCost}, nil
}

// Back maps through esbuild's map. A position in code esbuild added before
// any mapped code (its helpers) has no counterpart; one esbuild took from a
// source map inline in the input (a data: URL, which esbuild applies) is
// not a position of the input, and is not answered either.
func (e *esbuildPositions) Back(line, column int) (int, int, bool) {
	source, _, line, column, ok := e.consumer.Source(line, column)
	if !ok || source != e.input {
		return 0, 0, false
	}
	return line, column, true
}

// Cost is the parsed map's memory.
func (e *esbuildPositions) Cost() int64 { return e.cost }
