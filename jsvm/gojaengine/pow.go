package gojaengine

import (
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/file"
	"github.com/dop251/goja/token"

	"github.com/gorender/gorender/jsvm/transform"
)

// powName is the global function the bundle's `**` operators call once
// rewritten (rewriteExponents), defined by jsvm/jsenv/builtins.js: goja's
// own operator computes Go's math.Pow, whose last bits differ from V8's
// for about a third of real exponents. goja's instructions cannot be
// replaced from outside the package, so the operator becomes a call of
// V8's pow at the AST, which keeps the operands' positions for stacks and
// source maps.
const powName = "__gorender_pow"

// rewriteExponents replaces, in place, every `x ** y` of the program
// parsed from source by powName(x, y), and every `x **= y` whose target
// can be read twice without side effects (an identifier, or a property of
// an identifier or this by a name, an identifier or a literal) by
// x = powName(x, y). It reports how many it replaced. A `**=` on any other
// target (o.f().x **= 2) keeps goja's operator
// (docs/compatibility.md "Built-ins against Node 20"). Only the nodes whose source holds a `**` that
// transform.MayUseExponent would see are walked: the rest of the tree is
// skipped by its positions.
func rewriteExponents(prg *ast.Program, source string) int {
	var ops []int // the offsets of the candidate `**`
	for i := 0; ; {
		j := strings.Index(source[i:], "**")
		if j < 0 {
			break
		}
		if j += i; transform.MayUseExponent(source[max(j-1, 0):min(j+3, len(source))]) {
			ops = append(ops, j)
		}
		i = j + 1
	}
	if len(ops) == 0 {
		return 0
	}
	base := 1
	if prg.File != nil {
		base = prg.File.Base()
	}
	// holds reports whether n's source holds a candidate.
	holds := func(n ast.Node) bool {
		lo, hi := int(n.Idx0())-base, int(n.Idx1())-base
		k, _ := slices.BinarySearch(ops, lo)
		return k < len(ops) && ops[k] < hi
	}
	n := 0
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer:
			if v.IsNil() {
				return
			}
			if node, ok := v.Interface().(ast.Node); ok && !holds(node) {
				return
			}
			walk(v.Elem())
		case reflect.Interface:
			if v.IsNil() {
				return
			}
			walk(v.Elem())
			if t := v.Elem().Type(); (t == binaryType || t == assignType) && v.CanSet() {
				if r, ok := powCall(v.Interface().(ast.Expression)); ok && reflect.TypeOf(r).AssignableTo(v.Type()) {
					v.Set(reflect.ValueOf(r))
					n++
				}
			}
		case reflect.Struct:
			for _, i := range nodeFields(v.Type()) {
				walk(v.Field(i))
			}
		case reflect.Slice:
			for i := 0; i < v.Len(); i++ {
				walk(v.Index(i))
			}
		}
	}
	walk(reflect.ValueOf(prg).Elem())
	return n
}

var (
	binaryType = reflect.TypeFor[*ast.BinaryExpression]()
	assignType = reflect.TypeFor[*ast.AssignExpression]()
	fileType   = reflect.TypeFor[file.File]()
	// fieldsOf caches nodeFields by struct type.
	fieldsOf sync.Map // reflect.Type -> []int
)

// nodeFields are the indexes of the fields of the AST struct type t that
// may hold nodes: exported pointers, interfaces, structs and slices of
// them, but not a function's DeclarationList (its declarations are in its
// body too) nor the source file.
func nodeFields(t reflect.Type) []int {
	if f, ok := fieldsOf.Load(t); ok {
		return f.([]int)
	}
	var fields []int
	if t != fileType {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			k := f.Type.Kind()
			if k == reflect.Slice {
				k = f.Type.Elem().Kind()
			}
			if f.IsExported() && f.Name != "DeclarationList" && (k == reflect.Pointer || k == reflect.Interface || k == reflect.Struct) {
				fields = append(fields, i)
			}
		}
	}
	fieldsOf.Store(t, fields)
	return fields
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
