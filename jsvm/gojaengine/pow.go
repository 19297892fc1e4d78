package gojaengine

import (
	"reflect"
	"strings"
	"sync"

	"github.com/dop251/goja"
	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/file"
	"github.com/dop251/goja/token"
)

// powName is the global function the bundle's `**` operators call once
// rewritten (rewriteExponents): goja's own operator computes Go's math.Pow,
// whose last bits differ from V8's for about a third of real exponents.
// goja's instructions cannot be replaced from outside the package, so the
// operator becomes a call of V8's pow at the AST, which keeps the
// operands' positions for stacks and source maps.
const powName = "__gorender_pow"

// powSource makes the function: both operands go through ToNumber once,
// in order, and numbers get V8's pow (Math.pow as installed by useV8Math,
// captured before any bundle can replace it); BigInts get goja's own
// operator, which also throws the TypeError of a mixed pair. (An object
// whose valueOf answers a BigInt throws a TypeError here: unary plus, not
// ToNumeric, which goja's unary minus runs twice on an object.)
const powSource = `(function (pow) {
  return function (x, y) {
    if (typeof x !== 'number' && typeof x !== 'bigint') x = +x;
    if (typeof y !== 'number' && typeof y !== 'bigint') y = +y;
    return typeof x === 'number' && typeof y === 'number' ? pow(x, y) : x ** y;
  };
})`

var powProgram = sync.OnceValues(func() (*goja.Program, error) {
	return goja.Compile("gorender-pow.js", powSource, true)
})

// installPow defines powName on the global object: not enumerable,
// writable or configurable, so that no bundle replaces it and the
// per-render clearing of globals leaves it.
func (v *vm) installPow() error {
	mk, err := v.runCompiled(powProgram)
	if err != nil {
		return err
	}
	f, _ := goja.AssertFunction(mk)
	pow, err := f(goja.Undefined(), v.rt.Get("Math").ToObject(v.rt).Get("pow"))
	if err != nil {
		return err
	}
	return v.rt.GlobalObject().DefineDataProperty(powName, pow, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE)
}

// mayUseExponent reports whether source may hold a `**` operator: a `**`
// with neither `*` nor `/` on either side (a comment's `/**`, `**/` and
// `****` banners are not operators). A false positive costs a walk of the
// AST, nothing else.
func mayUseExponent(source string) bool {
	for i := 0; ; {
		j := strings.Index(source[i:], "**")
		if j < 0 {
			return false
		}
		j += i
		before, after := byte(' '), byte(' ')
		if j > 0 {
			before = source[j-1]
		}
		if j+2 < len(source) {
			after = source[j+2]
		}
		if before != '*' && before != '/' && after != '*' && after != '/' {
			return true
		}
		i = j + 1
	}
}

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
