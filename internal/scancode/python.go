package scancode

import (
	"strings"

	sitter "github.com/smacker/go-tree-sitter"
	"github.com/smacker/go-tree-sitter/python"

	"github.com/keyguard/keyguard/internal/keyshape"
	"github.com/keyguard/keyguard/keytmpl"
)

func pythonLanguage() *language {
	return (&language{
		name:       keyshape.Python,
		grammar:    python.GetLanguage(),
		scopes:     set("function_definition", "lambda", "class_definition", "module"),
		classes:    set("class_definition"),
		bind:       pythonBind,
		bindTypes:  []string{"assignment", "augmented_assignment", "parameters", "lambda_parameters", "for_statement", "as_pattern"},
		callTypes:  []string{"call"},
		keyArgs:    pythonKeyArgs,
		spread:     pythonSpread,
		eval:       pythonEval,
		intType:    func(t string) bool { return t == "int" },
		keyType:    func(t string) bool { return t == "Key" || strings.HasSuffix(t, ".Key") },
		declTypes:  []string{"function_definition", "class_definition"},
		decl:       pythonDecl,
		callees:    pythonCallees,
		constant:   pythonConstant,
		clientType: pythonClientAnnotation,
		isClient:   func(f *srcFile, n *sitter.Node, depth int) bool { return f.pythonClient(n, depth) },
	}).compile()
}

// pythonDecl indexes a class or function (a method when it is in a
// class's body; self and cls are not among its parameters).
func pythonDecl(f *srcFile, n *sitter.Node) {
	switch typeOf(n) {
	case "class_definition":
		c := &classDef{f: f, node: n, name: f.text(n.ChildByFieldName("name"))}
		for _, b := range args(n.ChildByFieldName("superclasses")) {
			if t := typeOf(b); t == "identifier" || t == "attribute" {
				c.bases = append(c.bases, f.pythonUnalias(lastName(f.text(b))))
			}
		}
		f.classes = append(f.classes, c)
	case "function_definition":
		d := &funcDef{f: f, node: n, body: n.ChildByFieldName("body"), name: f.text(n.ChildByFieldName("name")), rest: -1,
			typ: f.text(n.ChildByFieldName("return_type"))}
		method := typeOf(n.Parent()) == "block" && typeOf(n.Parent().Parent()) == "class_definition" ||
			typeOf(n.Parent()) == "decorated_definition" && typeOf(n.Parent().Parent()) == "block" && typeOf(n.Parent().Parent().Parent()) == "class_definition"
		if typeOf(n.Parent()) == "decorated_definition" {
			dec := f.text(n.Parent())
			d.getter = strings.Contains(dec, "@property") || strings.Contains(dec, "cached_property")
			d.static = strings.Contains(dec, "@staticmethod")
		}
		f.pythonParams(d, n.ChildByFieldName("parameters"), method && !d.static)
		f.funcs = append(f.funcs, d)
	}
}

