// Walking goja's AST: every node below one, whether a name is mentioned.
package transform

import (
	"reflect"

	"github.com/dop251/goja/ast"
)

// mentions reports whether an identifier spelled name occurs anywhere in n
// (in any role), or n holds a node walkAll does not know.
func mentions(n ast.Node, name string) bool {
	found := false
	complete := walkAll(n, func(x ast.Node) bool {
		if found {
			return false
		}
		switch x := x.(type) {
		case *ast.Identifier:
			found = x.Name.String() == name
		case *ast.PrivateIdentifier:
			found = x.Name.String() == name
		}
		return !found
	})
	return found || !complete
}

// walkAll calls visit for n and every node below it, depth first, until
// visit returns false for a node (its children are then skipped). It
// returns false if it met a node type it does not know.
func walkAll(n ast.Node, visit func(ast.Node) bool) bool {
	w := allWalker{visit: visit, complete: true}
	w.node(n)
	return w.complete
}

type allWalker struct {
	visit    func(ast.Node) bool
	complete bool
}

func (w *allWalker) exprs(list []ast.Expression) {
	for _, e := range list {
		w.node(e)
	}
}

func (w *allWalker) stmts(list []ast.Statement) {
	for _, s := range list {
		w.node(s)
	}
}

func (w *allWalker) bindings(list []*ast.Binding) {
	for _, b := range list {
		w.node(b)
	}
}

