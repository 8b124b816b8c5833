package analyzer

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"maps"
	"slices"
	"strings"

	"golang.org/x/tools/go/analysis"

	"github.com/keyguard/keyguard/internal/keyshape"
	"github.com/keyguard/keyguard/internal/rediscmd"
)

const (
	goRedis  = "github.com/redis/go-redis/v9"
	keybuild = "github.com/keyguard/keyguard/keybuild"
	// rueidis builds commands (client.B().Get().Key(k).Build()) in its
	// cmds package; rueidiscompat's adapter mirrors go-redis's methods.
	rueidis       = "github.com/redis/rueidis"
	rueidisCmds   = rueidis + "/internal/cmds"
	rueidisCompat = rueidis + "/rueidiscompat"
	// redigo sends commands as conn.Do("SET", key, v).
	redigo = "github.com/gomodule/redigo/redis"
)

// namedKeyParams reports a client package whose key parameters are known
// by their names (go-redis, rueidis's adapter and command builders).
func namedKeyParams(path string) bool {
	return path == goRedis || path == rueidisCompat || path == rueidisCmds
}

// redigoSends are redigo's functions and methods that send a command: the
// command name is their first string parameter, its arguments follow.
var redigoSends = map[string]bool{"Do": true, "Send": true, "DoContext": true, "DoWithTimeout": true, "SendHash": true}

// scriptCount is the key count of the redigo script a call runs
// (redis.NewScript(2, src).Do(conn, k1, k2, arg)), as NewScript is given
// it, directly or through variables and fields every value of which is
// such a script with the same count: n when a constant (-1: the script
// takes its count as its first argument, NewScript(-1, src)), else the
// expression that computes it (len(jobs)+1). ok is false when the call
// runs no script or its count is not seen.
func (p *pkg) scriptCount(call *ast.CallExpr, fn *types.Func) (n int, dyn ast.Expr, ok bool) {
	recv := fn.Type().(*types.Signature).Recv()
	if recv == nil || typeName(recv.Type()) != redigo+".Script" {
		return 0, nil, false
	}
	sel, isSel := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !isSel {
		return 0, nil, false
	}
	var news []*ast.CallExpr
	if !p.newScripts(sel.X, 0, &news) || len(news) == 0 {
		return 0, nil, false
	}
	given := func(x *ast.CallExpr) (int, bool) { return constInt(p.pass.TypesInfo.Types[x.Args[0]].Value) }
	first, isConst := given(news[0])
	for _, x := range news[1:] { // scripts of one count, or none is taken
		c, ok := given(x)
		if ok != isConst || ok && c != first || !ok && types.ExprString(x.Args[0]) != types.ExprString(news[0].Args[0]) {
			return 0, nil, false
		}
	}
	switch {
	case !isConst:
		return 0, news[0].Args[0], true
	case first < -1:
		return 0, nil, false
	}
	return first, nil, true
}

// newScripts gathers the redis.NewScript(n, src) calls whose script e
// holds: through local variables and fields, every value they are given;
// false when one of those values is anything else.
func (p *pkg) newScripts(e ast.Expr, depth int, out *[]*ast.CallExpr) bool {
	if depth > 8 {
		return false
	}
	var defs []ast.Expr
	switch x := ast.Unparen(e).(type) {
	case *ast.Ident:
		v, _ := p.pass.TypesInfo.Uses[x].(*types.Var)
		if v == nil || v.Pkg() != p.pass.Pkg {
			return false
		}
		defs = p.defs[v]
	case *ast.SelectorExpr:
		v := p.ownField(x)
		if v == nil {
			return false
		}
		defs = p.defs[v]
	case *ast.CallExpr:
		f := callee(p.pass.TypesInfo, x)
		if f == nil || f.Pkg() == nil || f.Pkg().Path() != redigo || f.Name() != "NewScript" || len(x.Args) != 2 {
			return false
		}
		*out = append(*out, x)
		return true
	default:
		return false
	}
	if len(defs) == 0 {
		return false
	}
	for _, d := range defs {
		if d == nil || !p.newScripts(d, depth+1, out) {
			return false
		}
	}
	return true
}

// scriptKeys are the keys among a redigo script call's keysAndArgs: the
// first n (n < 0: as many as its first, constant, argument says; dyn:
// as many as dyn computes). Given as a list (script.Do(conn, args...)),
// they are the first elements of the list the function builds with a
// literal or make and appends, counted as they are appended: a constant
// number once, or a number for each element of the slice a loop ranges
// over (dyn = len(jobs)+1: the first append of one element, then one for
// each job).
func (p *pkg) scriptKeys(call *ast.CallExpr, sig *types.Signature, n int, dyn ast.Expr) []ast.Expr {
	if !sig.Variadic() {
		return nil
	}
	rest := call.Args[min(sig.Params().Len()-1, len(call.Args)):]
	if call.Ellipsis.IsValid() {
		if n < 0 || len(rest) != 1 {
			return nil
		}
		v := p.listVar(rest[0])
		if v == nil {
			return nil
		}
		items := p.argList(v)
		if items == nil {
			return nil
		}
		keys := p.keysOfItems(items, n, dyn)
		if dyn == nil {
			// A key put in place of another: args[0] = other, for some
			// calls (a scheduled job's queue instead of the queue).
			for _, set := range p.indexSets[v] {
				if set.i < n && set.i < len(keys) {
					keys = append(keys, set.val)
				}
			}
		}
		return keys
	}
	if dyn != nil {
		return nil
	}
	if n < 0 {
		if len(rest) == 0 {
			return nil
		}
		c, ok := constInt(p.pass.TypesInfo.Types[rest[0]].Value)
		if !ok || c < 0 {
			return nil
		}
		n, rest = c, rest[1:]
	}
	return rest[:min(n, len(rest))]
}

