// Every reference to a candidate accumulator, through the closures of its
// function, and how a function body declares a name.
package transform

import (
	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/token"
)

// refWalker collects the references to one variable in its declaring
// function, following closures that do not shadow it. bad is set as soon as
// a reference or a construct is not one the rewrite keeps exact.
type refWalker struct {
	name    string
	decl    *ast.Binding // the accumulator's own declaration
	appends []*ast.AssignExpression
	reads   []*ast.Identifier
	bad     bool

	depth   int  // function nesting below the declaring function
	hoisted bool // inside a function declaration hoisted in the declaring function
	sink    bool // the innermost function is an object literal's property
}

func (w *refWalker) is(id *ast.Identifier) bool { return id != nil && id.Name.String() == w.name }

func (w *refWalker) stmts(list []ast.Statement) {
	for _, s := range list {
		if w.bad {
			return
		}
		w.stmt(s)
	}
}

func (w *refWalker) stmt(s ast.Statement) {
	if w.bad || s == nil {
		return
	}
	switch s := s.(type) {
	case *ast.EmptyStatement, *ast.DebuggerStatement, *ast.BranchStatement:
	case *ast.BlockStatement:
		w.stmts(s.List)
	case *ast.ExpressionStatement:
		w.expr(s.Expression, false)
	case *ast.VariableStatement:
		w.bindings(s.List)
	case *ast.LexicalDeclaration:
		w.bindings(s.List)
	case *ast.IfStatement:
		w.expr(s.Test, true)
		w.stmt(s.Consequent)
		w.stmt(s.Alternate)
	case *ast.ReturnStatement:
		w.expr(s.Argument, true)
	case *ast.ThrowStatement:
		w.expr(s.Argument, true)
	case *ast.WhileStatement:
		w.expr(s.Test, true)
		w.stmt(s.Body)
	case *ast.DoWhileStatement:
		w.stmt(s.Body)
		w.expr(s.Test, true)
	case *ast.ForStatement:
		switch in := s.Initializer.(type) {
		case nil:
		case *ast.ForLoopInitializerExpression:
			w.expr(in.Expression, false)
		case *ast.ForLoopInitializerVarDeclList:
			w.bindings(in.List)
		case *ast.ForLoopInitializerLexicalDecl:
			w.bindings(in.LexicalDeclaration.List)
		default:
			w.opaque(in)
		}
		w.expr(s.Test, true)
		w.expr(s.Update, false)
		w.stmt(s.Body)
	case *ast.ForInStatement:
		w.forInto(s.Into)
		w.expr(s.Source, true)
		w.stmt(s.Body)
	case *ast.ForOfStatement:
		w.forInto(s.Into)
		w.expr(s.Source, true)
		w.stmt(s.Body)
	case *ast.LabelledStatement:
		w.stmt(s.Statement)
	case *ast.SwitchStatement:
		w.expr(s.Discriminant, true)
		for _, c := range s.Body {
			w.expr(c.Test, true)
			w.stmts(c.Consequent)
		}
	case *ast.TryStatement:
		w.stmt(s.Body)
		if s.Catch != nil {
			if s.Catch.Parameter != nil && mentions(s.Catch.Parameter, w.name) {
				w.bad = true
				return
			}
			w.stmt(s.Catch.Body)
		}
		if s.Finally != nil {
			w.stmt(s.Finally)
		}
	case *ast.FunctionDeclaration:
		if w.is(s.Function.Name) {
			w.bad = true
			return
		}
		hoisted := w.hoisted
		if w.depth == 0 {
			w.hoisted = true
		}
		w.function(s.Function.Name, s.Function.ParameterList, s.Function.Body, false)
		w.hoisted = hoisted
	case *ast.ClassDeclaration:
		w.class(s.Class)
	case *ast.WithStatement:
		w.bad = true
	default:
		w.opaque(s)
	}
}

// bindings walks declarations: another declaration of the name in a scope
// that does not shadow it is a redeclaration, which the rewrite leaves alone.
func (w *refWalker) bindings(list []*ast.Binding) {
	for _, b := range list {
		if b == w.decl {
			continue
		}
		if mentions(b.Target, w.name) {
			w.bad = true
			return
		}
		w.expr(b.Initializer, true)
	}
}

func (w *refWalker) forInto(into ast.ForInto) {
	switch in := into.(type) {
	case *ast.ForIntoVar:
		w.bindings([]*ast.Binding{in.Binding})
	case *ast.ForIntoExpression:
		if _, ok := in.Expression.(*ast.Identifier); ok {
			if mentions(in.Expression, w.name) {
				w.bad = true
			}
			return
		}
		w.opaque(in.Expression)
	default:
		w.opaque(into)
	}
}

// opaque is any node the walker does not model: fine if it never mentions
// the name (nor eval), else the variable is left alone.
func (w *refWalker) opaque(n ast.Node) {
	if n != nil && (mentions(n, w.name) || mentions(n, "eval")) {
		w.bad = true
	}
}

