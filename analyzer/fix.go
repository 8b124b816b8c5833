package analyzer

import (
	"go/ast"
	"go/types"
	"strconv"
	"strings"

	"golang.org/x/tools/go/analysis"

	"github.com/keyguard/keyguard/internal/keyshape"
	"github.com/keyguard/keyguard/keytmpl"
)

// fix is the suggested fix of a raw key: the generated builder's call in
// its place, when the key's template is one builder's, the builder cannot
// fail (all its values are int64) and its package is imported by the
// package (the import is added to the file when only another file has it).
func (p *pkg) fix(arg ast.Expr, s keyshape.Shape, f *ast.File) (analysis.SuggestedFix, bool) {
	v := p.c.Classify(s)
	if len(v.Fits) != 1 {
		return analysis.SuggestedFix{}, false
	}
	e := v.Fits[0]
	for _, ph := range e.Template.Placeholders() {
		if ph.Kind != keytmpl.Int {
			return analysis.SuggestedFix{}, false
		}
	}
	args, ok := p.c.Args(s, e)
	if !ok {
		return analysis.SuggestedFix{}, false
	}
	name := p.c.BuilderName(keyshape.Go, e)
	bp := p.builderPackage(name)
	if bp == nil {
		return analysis.SuggestedFix{}, false
	}
	var holes []keyshape.Part
	for _, pt := range s.Parts {
		if pt.Hole {
			holes = append(holes, pt)
		}
	}
	var as []string
	for _, a := range args {
		if a.Hole < 0 {
			as = append(as, a.Lit)
			continue
		}
		h := holes[a.Hole]
		if h.Kind != keytmpl.Int || h.Expr == "" {
			return analysis.SuggestedFix{}, false // text into an int64 parameter: no call compiles
		}
		as = append(as, h.Expr)
	}
	if p.dropsLocal(arg, as) {
		return analysis.SuggestedFix{}, false
	}
	qual, edits := p.qualifier(bp, f)
	call := name + "(" + strings.Join(as, ", ") + ").String()"
	if qual != "" {
		call = qual + "." + call
	}
	edits = append(edits, analysis.TextEdit{Pos: arg.Pos(), End: arg.End(), NewText: []byte(call)})
	return analysis.SuggestedFix{Message: "build the key with " + name, TextEdits: edits}, true
}

// builderPackage is the package that declares the generated builder name:
// this one, or one it imports.
func (p *pkg) builderPackage(name string) *types.Package {
	pkgs := append([]*types.Package{p.pass.Pkg}, p.pass.Pkg.Imports()...)
	for _, bp := range pkgs {
		fn, ok := bp.Scope().Lookup(name).(*types.Func)
		if !ok {
			continue
		}
		res := fn.Type().(*types.Signature).Results()
		if res.Len() == 1 && isKey(res.At(0).Type()) {
			return bp
		}
	}
	return nil
}

// qualifier is how file f names bp, with the edit that imports it when f
// does not yet.
func (p *pkg) qualifier(bp *types.Package, f *ast.File) (string, []analysis.TextEdit) {
	if bp == p.pass.Pkg {
		return "", nil
	}
	for _, im := range f.Imports {
		path, _ := strconv.Unquote(im.Path.Value)
		if path != bp.Path() {
			continue
		}
		if im.Name != nil {
			return im.Name.Name, nil
		}
		return bp.Name(), nil
	}
	line := "\n\nimport " + strconv.Quote(bp.Path())
	pos := f.Name.End()
	if len(f.Imports) > 0 {
		line = "\nimport " + strconv.Quote(bp.Path())
		pos = f.Imports[len(f.Imports)-1].End()
		for _, d := range f.Decls {
			if gd, ok := d.(*ast.GenDecl); ok && gd.Lparen.IsValid() && len(gd.Specs) > 0 {
				if _, ok := gd.Specs[0].(*ast.ImportSpec); ok {
					line = "\n\t" + strconv.Quote(bp.Path())
					pos = gd.Specs[len(gd.Specs)-1].End()
				}
			}
		}
	}
	return bp.Name(), []analysis.TextEdit{{Pos: pos, End: pos, NewText: []byte(line)}}
}

// dropsLocal reports whether replacing arg with a call taking args would
// leave a local variable arg mentions unused (k := "user:" + id;
// rdb.Get(ctx, k) — replacing k alone would not compile).
func (p *pkg) dropsLocal(arg ast.Expr, args []string) bool {
	drops := false
	ast.Inspect(arg, func(n ast.Node) bool {
		id, ok := n.(*ast.Ident)
		if !ok {
			return true
		}
		v, ok := p.pass.TypesInfo.Uses[id].(*types.Var)
		if !ok || isParam(v) || v.IsField() || v.Parent() == p.pass.Pkg.Scope() {
			return true
		}
		for _, a := range args {
			if strings.Contains(a, id.Name) {
				return true
			}
		}
		drops = true
		return false
	})
	return drops
}