// listVar is the local slice variable an argument list is: args, or a
// field (r.args) given that variable once, where the list is built.
func (p *pkg) listVar(e ast.Expr) *types.Var {
	switch x := ast.Unparen(e).(type) {
	case *ast.Ident:
		v, _ := p.pass.TypesInfo.Uses[x].(*types.Var)
		return v
	case *ast.SelectorExpr:
		f := p.ownField(x)
		if f == nil || len(p.defs[f]) != 1 {
			return nil
		}
		if id, ok := ast.Unparen(p.defs[f][0]).(*ast.Ident); ok {
			v, _ := p.pass.TypesInfo.Uses[id].(*types.Var)
			return v
		}
	}
	return nil
}

// keysOfItems are the first n elements of an argument list built by
// items (dyn: as many as it computes).
func (p *pkg) keysOfItems(items []argItem, n int, dyn ast.Expr) []ast.Expr {
	want := count{"": n}
	if dyn != nil {
		c, ok := p.countOf(dyn, 0)
		if !ok {
			return nil
		}
		want = c
	} else if n == 0 {
		return nil
	}
	have := count{}
	var out []ast.Expr
	var like []ast.Expr // the first appends whose count has the count's form
	for _, it := range items {
		switch {
		case dyn == nil && (it.cond || it.per != nil):
			// How often it runs is not a constant: the elements before
			// it are keys, it and those after cannot be placed.
			return out
		case it.cond:
			return nil
		case dyn == nil && len(it.els) >= n-have[""]:
			return append(out, it.els[:n-have[""]]...)
		}
		size := count{"": len(it.els)}
		if it.per != nil {
			size = count{p.lenKey(it.per): len(it.els)}
		}
		have.add(size, 1)
		out = append(out, it.els...)
		if have.equal(want) {
			return out
		}
		if like == nil && have.like(want) {
			like = slices.Clone(out)
		}
	}
	if dyn == nil {
		return out // fewer elements than keys: all of them are keys
	}
	// No append adds up to the count, but some have its form: the count
	// computed from one slice (len(jobTypes)*6, where the script is made),
	// the list from another of as many elements (six for each sample).
	return like
}

func constInt(v constant.Value) (int, bool) {
	if v == nil || v.Kind() != constant.Int {
		return 0, false
	}
	n, ok := constant.Int64Val(v)
	return int(n), ok && n == int64(int(n))
}

// commandParam is the index of the command name among a redigo sender's
// parameters, or -1.
func commandParam(sig *types.Signature) int {
	for i := 0; i < sig.Params().Len(); i++ {
		if b, ok := sig.Params().At(i).Type().(*types.Basic); ok && b.Kind() == types.String {
			return i
		}
	}
	return -1
}

// sdkPackages are keyguard's own Redis-facing packages: their key and keys
// parameters are Redis keys.
var sdkPackages = map[string]bool{
	"github.com/keyguard/keyguard/guard":     true,
	"github.com/keyguard/keyguard/ttlpolicy": true,
	"github.com/keyguard/keyguard/hotkey":    true,
}

// keyParamNames are the names go-redis gives its key parameters
// (Set(ctx, key, …), Del(ctx, keys…), Rename(ctx, key, newkey),
// LMove(ctx, source, destination, …), Eval(ctx, script, keys, …)).
var keyParamNames = map[string]bool{
	"key": true, "keys": true, "newkey": true, "source": true, "destination": true,
	"dest": true, "destKey": true, "sourceKey": true, "sourceKeys": true, "stream": true, "store": true,
}

// keyFields are the key fields of go-redis and SDK argument structs.
var keyFields = map[string]bool{
	goRedis + ".ZStore.Keys":                       true,
	goRedis + ".XAddArgs.Stream":                   true,
	"github.com/keyguard/keyguard/guard.SetOp.Key": true,
}

