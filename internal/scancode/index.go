package scancode

import (
	"slices"
	"strings"

	sitter "github.com/smacker/go-tree-sitter"

	"github.com/keyguard/keyguard/internal/keyshape"
)

// maxSinkDepth: a function is a key sink when its parameter reaches a
// client's key argument directly or through this many more of the
// project's functions.
const maxSinkDepth = 3

// project is the repository-wide index of one language family's files
// (Java; Python; TypeScript and JavaScript): the functions and classes
// they declare, so that a key built in one file and sent in another, a
// wrapper around the client, a helper that returns a key and a constant
// of another file are followed.
type project struct {
	files   []*srcFile
	funcs   map[string][]*funcDef  // by simple name
	classes map[string][]*classDef // by simple name
	sinks   map[*funcDef][]sink    // computed summaries
	rets    map[*funcDef]*ret
	busy    map[*funcDef]bool // summaries under way (recursion)
	// cut: a summary under way met the depth bound or a recursion, so it
	// holds for its depth only: it is kept in cutSinks by depth, and a
	// caller from another depth computes its own (kept in sinks, it
	// depended on which caller came first).
	cut      bool
	cutSinks map[cutKey][]sink
	lambdas  []*funcDef      // lambdas called through a name, as functions
	modules  map[string]bool // Python: the modules' names
	// clientRet says which functions return a client (computed).
	clientRet map[*funcDef]bool
	// fields are the fields Python classes set, by name; clientField
	// says which of them a class sets to a client (both computed).
	fields      map[string][]fieldBind
	clientField map[string]bool
	// prefixes are the Spring cache key prefixes configured in code, by
	// cache name, "" for every cache (computed).
	prefixes map[string]prefixFunc
	// conf is the Spring configuration's properties (Java), for the
	// fields annotated @Value and the cache key prefix.
	conf *springConfig
}

// funcDef is one function, method or named lambda of the project.
type funcDef struct {
	f      *srcFile
	node   *sitter.Node // the declaration: its span is the parameters' scope
	body   *sitter.Node // the body, or the expression an arrow or lambda returns
	name   string
	class  *classDef // the class it is a method of, nil for a function
	params []string  // positional parameter names (self and cls left out)
	rest   int       // index of a variadic parameter (String... / *args / ...rest), -1 when none
	static bool      // a module-level function or a static method
	getter bool      // a property getter: obj.name without a call
	// varargs: a JavaScript function that reads its arguments object,
	// which takes any number of arguments
	varargs bool
	// typ is the declared return type, "" when none.
	typ string
	// calls are the calls in its body (its nested functions' left out).
	calls []*sitter.Node
}

// qualified is the name a finding gives: Class.method or function.
func (d *funcDef) qualified() string {
	if d.class != nil {
		return d.class.name + "." + d.name
	}
	return d.name
}

// classDef is one class or interface of the project.
type classDef struct {
	f     *srcFile
	node  *sitter.Node
	name  string
	bases []string // superclass and interfaces, simple names
}

// sink says that a function's parameter reaches Redis as a key, whole,
// or, with args, as arguments of a command.
type sink struct {
	param   int
	elems   bool // every argument from param on (a variadic parameter)
	command string
	// args: the parameter's values are arguments of command, not each a
	// key: the call's arguments from param on (elems: a variadic
	// parameter, or JavaScript's arguments), else the elements of the
	// list passed at param. They are the command's arguments from index
	// from on, and the command's key positions say which are keys (EVAL's
	// numkeys read among them).
	args bool
	from int
	// pre are the literal arguments of command before from, as the
	// function passes them ("" where not a literal): EVALSHA's numkeys
	// where the function gives it.
	pre []string
	// recv, with byRecv: the parameter that is the command's receiver,
	// which a call must pass a client to.
	recv   int
	byRecv bool
	// shape, when not nil: the key the function composes of its
	// parameters with nothing but separators (f"{key}:{slot}"); a call
	// puts its arguments in their places (param is -1).
	shape *keyshape.Shape
}

// ret is the shape of the key a helper returns, its parameters marked.
type ret struct {
	s  keyshape.Shape
	ok bool
}

func newProject() *project {
	return &project{funcs: map[string][]*funcDef{}, classes: map[string][]*classDef{},
		sinks: map[*funcDef][]sink{}, rets: map[*funcDef]*ret{}, busy: map[*funcDef]bool{}}
}