// expr walks an expression; used is false when its value is discarded.
func (w *refWalker) expr(e ast.Expression, used bool) {
	if w.bad || e == nil {
		return
	}
	switch e := e.(type) {
	case *ast.Identifier:
		switch {
		case w.is(e):
			w.reads = append(w.reads, e)
			w.checkRef()
		case e.Name.String() == "eval":
			w.bad = true
		}
	case *ast.StringLiteral, *ast.NumberLiteral, *ast.BooleanLiteral, *ast.NullLiteral,
		*ast.RegExpLiteral, *ast.ThisExpression, *ast.SuperExpression, *ast.MetaProperty:
	case *ast.AssignExpression:
		if id, ok := e.Left.(*ast.Identifier); ok && w.is(id) {
			if e.Operator != token.PLUS || used || !w.sink { // goja records `+=` as PLUS
				w.bad = true
				return
			}
			w.appends = append(w.appends, e)
			w.checkRef()
			w.expr(e.Right, true)
			return
		}
		switch l := e.Left.(type) {
		case *ast.Identifier:
			if l.Name.String() == "eval" {
				w.bad = true
			}
		case *ast.DotExpression, *ast.BracketExpression, *ast.PrivateDotExpression:
			w.expr(l, true)
		default: // destructuring assignment
			w.opaque(l)
		}
		w.expr(e.Right, true)
	case *ast.BinaryExpression:
		w.expr(e.Left, true)
		switch e.Operator {
		case token.LOGICAL_AND, token.LOGICAL_OR, token.COALESCE:
			w.expr(e.Right, used)
		default:
			w.expr(e.Right, true)
		}
	case *ast.ConditionalExpression:
		w.expr(e.Test, true)
		w.expr(e.Consequent, used)
		w.expr(e.Alternate, used)
	case *ast.SequenceExpression:
		for i, x := range e.Sequence {
			w.expr(x, used && i == len(e.Sequence)-1)
		}
	case *ast.UnaryExpression:
		if id, ok := e.Operand.(*ast.Identifier); ok && w.is(id) && e.Operator != token.TYPEOF &&
			e.Operator != token.NOT && e.Operator != token.MINUS && e.Operator != token.PLUS &&
			e.Operator != token.BITWISE_NOT && e.Operator != token.VOID {
			w.bad = true // ++, --, delete
			return
		}
		w.expr(e.Operand, e.Operator != token.VOID)
	case *ast.CallExpression:
		if id, ok := e.Callee.(*ast.Identifier); ok && w.is(id) {
			w.bad = true
			return
		}
		w.expr(e.Callee, true)
		for _, a := range e.ArgumentList {
			w.expr(a, true)
		}
	case *ast.NewExpression:
		if id, ok := e.Callee.(*ast.Identifier); ok && w.is(id) {
			w.bad = true
			return
		}
		w.expr(e.Callee, true)
		for _, a := range e.ArgumentList {
			w.expr(a, true)
		}
	case *ast.DotExpression:
		w.expr(e.Left, true)
	case *ast.PrivateDotExpression:
		w.expr(e.Left, true)
	case *ast.BracketExpression:
		w.expr(e.Left, true)
		w.expr(e.Member, true)
	case *ast.OptionalChain:
		w.expr(e.Expression, used)
	case *ast.Optional:
		w.expr(e.Expression, true)
	case *ast.SpreadElement:
		w.expr(e.Expression, true)
	case *ast.AwaitExpression:
		w.expr(e.Argument, true)
	case *ast.YieldExpression:
		w.expr(e.Argument, true)
	case *ast.TemplateLiteral:
		if id, ok := e.Tag.(*ast.Identifier); ok && w.is(id) {
			w.bad = true
			return
		}
		w.expr(e.Tag, true)
		for _, x := range e.Expressions {
			w.expr(x, true)
		}
	case *ast.ArrayLiteral:
		for _, x := range e.Value {
			w.expr(x, true)
		}
	case *ast.ObjectLiteral:
		for _, p := range e.Value {
			w.property(p)
		}
	case *ast.FunctionLiteral:
		w.function(e.Name, e.ParameterList, e.Body, false)
	case *ast.ArrowFunctionLiteral:
		w.function(nil, e.ParameterList, e.Body, false)
	case *ast.ClassLiteral:
		w.class(e)
	default:
		w.opaque(e)
	}
}

// checkRef rejects a reference that may run before the declaration did.
func (w *refWalker) checkRef() {
	if w.hoisted {
		w.bad = true
	}
}

func (w *refWalker) property(p ast.Property) {
	switch p := p.(type) {
	case *ast.PropertyKeyed:
		if p.Computed {
			w.expr(p.Key, true)
		}
		switch v := p.Value.(type) {
		case *ast.FunctionLiteral:
			w.function(v.Name, v.ParameterList, v.Body, true)
		case *ast.ArrowFunctionLiteral:
			w.function(nil, v.ParameterList, v.Body, true)
		default:
			w.expr(p.Value, true)
		}
	case *ast.PropertyShort:
		if w.is(&p.Name) {
			w.bad = true // {name}: the text cannot take .join("")
			return
		}
		w.expr(p.Initializer, true)
	case *ast.SpreadElement:
		w.expr(p.Expression, true)
	default:
		w.opaque(p)
	}
}