// pkg is the state of one package's check.
type pkg struct {
	pass      *analysis.Pass
	c         *keyshape.Classifier
	funcs     map[*types.Func]*ast.FuncDecl
	keyParams map[*types.Func]map[int]bool
	defs      map[*types.Var][]ast.Expr // every value assigned to a variable; nil: unknown
	emit      func(arg ast.Expr, s keyshape.Shape, f *ast.File)
	command   string // the Redis command of the call being checked
	// shapes are the helpers' key shapes computed so far; cur is the
	// function whose shape is being computed (its parameters become
	// marked holes), busy those under way.
	shapes map[*types.Func]shapeResult
	cur    *ast.FuncDecl
	busy   map[*types.Func]bool
	// via names the project's function the call being checked hands its
	// keys to ("RDB.runScript"), "" for a client's own method.
	via string
	// bufs are the local strings.Builder and bytes.Buffer variables by
	// their declaration, indexed on first use (textbuf.go).
	bufs map[*types.Var]bufDecl
	// busyField are the fields whose shape is being computed.
	busyField map[*types.Var]bool
	// ctrl are the loops and branches around each append call of the
	// package (collectDefs).
	ctrl map[*ast.CallExpr][]ast.Node
	// indexSets are the elements of slice variables replaced at a
	// constant index (args[0] = key).
	indexSets map[*types.Var][]indexSet
}

// indexSet is one args[i] = val.
type indexSet struct {
	i   int
	val ast.Expr
}

func newPkg(pass *analysis.Pass, c *keyshape.Classifier) *pkg {
	p := &pkg{pass: pass, c: c, funcs: map[*types.Func]*ast.FuncDecl{}, keyParams: map[*types.Func]map[int]bool{}, defs: map[*types.Var][]ast.Expr{},
		shapes: map[*types.Func]shapeResult{}, busy: map[*types.Func]bool{}, ctrl: map[*ast.CallExpr][]ast.Node{},
		indexSets: map[*types.Var][]indexSet{}, busyField: map[*types.Var]bool{}}
	for _, f := range pass.Files {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
				if fn, ok := pass.TypesInfo.Defs[fd.Name].(*types.Func); ok {
					p.funcs[fn] = fd
				}
			}
		}
		p.collectDefs(f)
	}
	return p
}

// collectDefs records every assignment to every variable of the package
// (variables are distinct objects, so one table serves all functions).
func (p *pkg) collectDefs(f *ast.File) {
	info := p.pass.TypesInfo
	varOf := func(e ast.Expr) *types.Var {
		id, ok := ast.Unparen(e).(*ast.Ident)
		if !ok {
			return nil
		}
		obj := info.Defs[id]
		if obj == nil {
			obj = info.Uses[id]
		}
		v, _ := obj.(*types.Var)
		return v
	}
	add := func(e ast.Expr, val ast.Expr) {
		if v := varOf(e); v != nil {
			p.defs[v] = append(p.defs[v], val)
		} else if v := p.fieldOf(e); v != nil {
			p.defs[v] = append(p.defs[v], val)
		}
	}
	// stack is the path from the file to the node being looked at: the
	// statements around an append say how often it runs.
	var stack []ast.Node
	ast.Inspect(f, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		stack = append(stack, n)
		switch n := n.(type) {
		case *ast.CallExpr:
			if id, ok := n.Fun.(*ast.Ident); ok && id.Name == "append" {
				p.ctrl[n] = controls(stack)
			}
		case *ast.CompositeLit:
			// A struct's fields, keyed (T{prefix: v}) or in order (T{v}).
			t := info.TypeOf(n)
			if t == nil {
				break
			}
			st, ok := t.Underlying().(*types.Struct)
			if !ok {
				break
			}
			for i, el := range n.Elts {
				if kv, ok := el.(*ast.KeyValueExpr); ok {
					if id, ok := kv.Key.(*ast.Ident); ok {
						if v, ok := info.Uses[id].(*types.Var); ok && v.IsField() {
							p.defs[v] = append(p.defs[v], kv.Value)
						}
					}
				} else if i < st.NumFields() {
					p.defs[st.Field(i)] = append(p.defs[st.Field(i)], el)
				}
			}
		case *ast.AssignStmt:
			for i, l := range n.Lhs {
				var val ast.Expr
				if (n.Tok == token.DEFINE || n.Tok == token.ASSIGN) && len(n.Lhs) == len(n.Rhs) {
					val = n.Rhs[i]
				}
				add(l, val)
				// args[0] = key: an element replaced by a constant index
				if ix, ok := l.(*ast.IndexExpr); ok && val != nil && n.Tok == token.ASSIGN {
					if v := varOf(ix.X); v != nil {
						if k, ok := constInt(info.Types[ix.Index].Value); ok && k >= 0 {
							p.indexSets[v] = append(p.indexSets[v], indexSet{k, val})
						}
					}
				}
			}
		case *ast.ValueSpec:
			for i, name := range n.Names {
				if len(n.Values) == len(n.Names) {
					add(name, n.Values[i])
				} else if len(n.Values) > 0 {
					add(name, nil)
				}
			}
		case *ast.RangeStmt:
			if n.Key != nil {
				add(n.Key, nil)
			}
			if n.Value != nil {
				add(n.Value, nil)
			}
		case *ast.IncDecStmt:
			add(n.X, nil)
		case *ast.UnaryExpr:
			if n.Op == token.AND {
				add(n.X, nil)
			}
		}
		return true
	})
}

