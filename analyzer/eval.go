package analyzer

import (
	"bytes"
	"go/ast"
	"go/constant"
	"go/format"
	"go/token"
	"go/types"

	"github.com/keyguard/keyguard/internal/keyshape"
	"github.com/keyguard/keyguard/keytmpl"
)

// maxDepth bounds how far eval follows variables and calls.
const maxDepth = 12

// eval rebuilds the shape of a string expression. builder is true when the
// whole value is a generated builder's key (k.String() of a keybuild.Key).
func (p *pkg) eval(e ast.Expr, depth int) (s keyshape.Shape, builder bool) {
	info := p.pass.TypesInfo
	e = ast.Unparen(e)
	if tv, ok := info.Types[e]; ok && tv.Value != nil {
		switch tv.Value.Kind() {
		case constant.String:
			return keyshape.Lit(constant.StringVal(tv.Value)), false
		case constant.Int:
			return keyshape.Lit(tv.Value.ExactString()), false
		}
	}
	if depth > maxDepth {
		return p.hole(e), false
	}
	switch x := e.(type) {
	case *ast.BinaryExpr:
		if x.Op == token.ADD && isString(info.TypeOf(x)) {
			l, lb := p.eval(x.X, depth+1)
			r, rb := p.eval(x.Y, depth+1)
			if lb {
				l = p.hole(x.X)
			}
			if rb {
				r = p.hole(x.Y)
			}
			return keyshape.Concat(l, r), false
		}
	case *ast.CallExpr:
		return p.evalCall(x, depth)
	case *ast.SelectorExpr:
		if v := p.ownField(x); v != nil {
			if s, ok := p.fieldShape(v, depth); ok {
				return s, false
			}
		}
	case *ast.Ident:
		if v, ok := info.Uses[x].(*types.Var); ok {
			if d := p.def(v); d != nil && !isParam(v) {
				return p.eval(d, depth+1)
			}
			if p.cur != nil && isParam(v) && len(p.defs[v]) == 0 {
				if i := p.paramIndex(p.cur, v); i >= 0 {
					h := p.hole(e)
					return keyshape.Param(i, h.Parts[0].Kind, h.Parts[0].Name), false
				}
			}
		}
	}
	return p.hole(e), false
}

// keyShape is the shape of the key fn returns, its parameters marked: a
// function of this package whose every return gives one shape with some
// literal text, or one whose KeyShape fact says so.
func (p *pkg) keyShape(fn *types.Func) (keyshape.Shape, bool) {
	if r, ok := p.shapes[fn]; ok {
		return r.s, r.ok
	}
	fd := p.funcs[fn]
	if fd == nil {
		var ks KeyShape
		if fn.Pkg() != nil && fn.Pkg() != p.pass.Pkg && p.pass.ImportObjectFact(fn, &ks) {
			return ks.Shape, true
		}
		return keyshape.Shape{}, false
	}
	sig := fn.Type().(*types.Signature)
	if p.busy[fn] || sig.Results().Len() != 1 || !isString(sig.Results().At(0).Type()) {
		return keyshape.Shape{}, false
	}
	p.busy[fn] = true
	defer delete(p.busy, fn)
	saved := p.cur
	p.cur = fd
	defer func() { p.cur = saved }()
	var got keyshape.Shape
	ok := true
	n := 0
	ast.Inspect(fd.Body, func(node ast.Node) bool {
		switch x := node.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ReturnStmt:
			if len(x.Results) != 1 {
				ok = false
				return false
			}
			s, b := p.eval(x.Results[0], 1)
			if b || !hasLiteral(s) || n > 0 && s.String() != got.String() {
				ok = false
			}
			got = s
			n++
		}
		return ok
	})
	r := shapeResult{s: got, ok: ok && n > 0}
	p.shapes[fn] = r
	return r.s, r.ok
}

// shapeResult is a computed keyShape.
type shapeResult struct {
	s  keyshape.Shape
	ok bool
}

// hasLiteral reports whether a shape has some literal text: a helper
// returning only a value it was given is not a key's builder.
func hasLiteral(s keyshape.Shape) bool {
	for _, part := range s.Parts {
		if !part.Hole && part.Lit != "" {
			return true
		}
	}
	return false
}

// isParam reports whether v is a function's parameter or result (their
// values come from outside the function's body).
func isParam(v *types.Var) bool { return v.Kind() == types.ParamVar || v.Kind() == types.ResultVar }