// pythonUnalias is the imported name an alias stands for (from
// redis.asyncio import Redis as BaseRedis: BaseRedis is Redis).
func (f *srcFile) pythonUnalias(name string) string {
	src := string(f.src)
	for i := strings.Index(src, " as "+name); i >= 0; {
		end := i + len(" as "+name)
		if end == len(src) || !isIdentByte(src[end]) {
			j := i
			for j > 0 && isIdentByte(src[j-1]) {
				j--
			}
			if line := src[strings.LastIndexByte(src[:i], '\n')+1 : i]; strings.Contains(line, "import") {
				return src[j:i]
			}
		}
		k := strings.Index(src[end:], " as "+name)
		if k < 0 {
			break
		}
		i = end + k
	}
	return name
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// pythonParams records a function's positional parameters.
func (f *srcFile) pythonParams(d *funcDef, list *sitter.Node, method bool) {
	for i, p := range args(list) {
		name := ""
		switch typeOf(p) {
		case "identifier":
			name = f.text(p)
		case "typed_parameter":
			if p.NamedChildCount() > 0 {
				if c := p.NamedChild(0); typeOf(c) == "identifier" {
					name = f.text(c)
				} else if typeOf(c) == "list_splat_pattern" {
					d.rest = len(d.params)
					name = strings.TrimPrefix(f.text(c), "*")
				}
			}
		case "default_parameter", "typed_default_parameter":
			name = f.text(p.ChildByFieldName("name"))
		case "list_splat_pattern":
			d.rest = len(d.params)
			name = strings.TrimPrefix(f.text(p), "*")
		case "keyword_separator", "dictionary_splat_pattern":
			return
		default:
			continue
		}
		if i == 0 && method && (name == "self" || name == "cls") {
			continue
		}
		d.params = append(d.params, name)
	}
}

// pythonCallees are the project's functions a call may call: a function
// of this module or an imported one (by name), a method of self's class
// (and its bases), of a class named (Queue.key()), or of an object the
// file constructs or annotates with a project class.
func pythonCallees(f *srcFile, call *sitter.Node) []*funcDef {
	if f.proj == nil {
		return nil
	}
	fn := call.ChildByFieldName("function")
	switch typeOf(fn) {
	case "identifier":
		return f.proj.functions(f, f.text(fn))
	case "attribute":
		return f.pythonMethods(fn.ChildByFieldName("object"), f.text(fn.ChildByFieldName("attribute")))
	}
	return nil
}

// pythonMethods are the project's methods named name that obj.name may
// be, or a module's function when obj is an imported module.
func (f *srcFile) pythonMethods(obj *sitter.Node, name string) []*funcDef {
	if cls := f.pythonClassOf(obj, 0); cls != "" {
		return f.proj.methods(cls, name)
	}
	if typeOf(obj) == "identifier" && f.pythonModule(f.text(obj), obj) {
		return f.proj.functions(nil, name)
	}
	return nil
}

// pythonModule reports whether name is a module the file imports
// (import x, import x.y as name, from pkg import name), and no variable
// or parameter of that name is in scope at at (a parameter named like a
// module of the project is not that module).
func (f *srcFile) pythonModule(name string, at *sitter.Node) bool {
	_, _, found := f.resolve(name, at)
	if found {
		return false
	}
	if f.proj.modules == nil {
		f.proj.modules = map[string]bool{}
		for _, g := range f.proj.files {
			path := strings.TrimSuffix(strings.TrimSuffix(g.path, ".py"), "/__init__")
			f.proj.modules[path[strings.LastIndexByte(path, '/')+1:]] = true
		}
	}
	return f.proj.modules[name]
}

// pythonClassOf is the project class an expression's value is an
// instance of: self (the enclosing class), a name assigned Cls(...) or
// annotated Cls, or self.x so assigned; "" when the file does not say.
func (f *srcFile) pythonClassOf(obj *sitter.Node, depth int) string {
	if depth > 6 || obj == nil {
		return ""
	}
	var name string
	switch typeOf(obj) {
	case "identifier":
		name = f.text(obj)
		if name == "self" || name == "cls" {
			if c := f.classAt(obj); c != nil {
				return c.name
			}
			return ""
		}
		if f.proj.isClass(name) {
			if _, _, found := f.resolve(name, obj); !found {
				return name // Queue.key(...)
			}
		}
	case "attribute":
		if f.text(obj.ChildByFieldName("object")) != "self" {
			return ""
		}
		name = "self." + f.text(obj.ChildByFieldName("attribute"))
	case "call":
		c := lastName(f.text(obj.ChildByFieldName("function")))
		if f.proj.isClass(c) {
			return c
		}
		if fn := obj.ChildByFieldName("function"); typeOf(fn) == "identifier" && c == "cls" {
			if cd := f.classAt(obj); cd != nil {
				return cd.name // cls(id=…) in a classmethod
			}
		}
		return ""
	default:
		return ""
	}
	return f.classOfBinding(name, obj, depth, f.pythonClassOf)
}

// selfClass is the class self (or cls) stands for at n, in a method of a
// class: the class self is evaluated for (see srcFile.self) when it is
// that class or a subclass of it, else the method's class; exact when
// self is an instance of it alone. "" outside a class.
func (f *srcFile) selfClass(n *sitter.Node) (string, bool) {
	c := f.classAt(n)
	if c == nil {
		return "", false
	}
	if f.self != "" && f.proj != nil && (f.self == c.name || f.proj.extends(f.self, func(s string) bool { return s == c.name })) {
		return f.self, f.selfExact
	}
	return c.name, false
}

// pythonConstant follows a name the module does not bind (imported from
// another module), Cls.NAME or module.NAME to a module-level or class
// attribute assigned once in the project.
func pythonConstant(f *srcFile, n *sitter.Node) (*srcFile, *sitter.Node, bool) {
	cls, name := "", ""
	dynamic := false // self.X or cls.X: the instance may be of a subclass that sets X again
	switch typeOf(n) {
	case "identifier":
		name = f.text(n)
	case "attribute":
		obj := n.ChildByFieldName("object")
		name = f.text(n.ChildByFieldName("attribute"))
		switch {
		case typeOf(obj) == "identifier" && f.text(obj) == "self" || typeOf(obj) == "identifier" && f.text(obj) == "cls":
			if c, exact := f.selfClass(n); c != "" {
				cls = c
				dynamic = !exact
			}
		case typeOf(obj) == "identifier" && f.proj.isClass(f.text(obj)):
			cls = f.text(obj)
		case typeOf(obj) == "identifier" && f.pythonModule(f.text(obj), obj):
		default:
			return nil, nil, false
		}
	default:
		return nil, nil, false
	}
	// A class attribute is the class's own, else a base's (all the bases
	// that set it must agree), and, for self.X, any a subclass sets
	// instead: BaseRegistry's key_template is not the key of a
	// StartedJobRegistry that sets its own.
	type found struct {
		g *srcFile
		v *sitter.Node
	}
	var own, base, sub []found
	for _, g := range f.proj.files {
		for _, b := range g.binds[name] {
			if b.param || b.value == nil {
				continue
			}
			var owner *classDef
			for _, c := range g.classes {
				if spanOf(c.node) == b.scope {
					owner = c
				}
			}
			is := func(s string) bool { return owner != nil && s == owner.name }
			switch {
			case b.scope.start == 0 && b.scope.end == uint32(len(g.src)) && cls == "": // module level
				own = append(own, found{g, b.value})
			case owner == nil || cls == "":
			case owner.name == cls:
				own = append(own, found{g, b.value})
			case f.proj.extends(cls, is):
				base = append(base, found{g, b.value})
			case dynamic && f.proj.extends(owner.name, func(s string) bool { return s == cls }):
				sub = append(sub, found{g, b.value})
			}
		}
	}
	if len(own) == 0 {
		own = base
	}
	var hit *srcFile
	var val *sitter.Node
	for _, x := range append(own, sub...) {
		if hit != nil && x.g.text(x.v) != hit.text(val) {
			return nil, nil, false // several values
		}
		hit, val = x.g, x.v
	}
	return hit, val, hit != nil
}

func pythonBind(f *srcFile, n *sitter.Node) {
	switch typeOf(n) {
	case "assignment":
		left, right := n.ChildByFieldName("left"), n.ChildByFieldName("right")
		switch typeOf(left) {
		case "identifier":
			f.declare(f.text(left), n, right, f.text(n.ChildByFieldName("type")), false)
		case "attribute":
			if o := left.ChildByFieldName("object"); o != nil && f.text(o) == "self" {
				f.declare("self."+f.text(left.ChildByFieldName("attribute")), n, right, f.text(n.ChildByFieldName("type")), false)
			}
		case "pattern_list", "tuple_pattern":
			for i := 0; i < int(left.NamedChildCount()); i++ {
				if c := left.NamedChild(i); typeOf(c) == "identifier" {
					f.declare(f.text(c), n, nil, "", false)
				}
			}
		}
	case "augmented_assignment":
		if left := n.ChildByFieldName("left"); typeOf(left) == "identifier" {
			f.declare(f.text(left), n, nil, "", false)
		}
	case "parameters", "lambda_parameters":
		for i := 0; i < int(n.NamedChildCount()); i++ {
			p := n.NamedChild(i)
			switch typeOf(p) {
			case "identifier", "list_splat_pattern": // key, *keys
				if name := unrest(p); typeOf(name) == "identifier" {
					f.declare(f.text(name), p, nil, "", true)
				}
			case "typed_parameter": // key: str, *keys: str
				if p.NamedChildCount() > 0 {
					if name := unrest(p.NamedChild(0)); typeOf(name) == "identifier" {
						f.declare(f.text(name), p, nil, f.text(p.ChildByFieldName("type")), true)
					}
				}
			case "default_parameter", "typed_default_parameter":
				f.declare(f.text(p.ChildByFieldName("name")), p, nil, f.text(p.ChildByFieldName("type")), true)
			}
		}
	case "for_statement":
		if left := n.ChildByFieldName("left"); left != nil && typeOf(left) == "identifier" {
			f.declare(f.text(left), n, nil, "", false)
			f.loopOver(f.text(left), n.ChildByFieldName("right"))
		}
	case "as_pattern": // with r.pipeline() as pipe:
		if alias := n.ChildByFieldName("alias"); alias != nil && n.NamedChildCount() > 0 {
			f.declare(strings.TrimSpace(f.text(alias)), n, n.NamedChild(0), "", false)
		}
	}
}

// pythonClient reports whether a receiver is a redis-py client or
// pipeline, by evidence: bound to Redis(…), from_url(…), RedisCluster(…),
// .pipeline(), to a project function or class that returns or is one,
// annotated with such a type, self in a class that extends one, a field
// of the project's object that a class of the project sets to one
// (self.app.storage.conn), through conditional assignments (any branch),
// await and property getters; never by its name.
func (f *srcFile) pythonClient(obj *sitter.Node, depth int) bool {
	if depth > 8 || obj == nil {
		return false
	}
	name := ""
	switch typeOf(obj) {
	case "identifier":
		name = f.text(obj)
		if name == "self" && f.proj != nil {
			if c := f.classAt(obj); c != nil && f.proj.extends(c.name, pythonClientType) {
				return true // class ArqRedis(Redis): self.get(key)
			}
			return false
		}
	case "attribute":
		o := obj.ChildByFieldName("object")
		attr := f.text(obj.ChildByFieldName("attribute"))
		if f.text(o) != "self" {
			return f.pythonFieldClient(o, attr, depth)
		}
		name = "self." + attr
		if _, _, found := f.resolve(name, obj); !found && f.proj != nil {
			// a property of the class: @property def connection(self) -> Redis
			if c := f.classAt(obj); c != nil {
				for _, d := range f.proj.methods(c.name, attr) {
					if d.getter && f.proj.returnsClient(d, depth+1) {
						return true
					}
				}
			}
		}
	case "call":
		fnNode := obj.ChildByFieldName("function")
		fn := f.text(fnNode)
		switch lastName(fn) {
		case "Redis", "StrictRedis", "RedisCluster", "from_url", "master_for", "slave_for":
			return true
		case "pipeline":
			if typeOf(fnNode) == "attribute" {
				return f.pythonClient(fnNode.ChildByFieldName("object"), depth+1)
			}
		}
		if typeOf(fnNode) == "attribute" && f.text(fnNode.ChildByFieldName("object")) == "self" {
			// self.redis_client(...) where the class says redis_client = Redis
			for _, v := range f.values("self."+f.text(fnNode.ChildByFieldName("attribute")), fnNode) {
				if pythonClientType(lastName(f.text(v))) {
					return true
				}
			}
			if c := f.classAt(obj); c != nil && f.proj != nil {
				if g, v, ok := pythonConstant(f, fnNode); ok && pythonClientType(lastName(g.text(v))) {
					return true
				}
			}
		}
		if f.proj != nil {
			if c := lastName(fn); f.proj.isClass(c) && f.proj.extends(c, pythonClientType) {
				return true // ArqRedis(...)
			}
			if typeOf(fnNode) == "call" {
				// self._get_client()(pool=…): a project function
				// returns the client class (return self.redis.StrictRedis)
				for _, d := range f.lang.callees(f, fnNode) {
					if f.proj.returnsClientClass(d) {
						return true
					}
				}
			}
			if typeOf(fnNode) == "attribute" && set("pipeline", "client", "connection")[lastName(fn)] && f.pythonClient(fnNode.ChildByFieldName("object"), depth+1) {
				return true
			}
			for _, d := range f.lang.callees(f, obj) {
				if f.proj.returnsClient(d, depth+1) {
					return true // get_redis()
				}
			}
		}
		return false
	case "await", "parenthesized_expression":
		if obj.NamedChildCount() > 0 {
			return f.pythonClient(obj.NamedChild(0), depth+1)
		}
		return false
	case "conditional_expression": // pipeline if pipeline is not None else self.connection
		return obj.NamedChildCount() == 3 && (f.pythonClient(obj.NamedChild(0), depth+1) || f.pythonClient(obj.NamedChild(2), depth+1))
	case "boolean_operator": // pipeline or self.connection
		return f.pythonClient(obj.ChildByFieldName("left"), depth+1) || f.pythonClient(obj.ChildByFieldName("right"), depth+1)
	default:
		return false
	}
	bs := f.lookup(name, obj)
	for _, b := range bs {
		if pythonClientAnnotation(b.typ) || f.clientTyped(b.typ) {
			return true
		}
		if b.value != nil && f.pythonClient(b.value, depth+1) {
			return true
		}
	}
	if bs == nil && strings.HasPrefix(name, "self.") && f.proj != nil {
		if c := f.classAt(obj); c != nil { // set by a base class or a mixin's subclass
			for _, m := range f.proj.memberValues(c.name, name) {
				if m.f.clientTyped(m.typ) || m.value != nil && m.f.pythonClient(m.value, depth+1) {
					return true
				}
			}
		}
	}
	if strings.HasPrefix(name, "self.") && f.proj != nil {
		// annotated in the class body: connection: Redis
		if c := f.classAt(obj); c != nil {
			for _, b := range f.binds[strings.TrimPrefix(name, "self.")] {
				if spanOf(c.node) == b.scope && pythonClientAnnotation(b.typ) {
					return true
				}
			}
		}
	}
	return false
}

// pythonFieldClient reports whether o.attr is a client when o is an
// object of the project: of a project class whose classes (bases,
// subclasses) set self.attr to a client, or one the scan cannot type but
// reached through a field the project's classes set (self.app.storage),
// when a class of the project sets self.attr to a client.
func (f *srcFile) pythonFieldClient(o *sitter.Node, attr string, depth int) bool {
	if f.proj == nil {
		return false
	}
	if cls := f.pythonClassOf(o, 0); cls != "" {
		return f.proj.fieldClient(attr, f.proj.related(cls), depth)
	}
	if typeOf(o) != "attribute" || len(f.proj.pythonFields()[f.text(o.ChildByFieldName("attribute"))]) == 0 {
		return false
	}
	return f.proj.fieldClient(attr, nil, depth)
}

// pythonFields are the fields the project's classes set (self.name = …),
// by name, each with its file and binding.
func (p *project) pythonFields() map[string][]fieldBind {
	if p.fields == nil {
		p.fields = map[string][]fieldBind{}
		for _, g := range p.files {
			for name, bs := range g.binds {
				if field, ok := strings.CutPrefix(name, "self."); ok {
					for _, b := range bs {
						p.fields[field] = append(p.fields[field], fieldBind{g, b})
					}
				}
			}
		}
	}
	return p.fields
}

// classNamed is the name of the file's class whose span is sp, "" when
// none is.
func (f *srcFile) classNamed(sp span) string {
	if c := f.classSpans()[sp]; c != nil {
		return c.name
	}
	return ""
}

// fieldBind is one assignment to a field, in its file.
type fieldBind struct {
	f *srcFile
	b binding
}

// fieldClient reports whether a class of the project (one of classes
// when not nil) sets the field to a client or declares it one.
func (p *project) fieldClient(field string, classes map[string]bool, depth int) bool {
	if classes == nil {
		if r, ok := p.clientField[field]; ok {
			return r
		}
	}
	if p.clientField == nil {
		p.clientField = map[string]bool{}
	}
	if classes == nil {
		p.clientField[field] = false // while it is worked out: a field set from itself is not
		depth = 0                    // the answer is kept: the same whoever asks first
	}
	r := false
	for _, fb := range p.pythonFields()[field] {
		if classes != nil && !classes[fb.f.classNamed(fb.b.scope)] {
			continue
		}
		if fb.f.clientTyped(fb.b.typ) || fb.b.value != nil && fb.f.pythonClient(fb.b.value, depth+1) {
			r = true
			break
		}
	}
	if classes == nil {
		p.clientField[field] = r
	}
	return r
}

// pythonClientType reports redis-py's client and pipeline class names.
func pythonClientType(name string) bool {
	switch name {
	case "Redis", "StrictRedis", "RedisCluster", "Pipeline", "ClusterPipeline":
		return true
	}
	return false
}

// pythonClientAnnotation reports an annotation naming a client type:
// Redis, redis.Redis, Optional[Redis], 'Redis', Redis | None.
func pythonClientAnnotation(typ string) bool {
	if typ == "" {
		return false
	}
	for _, w := range strings.FieldsFunc(typ, func(r rune) bool { return strings.ContainsRune(" []|,'\"()", r) }) {
		if pythonClientType(lastName(w)) {
			return true
		}
	}
	return false
}

var pythonKeywordKeys = set("name", "key", "keys", "src", "dst", "source", "destination", "dest", "store", "store_dist")

func pythonKeyArgs(f *srcFile, n *sitter.Node) ([]*sitter.Node, string) {
	if typeOf(n) != "call" {
		return nil, ""
	}
	fn := n.ChildByFieldName("function")
	if keys, ok := f.pythonScriptKeys(n, fn); ok {
		return keys, "evalsha"
	}
	if typeOf(fn) != "attribute" {
		return nil, ""
	}
	method := f.text(fn.ChildByFieldName("attribute"))
	if obj := fn.ChildByFieldName("object"); !f.pythonClient(obj, 0) {
		// redis-py's module commands: r.ts().add(key, …) is TS.ADD
		if method = f.pythonModuleCommand(obj, method); method == "" {
			return nil, ""
		}
	}
	var pos, out []*sitter.Node
	for _, a := range args(n.ChildByFieldName("arguments")) {
		switch typeOf(a) {
		case "keyword_argument":
			if pythonKeywordKeys[f.text(a.ChildByFieldName("name"))] {
				out = append(out, f.pythonElements(a.ChildByFieldName("value"))...)
			}
		case "list_splat":
			// r.delete(*[f"k:{i}" for i in ids]): what a comprehension
			// gives, where every argument from the splat on is a key;
			// other lists spread are not seen here
			if el := f.pythonMapped(spreadList(a), 0); el != nil && keysFrom(commandName(method), len(pos)) {
				out = append(out, el)
			}
		case "dictionary_splat":
		default:
			pos = append(pos, a)
		}
	}
	cmd := commandName(method)
	switch method {
	case "lock":
		out = append(out, pick(pos, []int{0})...)
	case "execute_command":
		cmd = ""
		if len(pos) > 0 {
			if s, _ := f.eval(pos[0], 0); isLiteral(s) {
				lit, _ := s.Literal()
				cmd = strings.ToLower(lit)
				out = append(out, f.commandArgs(lit, pos[1:])...)
			}
		}
	default:
		for _, k := range f.commandArgs(method, pos) {
			for _, e := range f.pythonElements(k) {
				if typeOf(e) == "tuple" { // ts().madd([(key, t, v)]), json().mset([(key, path, v)]): the key comes first
					out = append(out, pick(args(e), []int{0})...)
					continue
				}
				out = append(out, e)
			}
		}
	}
	return out, cmd
}

// pythonSpread is the language's spread: a client command called with
// a list spread into its arguments (r.delete(*keys), r.evalsha(sha,
// *args)).
func pythonSpread(f *srcFile, n *sitter.Node) (string, []*sitter.Node, *sitter.Node, *sitter.Node) {
	fn := n.ChildByFieldName("function")
	if typeOf(n) != "call" || typeOf(fn) != "attribute" {
		return "", nil, nil, nil
	}
	method := f.text(fn.ChildByFieldName("attribute"))
	if method == "execute_command" || method == "lock" {
		return "", nil, nil, nil
	}
	list := n.ChildByFieldName("arguments")
	if !strings.Contains(f.text(list), "*") {
		return "", nil, nil, nil // no splat: the common case, told from the text alone
	}
	as := f.positionalSpread(n)
	for i, a := range as {
		if l := spreadList(a); l != nil {
			if !f.pythonClient(fn.ChildByFieldName("object"), 0) {
				break
			}
			return commandName(method), as[:i], l, nil
		}
	}
	return "", nil, nil, nil
}

// pythonModuleCommand is the module command a method of obj sends when
// obj is a client's module namespace, r.ts() or a name bound to one
// (TS.ADD for r.ts().add); "" otherwise.
func (f *srcFile) pythonModuleCommand(obj *sitter.Node, method string) string {
	if typeOf(obj) == "identifier" {
		if v, _, _ := f.resolve(f.text(obj), obj); v != nil {
			obj = v // ts = r.ts()
		}
	}
	if typeOf(obj) != "call" {
		return ""
	}
	fn := obj.ChildByFieldName("function")
	if typeOf(fn) != "attribute" || !f.pythonClient(fn.ChildByFieldName("object"), 1) {
		return ""
	}
	return moduleCommand(f.text(fn.ChildByFieldName("attribute")), method)
}

// pythonScriptKeys are the keys of a call of a registered script
// (script = r.register_script(lua); script(keys=[k], args=[…])).
func (f *srcFile) pythonScriptKeys(call, fn *sitter.Node) ([]*sitter.Node, bool) {
	name := f.text(fn)
	if typeOf(fn) == "attribute" && f.text(fn.ChildByFieldName("object")) == "self" {
		name = "self." + f.text(fn.ChildByFieldName("attribute"))
	} else if typeOf(fn) != "identifier" {
		return nil, false
	}
	script := false
	for _, v := range f.values(name, fn) {
		if typeOf(v) == "call" {
			if g := v.ChildByFieldName("function"); typeOf(g) == "attribute" && f.text(g.ChildByFieldName("attribute")) == "register_script" &&
				f.pythonClient(g.ChildByFieldName("object"), 1) {
				script = true
			}
		}
	}
	if !script {
		return nil, false
	}
	as := args(call.ChildByFieldName("arguments"))
	for _, a := range as {
		if typeOf(a) == "keyword_argument" && f.text(a.ChildByFieldName("name")) == "keys" {
			return f.pythonElements(a.ChildByFieldName("value")), true
		}
	}
	if len(as) > 0 && typeOf(as[0]) != "keyword_argument" {
		return f.pythonElements(as[0]), true
	}
	return nil, true
}

// pythonElements are the elements of a list or tuple literal, or the node.
func (f *srcFile) pythonElements(n *sitter.Node) []*sitter.Node {
	if typeOf(n) == "list" || typeOf(n) == "tuple" {
		return args(n)
	}
	if el := f.pythonMapped(n, 0); el != nil {
		return []*sitter.Node{el}
	}
	return []*sitter.Node{n}
}

// pythonMapped is the element a comprehension or generator gives
// ([f"k:{i}" for i in ids], (… for …), {… for …}), directly or through a
// name given only it; nil for any other expression.
func (f *srcFile) pythonMapped(n *sitter.Node, depth int) *sitter.Node {
	if n == nil || depth > 4 {
		return nil
	}
	switch typeOf(n) {
	case "list_comprehension", "generator_expression", "set_comprehension":
		return n.ChildByFieldName("body")
	case "identifier":
		if bs := f.lookup(f.text(n), n); len(bs) == 1 && bs[0].value != nil {
			return f.pythonMapped(bs[0].value, depth+1)
		}
	}
	return nil
}

func isLiteral(s keyshape.Shape) bool { _, ok := s.Literal(); return ok }

func pythonEval(f *srcFile, n *sitter.Node, depth int) (keyshape.Shape, bool, bool) {
	switch typeOf(n) {
	case "string":
		raw, fstr := false, false
		if st := n.Child(0); st != nil && typeOf(st) == "string_start" {
			raw = strings.ContainsAny(f.text(st), "rR")
			fstr = strings.ContainsAny(f.text(st), "fF")
		}
		s, _ := f.stringShape(n, raw, fstr, depth)
		return s, false, true
	case "concatenated_string":
		var parts []keyshape.Shape
		for i := 0; i < int(n.NamedChildCount()); i++ {
			s, _ := f.eval(n.NamedChild(i), depth+1)
			parts = append(parts, s)
		}
		return keyshape.Concat(parts...), false, true
	case "binary_operator":
		if op := n.ChildByFieldName("operator"); op != nil && f.text(op) == "%" {
			right := n.ChildByFieldName("right")
			as := []*sitter.Node{right}
			if typeOf(right) == "tuple" {
				as = args(right)
			}
			if s, ok := f.printf(n.ChildByFieldName("left"), as, depth); ok {
				return s, false, true
			}
			return f.hole(n, ""), false, true
		}
	case "attribute":
		if o := n.ChildByFieldName("object"); f.text(o) == "self" {
			name := "self." + f.text(n.ChildByFieldName("attribute"))
			if _, _, found := f.resolve(name, n); !found && f.proj != nil {
				if g, v, ok := pythonConstant(f, n); ok { // a class attribute: self.PREFIX
					s, b := g.evalIn(nil, v, depth+1)
					return s, b, true
				}
				if c, exact := f.selfClass(n); c != "" { // set by a base class, or a mixin's subclass
					if ms := f.proj.memberValues(c, name); len(ms) == 1 && ms[0].value != nil {
						g, v := ms[0].f, ms[0].value
						s, b := g.asSelf(c, exact, func() (keyshape.Shape, bool) { return g.evalIn(nil, v, depth+1) })
						return s, b, true
					}
					if s, ok := f.propertyShape(c, f.text(n.ChildByFieldName("attribute"))); ok {
						return s, false, true // @property def key(self): return f'rq:job:{self.id}'
					}
				}
			}
			s, b := f.evalName(name, n, depth)
			return s, b, true
		}
		if f.proj != nil {
			if g, v, ok := pythonConstant(f, n); ok { // Queue.PREFIX, constants.PREFIX
				s, b := g.evalIn(nil, v, depth+1)
				return s, b, true
			}
			// A property of an object of a project class:
			// execution.worker_executions_key, execution = cls(…).
			if cls := f.pythonClassOf(n.ChildByFieldName("object"), 0); cls != "" {
				if s, ok := f.propertyShape(cls, f.text(n.ChildByFieldName("attribute"))); ok {
					return s, false, true
				}
			}
		}
	case "call":
		s, b := f.pythonCall(n, depth)
		return s, b, true
	}
	return keyshape.Shape{}, false, false
}

func (f *srcFile) pythonCall(n *sitter.Node, depth int) (keyshape.Shape, bool) {
	fn := n.ChildByFieldName("function")
	all := args(n.ChildByFieldName("arguments"))
	var as []*sitter.Node
	kw := map[string]*sitter.Node{}
	for _, a := range all {
		if typeOf(a) == "keyword_argument" {
			kw[f.text(a.ChildByFieldName("name"))] = a.ChildByFieldName("value")
		} else {
			as = append(as, a)
		}
	}
	name := lastName(f.text(fn))
	if f.c.IsBuilder(keyshape.Python, name, len(all)) {
		return keyshape.Shape{}, true
	}
	if typeOf(fn) == "identifier" && name == "str" && len(as) == 1 {
		return f.eval(as[0], depth+1)
	}
	if s, ok := f.projectCall(n, depth); ok {
		return s, false
	}
	if s, ok := f.lambdaCall(n, depth); ok {
		return s, false
	}
	if typeOf(fn) != "attribute" {
		return f.hole(n, ""), false
	}
	obj := fn.ChildByFieldName("object")
	switch {
	case name == "format" && (typeOf(obj) == "string" || typeOf(obj) == "identifier" || typeOf(obj) == "attribute"):
		// "…".format(…), or of a name that holds one literal text:
		// self.key_template.format(job_id) with key_template = 'rq:x:{0}'.
		fs, b := f.eval(obj, depth+1)
		if lit, ok := fs.Literal(); ok && !b {
			if s, ok := keyshape.Brace(lit, func(fd keyshape.Field) keyshape.Shape {
				a := kw[fd.Name]
				if i, ok := atoi(fd.Name); ok && i < len(as) {
					a = as[i]
				} else if fd.Name == "" && fd.Auto < len(as) {
					a = as[fd.Auto]
				}
				if a == nil {
					return keyshape.Hole(keytmpl.Any, fd.Name, "")
				}
				s, b := f.eval(a, depth+1)
				if b || !fd.Plain {
					return f.hole(a, "")
				}
				return s
			}); ok {
				return s, false
			}
		}
	case name == "join" && typeOf(obj) == "string" && len(as) == 1 && (typeOf(as[0]) == "list" || typeOf(as[0]) == "tuple"):
		return f.join(obj, args(as[0]), depth), false
	}
	return f.hole(n, ""), false
}

// lambdaCall is the shape a call of a lambda bound to a name or field
// returns (self.key = lambda k: prefix + k; self.key(id)).
func (f *srcFile) lambdaCall(call *sitter.Node, depth int) (keyshape.Shape, bool) {
	fn := call.ChildByFieldName("function")
	name := f.text(fn)
	if typeOf(fn) == "attribute" && f.text(fn.ChildByFieldName("object")) == "self" {
		name = "self." + f.text(fn.ChildByFieldName("attribute"))
	} else if typeOf(fn) != "identifier" {
		return keyshape.Shape{}, false
	}
	var lam *sitter.Node
	for _, v := range f.values(name, fn) {
		if typeOf(v) == "lambda" {
			lam = v
		}
	}
	if lam == nil || f.proj == nil {
		return keyshape.Shape{}, false
	}
	d := f.proj.lambda(f, lam)
	s, ok := f.proj.retOf(d)
	if !ok {
		return keyshape.Shape{}, false
	}
	as := f.positional(call)
	return s.Subst(func(i int) (keyshape.Shape, bool) {
		if i >= len(as) {
			return keyshape.Shape{}, false
		}
		a, b := f.eval(as[i], depth+1)
		return a, !b
	}), true
}

func atoi(s string) (int, bool) {
	if !isDigits(s) || len(s) > 6 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

// propertyShape is the key a property getter of class cls (or of a class
// it is related to) named attr returns, when every such getter returns
// one shape: self.key where the class says @property def key(self).
func (f *srcFile) propertyShape(cls, attr string) (keyshape.Shape, bool) {
	var got keyshape.Shape
	found := false
	for _, d := range f.proj.methods(cls, attr) {
		if !d.getter {
			continue
		}
		s, ok := f.proj.retOf(d)
		if !ok || s.HasParam() || found && s.String() != got.String() {
			return keyshape.Shape{}, false
		}
		got, found = s, true
	}
	return got, found
}