// controls are the statements of stack, from the innermost function out,
// that decide how often its last node runs: loops and branches.
func controls(stack []ast.Node) []ast.Node {
	var out []ast.Node
	for i := len(stack) - 2; i >= 0; i-- {
		switch n := stack[i].(type) {
		case *ast.FuncDecl, *ast.FuncLit:
			return out
		case *ast.RangeStmt, *ast.ForStmt, *ast.IfStmt, *ast.SwitchStmt, *ast.TypeSwitchStmt, *ast.SelectStmt:
			out = append(out, n)
		}
	}
	return out
}

// def is the one value a variable ever gets, or nil.
func (p *pkg) def(v *types.Var) ast.Expr {
	ds := p.defs[v]
	if len(ds) != 1 {
		return nil
	}
	return ds[0]
}

// ownField is the field e selects when it is an unexported field of a
// struct of the package: every value it is given is in the package, so
// its defs are all of them. nil otherwise.
func (p *pkg) ownField(e ast.Expr) *types.Var {
	v := p.fieldOf(e)
	if v == nil || v.Exported() || v.Pkg() != p.pass.Pkg {
		return nil
	}
	return v
}

// fieldOf is the field e selects (x.prefix), or nil.
func (p *pkg) fieldOf(e ast.Expr) *types.Var {
	sel, ok := ast.Unparen(e).(*ast.SelectorExpr)
	if !ok {
		return nil
	}
	if s := p.pass.TypesInfo.Selections[sel]; s != nil && s.Kind() == types.FieldVal {
		v, _ := s.Obj().(*types.Var)
		return v
	}
	return nil
}

// fieldShape is the key shape a string field v (an ownField: an exported
// one may be set elsewhere) holds: every value the package gives it (in
// composite literals, T{prefix: "app:jobs:"}, and assignments, x.prefix =
// …) has one shape with some literal text; a field whose address is
// taken may hold anything.
func (p *pkg) fieldShape(v *types.Var, depth int) (keyshape.Shape, bool) {
	if !isString(v.Type()) {
		return keyshape.Shape{}, false
	}
	ds := p.defs[v]
	if len(ds) == 0 || p.busyField[v] {
		return keyshape.Shape{}, false
	}
	p.busyField[v] = true
	defer delete(p.busyField, v)
	var got keyshape.Shape
	for i, d := range ds {
		if d == nil {
			return keyshape.Shape{}, false
		}
		s, b := p.eval(d, depth+1)
		if b || !hasLiteral(s) || s.HasParam() || i > 0 && s.String() != got.String() {
			return keyshape.Shape{}, false
		}
		got = s
	}
	return got, true
}

// keyArgs returns the arguments of call that Redis receives as keys.
func (p *pkg) keyArgs(call *ast.CallExpr) []ast.Expr {
	keys, _ := p.keyArgsAll(call)
	return keys
}

// keyArgsAll is keyArgs, and the slice arguments whose elements cannot
// be seen (a []string parameter handed on whole).
func (p *pkg) keyArgsAll(call *ast.CallExpr) (keys, slices []ast.Expr) {
	fn := callee(p.pass.TypesInfo, call)
	if fn == nil || fn.Pkg() == nil {
		return nil, nil
	}
	sig := fn.Type().(*types.Signature)
	params := p.keyParams[fn]
	if params == nil {
		var kp KeyParams
		if fn.Pkg() != p.pass.Pkg && p.pass.ImportObjectFact(fn, &kp) {
			params = map[int]bool{}
			for _, i := range kp.Params {
				params[i] = true
			}
		}
	}
	path := fn.Pkg().Path()
	// go-redis's and the SDK's own code passes keys around as parameters:
	// only calls from outside the package are Redis calls made by a service.
	if params == nil && path == redigo && path != p.pass.Pkg.Path() && redigoSends[fn.Name()] {
		if n, dyn, ok := p.scriptCount(call, fn); ok && (n != 0 || dyn != nil) {
			return p.scriptKeys(call, sig, n, dyn), nil
		}
		if i := commandParam(sig); i >= 0 && sig.Variadic() && i == sig.Params().Len()-2 {
			return p.doKeys(call, i), nil
		}
		return nil, nil
	}
	if params == nil && ((namedKeyParams(path) || sdkPackages[path]) && path != p.pass.Pkg.Path() || redisInterface(fn)) && fn.Exported() {
		if path == goRedis && fn.Name() == "Do" {
			return p.doKeys(call, 1), nil
		}
		params = map[int]bool{}
		for i := 0; i < sig.Params().Len(); i++ {
			v := sig.Params().At(i)
			if keyParamNames[v.Name()] && isStringish(v.Type()) {
				params[i] = true
			}
		}
	}
	if len(params) == 0 {
		return nil, nil
	}
	var out []ast.Expr
	n := sig.Params().Len()
	for j, a := range call.Args {
		i := j
		if sig.Variadic() && i >= n-1 {
			i = n - 1
		}
		if !params[i] {
			continue
		}
		if sig.Variadic() && i == n-1 && !call.Ellipsis.IsValid() {
			out = append(out, a)
			continue
		}
		if t := p.pass.TypesInfo.TypeOf(a); t != nil && isSlice(t) {
			els := p.elements(a)
			if els == nil {
				slices = append(slices, a)
			}
			out = append(out, els...)
			continue
		}
		out = append(out, a)
	}
	return out, slices
}

