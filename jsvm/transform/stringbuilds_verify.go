// Checking a rewrite: the rewritten functions parsed again and each edit
// found where it was made.
package transform

import (
	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/parser"
	"github.com/dop251/goja/token"
)

// verifyRewrite parses the rewritten functions again and checks that each
// append became `name.push(""+(rhs))` with the same rhs text and each read
// `name.join("")`, and that nothing is left to rewrite: a guard against
// positions goja's AST reports loosely. Each edited function is parsed on its
// own (the rest of the source is unchanged); one that does not parse alone
// (an async function, a class method using private names) is checked by
// parsing the whole output.
func verifyRewrite(src, out string, shift int, accs []*accumulator, edits []edit) bool {
	byFn := map[ast.Node][]*accumulator{}
	var order []ast.Node
	for _, a := range accs {
		if _, ok := byFn[a.fn]; !ok {
			order = append(order, a.fn)
		}
		byFn[a.fn] = append(byFn[a.fn], a)
	}
	var whole *ast.Program
	for _, fn := range order {
		start, end := int(fn.Idx0())-shift, int(fn.Idx1())-shift
		prg, outShift := parseFunctionText(out[mapOffset(edits, start):mapOffset(edits, end)])
		if prg != nil {
			outShift -= mapOffset(edits, start)
		} else {
			if whole == nil {
				var err error
				var shift2 int
				if whole, shift2, err = parseForRewrite(out); err != nil || shift2 != shift {
					return false
				}
			}
			prg, outShift = whole, shift
		}
		if !verifyAccumulators(src, out, shift, outShift, prg, byFn[fn], edits) {
			return false
		}
	}
	return true
}

// functionWrappers make a function's text parse alone: a declaration or an
// expression, an arrow function, an object method, a class method.
var functionWrappers = [][2]string{{"", ""}, {"(", ")"}, {"({", "})"}, {"(class{", "})"}}

// parseFunctionText parses one function's text; outShift maps the parsed
// positions to offsets in the text (offset = int(idx) - outShift).
func parseFunctionText(text string) (*ast.Program, int) {
	for _, w := range functionWrappers {
		if prg, err := parser.ParseFile(nil, "", w[0]+text+w[1], 0, parser.WithDisableSourceMaps); err == nil {
			return prg, 1 + len(w[0])
		}
	}
	return nil, 0
}

// verifyAccumulators checks the edits of accs in prg, a parse of out (or of
// a piece of it) whose positions map to out's offsets as int(idx)-outShift.
func verifyAccumulators(src, out string, shift, outShift int, prg *ast.Program, accs []*accumulator, edits []edit) bool {
	calls := map[int]*ast.CallExpression{} // by offset of the callee's object in out
	walkAll(prg, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpression); ok {
			if d, ok := c.Callee.(*ast.DotExpression); ok {
				if id, ok := d.Left.(*ast.Identifier); ok {
					calls[int(id.Idx)-outShift] = c
				}
			}
		}
		return true
	})
	for _, a := range accs {
		for _, as := range a.appends {
			id := as.Left.(*ast.Identifier)
			c := calls[mapOffset(edits, int(id.Idx)-shift)]
			if c == nil || !isMember(c.Callee, a.name, "push") || len(c.ArgumentList) != 1 {
				return false
			}
			bin, ok := c.ArgumentList[0].(*ast.BinaryExpression)
			if !ok || bin.Operator != token.PLUS || !isEmptyString(bin.Left) {
				return false
			}
			old := src[int(as.Right.Idx0())-shift : int(as.Right.Idx1())-shift]
			r0, r1 := int(bin.Right.Idx0())-outShift, int(bin.Right.Idx1())-outShift
			if r0 < 0 || r1 > len(out) || r0 > r1 || out[r0:r1] != old {
				return false
			}
		}
		for _, r := range a.reads {
			c := calls[mapOffset(edits, int(r.Idx)-shift)]
			if c == nil || !isMember(c.Callee, a.name, "join") || len(c.ArgumentList) != 1 || !isEmptyString(c.ArgumentList[0]) {
				return false
			}
		}
	}
	// Idempotence: nothing is left to rewrite.
	left := false
	forEachFunction(prg, func(f funcNode) {
		if len(findAccumulators(out, outShift, f)) > 0 {
			left = true
		}
	})
	return !left
}

func isMember(e ast.Expression, object, property string) bool {
	d, ok := e.(*ast.DotExpression)
	if !ok || d.Identifier.Name.String() != property {
		return false
	}
	id, ok := d.Left.(*ast.Identifier)
	return ok && id.Name.String() == object
}