// function walks a nested function. Inside it the name refers to the
// accumulator unless the function declares it: then the function is
// skipped, or, when the declaration is block-scoped (or not one this walker
// can place), the accumulator is left alone.
func (w *refWalker) function(name *ast.Identifier, params *ast.ParameterList, body ast.Node, sink bool) {
	if w.bad {
		return
	}
	if body == nil || !mentions(body, w.name) && (params == nil || !mentions(params, w.name)) && !w.is(name) {
		if body != nil && mentions(body, "eval") {
			w.bad = true
		}
		return
	}
	if w.is(name) { // a named function expression's own binding
		return
	}
	if params != nil {
		for _, p := range params.List {
			if id, ok := p.Target.(*ast.Identifier); ok && w.is(id) {
				return // a parameter shadows it everywhere in the function
			}
		}
		if mentions(params, w.name) {
			w.bad = true
			return
		}
	}
	if block, ok := body.(*ast.BlockStatement); ok {
		switch declaredIn(block.List, w.name) {
		case declFunction:
			return
		case declBlock:
			w.bad = true
			return
		}
	}
	saved := *w
	w.depth++
	w.sink = sink
	if params != nil {
		for _, p := range params.List {
			w.expr(p.Initializer, true)
		}
	}
	switch b := body.(type) {
	case *ast.BlockStatement:
		w.stmts(b.List)
	case *ast.ExpressionBody:
		w.expr(b.Expression, true)
	default:
		w.opaque(b)
	}
	w.depth, w.sink, w.hoisted = saved.depth, saved.sink, saved.hoisted
}

func (w *refWalker) class(c *ast.ClassLiteral) {
	if w.is(c.Name) {
		w.bad = true
		return
	}
	w.expr(c.SuperClass, true)
	for _, el := range c.Body {
		switch el := el.(type) {
		case *ast.MethodDefinition:
			if el.Computed {
				w.expr(el.Key, true)
			}
			w.function(el.Body.Name, el.Body.ParameterList, el.Body.Body, true)
		case *ast.FieldDefinition:
			if el.Computed {
				w.expr(el.Key, true)
			}
			if el.Initializer != nil {
				w.function(nil, nil, &ast.ExpressionBody{Expression: el.Initializer}, false)
			}
		default: // static blocks
			w.opaque(el)
		}
		if w.bad {
			return
		}
	}
}

// How a function body declares a name.
const (
	declNone     = iota
	declFunction // var or a top-level function declaration: the whole body
	declBlock    // let, const, class, catch parameter, a function in a block
)

// declaredIn reports how the statements of a function body declare name,
// without entering nested functions and classes.
func declaredIn(list []ast.Statement, name string) int {
	kind := declNone
	mark := func(k int) { kind = max(kind, k) }
	// declares marks a declaration target that mentions name: an identifier
	// as k, a pattern as declBlock (do not try to place it).
	declares := func(target ast.Node, k int) {
		if mentions(target, name) {
			if _, ok := target.(*ast.Identifier); !ok {
				k = declBlock
			}
			mark(k)
		}
	}
	for _, top := range list {
		complete := walkAll(top, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.VariableStatement:
				for _, b := range n.List {
					declares(b.Target, declFunction)
				}
			case *ast.ForLoopInitializerVarDeclList:
				for _, b := range n.List {
					declares(b.Target, declFunction)
				}
			case *ast.ForIntoVar:
				declares(n.Binding.Target, declFunction)
			case *ast.LexicalDeclaration:
				for _, b := range n.List {
					declares(b.Target, declBlock)
				}
			case *ast.ForLoopInitializerLexicalDecl:
				for _, b := range n.LexicalDeclaration.List {
					declares(b.Target, declBlock)
				}
			case *ast.ForDeclaration:
				declares(n.Target, declBlock)
			case *ast.CatchStatement:
				declares(n.Parameter, declBlock)
			case *ast.WithStatement:
				mark(declBlock)
			case *ast.FunctionDeclaration:
				if n.Function.Name != nil && n.Function.Name.Name.String() == name {
					if n == top {
						mark(declFunction)
					} else {
						mark(declBlock)
					}
				}
				return false
			case *ast.ClassDeclaration:
				if n.Class.Name != nil && n.Class.Name.Name.String() == name {
					mark(declBlock)
				}
				return false
			case *ast.FunctionLiteral, *ast.ArrowFunctionLiteral, *ast.ClassLiteral:
				return false
			}
			return true
		})
		if !complete {
			mark(declBlock) // a node walkAll does not know: do not try to place it
		}
	}
	return kind
}