// viaOf names a call's callee when it is one of the project's functions
// that hands a parameter to Redis (a KeyParams function): Type.Method or
// pkg.Func.
func (p *pkg) viaOf(call *ast.CallExpr) string {
	fn := callee(p.pass.TypesInfo, call)
	if fn == nil || fn.Pkg() == nil {
		return ""
	}
	if p.keyParams[fn] == nil {
		var kp KeyParams
		if fn.Pkg() == p.pass.Pkg || !p.pass.ImportObjectFact(fn, &kp) {
			return ""
		}
	}
	if recv := fn.Type().(*types.Signature).Recv(); recv != nil {
		t := recv.Type()
		if ptr, ok := t.(*types.Pointer); ok {
			t = ptr.Elem()
		}
		if n, ok := t.(*types.Named); ok {
			return n.Obj().Name() + "." + fn.Name()
		}
	}
	return fn.Pkg().Name() + "." + fn.Name()
}

// redisInterface reports a method of a project's own interface over the
// client (type rediser interface { Del(ctx, keys ...string) *redis.IntCmd }):
// its results are go-redis commands, so its parameters are go-redis's.
func redisInterface(fn *types.Func) bool {
	sig := fn.Type().(*types.Signature)
	if sig.Recv() == nil || sig.Results().Len() == 0 {
		return false
	}
	if _, ok := sig.Recv().Type().Underlying().(*types.Interface); !ok {
		return false
	}
	t := sig.Results().At(0).Type()
	if ptr, ok := t.(*types.Pointer); ok {
		t = ptr.Elem()
	}
	n, ok := t.(*types.Named)
	return ok && n.Obj().Pkg() != nil && (n.Obj().Pkg().Path() == goRedis || n.Obj().Pkg().Path() == rueidisCompat)
}

// elements are the elements of a []string literal, directly or through a
// variable assigned once; nil when they cannot be seen.
func (p *pkg) elements(e ast.Expr) []ast.Expr {
	for range 8 {
		switch x := ast.Unparen(e).(type) {
		case *ast.CompositeLit:
			var out []ast.Expr
			for _, el := range x.Elts {
				if kv, ok := el.(*ast.KeyValueExpr); ok {
					el = kv.Value
				}
				out = append(out, el)
			}
			return out
		case *ast.Ident:
			v, _ := p.pass.TypesInfo.Uses[x].(*types.Var)
			if v == nil {
				return nil
			}
			if p.def(v) == nil {
				return p.appended(v)
			}
			e = p.def(v)
		default:
			return nil
		}
	}
	return nil
}

// appended are the elements of a slice variable given a literal once and
// then only grown with append(v, x…): every element it may hold; nil when
// any other assignment hides them.
func (p *pkg) appended(v *types.Var) []ast.Expr {
	var out []ast.Expr
	lits := 0
	for _, d := range p.defs[v] {
		switch x := ast.Unparen(d).(type) {
		case *ast.CompositeLit:
			lits++
			out = append(out, p.elements(x)...)
		case *ast.CallExpr:
			if p.emptyMake(x) {
				lits++
				continue
			}
			els, ok := p.appendTo(x, v)
			if !ok {
				return nil
			}
			out = append(out, els...)
		default:
			return nil
		}
	}
	if lits != 1 {
		return nil
	}
	return out
}

// isSlice reports a slice type.
func isSlice(t types.Type) bool {
	_, ok := t.Underlying().(*types.Slice)
	return ok
}

// appendTo returns the elements call appends to v when it is
// append(v, x…) with the elements listed.
func (p *pkg) appendTo(call *ast.CallExpr, v *types.Var) ([]ast.Expr, bool) {
	id, ok := call.Fun.(*ast.Ident)
	if !ok || id.Name != "append" || len(call.Args) == 0 || call.Ellipsis.IsValid() {
		return nil, false
	}
	if self, ok := ast.Unparen(call.Args[0]).(*ast.Ident); !ok || p.pass.TypesInfo.Uses[self] != v {
		return nil, false
	}
	return call.Args[1:], true
}

// emptyMake reports whether call is make([]T, 0) or make([]T, 0, n): a
// slice with no element yet.
func (p *pkg) emptyMake(call *ast.CallExpr) bool {
	id, ok := call.Fun.(*ast.Ident)
	if !ok || id.Name != "make" || len(call.Args) < 2 || p.pass.TypesInfo.Uses[id] != types.Universe.Lookup("make") {
		return false
	}
	n, ok := constInt(p.pass.TypesInfo.Types[call.Args[1]].Value)
	return ok && n == 0
}

// argItem is one append to an argument list: its elements, and how often
// it runs: once (per nil and !cond), once for each element of per (the
// one loop around it ranges over per), or a number of times not known
// (cond: a branch, another loop).
type argItem struct {
	els  []ast.Expr
	per  ast.Expr
	cond bool
}

