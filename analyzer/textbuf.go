package analyzer

import (
	"go/ast"
	"go/token"
	"go/types"

	"github.com/keyguard/keyguard/internal/keyshape"
	"github.com/keyguard/keyguard/keytmpl"
)

// A key written piece by piece into a local strings.Builder or
// bytes.Buffer,
//
//	var b strings.Builder
//	b.WriteString(prefix)
//	b.WriteByte(':')
//	b.WriteString(id)
//	return b.String()
//
// is what was written, in order, when every write is a statement of the
// block that declares the buffer, before the statement that reads it
// (WriteString, WriteByte, WriteRune, Write([]byte(s)), fmt.Fprintf(&b,
// …), fmt.Fprint(&b, x); Grow writes nothing). Any other use of the
// buffer in between (a write in a loop or a branch, the buffer handed to
// a function, Reset) leaves the key unknown.

// isTextBuffer reports a method of strings.Builder or bytes.Buffer.
func isTextBuffer(fn *types.Func) bool {
	recv := fn.Type().(*types.Signature).Recv()
	return recv != nil && isTextBufferType(recv.Type())
}

func isTextBufferType(t types.Type) bool {
	n := typeName(t)
	return n == "strings.Builder" || n == "bytes.Buffer"
}

// bufDecl is where a local buffer is declared: the statement list that
// holds its declaration, and the declaration's index there.
type bufDecl struct {
	list []ast.Stmt
	at   int
}

// bufDecls indexes the package's local strings.Builder and bytes.Buffer
// variables (and pointers to them) by their declaring statement.
func (p *pkg) bufDecls() map[*types.Var]bufDecl {
	if p.bufs != nil {
		return p.bufs
	}
	p.bufs = map[*types.Var]bufDecl{}
	info := p.pass.TypesInfo
	record := func(id *ast.Ident, list []ast.Stmt, at int) {
		if v, ok := info.Defs[id].(*types.Var); ok && isTextBufferType(v.Type()) {
			p.bufs[v] = bufDecl{list: list, at: at}
		}
	}
	scan := func(list []ast.Stmt) {
		for i, st := range list {
			switch st := st.(type) {
			case *ast.DeclStmt:
				if gd, ok := st.Decl.(*ast.GenDecl); ok && gd.Tok == token.VAR {
					for _, spec := range gd.Specs {
						for _, name := range spec.(*ast.ValueSpec).Names {
							record(name, list, i)
						}
					}
				}
			case *ast.AssignStmt:
				if st.Tok == token.DEFINE {
					for _, l := range st.Lhs {
						if id, ok := l.(*ast.Ident); ok {
							record(id, list, i)
						}
					}
				}
			}
		}
	}
	for _, f := range p.pass.Files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BlockStmt:
				scan(n.List)
			case *ast.CaseClause:
				scan(n.Body)
			case *ast.CommClause:
				scan(n.Body)
			}
			return true
		})
	}
	return p.bufs
}

// written is the text a local buffer holds when call (its String()) reads
// it; false when the scan does not see every write.
func (p *pkg) written(call *ast.CallExpr, depth int) (keyshape.Shape, bool) {
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok || len(call.Args) != 0 {
		return keyshape.Shape{}, false
	}
	v := p.localVar(sel.X)
	if v == nil {
		return keyshape.Shape{}, false
	}
	d, ok := p.bufDecls()[v]
	if !ok {
		return keyshape.Shape{}, false
	}
	init, ok := p.bufInit(d.list[d.at], v, depth)
	if !ok {
		return keyshape.Shape{}, false
	}
	parts := []keyshape.Shape{init}
	for _, st := range d.list[d.at+1:] {
		n := p.refs(st, v)
		if st.Pos() <= call.Pos() && call.End() <= st.End() {
			// the statement that reads the buffer: nothing else in it
			// may touch the buffer
			if n != 1 {
				return keyshape.Shape{}, false
			}
			return keyshape.Concat(parts...), true
		}
		if n == 0 {
			continue
		}
		s, ok := p.bufWrite(st, v, depth)
		if !ok {
			return keyshape.Shape{}, false
		}
		parts = append(parts, s)
	}
	return keyshape.Shape{}, false
}

// localVar is the variable an expression names, or nil.
func (p *pkg) localVar(e ast.Expr) *types.Var {
	id, ok := ast.Unparen(e).(*ast.Ident)
	if !ok {
		return nil
	}
	v, _ := p.pass.TypesInfo.Uses[id].(*types.Var)
	return v
}

// refs counts the uses of v inside n.
func (p *pkg) refs(n ast.Node, v *types.Var) int {
	c := 0
	ast.Inspect(n, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && p.pass.TypesInfo.Uses[id] == v {
			c++
		}
		return true
	})
	return c
}