func (w *allWalker) node(n ast.Node) {
	if isNilNode(n) || !w.visit(n) {
		return
	}
	switch n := n.(type) {
	case *ast.Program:
		w.stmts(n.Body)
	// Expressions.
	case *ast.Identifier, *ast.PrivateIdentifier, *ast.StringLiteral, *ast.NumberLiteral,
		*ast.BooleanLiteral, *ast.NullLiteral, *ast.RegExpLiteral, *ast.ThisExpression,
		*ast.SuperExpression, *ast.BadExpression, *ast.TemplateElement:
	case *ast.MetaProperty:
		w.node(n.Meta)
		w.node(n.Property)
	case *ast.ArrayLiteral:
		w.exprs(n.Value)
	case *ast.ArrayPattern:
		w.exprs(n.Elements)
		w.node(n.Rest)
	case *ast.ObjectLiteral:
		for _, p := range n.Value {
			w.node(p)
		}
	case *ast.ObjectPattern:
		for _, p := range n.Properties {
			w.node(p)
		}
		w.node(n.Rest)
	case *ast.PropertyKeyed:
		w.node(n.Key)
		w.node(n.Value)
	case *ast.PropertyShort:
		w.node(&n.Name)
		w.node(n.Initializer)
	case *ast.SpreadElement:
		w.node(n.Expression)
	case *ast.AssignExpression:
		w.node(n.Left)
		w.node(n.Right)
	case *ast.BinaryExpression:
		w.node(n.Left)
		w.node(n.Right)
	case *ast.UnaryExpression:
		w.node(n.Operand)
	case *ast.ConditionalExpression:
		w.node(n.Test)
		w.node(n.Consequent)
		w.node(n.Alternate)
	case *ast.SequenceExpression:
		w.exprs(n.Sequence)
	case *ast.CallExpression:
		w.node(n.Callee)
		w.exprs(n.ArgumentList)
	case *ast.NewExpression:
		w.node(n.Callee)
		w.exprs(n.ArgumentList)
	case *ast.DotExpression:
		w.node(n.Left)
		w.node(&n.Identifier)
	case *ast.PrivateDotExpression:
		w.node(n.Left)
		w.node(&n.Identifier)
	case *ast.BracketExpression:
		w.node(n.Left)
		w.node(n.Member)
	case *ast.OptionalChain:
		w.node(n.Expression)
	case *ast.Optional:
		w.node(n.Expression)
	case *ast.AwaitExpression:
		w.node(n.Argument)
	case *ast.YieldExpression:
		w.node(n.Argument)
	case *ast.TemplateLiteral:
		w.node(n.Tag)
		for _, el := range n.Elements {
			w.node(el)
		}
		w.exprs(n.Expressions)
	case *ast.Binding:
		w.node(n.Target)
		w.node(n.Initializer)
	case *ast.FunctionLiteral:
		w.node(n.Name)
		w.node(n.ParameterList)
		w.node(n.Body)
	case *ast.ArrowFunctionLiteral:
		w.node(n.ParameterList)
		w.node(n.Body)
	case *ast.ParameterList:
		w.bindings(n.List)
		w.node(n.Rest)
	case *ast.ExpressionBody:
		w.node(n.Expression)
	case *ast.ClassLiteral:
		w.node(n.Name)
		w.node(n.SuperClass)
		for _, el := range n.Body {
			w.node(el)
		}
	case *ast.MethodDefinition:
		w.node(n.Key)
		w.node(n.Body)
	case *ast.FieldDefinition:
		w.node(n.Key)
		w.node(n.Initializer)
	case *ast.ClassStaticBlock:
		w.node(n.Block)
	// Statements.
	case *ast.BadStatement, *ast.EmptyStatement, *ast.DebuggerStatement:
	case *ast.BranchStatement:
		w.node(n.Label)
	case *ast.BlockStatement:
		w.stmts(n.List)
	case *ast.ExpressionStatement:
		w.node(n.Expression)
	case *ast.VariableStatement:
		w.bindings(n.List)
	case *ast.LexicalDeclaration:
		w.bindings(n.List)
	case *ast.IfStatement:
		w.node(n.Test)
		w.node(n.Consequent)
		w.node(n.Alternate)
	case *ast.ReturnStatement:
		w.node(n.Argument)
	case *ast.ThrowStatement:
		w.node(n.Argument)
	case *ast.WhileStatement:
		w.node(n.Test)
		w.node(n.Body)
	case *ast.DoWhileStatement:
		w.node(n.Body)
		w.node(n.Test)
	case *ast.ForStatement:
		w.node(n.Initializer)
		w.node(n.Test)
		w.node(n.Update)
		w.node(n.Body)
	case *ast.ForLoopInitializerExpression:
		w.node(n.Expression)
	case *ast.ForLoopInitializerVarDeclList:
		w.bindings(n.List)
	case *ast.ForLoopInitializerLexicalDecl:
		w.bindings(n.LexicalDeclaration.List)
	case *ast.ForInStatement:
		w.node(n.Into)
		w.node(n.Source)
		w.node(n.Body)
	case *ast.ForOfStatement:
		w.node(n.Into)
		w.node(n.Source)
		w.node(n.Body)
	case *ast.ForIntoVar:
		w.node(n.Binding)
	case *ast.ForDeclaration:
		w.node(n.Target)
	case *ast.ForIntoExpression:
		w.node(n.Expression)
	case *ast.LabelledStatement:
		w.node(n.Label)
		w.node(n.Statement)
	case *ast.SwitchStatement:
		w.node(n.Discriminant)
		for _, c := range n.Body {
			w.node(c)
		}
	case *ast.CaseStatement:
		w.node(n.Test)
		w.stmts(n.Consequent)
	case *ast.TryStatement:
		w.node(n.Body)
		w.node(n.Catch)
		w.node(n.Finally)
	case *ast.CatchStatement:
		w.node(n.Parameter)
		w.node(n.Body)
	case *ast.WithStatement:
		w.node(n.Object)
		w.node(n.Body)
	case *ast.FunctionDeclaration:
		w.node(n.Function)
	case *ast.ClassDeclaration:
		w.node(n.Class)
	default:
		w.complete = false
	}
}

// isNilNode reports a nil interface or a typed nil pointer in one.
func isNilNode(n ast.Node) bool {
	if n == nil {
		return true
	}
	v := reflect.ValueOf(n)
	return v.Kind() == reflect.Pointer && v.IsNil()
}