// argList is how a slice variable is built, in order: a literal or an
// empty make, then appends of elements (the literal's elements are the
// first item); nil when anything else assigns it.
func (p *pkg) argList(v *types.Var) []argItem {
	var out []argItem
	for i, d := range p.defs[v] {
		switch x := ast.Unparen(d).(type) {
		case *ast.CompositeLit:
			if i > 0 {
				return nil
			}
			out = append(out, argItem{els: p.elements(x)})
		case *ast.CallExpr:
			if i == 0 {
				if !p.emptyMake(x) {
					return nil
				}
				continue
			}
			els, ok := p.appendTo(x, v)
			if !ok {
				return nil
			}
			it := argItem{els: els}
			switch c := p.ctrl[x]; {
			case len(c) == 0:
			case len(c) == 1:
				if r, ok := c[0].(*ast.RangeStmt); ok {
					it.per = r.X
				} else {
					it.cond = true
				}
			default:
				it.cond = true
			}
			out = append(out, it)
		default:
			return nil
		}
	}
	return out
}

// count is a number of arguments as the code computes it: a constant and
// a multiple of the length of each slice or map it names (len(jobs)*2+1
// is {"": 1, jobs: 2}).
type count map[string]int

func (c count) add(d count, k int) {
	for x, n := range d {
		c[x] += n * k
		if c[x] == 0 {
			delete(c, x)
		}
	}
}

func (c count) equal(d count) bool { return maps.Equal(c, d) }

// like reports whether c and d have one form: the same constant and the
// same multiples of some lengths, the slices aside (len(a)*6 is like
// len(b)*6, not like len(b)*6+1).
func (c count) like(d count) bool {
	if c[""] != d[""] || len(c) != len(d) {
		return false
	}
	coef := func(x count) []int {
		var out []int
		for k, n := range x {
			if k != "" {
				out = append(out, n)
			}
		}
		slices.Sort(out)
		return out
	}
	a, b := coef(c), coef(d)
	return len(a) > 0 && slices.Equal(a, b)
}

// lenKey names the slice whose length a count holds: its variable, or its
// expression's text.
func (p *pkg) lenKey(e ast.Expr) string {
	e = ast.Unparen(e)
	if id, ok := e.(*ast.Ident); ok {
		if obj := p.pass.TypesInfo.Uses[id]; obj != nil {
			return fmt.Sprintf("%s@%d", id.Name, obj.Pos())
		}
	}
	return types.ExprString(e)
}

// countOf reads e as a count: constants, len(x), sums, products by a
// constant, and a variable assigned once; false when e is anything else.
func (p *pkg) countOf(e ast.Expr, depth int) (count, bool) {
	if depth > 8 {
		return nil, false
	}
	e = ast.Unparen(e)
	if n, ok := constInt(p.pass.TypesInfo.Types[e].Value); ok {
		return count{"": n}, true
	}
	switch x := e.(type) {
	case *ast.Ident:
		if v, ok := p.pass.TypesInfo.Uses[x].(*types.Var); ok && p.def(v) != nil {
			return p.countOf(p.def(v), depth+1)
		}
	case *ast.CallExpr:
		if id, ok := x.Fun.(*ast.Ident); ok && id.Name == "len" && len(x.Args) == 1 && p.pass.TypesInfo.Uses[id] == types.Universe.Lookup("len") {
			return count{p.lenKey(x.Args[0]): 1}, true
		}
	case *ast.BinaryExpr:
		l, lok := p.countOf(x.X, depth+1)
		r, rok := p.countOf(x.Y, depth+1)
		if !lok || !rok {
			return nil, false
		}
		switch x.Op {
		case token.ADD:
			out := count{}
			out.add(l, 1)
			out.add(r, 1)
			return out, true
		case token.MUL:
			if k, ok := r[""]; ok && len(r) == 1 {
				out := count{}
				out.add(l, k)
				return out, true
			}
			if k, ok := l[""]; ok && len(l) == 1 {
				out := count{}
				out.add(r, k)
				return out, true
			}
		}
	}
	return nil, false
}

// doKeys finds the keys of rdb.Do(ctx, "set", key, v) (the command name
// the argument at index from) with the server's own key positions, when
// the command name is a constant.
func (p *pkg) doKeys(call *ast.CallExpr, from int) []ast.Expr {
	if len(call.Args) < from+1 {
		return nil
	}
	args := call.Args[from:]
	if call.Ellipsis.IsValid() {
		// conn.Do("HMSET", redis.Args{}.Add(key).AddFlat(v)...): the
		// elements of redigo's argument list (nil where they are not
		// known) or of a slice literal
		tail, ok := p.redigoArgs(args[len(args)-1])
		if !ok {
			// a slice literal, directly or through a variable
			if tail = p.elements(args[len(args)-1]); tail == nil {
				return nil
			}
		}
		args = append(args[:len(args)-1:len(args)-1], tail...)
	}
	vec := make([]any, len(args))
	for i, a := range args {
		tv := p.pass.TypesInfo.Types[a]
		switch {
		case a == nil:
			vec[i] = "\x00unknown"
		case tv.Value != nil && tv.Value.Kind() == constant.String:
			vec[i] = constant.StringVal(tv.Value)
		case tv.Value != nil && tv.Value.Kind() == constant.Int:
			vec[i] = tv.Value.ExactString()
		default:
			vec[i] = "\x00arg"
		}
	}
	name, ok := vec[0].(string)
	if !ok || strings.HasPrefix(name, "\x00") {
		return nil
	}
	cmd, ok := rediscmd.LookupArgs(vec)
	if !ok {
		return nil
	}
	var out []ast.Expr
	_ = cmd.Keys(vec, func(pos int, _ string, _ rediscmd.KeyFlags) bool {
		if args[pos] != nil {
			out = append(out, args[pos])
		}
		return true
	})
	return out
}

