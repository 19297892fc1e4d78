// Finding the string builds: the accumulators a function declares, and the
// checks each must pass (see stringbuilds.go).
package transform

import (
	"strings"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/token"
)

// expression or method) or an arrow function with a block body.
type funcNode struct {
	node   ast.Node // *ast.FunctionLiteral or *ast.ArrowFunctionLiteral
	params *ast.ParameterList
	body   *ast.BlockStatement
}

// accumulator is one rewritable string accumulator.
type accumulator struct {
	fn      ast.Node // the declaring function
	name    string
	init    *ast.StringLiteral
	appends []*ast.AssignExpression
	reads   []*ast.Identifier
}

func isEmptyString(e ast.Expression) bool {
	s, ok := e.(*ast.StringLiteral)
	return ok && s.Value.String() == "" && (s.Literal == `""` || s.Literal == `''`)
}

// forEachFunction calls fn for every function with a block body in prg.
func forEachFunction(prg *ast.Program, fn func(funcNode)) {
	walkAll(prg, func(n ast.Node) bool {
		switch f := n.(type) {
		case *ast.FunctionLiteral:
			if f.Body != nil {
				fn(funcNode{node: f, params: f.ParameterList, body: f.Body})
			}
		case *ast.ArrowFunctionLiteral:
			if b, ok := f.Body.(*ast.BlockStatement); ok {
				fn(funcNode{node: f, params: f.ParameterList, body: b})
			}
		}
		return true
	})
}

// findAccumulators returns the accumulators declared directly in f's body.
func findAccumulators(src string, shift int, f funcNode) []*accumulator {
	var out []*accumulator
	for _, st := range f.body.List {
		var list []*ast.Binding
		switch d := st.(type) {
		case *ast.VariableStatement:
			list = d.List
		case *ast.LexicalDeclaration:
			if d.Token == token.LET {
				list = d.List
			}
		}
		for _, b := range list {
			id, ok := b.Target.(*ast.Identifier)
			if !ok || !isEmptyString(b.Initializer) {
				continue
			}
			name := id.Name.String()
			if !identAt(src, shift, id, name) {
				continue
			}
			if a := analyze(src, shift, f, b, name); a != nil {
				out = append(out, a)
			}
		}
	}
	return out
}

// identAt reports whether the source at id's position is exactly name (goja
// reports an escaped identifier's decoded name with the escape's position).
func identAt(src string, shift int, id *ast.Identifier, name string) bool {
	at := int(id.Idx) - shift
	return at >= 0 && at+len(name) <= len(src) && src[at:at+len(name)] == name &&
		int(id.Idx1())-shift == at+len(name)
}

// analyze checks every reference to the variable decl declares in f and
// returns the accumulator, or nil when the variable does not qualify.
func analyze(src string, shift int, f funcNode, decl *ast.Binding, name string) *accumulator {
	if name == "eval" || name == "arguments" {
		return nil
	}
	if f.params != nil && mentions(f.params, name) {
		return nil
	}
	w := &refWalker{name: name, decl: decl}
	w.stmts(f.body.List)
	if w.bad || len(w.appends) == 0 || len(w.reads) == 0 {
		return nil
	}
	declEnd := decl.Idx1()
	for _, as := range w.appends {
		id := as.Left.(*ast.Identifier)
		if id.Idx < declEnd || !identAt(src, shift, id, name) {
			return nil
		}
		gap := src[int(id.Idx1())-shift : int(as.Right.Idx0())-shift]
		if strings.TrimSpace(gap) != "+=" {
			return nil // a comment or a parenthesis between: not a shape we edit
		}
	}
	for _, r := range w.reads {
		if r.Idx < declEnd || !identAt(src, shift, r, name) {
			return nil
		}
	}
	return &accumulator{fn: f.node, name: name, init: decl.Initializer.(*ast.StringLiteral), appends: w.appends, reads: w.reads}
}