// add indexes a parsed file.
func (p *project) add(f *srcFile) {
	f.proj = p
	p.files = append(p.files, f)
	for _, c := range f.classes {
		for i, b := range c.bases { // BaseRedis = Redis; class ArqRedis(BaseRedis)
			for _, v := range f.values(b, c.node) {
				if t := typeOf(v); t == "identifier" || t == "attribute" || t == "subscript" || t == "member_expression" {
					c.bases[i] = baseName(f.text(v))
				}
			}
		}
		p.classes[c.name] = append(p.classes[c.name], c)
	}
	for _, d := range f.funcs {
		if d.class == nil && d.node != nil {
			d.class = f.classOf(d.node)
		}
		p.funcs[d.name] = append(p.funcs[d.name], d)
	}
	for _, n := range f.calls {
		if d := f.funcAt(n); d != nil {
			d.calls = append(d.calls, n)
		}
	}
}

// classOf is the innermost class of the file whose body holds n.
func (f *srcFile) classOf(n *sitter.Node) *classDef {
	bySpan := f.classSpans()
	for p := n.Parent(); p != nil; p = p.Parent() {
		if c, ok := bySpan[spanOf(p)]; ok && c.node.Type() == p.Type() {
			return c
		}
	}
	return nil
}

// classSpans are the file's classes by the span of their node, made
// once.
func (f *srcFile) classSpans() map[span]*classDef {
	if f.classBySpan == nil {
		f.classBySpan = make(map[span]*classDef, len(f.classes))
		for _, c := range f.classes {
			f.classBySpan[spanOf(c.node)] = c
		}
	}
	return f.classBySpan
}

// funcAt is the innermost function of the file around n: up the tree
// from n to the first node that declares one.
func (f *srcFile) funcAt(n *sitter.Node) *funcDef {
	if f.funcBySpan == nil {
		f.funcBySpan = make(map[span]*funcDef, len(f.funcs))
		for _, d := range f.funcs {
			f.funcBySpan[spanOf(d.node)] = d
		}
	}
	for p := n; p != nil; p = p.Parent() {
		if d, ok := f.funcBySpan[spanOf(p)]; ok && d.node.Type() == p.Type() {
			return d
		}
	}
	return nil
}

// classAt is the innermost class of the file around n.
func (f *srcFile) classAt(n *sitter.Node) *classDef { return f.classOf(n) }

// methods are the project's methods named name of class cls, its
// subclasses and implementations (an interface's call reaches them) and
// its bases.
func (p *project) methods(cls, name string) []*funcDef {
	want := p.related(cls)
	var out []*funcDef
	for _, d := range p.funcs[name] {
		if d.class != nil && want[d.class.name] {
			out = append(out, d)
		}
	}
	return out
}

// related are the classes whose members an object of class cls may
// have or reach: cls, what it extends, what extends or implements it
// (an interface's or a base's call), and what those extend (a mixin's
// self is its subclass).
func (p *project) related(cls string) map[string]bool {
	want := map[string]bool{cls: true}
	// the class, what it extends (the method may be inherited) and what
	// extends or implements it (an interface's or a base's call)
	for changed := true; changed; {
		changed = false
		for _, cs := range p.classes {
			for _, c := range cs {
				if want[c.name] {
					for _, b := range c.bases {
						if !want[b] {
							want[b], changed = true, true
						}
					}
				}
				for _, b := range c.bases {
					if b == cls && !want[c.name] {
						want[c.name], changed = true, true
					}
				}
			}
		}
	}
	return want
}

// memberValues are the values and declared types self.name (this.name)
// gets in the classes related to cls other than the one at hand (an
// inherited or a mixin's field), each with its file.
func (p *project) memberValues(cls, name string) []memberValue {
	var out []memberValue
	for c := range p.related(cls) {
		if c == cls {
			continue
		}
		for _, cd := range p.classes[c] {
			for _, b := range cd.f.binds[name] {
				if spanOf(cd.node).holds(b.scope) {
					out = append(out, memberValue{f: cd.f, value: b.value, typ: b.typ})
				}
			}
		}
	}
	return out
}

type memberValue struct {
	f     *srcFile
	value *sitter.Node
	typ   string
}