// redigoArgs are the elements of a redigo argument list built in place
// (redis.Args{a}.Add(b, c).AddFlat(v)), in order. What AddFlat adds (the
// fields of a struct or map) is not known: it stands as two unknown
// elements (a field and its value), and nothing after it is known either.
func (p *pkg) redigoArgs(e ast.Expr) ([]ast.Expr, bool) {
	var chain []*ast.CallExpr
	for range 32 {
		switch x := ast.Unparen(e).(type) {
		case *ast.CallExpr:
			sel, ok := ast.Unparen(x.Fun).(*ast.SelectorExpr)
			fn := callee(p.pass.TypesInfo, x)
			if !ok || fn == nil || fn.Type().(*types.Signature).Recv() == nil || typeName(fn.Type().(*types.Signature).Recv().Type()) != redigo+".Args" {
				return nil, false
			}
			chain = append(chain, x)
			e = sel.X
		case *ast.CompositeLit:
			if typeName(p.pass.TypesInfo.TypeOf(x)) != redigo+".Args" {
				return nil, false
			}
			for _, el := range x.Elts {
				if _, ok := el.(*ast.KeyValueExpr); ok {
					return nil, false // elements by index: their order is not seen
				}
			}
			out := append([]ast.Expr(nil), x.Elts...)
			for i := len(chain) - 1; i >= 0; i-- {
				c := chain[i]
				switch callee(p.pass.TypesInfo, c).Name() {
				case "Add":
					if c.Ellipsis.IsValid() {
						return append(out, nil, nil), true
					}
					out = append(out, c.Args...)
				default: // AddFlat
					return append(out, nil, nil), true
				}
			}
			return out, true
		default:
			return nil, false
		}
	}
	return nil, false
}

func isStringish(t types.Type) bool {
	if s, ok := t.Underlying().(*types.Slice); ok {
		t = s.Elem()
	}
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Kind() == types.String
}

// paramIndex is the index of v among fd's parameters, or -1.
func (p *pkg) paramIndex(fd *ast.FuncDecl, v *types.Var) int {
	fn, _ := p.pass.TypesInfo.Defs[fd.Name].(*types.Func)
	if fn == nil {
		return -1
	}
	ps := fn.Type().(*types.Signature).Params()
	for i := 0; i < ps.Len(); i++ {
		if ps.At(i) == v {
			return i
		}
	}
	return -1
}

// wholeParam follows a key argument through variables assigned once and
// returns the string parameter of fd it is, whole, or -1.
func (p *pkg) wholeParam(fd *ast.FuncDecl, e ast.Expr) int {
	for range 8 {
		id, ok := ast.Unparen(e).(*ast.Ident)
		if !ok {
			return -1
		}
		v, _ := p.pass.TypesInfo.Uses[id].(*types.Var)
		if v == nil {
			return -1
		}
		if i := p.paramIndex(fd, v); i >= 0 {
			if len(p.defs[v]) > 0 || !isStringish(v.Type()) {
				return -1 // reassigned: no longer what the caller passed
			}
			return i
		}
		if e = p.def(v); e == nil {
			return -1
		}
	}
	return -1
}

// findKeyParams finds the functions that pass a string parameter whole to
// Redis as a key, directly or through another such function of the
// package, until nothing changes.
func (p *pkg) findKeyParams() {
	for changed := true; changed; {
		changed = false
		for fn, fd := range p.funcs {
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				keys, whole := p.keyArgsAll(call)
				for _, a := range append(keys, whole...) {
					if i := p.wholeParam(fd, a); i >= 0 && !p.keyParams[fn][i] {
						if p.keyParams[fn] == nil {
							p.keyParams[fn] = map[int]bool{}
						}
						p.keyParams[fn][i] = true
						changed = true
					}
				}
				return true
			})
		}
	}
}

// check reports every key argument that is not a builder's key, except a
// parameter passed whole (its callers are checked instead).
func (p *pkg) check() {
	for _, f := range p.pass.Files {
		var stack []*ast.FuncDecl
		ast.Inspect(f, func(n ast.Node) bool {
			if n == nil {
				return true
			}
			switch n := n.(type) {
			case *ast.FuncDecl:
				stack = append(stack[:0], n)
			case *ast.CallExpr:
				p.command = p.commandOf(n)
				p.via = p.viaOf(n)
				for _, a := range p.keyArgs(n) {
					if len(stack) > 0 && stack[0].Body != nil && p.wholeParam(stack[0], a) >= 0 {
						continue
					}
					p.checkKey(a, f)
				}
			case *ast.CompositeLit:
				p.command = compositeCommand[typeName(p.pass.TypesInfo.TypeOf(n))]
				p.via = ""
				for _, a := range p.keyFieldValues(n) {
					p.checkKey(a, f)
				}
			}
			return true
		})
	}
}