func (p *pkg) evalCall(call *ast.CallExpr, depth int) (keyshape.Shape, bool) {
	info := p.pass.TypesInfo
	if sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr); ok && sel.Sel.Name == "String" && len(call.Args) == 0 && isKey(info.TypeOf(sel.X)) {
		return keyshape.Shape{}, true
	}
	fn := callee(info, call)
	if fn == nil || fn.Pkg() == nil {
		return p.hole(call), false
	}
	switch fn.Pkg().Path() + "." + fn.Name() {
	case "fmt.Sprintf":
		if len(call.Args) == 0 || call.Ellipsis.IsValid() {
			break
		}
		if s, ok := p.sprintf(call.Args[0], call.Args[1:], depth); ok {
			return s, false
		}
	case "fmt.Sprint":
		if len(call.Args) == 1 && !call.Ellipsis.IsValid() {
			return p.eval(call.Args[0], depth+1)
		}
	case "strings.Join":
		if len(call.Args) != 2 {
			break
		}
		sepv := info.Types[call.Args[1]].Value
		elts := p.elements(call.Args[0])
		if sepv == nil || sepv.Kind() != constant.String || elts == nil {
			break
		}
		var parts []keyshape.Shape
		for i, el := range elts {
			if i > 0 {
				parts = append(parts, keyshape.Lit(constant.StringVal(sepv)))
			}
			s, b := p.eval(el, depth+1)
			if b {
				s = p.hole(el)
			}
			parts = append(parts, s)
		}
		return keyshape.Concat(parts...), false
	case "strconv.Itoa", "strconv.FormatInt", "strconv.FormatUint":
		if len(call.Args) >= 1 && (len(call.Args) == 1 || isConst(info, call.Args[1], 10)) {
			if s, _ := p.eval(call.Args[0], depth+1); isLiteral(s) {
				return s, false
			}
			name, expr := p.names(call.Args[0])
			return keyshape.Hole(keytmpl.Int, name, expr), false
		}
	}
	if isTextBuffer(fn) && fn.Name() == "String" {
		if s, ok := p.written(call, depth); ok {
			return s, false
		}
		if sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr); ok {
			// named after the buffer: b.String() is {b}
			_, expr := p.names(call)
			name, _ := p.names(sel.X)
			return keyshape.Hole(keytmpl.Any, name, expr), false
		}
		return p.hole(call), false
	}
	if ks, ok := p.keyShape(fn); ok && !call.Ellipsis.IsValid() {
		return ks.Subst(func(i int) (keyshape.Shape, bool) {
			if i >= len(call.Args) {
				return keyshape.Shape{}, false
			}
			s, b := p.eval(call.Args[i], depth+1)
			return s, !b
		}), false
	}
	return p.hole(call), false
}

// sprintf is the shape fmt.Sprintf(format, args...) gives, when the
// format is a constant.
func (p *pkg) sprintf(format ast.Expr, args []ast.Expr, depth int) (keyshape.Shape, bool) {
	info := p.pass.TypesInfo
	tv := info.Types[format]
	if tv.Value == nil || tv.Value.Kind() != constant.String {
		return keyshape.Shape{}, false
	}
	return keyshape.Printf(constant.StringVal(tv.Value), func(v keyshape.Verb) keyshape.Shape {
		if v.Arg >= len(args) {
			return keyshape.Lit("%!" + string(v.Letter) + "(MISSING)")
		}
		a := args[v.Arg]
		if v.Plain && (v.Letter == 's' || v.Letter == 'v' || v.Letter == 'd' && isInteger(info.TypeOf(a))) {
			if s, b := p.eval(a, depth+1); !b {
				return s
			}
		}
		name, expr := p.names(a)
		return keyshape.VerbHole(v, name, expr)
	})
}

// hole is the shape of a value the scan cannot know: int when its type is
// an integer, any text otherwise.
func (p *pkg) hole(e ast.Expr) keyshape.Shape {
	kind := keytmpl.Any
	if isInteger(p.pass.TypesInfo.TypeOf(e)) {
		kind = keytmpl.Int
	}
	name, expr := p.names(e)
	return keyshape.Hole(kind, name, expr)
}

// names gives a hole a placeholder name (the variable's or field's) and
// the source text a builder call would pass: int64(x) for an integer of
// another type.
func (p *pkg) names(e ast.Expr) (name, expr string) {
	e = ast.Unparen(e)
	switch x := e.(type) {
	case *ast.Ident:
		name = x.Name
	case *ast.SelectorExpr:
		name = x.Sel.Name
	case *ast.CallExpr:
		if sel, ok := x.Fun.(*ast.SelectorExpr); ok && len(x.Args) == 0 {
			name = sel.Sel.Name
		} else if len(x.Args) == 1 && isString(p.pass.TypesInfo.TypeOf(x)) {
			// A value made from one other, named after it:
			// redisNamespacePrefix(namespace) is {namespace}.
			switch a := ast.Unparen(x.Args[0]).(type) {
			case *ast.Ident:
				name = a.Name
			case *ast.SelectorExpr:
				name = a.Sel.Name
			}
		}
	}
	var b bytes.Buffer
	if format.Node(&b, token.NewFileSet(), e) == nil && b.Len() <= 80 {
		expr = b.String()
	}
	if t := p.pass.TypesInfo.TypeOf(e); expr != "" && isInteger(t) && !types.Identical(t.Underlying(), types.Typ[types.Int64]) {
		expr = "int64(" + expr + ")"
	}
	return name, expr
}

func isLiteral(s keyshape.Shape) bool { _, ok := s.Literal(); return ok }

func isConst(info *types.Info, e ast.Expr, n int64) bool {
	v := info.Types[e].Value
	if v == nil || v.Kind() != constant.Int {
		return false
	}
	i, ok := constant.Int64Val(v)
	return ok && i == n
}

func isString(t types.Type) bool {
	b, ok := t.(*types.Basic)
	if !ok && t != nil {
		b, ok = t.Underlying().(*types.Basic)
	}
	return ok && b.Info()&types.IsString != 0
}

func isInteger(t types.Type) bool {
	if t == nil {
		return false
	}
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Info()&types.IsInteger != 0
}

// isKey reports whether t is keybuild.Key (or a pointer to one).
func isKey(t types.Type) bool {
	if ptr, ok := t.(*types.Pointer); ok {
		t = ptr.Elem()
	}
	n, ok := t.(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == keybuild && n.Obj().Name() == "Key"
}