// bufInit is what a buffer's declaration puts in it: nothing
// (var b strings.Builder, strings.Builder{}, &bytes.Buffer{},
// new(strings.Builder), bytes.NewBuffer(nil)) or a string
// (bytes.NewBufferString(s), bytes.NewBuffer([]byte(s))).
func (p *pkg) bufInit(st ast.Stmt, v *types.Var, depth int) (keyshape.Shape, bool) {
	info := p.pass.TypesInfo
	var val ast.Expr
	switch st := st.(type) {
	case *ast.DeclStmt:
		for _, spec := range st.Decl.(*ast.GenDecl).Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if info.Defs[name] != v {
					continue
				}
				if len(vs.Values) == 0 {
					return keyshape.Lit(""), true
				}
				if len(vs.Values) != len(vs.Names) {
					return keyshape.Shape{}, false
				}
				val = vs.Values[i]
			}
		}
	case *ast.AssignStmt:
		if len(st.Lhs) != len(st.Rhs) {
			return keyshape.Shape{}, false
		}
		for i, l := range st.Lhs {
			if id, ok := l.(*ast.Ident); ok && info.Defs[id] == v {
				val = st.Rhs[i]
			}
		}
	}
	if val == nil || p.refs(val, v) > 0 {
		return keyshape.Shape{}, false
	}
	switch x := ast.Unparen(val).(type) {
	case *ast.UnaryExpr:
		if cl, ok := ast.Unparen(x.X).(*ast.CompositeLit); ok && x.Op == token.AND && len(cl.Elts) == 0 {
			return keyshape.Lit(""), true
		}
	case *ast.CompositeLit:
		if len(x.Elts) == 0 {
			return keyshape.Lit(""), true
		}
	case *ast.CallExpr:
		if id, ok := ast.Unparen(x.Fun).(*ast.Ident); ok && id.Name == "new" {
			if _, ok := info.Uses[id].(*types.Builtin); ok {
				return keyshape.Lit(""), true
			}
		}
		fn := callee(info, x)
		if fn == nil || fn.Pkg() == nil || fn.Pkg().Path() != "bytes" || len(x.Args) != 1 {
			break
		}
		switch fn.Name() {
		case "NewBufferString":
			return p.piece(x.Args[0], depth), true
		case "NewBuffer":
			return p.bytesOf(x.Args[0], depth)
		}
	}
	return keyshape.Shape{}, false
}

// bufWrite is what one statement writes into the buffer v: a write
// method's call on it, or fmt.Fprintf/Fprint into it, as a statement or
// with its results assigned.
func (p *pkg) bufWrite(st ast.Stmt, v *types.Var, depth int) (keyshape.Shape, bool) {
	info := p.pass.TypesInfo
	var call *ast.CallExpr
	switch st := st.(type) {
	case *ast.ExprStmt:
		call, _ = ast.Unparen(st.X).(*ast.CallExpr)
	case *ast.AssignStmt:
		if len(st.Rhs) == 1 {
			call, _ = ast.Unparen(st.Rhs[0]).(*ast.CallExpr)
		}
	}
	if call == nil || p.refs(call, v) != 1 || call.Ellipsis.IsValid() {
		return keyshape.Shape{}, false
	}
	fn := callee(info, call)
	if fn == nil || fn.Pkg() == nil {
		return keyshape.Shape{}, false
	}
	if isTextBuffer(fn) {
		sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
		if !ok || p.localVar(sel.X) != v {
			return keyshape.Shape{}, false
		}
		switch {
		case fn.Name() == "Grow":
			return keyshape.Lit(""), true
		case len(call.Args) != 1:
		case fn.Name() == "WriteString":
			return p.piece(call.Args[0], depth), true
		case fn.Name() == "WriteByte" || fn.Name() == "WriteRune":
			if c, ok := constInt(info.Types[call.Args[0]].Value); ok && c >= 0 {
				return keyshape.Lit(string(rune(c))), true
			}
			name, expr := p.names(call.Args[0])
			return keyshape.Hole(keytmpl.Any, name, expr), true
		case fn.Name() == "Write":
			return p.bytesOf(call.Args[0], depth)
		}
		return keyshape.Shape{}, false
	}
	if fn.Pkg().Path() != "fmt" || len(call.Args) < 2 || !p.isBuffer(call.Args[0], v) {
		return keyshape.Shape{}, false
	}
	switch fn.Name() {
	case "Fprintf":
		return p.sprintf(call.Args[1], call.Args[2:], depth)
	case "Fprint":
		if len(call.Args) == 2 {
			return p.piece(call.Args[1], depth), true
		}
	}
	return keyshape.Shape{}, false
}

// isBuffer reports whether e is the buffer v as an io.Writer: &v, or v
// when it is a pointer.
func (p *pkg) isBuffer(e ast.Expr, v *types.Var) bool {
	if u, ok := ast.Unparen(e).(*ast.UnaryExpr); ok && u.Op == token.AND {
		e = u.X
	}
	return p.localVar(e) == v
}

// piece is the shape of one string written: a builder's key written into
// a buffer is no longer the builder's key, only a value.
func (p *pkg) piece(e ast.Expr, depth int) keyshape.Shape {
	s, b := p.eval(e, depth+1)
	if b {
		return p.hole(e)
	}
	return s
}

// bytesOf is the text of a []byte written into a buffer: []byte(s), or
// nothing for nil.
func (p *pkg) bytesOf(e ast.Expr, depth int) (keyshape.Shape, bool) {
	info := p.pass.TypesInfo
	e = ast.Unparen(e)
	if id, ok := e.(*ast.Ident); ok {
		if _, ok := info.Uses[id].(*types.Nil); ok {
			return keyshape.Lit(""), true
		}
	}
	conv, ok := e.(*ast.CallExpr)
	if !ok || len(conv.Args) != 1 || !info.Types[conv.Fun].IsType() || !isString(info.TypeOf(conv.Args[0])) {
		return keyshape.Shape{}, false
	}
	return p.piece(conv.Args[0], depth), true
}
