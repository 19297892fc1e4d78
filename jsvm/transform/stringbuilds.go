package transform

// A load-time rewrite of one accumulation pattern that is quadratic in goja.
//
// goja strings are flat: `s += chunk` copies s. react-dom's renderToString
// (React 18 and 19, every build: development and production, node and
// browser, as minified by terser or esbuild) collects the whole page that way:
//
//	function renderToStringImpl(children, options, ...) {
//	  var didFatal = false, fatalError = null, result = "", readyToStream = false;
//	  ...
//	  startFlowing(request, {
//	    push: function (chunk) { null !== chunk && (result += chunk); return true; },
//	    destroy: function (error) { didFatal = true; fatalError = error; }
//	  });
//	  ...
//	  return result;
//	}
//
// One push per chunk (thousands per page), each copying everything rendered
// so far: the 179 KB list page of the fixtures allocates 1.6 GB per render
// (18 MB rewritten) and renders more than ten times slower.
// RewriteStringBuilds finds that structure with goja's own parser (by shape,
// never by name, so minified bundles match) and turns the accumulator into
// an array:
//
//	result = ""          →  result = []
//	result += chunk      →  result.push(""+(chunk))
//	return result        →  return result.join("")
//
// `""+(x)` converts exactly as `s += x` does (ToPrimitive with the default
// hint, then ToString, at the same moment), so the joined string is the one
// the loop would have built, whatever the chunks are.
//
// What is an accumulator (all of it checked on the AST; anything else, or
// anything the analysis does not model, leaves the variable alone):
//   - a `var` or `let` declared directly in a function's body (not in a
//     nested block) with the initializer "" (or ''), declared nowhere else
//     in that function;
//   - every reference to it, in the function and in the closures it creates
//     (closures that shadow the name are skipped, block-scoped shadowing
//     leaves the variable alone), comes after the declaration, outside any
//     hoisted function declaration, and is either an append `v += e` whose
//     value is unused, made inside a function that is an object literal's
//     property (the destination's push/write method), or a plain read of the
//     value (replaced by `v.join("")`, so every read sees the same string);
//   - the function contains no `eval` and no `with`.
//
// The edits are applied with byte offsets to the original source: every
// other byte stays the same (on a minified one-line bundle, columns after an
// edit on the same line shift by a few characters). The output is parsed
// again and each edit checked before it is returned. The rewrite is
// idempotent: its output has no accumulator left.

import (
	"reflect"
	"sort"
	"strings"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/parser"
	"github.com/dop251/goja/token"
)

// RewriteStringBuilds rewrites the string accumulators of react-dom's
// renderToString (and anything of the same shape, see above) into array
// pushes joined once at the read, and returns the new source and the number
// of accumulators rewritten. It is a pure function. err is non-nil only when
// src does not parse (as a script, nor as the body of a CommonJS module
// wrapper); the caller then keeps src. When nothing matches, or the rewritten
// source would not check out, it returns src unchanged and 0.
//
// Call it on the source goja will compile (after any lowering), once per
// bundle, before goja.Compile.
func RewriteStringBuilds(src string) (out string, rewrites int, err error) {
	out, r, err := rewriteStringBuilds(src)
	return out, len(r.accs), err
}

// RewriteStringBuildsPositions is RewriteStringBuilds with the positions
// of its output in src (on a minified one-line bundle, the columns after
// an edit shift).
func RewriteStringBuildsPositions(src string) (string, int, Positions, error) {
	out, r, err := rewriteStringBuilds(src)
	if err != nil {
		return src, 0, nil, err
	}
	return out, len(r.accs), shiftsOf(src, r.edits), nil
}

// rewrite is what rewriteStringBuilds changed: none when nothing.
type rewrite struct {
	accs  []*accumulator
	edits []edit
}

func rewriteStringBuilds(src string) (string, rewrite, error) {
	prg, shift, err := parseForRewrite(src)
	if err != nil {
		return src, rewrite{}, err
	}
	var accs []*accumulator
	forEachFunction(prg, func(f funcNode) {
		accs = append(accs, findAccumulators(src, shift, f)...)
	})
	if len(accs) == 0 {
		return src, rewrite{}, nil
	}
	var edits []edit
	for _, a := range accs {
		edits = append(edits, a.edits(src, shift)...)
	}
	sort.SliceStable(edits, func(i, j int) bool { return edits[i].at < edits[j].at })
	for i := 1; i < len(edits); i++ {
		if edits[i].at < edits[i-1].end {
			return src, rewrite{}, nil // overlapping edits: never expected, stay safe
		}
	}
	out := applyEdits(src, edits)
	if !verifyRewrite(src, out, shift, accs, edits) {
		return src, rewrite{}, nil
	}
	return out, rewrite{accs, edits}, nil
}

// commonJSPrefix wraps a bundle that only parses as a function body (a
// CommonJS module with a top-level return).
const commonJSPrefix = "(function(){"

// parseForRewrite parses src as a script, else as a CommonJS module body.
// shift is goja's base index (1) plus the length of the wrapper before src,
// so that an AST position maps to the offset int(idx) - shift in src. A
// hashbang line (which Node's CommonJS loader, and the engine, treat as a
// comment) is parsed as a comment of the same length.
func parseForRewrite(src string) (*ast.Program, int, error) {
	if strings.HasPrefix(src, "#!") {
		src = "//" + src[2:]
	}
	prg, err := parser.ParseFile(nil, "", src, 0, parser.WithDisableSourceMaps)
	if err == nil {
		return prg, 1, nil
	}
	if prg2, err2 := parser.ParseFile(nil, "", commonJSPrefix+src+"\n})", 0, parser.WithDisableSourceMaps); err2 == nil {
		return prg2, 1 + len(commonJSPrefix), nil
	}
	return nil, 0, err
}

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