func (p *pkg) checkKey(a ast.Expr, f *ast.File) {
	s, builder := p.eval(a, 0)
	if !builder {
		p.emit(a, s, f)
	}
}

// keyFieldValues are the key fields set in a composite literal of a
// go-redis or SDK argument struct (redis.ZStore{Keys: …}).
func (p *pkg) keyFieldValues(cl *ast.CompositeLit) []ast.Expr {
	t := p.pass.TypesInfo.TypeOf(cl)
	if t == nil {
		return nil
	}
	if ptr, ok := t.(*types.Pointer); ok {
		t = ptr.Elem()
	}
	named, ok := t.(*types.Named)
	if !ok || named.Obj().Pkg() == nil {
		return nil
	}
	prefix := named.Obj().Pkg().Path() + "." + named.Obj().Name() + "."
	var out []ast.Expr
	for _, el := range cl.Elts {
		kv, ok := el.(*ast.KeyValueExpr)
		if !ok {
			continue
		}
		id, ok := kv.Key.(*ast.Ident)
		if !ok || !keyFields[prefix+id.Name] {
			continue
		}
		if _, ok := p.pass.TypesInfo.TypeOf(kv.Value).Underlying().(*types.Slice); ok {
			out = append(out, p.elements(kv.Value)...)
		} else {
			out = append(out, kv.Value)
		}
	}
	return out
}

// compositeCommand is the command an argument struct's keys go to.
var compositeCommand = map[string]string{
	goRedis + ".ZStore":                        "zunionstore",
	goRedis + ".XAddArgs":                      "xadd",
	"github.com/keyguard/keyguard/guard.SetOp": "hset",
}

func typeName(t types.Type) string {
	if ptr, ok := t.(*types.Pointer); ok {
		t = ptr.Elem()
	}
	if n, ok := t.(*types.Named); ok && n.Obj().Pkg() != nil {
		return n.Obj().Pkg().Path() + "." + n.Obj().Name()
	}
	return ""
}

// commandOf is the Redis command a call sends: the go-redis method's name,
// Do's constant first argument, HSET for the guard's writes.
func (p *pkg) commandOf(call *ast.CallExpr) string {
	fn := callee(p.pass.TypesInfo, call)
	if fn == nil || fn.Pkg() == nil {
		return ""
	}
	at := -1 // the argument naming the command
	switch path := fn.Pkg().Path(); {
	case path == goRedis && fn.Name() == "Do":
		at = 1
	case path == redigo && redigoSends[fn.Name()]:
		if n, dyn, ok := p.scriptCount(call, fn); ok && (n != 0 || dyn != nil) {
			return "evalsha"
		}
		at = commandParam(fn.Type().(*types.Signature))
	case path == rueidisCmds:
		return p.builderCommand(call)
	case path == goRedis || path == rueidisCompat:
		return strings.ToLower(fn.Name())
	case path == "github.com/keyguard/keyguard/guard":
		return "hset"
	case sdkPackages[path]:
		return strings.ToLower(fn.Name())
	}
	if at >= 0 && len(call.Args) > at {
		if v := p.pass.TypesInfo.Types[call.Args[at]].Value; v != nil && v.Kind() == constant.String {
			return strings.ToLower(constant.StringVal(v))
		}
	}
	return ""
}

// builderCommandName is the command a rueidis Builder method starts:
// its name (Hset → hset), or the container of a subcommand
// (ObjectEncoding → object).
func builderCommandName(method string) string {
	name := strings.ToLower(method)
	if _, ok := rediscmd.Lookup(name); ok {
		return name
	}
	for i := 1; i < len(method); i++ {
		if method[i] >= 'A' && method[i] <= 'Z' {
			first := strings.ToLower(method[:i])
			if _, ok := rediscmd.Lookup(first); ok {
				return first
			}
			break
		}
	}
	return name
}

// builderCommand is the command of a rueidis builder chain: the name of
// the Builder's method it starts with (B().Hset().Key(k) → hset),
// followed down the chain of calls and through variables assigned once.
func (p *pkg) builderCommand(call *ast.CallExpr) string {
	var e ast.Expr = call
	for range 32 {
		switch x := ast.Unparen(e).(type) {
		case *ast.CallExpr:
			sel, ok := ast.Unparen(x.Fun).(*ast.SelectorExpr)
			if !ok {
				return ""
			}
			if fn := callee(p.pass.TypesInfo, x); fn != nil && fn.Type().(*types.Signature).Recv() != nil &&
				typeName(fn.Type().(*types.Signature).Recv().Type()) == rueidisCmds+".Builder" {
				return builderCommandName(fn.Name())
			}
			e = sel.X
		case *ast.Ident:
			v, _ := p.pass.TypesInfo.Uses[x].(*types.Var)
			if v == nil || p.def(v) == nil {
				return ""
			}
			e = p.def(v)
		default:
			return ""
		}
	}
	return ""
}
