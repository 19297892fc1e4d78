package gojaengine

import (
	"reflect"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/file"
	"github.com/dop251/goja/token"
)

// powName is the global function the bundle's `**` operators call once
// rewritten (rewriteExponents), defined by jsvm/jsenv/builtins.js: goja's
// own operator computes Go's math.Pow, whose last bits differ from V8's
// for about a third of real exponents. goja's instructions cannot be
// replaced from outside the package, so the operator becomes a call of
// V8's pow at the AST, which keeps the operands' positions for stacks and
// source maps.
const powName = "__gorender_pow"

// rewriteExponents replaces, in place, every `x ** y` of the program by
// powName(x, y), and every `x **= y` whose target can be read twice
// without side effects (an identifier, or a property of an identifier or
// this by a name, an identifier or a literal) by x = powName(x, y). It
// reports how many it replaced. A `**=` on any other target (o.f().x **= 2)
// keeps goja's operator (docs/compatibility.md "Known engine gaps").
func rewriteExponents(prg *ast.Program) int {
	n := 0
	fileType := reflect.TypeFor[file.File]()
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer:
			if !v.IsNil() {
				walk(v.Elem())
			}
		case reflect.Interface:
			if v.IsNil() {
				return
			}
			walk(v.Elem())
			if e, ok := v.Interface().(ast.Expression); ok && v.CanSet() {
				if r, ok := powCall(e); ok && reflect.TypeOf(r).AssignableTo(v.Type()) {
					v.Set(reflect.ValueOf(r))
					n++
				}
			}
		case reflect.Struct:
			if v.Type() == fileType {
				return
			}
			for i := 0; i < v.NumField(); i++ {
				if f := v.Field(i); f.CanSet() {
					walk(f)
				}
			}
		case reflect.Slice:
			if k := v.Type().Elem().Kind(); k != reflect.Pointer && k != reflect.Interface && k != reflect.Struct {
				return
			}
			for i := 0; i < v.Len(); i++ {
				walk(v.Index(i))
			}
		}
	}
	walk(reflect.ValueOf(prg))
	return n
}

// powCall is e rewritten as a call of powName, if it is a `**` or a `**=`
// that rewriteExponents replaces.
func powCall(e ast.Expression) (ast.Expression, bool) {
	call := func(x, y ast.Expression) *ast.CallExpression {
		return &ast.CallExpression{
			Callee:           &ast.Identifier{Name: powName, Idx: x.Idx0()},
			LeftParenthesis:  x.Idx0(),
			ArgumentList:     []ast.Expression{x, y},
			RightParenthesis: y.Idx1() - 1,
		}
	}
	switch e := e.(type) {
	case *ast.BinaryExpression:
		if e.Operator == token.EXPONENT {
			return call(e.Left, e.Right), true
		}
	case *ast.AssignExpression:
		if e.Operator == token.EXPONENT && readTwice(e.Left) {
			return &ast.AssignExpression{Operator: token.ASSIGN, Left: e.Left, Right: call(cloneTarget(e.Left), e.Right)}, true
		}
	}
	return nil, false
}

// readTwice reports an assignment target whose reading twice has no
// effect the single reading of `**=` would not have.
func readTwice(e ast.Expression) bool {
	simple := func(e ast.Expression) bool {
		switch e.(type) {
		case *ast.Identifier, *ast.ThisExpression, *ast.StringLiteral, *ast.NumberLiteral:
			return true
		}
		return false
	}
	switch e := e.(type) {
	case *ast.Identifier:
		return true
	case *ast.DotExpression:
		return simple(e.Left)
	case *ast.BracketExpression:
		return simple(e.Left) && simple(e.Member)
	}
	return false
}

// cloneTarget copies a target readTwice accepted, so that no node appears
// twice in the tree.
func cloneTarget(e ast.Expression) ast.Expression {
	switch e := e.(type) {
	case *ast.Identifier:
		c := *e
		return &c
	case *ast.DotExpression:
		c := *e
		c.Left = cloneTarget(e.Left)
		return &c
	case *ast.BracketExpression:
		c := *e
		c.Left, c.Member = cloneTarget(e.Left), cloneTarget(e.Member)
		return &c
	case *ast.ThisExpression:
		c := *e
		return &c
	case *ast.StringLiteral:
		c := *e
		return &c
	case *ast.NumberLiteral:
		c := *e
		return &c
	}
	return e
}
