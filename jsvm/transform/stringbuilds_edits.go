// The string-build rewrite's edits: what each accumulator's declaration,
// appends and reads become, applied by byte offset to the source.
package transform

import (
	"strings"

	"github.com/dop251/goja/ast"
)

// edit replaces src[at:end] with text.
type edit struct {
	at, end int
	text    string
}

func applyEdits(src string, edits []edit) string {
	var b strings.Builder
	n := len(src)
	for _, e := range edits {
		n += len(e.text) - (e.end - e.at)
	}
	b.Grow(n)
	last := 0
	for _, e := range edits {
		b.WriteString(src[last:e.at])
		b.WriteString(e.text)
		last = e.end
	}
	b.WriteString(src[last:])
	return b.String()
}

// mapOffset maps an offset of the original source to the rewritten one: it
// must not lie inside an edit.
func mapOffset(edits []edit, off int) int {
	d := 0
	for _, e := range edits {
		if e.end > off {
			break
		}
		d += len(e.text) - (e.end - e.at)
	}
	return off + d
}

// funcNode is a function with a body block: a function literal (declaration,

// The replacement text of each edit.
const (
	emptyArray = "[]"
	pushOpen   = `.push(""+(`
	pushClose  = "))"
	joinCall   = `.join("")`
)

func (a *accumulator) edits(src string, shift int) []edit {
	var out []edit
	at := int(a.init.Idx) - shift
	out = append(out, edit{at: at, end: at + len(a.init.Literal), text: emptyArray})
	for _, as := range a.appends {
		id := as.Left.(*ast.Identifier)
		idEnd := int(id.Idx1()) - shift
		rhs0 := int(as.Right.Idx0()) - shift
		rhs1 := int(as.Right.Idx1()) - shift
		out = append(out, edit{at: idEnd, end: rhs0, text: pushOpen}, edit{at: rhs1, end: rhs1, text: pushClose})
	}
	for _, r := range a.reads {
		end := int(r.Idx1()) - shift
		out = append(out, edit{at: end, end: end, text: joinCall})
	}
	return out
}