// clientTyped reports a declared type that is a client, or a project
// class that extends one.
func (f *srcFile) clientTyped(typ string) bool {
	if typ == "" {
		return false
	}
	if f.lang.clientType(typ) {
		return true
	}
	b := baseName(typ)
	return f.proj != nil && f.proj.isClass(b) && f.proj.extends(b, f.lang.clientType)
}

// functions are the project's module-level functions named name: the
// file's own first, else those of every file.
func (p *project) functions(f *srcFile, name string) []*funcDef {
	var here, all []*funcDef
	for _, d := range p.funcs[name] {
		if d.class != nil {
			continue
		}
		all = append(all, d)
		if d.f == f {
			here = append(here, d)
		}
	}
	if here != nil {
		return here
	}
	return all
}

// isClass reports whether the project declares a class named name.
func (p *project) isClass(name string) bool { return len(p.classes[name]) > 0 }

// runsAs are the project's classes that extend cls, directly or not, and
// whose instances run cls's method (none of them, nor a class between
// them and cls, declares it again), in name order.
func (p *project) runsAs(cls, method string) []string {
	sub := func(name, of string) bool {
		return name != of && p.extends(name, func(s string) bool { return s == of })
	}
	var out []string
	for name := range p.classes {
		if !sub(name, cls) {
			continue
		}
		overridden := false
		for _, d := range p.funcs[method] {
			if d.class != nil && sub(d.class.name, cls) && (d.class.name == name || sub(name, d.class.name)) {
				overridden = true
			}
		}
		if !overridden {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// extends reports whether the project's class name extends, directly or
// not, a class or interface whose simple name says(...) holds.
func (p *project) extends(name string, says func(string) bool) bool {
	seen := map[string]bool{}
	var walk func(n string, depth int) bool
	walk = func(n string, depth int) bool {
		if seen[n] || depth > 8 {
			return false
		}
		seen[n] = true
		for _, c := range p.classes[n] {
			for _, b := range c.bases {
				if says(b) || walk(b, depth+1) {
					return true
				}
			}
		}
		return false
	}
	return walk(name, 0)
}

// cutKey is a summary computed at a depth.
type cutKey struct {
	d     *funcDef
	depth int
}

// fits reports whether a call with n positional arguments can call d.
func (d *funcDef) fits(n int) bool {
	if d.rest >= 0 {
		return n >= d.rest
	}
	// A JavaScript method may be called with more arguments than it
	// declares (a base class passes options some subclasses take); its
	// class, not its name, made it the callee.
	return d.varargs || n <= len(d.params) || d.class != nil && d.f.lang.extraArgs
}

// sinksOf is the summary of d: which parameters reach Redis as keys,
// whole, directly or through depth more of the project's functions.
func (p *project) sinksOf(d *funcDef, depth int) []sink {
	if s, ok := p.sinks[d]; ok {
		return s
	}
	if p.busy[d] || depth > maxSinkDepth {
		p.cut = true
		return nil
	}
	if s, ok := p.cutSinks[cutKey{d, depth}]; ok {
		p.cut = true
		return s
	}
	p.busy[d] = true
	defer delete(p.busy, d)
	outer := p.cut
	p.cut = false
	f := d.f
	saved := f.cur
	defer func() { f.cur = saved }()
	var out []sink
	add := func(s sink) {
		for _, o := range out {
			if o.shape == nil && s.shape == nil && o.param == s.param ||
				o.shape != nil && s.shape != nil && o.shape.String() == s.shape.String() {
				return
			}
		}
		out = append(out, s)
	}
	whole := func(a *sitter.Node, command string) {
		f.cur = d
		if i, elems, s := f.paramShape(a); i >= 0 {
			add(sink{param: i, elems: elems, command: command})
		} else if s != nil && composed(*s) {
			add(sink{param: -1, command: command, shape: s})
		}
	}
	handsOn := func(list *sitter.Node, command string, from int, pre []string, recv *sitter.Node) {
		f.cur = d
		i, rest, ok := f.argsParam(list)
		if !ok {
			return
		}
		s := sink{param: i, elems: rest, command: command, args: true, from: from, pre: pre}
		if recv != nil {
			if s.recv, s.byRecv = f.curParam(recv), true; s.recv < 0 {
				return
			}
		}
		add(s)
	}
	for _, n := range d.calls {
		f.cur = d
		if f.lang.spread != nil {
			// Before the keys: a variadic parameter handed on whole is
			// read as the command's arguments, not each as a key.
			if command, pre, list, recv := f.lang.spread(f, n); list != nil {
				handsOn(list, command, len(pre), f.literals(pre), recv)
			}
		}
		f.cur = d
		keys, command := f.lang.keyArgs(f, n)
		for _, a := range keys {
			whole(a, command)
		}
		if keys != nil {
			continue
		}
		for _, k := range p.sinkArgsDepth(f, n, depth+1) {
			switch {
			case k.list:
				handsOn(k.arg, k.command, k.from, k.pre, nil)
			case k.shape != nil:
				if composed(*k.shape) {
					add(sink{param: -1, command: k.command, shape: k.shape})
				}
			default:
				whole(k.arg, k.command)
			}
		}
	}
	if !p.cut {
		p.sinks[d] = out
	} else {
		if p.cutSinks == nil {
			p.cutSinks = map[cutKey][]sink{}
		}
		p.cutSinks[cutKey{d, depth}] = out
	}
	p.cut = p.cut || outer
	return out
}

// paramOf is the parameter of f.cur that a key argument is, whole, or an
// element of when the parameter is variadic (keys[0], for key of keys);
// -1 when it is not one.
func (f *srcFile) paramOf(a *sitter.Node) (int, bool) {
	i, elems, _ := f.paramShape(a)
	return i, elems
}

// paramShape is paramOf, and the shape of a when it was evaluated to
// tell (nil when it was not).
func (f *srcFile) paramShape(a *sitter.Node) (int, bool, *keyshape.Shape) {
	if f.cur == nil || a == nil {
		return -1, false, nil
	}
	switch typeOf(a) {
	case "identifier": // for (String key : keys)
		if bs := f.lookup(f.text(a), a); len(bs) == 1 && bs[0].iter != nil && typeOf(bs[0].iter) == "identifier" {
			if i := slices.Index(f.cur.params, f.text(bs[0].iter)); i >= 0 && i == f.cur.rest {
				return i, true, nil
			}
		}
	case "array_access", "subscript":
		arr := a.ChildByFieldName("array")
		if arr == nil {
			arr = a.ChildByFieldName("value")
		}
		if typeOf(arr) == "identifier" {
			if i := slices.Index(f.cur.params, f.text(arr)); i >= 0 && i == f.cur.rest {
				return i, true, nil
			}
		}
		return -1, false, nil
	}
	s, b := f.eval(a, 0)
	if b {
		return -1, false, nil // a builder's key
	}
	i := s.WholeParam()
	return i, i >= 0 && i == f.cur.rest, &s
}

// loopOver marks the binding of a loop variable just declared with what
// the loop iterates over.
func (f *srcFile) loopOver(name string, iter *sitter.Node) {
	if bs := f.binds[name]; len(bs) > 0 && iter != nil {
		bs[len(bs)-1].iter = iter
	}
}

// sinkArg is a caller's argument that reaches Redis as a key through the
// project's function via; with list, a list the caller hands on whose
// values are the command's arguments from index from on (its own
// variadic parameter, or a list it was given), for the caller's own
// summary; with shape, the key a function composes of its parameters,
// the caller's arguments in their places (arg: the first of them, where
// the finding is reported).
type sinkArg struct {
	arg     *sitter.Node
	command string
	via     string
	list    bool
	from    int
	pre     []string
	shape   *keyshape.Shape
}

// composed reports whether s is a key made of the parameters of the
// function being summarized with nothing but separators between them
// ({key}:{slot}): where it is built it says nothing of the key, which
// its callers' arguments give. A value not known there ({prefix}{id},
// prefix a field) keeps the key where it is built.
func composed(s keyshape.Shape) bool {
	if len(s.Parts) < 2 {
		return false // one parameter whole is a plain sink
	}
	for _, p := range s.Parts {
		if p.Hole && p.Param == 0 || !p.Hole && strings.Trim(p.Lit, ":_-./|#") != "" {
			return false
		}
	}
	return true
}

// composedAt is the key a call of a function that composes shape of its
// parameters sends: the call's arguments (as) in their places, reported
// at the first of them.
func (f *srcFile) composedAt(call *sitter.Node, as []*sitter.Node, shape keyshape.Shape, depth int) (sinkArg, bool) {
	var at *sitter.Node
	s := shape.Subst(func(i int) (keyshape.Shape, bool) {
		if i >= len(as) {
			return keyshape.Shape{}, false
		}
		if at == nil {
			at = as[i]
		}
		a, b := f.eval(as[i], depth+1)
		return a, !b
	})
	if at == nil {
		return sinkArg{}, false
	}
	return sinkArg{arg: at, shape: &s}, true
}

// sinkArgs are the arguments of call that the project's functions it
// calls hand to Redis as keys.
func (p *project) sinkArgs(f *srcFile, call *sitter.Node) []sinkArg {
	return p.sinkArgsDepth(f, call, 1)
}

func (p *project) sinkArgsDepth(f *srcFile, call *sitter.Node, depth int) []sinkArg {
	if p == nil {
		return nil
	}
	if depth > maxSinkDepth {
		p.cut = true
		return nil
	}
	ds := f.lang.callees(f, call)
	if len(ds) == 0 {
		return nil
	}
	as := f.positional(call)
	var out []sinkArg
	seen := map[*sitter.Node]bool{}
	for _, d := range ds {
		if !d.fits(len(as)) {
			continue
		}
		for _, s := range p.sinksOf(d, depth) {
			if s.args {
				for _, k := range f.handedOn(call, s) {
					if !seen[k.arg] {
						seen[k.arg] = true
						k.via = d.qualified()
						out = append(out, k)
					}
				}
				continue
			}
			if s.shape != nil {
				if k, ok := f.composedAt(call, as, *s.shape, depth); ok {
					k.command, k.via = s.command, d.qualified()
					out = append(out, k)
				}
				continue
			}
			if s.param >= len(as) && f.keywordArg(call, d.params[s.param]) == nil {
				continue
			}
			if s.param >= len(as) { // cache.put(key=k, value=v)
				a := f.keywordArg(call, d.params[s.param])
				if !seen[a] {
					seen[a] = true
					out = append(out, sinkArg{arg: a, command: s.command, via: d.qualified()})
				}
				continue
			}
			pick := as[s.param : s.param+1]
			if s.elems {
				pick = as[s.param:]
			}
			if kw := f.keywordArg(call, d.params[s.param]); kw != nil {
				pick = []*sitter.Node{kw}
			}
			for _, a := range pick {
				if !seen[a] {
					seen[a] = true
					out = append(out, sinkArg{arg: a, command: s.command, via: d.qualified()})
				}
			}
		}
	}
	return out
}

// keywordArg is a Python call's keyword argument name=…, nil when none.
func (f *srcFile) keywordArg(call *sitter.Node, name string) *sitter.Node {
	for _, a := range args(call.ChildByFieldName("arguments")) {
		if typeOf(a) == "keyword_argument" && f.text(a.ChildByFieldName("name")) == name {
			return a.ChildByFieldName("value")
		}
	}
	return nil
}

// positional are a call's positional arguments (Python keyword arguments
// and spreads, *xs and ...xs, left out).
func (f *srcFile) positional(call *sitter.Node) []*sitter.Node {
	return slices.DeleteFunc(f.positionalSpread(call), func(a *sitter.Node) bool { return spreadList(a) != nil })
}

// retOf is the shape of the key d returns, its parameters marked; ok
// false when it returns no one shape (several different ones, none, or a
// value the scan cannot follow at all).
func (p *project) retOf(d *funcDef) (keyshape.Shape, bool) {
	if r, ok := p.rets[d]; ok {
		return r.s, r.ok
	}
	if p.busy[d] || d.body == nil {
		return keyshape.Shape{}, false
	}
	p.busy[d] = true
	defer delete(p.busy, d)
	f := d.f
	var exprs []*sitter.Node
	if t := typeOf(d.body); t == "block" || t == "statement_block" || t == "constructor_body" {
		f.returns(d, d.body, &exprs)
	} else {
		exprs = []*sitter.Node{d.body}
	}
	r := &ret{}
	for i, e := range exprs {
		// A summary holds for every use: self is the function's own
		// class, not the one a use's key is evaluated for (srcFile.self).
		s, b := f.asSelf("", false, func() (keyshape.Shape, bool) { return f.evalIn(d, e, 1) })
		if b || len(s.Parts) == 1 && s.Parts[0].Hole && s.Parts[0].Param == 0 {
			r = &ret{}
			break
		}
		if i == 0 {
			r.s, r.ok = s, true
		} else if s.String() != r.s.String() {
			r = &ret{}
			break
		}
	}
	p.rets[d] = r
	return r.s, r.ok
}

// returns collects the expressions d's return statements give, nested
// functions left out.
func (f *srcFile) returns(d *funcDef, n *sitter.Node, out *[]*sitter.Node) {
	for i := 0; i < int(n.NamedChildCount()); i++ {
		c := n.NamedChild(i)
		switch typeOf(c) {
		case "return_statement":
			if c.NamedChildCount() > 0 {
				*out = append(*out, c.NamedChild(0))
			}
		case "lambda_expression", "lambda", "arrow_function", "function_expression", "function_definition",
			"method_declaration", "class_declaration", "class_definition", "function_declaration", "class_body":
		default:
			f.returns(d, c, out)
		}
	}
}

// projectCall is the shape of the key a call of the project's helper
// returns, with the call's arguments in place of its parameters.
func (f *srcFile) projectCall(call *sitter.Node, depth int) (keyshape.Shape, bool) {
	if f.proj == nil || depth > 10 {
		return keyshape.Shape{}, false
	}
	as := f.positional(call)
	var got keyshape.Shape
	found := false
	for _, d := range f.lang.callees(f, call) {
		if !d.fits(len(as)) {
			continue
		}
		s, ok := f.proj.retOf(d)
		if !ok {
			return keyshape.Shape{}, false
		}
		s = s.Subst(func(i int) (keyshape.Shape, bool) {
			if i >= len(as) {
				return keyshape.Shape{}, false
			}
			a, b := f.eval(as[i], depth+1)
			return a, !b
		})
		if found && s.String() != got.String() {
			return keyshape.Shape{}, false // implementations that disagree
		}
		got, found = s, true
	}
	return got, found
}

// baseName is a type's simple name: generics, arrays, optional markers,
// quotes and packages left out ("Optional['redis.Redis']" stays whole,
// "RedisCache<String>" is RedisCache).
func baseName(typ string) string {
	t := strings.Trim(strings.TrimSpace(typ), `"'`)
	if i := strings.IndexAny(t, "<["); i >= 0 {
		t = t[:i]
	}
	t = strings.TrimSuffix(strings.TrimSpace(t), "?")
	return lastName(t)
}

// lambda is the function of a lambda expression bound to a name.
func (p *project) lambda(f *srcFile, n *sitter.Node) *funcDef {
	for _, d := range p.lambdas {
		if d.node == n {
			return d
		}
	}
	d := &funcDef{f: f, node: n, body: n.ChildByFieldName("body"), name: "lambda", rest: -1}
	f.pythonParams(d, n.ChildByFieldName("parameters"), false)
	p.lambdas = append(p.lambdas, d)
	return d
}

// returnsClient reports whether a function returns a Redis client: its
// declared return type or what it returns says so.
func (p *project) returnsClient(d *funcDef, depth int) bool {
	if r, ok := p.clientRet[d]; ok {
		return r
	}
	if depth > 6 || p.busy[d] {
		return false
	}
	p.busy[d] = true
	defer delete(p.busy, d)
	r := p.computeReturnsClient(d, depth)
	if p.clientRet == nil {
		p.clientRet = map[*funcDef]bool{}
	}
	p.clientRet[d] = r
	return r
}

// returnsClientClass reports whether a function returns a client class
// itself (return self.redis.StrictRedis, return redis.Redis), which its
// callers then call to make a client.
func (p *project) returnsClientClass(d *funcDef) bool {
	if d.body == nil || d.f.lang.name != keyshape.Python {
		return false
	}
	var exprs []*sitter.Node
	if typeOf(d.body) == "block" {
		d.f.returns(d, d.body, &exprs)
	} else {
		exprs = []*sitter.Node{d.body}
	}
	for _, e := range exprs {
		if t := typeOf(e); (t == "attribute" || t == "identifier") && pythonClientType(lastName(d.f.text(e))) {
			return true
		}
	}
	return false
}

func (p *project) computeReturnsClient(d *funcDef, depth int) bool {
	f := d.f
	if f.clientTyped(d.typ) {
		return true
	}
	if d.body == nil {
		return false
	}
	var exprs []*sitter.Node
	if t := typeOf(d.body); t == "block" || t == "statement_block" {
		f.returns(d, d.body, &exprs)
	} else {
		exprs = []*sitter.Node{d.body}
	}
	for _, e := range exprs {
		if f.lang.isClient != nil && f.lang.isClient(f, e, depth+1) {
			return true
		}
	}
	return false
}
