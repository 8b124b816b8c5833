package scancode

import (
	"regexp"
	"slices"
	"strings"
	"unicode"

	sitter "github.com/smacker/go-tree-sitter"
	"github.com/smacker/go-tree-sitter/javascript"
	"github.com/smacker/go-tree-sitter/typescript/tsx"
	"github.com/smacker/go-tree-sitter/typescript/typescript"

	"github.com/keyguard/keyguard/internal/keyshape"
)

// tsLanguage is TypeScript, TSX or JavaScript: one grammar family, one
// set of clients (ioredis, node-redis), the TypeScript builders.
func tsLanguage(grammar *sitter.Language) *language {
	return (&language{
		name:    keyshape.TypeScript,
		grammar: grammar,
		scopes: set("function_declaration", "function_expression", "function", "arrow_function", "method_definition",
			"generator_function_declaration", "class_body", "program"),
		classes: set("class_body"),
		bind:    tsBind,
		bindTypes: []string{"variable_declarator", "required_parameter", "optional_parameter", "formal_parameters", "arrow_function",
			"public_field_definition", "field_definition", "assignment_expression", "augmented_assignment_expression"},
		callTypes: []string{"call_expression"},
		keyArgs:   tsKeyArgs,
		spread:    tsSpread,
		eval:      tsEval,
		intType:   func(t string) bool { return t == "number" || t == "bigint" },
		keyType:   func(t string) bool { return t == "Key" || strings.HasSuffix(t, ".Key") },
		declTypes: []string{"function_declaration", "generator_function_declaration", "method_definition", "variable_declarator",
			"class_declaration", "abstract_class_declaration", "class", "pair", "enum_declaration",
			"interface_declaration", "method_signature", "property_signature"},
		decl:       tsDecl,
		callees:    tsCallees,
		constant:   tsConstant,
		clientType: tsClientType,
		isClient:   func(f *srcFile, n *sitter.Node, depth int) bool { return f.tsClient(n, depth) },
	}).compile()
}

// tsClientType reports a declared type naming an ioredis or node-redis
// client, pipeline or multi.
func tsClientType(typ string) bool {
	for _, w := range strings.FieldsFunc(typ, func(r rune) bool { return strings.ContainsRune(" <>[]|&,()?:'\"", r) }) {
		switch lastName(w) {
		case "Redis", "IORedis", "Cluster", "Pipeline", "ChainableCommander", "Multi", "RedisClientType", "RedisClusterType",
			"RedisClient", "RedisClusterClient":
			return true
		}
	}
	return false
}

// tsDecl indexes a class, a function, a method, an arrow function or
// function expression bound to a name (const f = (x) => …), and an
// object's function property ({ getKey: (x) => … }).
func tsDecl(f *srcFile, n *sitter.Node) {
	switch typeOf(n) {
	case "enum_declaration":
		members := map[string]*sitter.Node{}
		body := n.ChildByFieldName("body")
		for i := 0; body != nil && i < int(body.NamedChildCount()); i++ {
			if m := body.NamedChild(i); typeOf(m) == "enum_assignment" {
				members[strings.Trim(f.text(m.ChildByFieldName("name")), `"'`)] = m.ChildByFieldName("value")
			}
		}
		if f.enums == nil {
			f.enums = map[string][]map[string]*sitter.Node{}
		}
		name := f.text(n.ChildByFieldName("name"))
		f.enums[name] = append(f.enums[name], members)
	case "class_declaration", "abstract_class_declaration", "class":
		// class: a named class expression (module.exports = class X …)
		c := &classDef{f: f, node: n, name: f.text(n.ChildByFieldName("name"))}
		if c.name == "" {
			return
		}
		for i := 0; i < int(n.NamedChildCount()); i++ {
			if h := n.NamedChild(i); typeOf(h) == "class_heritage" {
				f.tsTypeNames(h, &c.bases)
			}
		}
		f.classes = append(f.classes, c)
	case "interface_declaration":
		// An interface is a class without bodies: a member typed with it
		// reaches the classes that implement it (a getter returning a
		// client there), and its own members' declared types.
		c := &classDef{f: f, node: n, name: f.text(n.ChildByFieldName("name"))}
		for i := 0; i < int(n.NamedChildCount()); i++ {
			if h := n.NamedChild(i); typeOf(h) == "extends_type_clause" {
				f.tsTypeNames(h, &c.bases)
			}
		}
		f.classes = append(f.classes, c)
	case "method_signature", "property_signature":
		// get client(): Promise<RedisClient>; or client: RedisClient, in an
		// interface: a getter of a client, without a body (other members
		// say nothing the scan reads).
		typ := n.ChildByFieldName("return_type")
		getter := typeOf(n) == "property_signature"
		if getter {
			typ = n.ChildByFieldName("type")
		}
		for i := 0; i < int(n.ChildCount()); i++ {
			if n.Child(i).Type() == "get" {
				getter = true
			}
		}
		if !getter || typ == nil || !tsClientType(f.tsType(typ)) {
			return
		}
		f.funcs = append(f.funcs, &funcDef{f: f, node: n, name: strings.Trim(f.text(n.ChildByFieldName("name")), `"'`), rest: -1,
			typ: f.tsType(typ), getter: true})
	case "function_declaration", "generator_function_declaration", "method_definition":
		d := &funcDef{f: f, node: n, body: n.ChildByFieldName("body"), name: strings.Trim(f.text(n.ChildByFieldName("name")), `"'`),
			rest: -1, typ: f.tsType(n.ChildByFieldName("return_type"))}
		if typeOf(n) == "method_definition" {
			for i := 0; i < int(n.ChildCount()); i++ {
				switch n.Child(i).Type() {
				case "get":
					d.getter = true
				case "static":
					d.static = true
				}
			}
		}
		f.tsParams(d, n.ChildByFieldName("parameters"))
		d.varargs = f.usesArguments(d.body)
		f.funcs = append(f.funcs, d)
	case "variable_declarator", "pair":
		name, v := n.ChildByFieldName("name"), n.ChildByFieldName("value")
		if name == nil {
			name = n.ChildByFieldName("key")
		}
		if t := typeOf(v); t != "arrow_function" && t != "function_expression" && t != "function" {
			return
		}
		d := &funcDef{f: f, node: v, body: v.ChildByFieldName("body"), name: strings.Trim(f.text(name), `"'`), rest: -1,
			typ: f.tsType(v.ChildByFieldName("return_type"))}
		if p := v.ChildByFieldName("parameter"); p != nil {
			d.params = []string{f.text(p)}
		} else {
			f.tsParams(d, v.ChildByFieldName("parameters"))
		}
		d.varargs = typeOf(v) != "arrow_function" && f.usesArguments(d.body)
		f.funcs = append(f.funcs, d)
	}
}

func (f *srcFile) tsTypeNames(n *sitter.Node, out *[]string) {
	for i := 0; i < int(n.NamedChildCount()); i++ {
		c := n.NamedChild(i)
		switch typeOf(c) {
		case "identifier", "type_identifier", "member_expression", "nested_type_identifier":
			*out = append(*out, lastName(f.text(c)))
		case "generic_type":
			*out = append(*out, baseName(f.text(c)))
		default:
			f.tsTypeNames(c, out)
		}
	}
}

// tsParams records a function's parameters.
func (f *srcFile) tsParams(d *funcDef, list *sitter.Node) {
	for _, p := range args(list) {
		switch typeOf(p) {
		case "identifier":
			d.params = append(d.params, f.text(p))
		case "required_parameter", "optional_parameter":
			pat := p.ChildByFieldName("pattern")
			if typeOf(pat) == "rest_pattern" {
				d.rest = len(d.params)
				d.params = append(d.params, strings.TrimPrefix(f.text(pat), "..."))
				continue
			}
			d.params = append(d.params, f.text(pat))
		case "assignment_pattern":
			d.params = append(d.params, f.text(p.ChildByFieldName("left")))
		case "rest_pattern":
			d.rest = len(d.params)
			d.params = append(d.params, strings.TrimPrefix(f.text(p), "..."))
		default:
			d.params = append(d.params, "")
		}
	}
}

// tsCallees are the project's functions a call may call: a function of
// this file or another one (imported, by name), a method of this class,
// of the class a receiver is typed or constructed as, or a module's
// function (keys.siteKey(id) with keys = require('./keys')).
func tsCallees(f *srcFile, call *sitter.Node) []*funcDef {
	if f.proj == nil {
		return nil
	}
	fn := call.ChildByFieldName("function")
	switch typeOf(fn) {
	case "identifier":
		return f.proj.functions(f, f.text(fn))
	case "member_expression":
		obj, name := fn.ChildByFieldName("object"), f.text(fn.ChildByFieldName("property"))
		if cls := f.tsClassOf(obj, 0); cls != "" {
			return f.proj.methods(cls, name)
		}
		if typeOf(obj) == "identifier" && f.tsModule(f.text(obj), obj) {
			return f.proj.functions(nil, name)
		}
		if d := f.proj.onlyMethod(name); d != nil && f.tsUnknown(obj, 0) {
			return []*funcDef{d}
		}
	}
	return nil
}

// onlyMethod is, for a receiver whose class the scan cannot know (a
// parameter, a field given one: bee-queue's job.queue), the project's
// method of that name when exactly one class declares it and the name
// says it is the project's own: two words or more, or a leading _
// (queue._commandable(), queue.toKey(s)), and no method of JavaScript's
// built-in objects or of Node's event emitters and streams. nil
// otherwise.
func (p *project) onlyMethod(name string) *funcDef {
	ds := p.funcs[name]
	if len(ds) != 1 || ds[0].class == nil || ds[0].static || ds[0].getter || builtinMethods[name] {
		return nil
	}
	if !strings.HasPrefix(name, "_") && strings.IndexFunc(name, unicode.IsUpper) <= 0 {
		return nil
	}
	return ds[0]
}

// builtinMethods are the methods of two words or more that JavaScript's
// built-in objects (Object, Array, String, Number, Date, Map, Promise)
// and Node's event emitters, streams and buffers have: a receiver calling
// one may be any of those.
var builtinMethods = set("toString", "toLocaleString", "valueOf", "hasOwnProperty", "isPrototypeOf",
	"propertyIsEnumerable", "toJSON", "forEach", "indexOf", "lastIndexOf", "findIndex", "findLast",
	"findLastIndex", "flatMap", "copyWithin", "reduceRight", "toReversed", "toSorted", "toSpliced",
	"charAt", "charCodeAt", "codePointAt", "startsWith", "endsWith", "padStart", "padEnd", "trimStart",
	"trimEnd", "toLowerCase", "toUpperCase", "toLocaleLowerCase", "toLocaleUpperCase", "localeCompare",
	"replaceAll", "matchAll", "toFixed", "toPrecision", "toExponential", "getTime", "getFullYear",
	"getMonth", "getDate", "getDay", "getHours", "getMinutes", "getSeconds", "getMilliseconds",
	"toISOString", "toDateString", "toTimeString", "toUTCString", "setTime", "addListener",
	"removeListener", "removeAllListeners", "prependListener", "prependOnceListener", "setMaxListeners",
	"getMaxListeners", "listenerCount", "rawListeners", "eventNames", "addEventListener",
	"removeEventListener", "dispatchEvent", "setEncoding", "setTimeout", "setKeepAlive", "setNoDelay",
	"writeHead", "setHeader", "getHeader", "removeHeader", "readUInt8", "readInt32BE", "writeUInt8",
	"toBuffer", "asCallback", "nodeify")

// tsModule reports whether name is bound to a module of the project:
// require('./x'), import * as name, import name from './x'.
func (f *srcFile) tsModule(name string, at *sitter.Node) bool {
	for _, v := range f.values(name, at) {
		if typeOf(v) == "call_expression" && f.text(v.ChildByFieldName("function")) == "require" {
			return true
		}
	}
	if f.modules == nil {
		f.modules = map[string]bool{}
		src := string(f.src)
		for _, m := range tsImport.FindAllStringSubmatch(src, -1) {
			f.modules[m[1]] = true
		}
	}
	if !f.modules[name] {
		return false
	}
	_, _, found := f.resolve(name, at)
	return !found
}

// tsImport finds the names a file imports a module as.
var tsImport = regexp.MustCompile(`import\s+(?:\*\s+as\s+)?([A-Za-z_$][\w$]*)\s+from\b`)

// tsClassOf is the project class a receiver is: this (the enclosing
// class), a name or this.field typed or constructed as one.
func (f *srcFile) tsClassOf(obj *sitter.Node, depth int) string {
	if depth > 6 || obj == nil {
		return ""
	}
	name := ""
	switch typeOf(obj) {
	case "this":
		if c := f.classAt(obj); c != nil {
			return c.name
		}
		return ""
	case "identifier":
		name = f.text(obj)
		if f.proj.isClass(name) {
			if _, _, found := f.resolve(name, obj); !found {
				return name
			}
		}
	case "member_expression":
		if o := obj.ChildByFieldName("object"); typeOf(o) != "this" {
			return ""
		}
		name = "this." + f.text(obj.ChildByFieldName("property"))
	case "new_expression":
		if c := baseName(f.text(obj.ChildByFieldName("constructor"))); f.proj.isClass(c) {
			return c
		}
		return ""
	case "await_expression", "parenthesized_expression", "non_null_expression", "as_expression":
		if obj.NamedChildCount() > 0 {
			return f.tsClassOf(obj.NamedChild(0), depth+1)
		}
		return ""
	default:
		return ""
	}
	return f.classOfBinding(name, obj, depth, f.tsClassOf)
}

// tsConstant follows a name the file does not bind (imported), an
// enum's member or a class's static field (Keys.PREFIX) to the project's
// const, enum or static readonly value.
func tsConstant(f *srcFile, n *sitter.Node) (*srcFile, *sitter.Node, bool) {
	name, owner := "", ""
	switch typeOf(n) {
	case "identifier":
		name = f.text(n)
	case "member_expression":
		obj := n.ChildByFieldName("object")
		if typeOf(obj) != "identifier" {
			return nil, nil, false
		}
		owner, name = f.text(obj), f.text(n.ChildByFieldName("property"))
	default:
		return nil, nil, false
	}
	var hit *srcFile
	var val *sitter.Node
	for _, g := range f.proj.files {
		for _, b := range g.binds[name] {
			if b.param || b.value == nil {
				continue
			}
			top := b.scope.start == 0 && b.scope.end == uint32(len(g.src))
			ok := owner == "" && top
			if owner != "" {
				if top && g.tsModule(owner, g.tree.RootNode()) {
					ok = true
				}
			}
			if !ok {
				continue
			}
			if hit != nil && g.text(b.value) != hit.text(val) {
				return nil, nil, false
			}
			hit, val = g, b.value
		}
		if owner == "" {
			continue
		}
		// enum Keys { Session = 'session:' } and class Keys { static readonly P = 'p:' }
		for _, c := range g.classes {
			if c.name != owner {
				continue
			}
			for _, b := range g.binds["this."+name] {
				if b.value != nil && spanOf(c.node.ChildByFieldName("body")) == b.scope {
					hit, val = g, b.value
				}
			}
		}
		for _, e := range g.enums[owner] {
			if v, ok := e[name]; ok {
				hit, val = g, v
			}
		}
	}
	return hit, val, hit != nil
}

func typeScript() *language  { return tsLanguage(typescript.GetLanguage()) }
func tsxLanguage() *language { return tsLanguage(tsx.GetLanguage()) }
func jsLanguage() *language {
	l := tsLanguage(javascript.GetLanguage())
	l.extraArgs = true
	return l
}

// tsType is the text of a type annotation without its colon.
func (f *srcFile) tsType(n *sitter.Node) string {
	if n == nil {
		return ""
	}
	return strings.TrimSpace(strings.TrimPrefix(f.text(n), ":"))
}

func tsBind(f *srcFile, n *sitter.Node) {
	switch typeOf(n) {
	case "variable_declarator":
		if name := n.ChildByFieldName("name"); name != nil && typeOf(name) == "identifier" {
			f.declare(f.text(name), n, n.ChildByFieldName("value"), f.tsType(n.ChildByFieldName("type")), false)
		}
	case "required_parameter", "optional_parameter":
		p := unrest(n.ChildByFieldName("pattern")) // ...keys: string[]
		if p == nil || typeOf(p) != "identifier" {
			return
		}
		typ := f.tsType(n.ChildByFieldName("type"))
		f.declare(f.text(p), n, nil, typ, true)
		for i := 0; i < int(n.NamedChildCount()); i++ {
			if n.NamedChild(i).Type() == "accessibility_modifier" { // constructor(private redis: Redis)
				f.declare("this."+f.text(p), n.Parent(), nil, typ, false)
			}
		}
	case "formal_parameters": // JavaScript: bare identifiers
		for i := 0; i < int(n.NamedChildCount()); i++ {
			if p := unrest(n.NamedChild(i)); typeOf(p) == "identifier" { // a, ...keys
				f.declare(f.text(p), p, nil, "", true)
			}
		}
	case "arrow_function":
		if p := n.ChildByFieldName("parameter"); p != nil {
			f.declare(f.text(p), p, nil, "", true)
		}
	case "public_field_definition", "field_definition":
		name := n.ChildByFieldName("name")
		if name == nil {
			name = n.ChildByFieldName("property")
		}
		if name != nil {
			f.declare("this."+f.text(name), n, n.ChildByFieldName("value"), f.tsType(n.ChildByFieldName("type")), false)
		}
	case "assignment_expression", "augmented_assignment_expression":
		left, value := n.ChildByFieldName("left"), n.ChildByFieldName("right")
		if typeOf(n) != "assignment_expression" {
			value = nil
		}
		switch typeOf(left) {
		case "identifier":
			f.declare(f.text(left), n, value, "", false)
		case "member_expression":
			if o := left.ChildByFieldName("object"); o != nil && typeOf(o) == "this" {
				f.declare("this."+f.text(left.ChildByFieldName("property")), n, value, "", false)
			}
		}
	}
}

// tsClient reports whether a receiver is an ioredis or node-redis client,
// pipeline or multi, by evidence: bound to new Redis(…), createClient(…),
// .pipeline()…, typed as one, returned by a getter or a function of the
// project (get client(): Promise<Redis>; getClient: () => client),
// through await and conditional values; never by its name.
func (f *srcFile) tsClient(obj *sitter.Node, depth int) bool {
	if depth > 8 || obj == nil {
		return false
	}
	switch typeOf(obj) {
	case "identifier":
		if f.tsNamed(f.text(obj), obj, depth) || f.tsUsedClient(obj, depth) {
			return true
		}
		// getClient().then((client) => client.get(k)): what the promise
		// resolves to
		if p := f.tsThenOf(obj); p != nil {
			return f.tsClient(p, depth+1)
		}
		return false
	case "member_expression":
		prop := f.text(obj.ChildByFieldName("property"))
		o := obj.ChildByFieldName("object")
		if typeOf(o) == "this" {
			if _, _, found := f.resolve("this."+prop, obj); found {
				return f.tsNamed("this."+prop, obj, depth) || f.tsUsedClient(obj, depth)
			}
		}
		if f.proj != nil {
			if cls := f.tsClassOf(o, 0); cls != "" {
				for _, d := range f.proj.methods(cls, prop) {
					if d.getter && f.proj.returnsClient(d, depth+1) {
						return true
					}
				}
			}
		}
		return typeOf(o) == "identifier" && f.tsUsedClient(obj, depth)
	case "new_expression":
		c := lastName(f.text(obj.ChildByFieldName("constructor")))
		return c == "Redis" || c == "IORedis" || c == "Cluster"
	case "await_expression", "parenthesized_expression", "non_null_expression", "as_expression":
		if obj.NamedChildCount() > 0 {
			return f.tsClient(obj.NamedChild(0), depth+1)
		}
	case "ternary_expression":
		return f.tsClient(obj.ChildByFieldName("consequence"), depth+1) || f.tsClient(obj.ChildByFieldName("alternative"), depth+1)
	case "binary_expression": // a ?? b, a || b
		return f.tsClient(obj.ChildByFieldName("left"), depth+1) || f.tsClient(obj.ChildByFieldName("right"), depth+1)
	case "call_expression":
		fn := obj.ChildByFieldName("function")
		name := lastName(f.text(fn))
		switch {
		case name == "createClient" || name == "createCluster":
			return true
		case f.text(fn) == "Promise.resolve": // a promise of it: awaited, or given to then
			as := args(obj.ChildByFieldName("arguments"))
			return len(as) == 1 && f.tsClient(as[0], depth+1)
		case typeOf(fn) == "member_expression" && (set("pipeline", "multi", "batch", "duplicate", "connect", "withTypeMapping")[name] || commandKeys(tsCommand(name), 1, noInt) != nil):
			if f.tsClient(fn.ChildByFieldName("object"), depth+1) {
				return true
			}
		}
		if f.proj != nil {
			for _, d := range tsCallees(f, obj) {
				if f.proj.returnsClient(d, depth+1) {
					return true
				}
			}
		}
	}
	return false
}

func noInt(int) (string, bool) { return "", false }

// tsNamed classifies a variable or field by its declared type or the
// values it is given (any of them).
func (f *srcFile) tsNamed(name string, at *sitter.Node, depth int) bool {
	for _, b := range f.lookup(name, at) {
		if tsClientType(b.typ) {
			return true
		}
		if b.value != nil && f.tsClient(b.value, depth+1) {
			return true
		}
	}
	return false
}

func tsKeyArgs(f *srcFile, n *sitter.Node) ([]*sitter.Node, string) {
	if typeOf(n) != "call_expression" {
		return nil, ""
	}
	fn := n.ChildByFieldName("function")
	if typeOf(fn) == "identifier" {
		if method := f.tsBoundCommand(fn); method != "" {
			return f.tsKeys(method, args(n.ChildByFieldName("arguments")))
		}
		return nil, ""
	}
	if fn == nil || typeOf(fn) != "member_expression" {
		return nil, ""
	}
	as := args(n.ChildByFieldName("arguments"))
	if inner, list, ok := f.tsApplied(fn, as); ok {
		// client.hmget.apply(client, [key, …]), client.del.call(client, k):
		// the method called with that list
		fn, as = inner, list
	}
	// node-redis 3 promisified by bluebird: zaddAsync is ZADD
	method := strings.TrimSuffix(f.text(fn.ChildByFieldName("property")), "Async")
	obj := fn.ChildByFieldName("object")
	if !f.tsClient(obj, 0) {
		// node-redis 4's module commands: client.ts.add(key, …) is TS.ADD
		if typeOf(obj) != "member_expression" || !f.tsClient(obj.ChildByFieldName("object"), 0) {
			return nil, ""
		}
		if method = moduleCommand(f.text(obj.ChildByFieldName("property")), method); method == "" {
			return nil, ""
		}
	}
	if keys, ok := f.tsScriptKeys(obj, method, as); ok {
		return keys, "evalsha"
	}
	return f.tsKeys(method, as)
}

// tsSpread is the language's spread: a client command called with a
// spread argument (client.del(...keys), client.evalsha(sha, ...args)),
// or applied to a list whose elements are not seen
// (client.evalsha.apply(client, args)). recv is the receiver when it is
// a parameter not known to be a client.
func tsSpread(f *srcFile, n *sitter.Node) (command string, pre []*sitter.Node, list, recv *sitter.Node) {
	fn := n.ChildByFieldName("function")
	if typeOf(n) != "call_expression" || typeOf(fn) != "member_expression" {
		return "", nil, nil, nil
	}
	argList := n.ChildByFieldName("arguments")
	if !strings.Contains(f.text(argList), "...") && !strings.HasSuffix(f.text(fn), ".apply") {
		return "", nil, nil, nil // no spread, no apply: the common case, told from the text alone
	}
	as := args(argList)
	if inner, l := f.tsApplyOf(fn, as); inner != nil {
		if _, _, ok := f.tsApplied(fn, as); ok {
			return "", nil, nil, nil // keyArgs reads the list
		}
		fn, list = inner, l
	} else {
		for i, a := range as {
			if l := spreadList(a); l != nil {
				list, pre = l, as[:i]
				break
			}
		}
	}
	if list == nil {
		return "", nil, nil, nil
	}
	if obj := fn.ChildByFieldName("object"); !f.tsClient(obj, 0) {
		// A receiver the function is given (bee-queue's
		// _evalScriptOn(commandable, args)): a client where its callers
		// pass one (sinksOf).
		if f.curParam(obj) < 0 {
			return "", nil, nil, nil
		}
		recv = obj
	}
	switch method := tsCommand(f.text(fn.ChildByFieldName("property"))); method {
	case "sendcommand", "call", "send_command", "apply", "bind", "multi", "pipeline", "batch":
		return "", nil, nil, nil
	default:
		return method, pre, list, recv
	}
}

// tsThenOf is, for the first parameter of a function given to a
// promise's then (p.then((client) => …)), the promise p; nil for any
// other name.
func (f *srcFile) tsThenOf(id *sitter.Node) *sitter.Node {
	bs := f.lookup(f.text(id), id)
	if len(bs) != 1 || !bs[0].param {
		return nil
	}
	fn := id.Parent()
	for fn != nil && spanOf(fn) != bs[0].scope {
		fn = fn.Parent()
	}
	if fn == nil {
		return nil
	}
	switch typeOf(fn) {
	case "arrow_function", "function_expression", "function":
	default:
		return nil
	}
	// the function's first parameter: (client) => or client =>
	var first *sitter.Node
	if ps := fn.ChildByFieldName("parameters"); ps != nil && ps.NamedChildCount() > 0 {
		first = ps.NamedChild(0)
		if typeOf(first) == "required_parameter" || typeOf(first) == "optional_parameter" {
			first = first.ChildByFieldName("pattern")
		}
	} else {
		first = fn.ChildByFieldName("parameter")
	}
	if first == nil || f.text(first) != f.text(id) {
		return nil
	}
	argList := fn.Parent()
	if argList == nil || typeOf(argList) != "arguments" || argList.NamedChildCount() == 0 || spanOf(argList.NamedChild(0)) != spanOf(fn) {
		return nil
	}
	call := argList.Parent()
	if call == nil || typeOf(call) != "call_expression" {
		return nil
	}
	callee := call.ChildByFieldName("function")
	if typeOf(callee) != "member_expression" || f.text(callee.ChildByFieldName("property")) != "then" {
		return nil
	}
	return callee.ChildByFieldName("object")
}

// tsApplied reads recv.method.apply(recv, list) and recv.method.call(recv,
// a, b): the method (recv.method) and the arguments it is called with,
// the known first elements of the list (an array literal, directly or
// through a variable given one, or one that concat extends: the elements
// after it are not known). ok is false for any other call.
func (f *srcFile) tsApplied(fn *sitter.Node, as []*sitter.Node) (inner *sitter.Node, list []*sitter.Node, ok bool) {
	if in, l := f.tsApplyOf(fn, as); in != nil {
		list = f.tsArrayHead(l, 0)
		if el := f.tsMapped(l, 0); list == nil && el != nil && keysFrom(tsCommand(f.text(in.ChildByFieldName("property"))), 0) {
			// del.apply(client, names.map((k) => …)): the element stands
			// for all of them, so only where every argument is a key
			list = []*sitter.Node{el}
		}
		return in, list, list != nil
	}
	inner = fn.ChildByFieldName("object")
	if f.text(fn.ChildByFieldName("property")) != "call" || !f.tsSameRecv(inner, as) {
		return nil, nil, false
	}
	return inner, as[1:], true
}

// tsApplyOf reads recv.method.apply(recv, list): the method (recv.method)
// and the list; nil for any other call.
func (f *srcFile) tsApplyOf(fn *sitter.Node, as []*sitter.Node) (inner, list *sitter.Node) {
	inner = fn.ChildByFieldName("object")
	if f.text(fn.ChildByFieldName("property")) != "apply" || len(as) != 2 || !f.tsSameRecv(inner, as) {
		return nil, nil
	}
	return inner, as[1]
}

// tsSameRecv reports recv.method called with recv as this (the first of
// as), as apply and call do.
func (f *srcFile) tsSameRecv(inner *sitter.Node, as []*sitter.Node) bool {
	return typeOf(inner) == "member_expression" && len(as) > 0 && f.text(as[0]) == f.text(inner.ChildByFieldName("object"))
}

// tsArrayHead is the first elements of an array: a literal's, directly or
// through a variable given only it, or those of the array concat extends
// ([key].concat(ids)); nil when they are not seen.
func (f *srcFile) tsArrayHead(n *sitter.Node, depth int) []*sitter.Node {
	if depth > 4 {
		return nil
	}
	switch typeOf(n) {
	case "array":
		var out []*sitter.Node
		for _, el := range args(n) {
			if typeOf(el) == "spread_element" {
				break // what the spread gives, and all after, are not known
			}
			out = append(out, el)
		}
		return out
	case "identifier":
		if bs := f.lookup(f.text(n), n); len(bs) == 1 && bs[0].value != nil {
			return f.tsArrayHead(bs[0].value, depth+1)
		}
	case "call_expression":
		if c := n.ChildByFieldName("function"); typeOf(c) == "member_expression" && f.text(c.ChildByFieldName("property")) == "concat" {
			return f.tsArrayHead(c.ChildByFieldName("object"), depth+1)
		}
	}
	return nil
}

// tsBoundCommand is the client command a function variable stands for:
// util.promisify(client.set) or client.set.bind(client), either way
// round and with or without the other, is SET ("set"); "" when the
// variable is no such function.
func (f *srcFile) tsBoundCommand(fn *sitter.Node) string {
	for _, v := range f.values(f.text(fn), fn) {
		wrapped := 0 // client.set alone is not bound: calling it fails
		for ; wrapped < 4 && typeOf(v) == "call_expression"; wrapped++ {
			callee, as := v.ChildByFieldName("function"), args(v.ChildByFieldName("arguments"))
			switch {
			case typeOf(callee) == "member_expression" && f.text(callee.ChildByFieldName("property")) == "bind":
				v = callee.ChildByFieldName("object")
			case lastName(f.text(callee)) == "promisify" && len(as) == 1:
				v = as[0]
			default:
				v = nil
			}
		}
		if wrapped > 0 && typeOf(v) == "member_expression" && f.tsClient(v.ChildByFieldName("object"), 0) {
			return strings.TrimSuffix(f.text(v.ChildByFieldName("property")), "Async")
		}
	}
	return ""
}

// tsCommand is the Redis command a client method sends: node-redis 3's
// promisified zaddAsync is ZADD, as zadd is.
func tsCommand(method string) string { return commandName(strings.TrimSuffix(method, "Async")) }

func (f *srcFile) tsKeys(method string, as []*sitter.Node) ([]*sitter.Node, string) {
	switch method {
	case "sendCommand", "call", "send_command":
		cmd := as
		if len(as) > 0 && typeOf(as[0]) == "array" {
			cmd = args(as[0])
		}
		if len(cmd) > 0 {
			if s, _ := f.eval(cmd[0], 0); isLiteral(s) {
				lit, _ := s.Literal()
				return f.commandArgs(lit, cmd[1:]), strings.ToLower(lit)
			}
		}
		return nil, ""
	case "eval", "evalSha", "evalsha", "fCall", "fcall", "evalRo", "fCallRo":
		if len(as) >= 2 && typeOf(as[1]) == "object" { // node-redis: eval(script, {keys: […]})
			for i := 0; i < int(as[1].NamedChildCount()); i++ {
				p := as[1].NamedChild(i)
				if typeOf(p) == "pair" && strings.Trim(f.text(p.ChildByFieldName("key")), `"'`) == "keys" {
					if v := p.ChildByFieldName("value"); typeOf(v) == "array" {
						return args(v), "eval"
					}
				}
			}
			return nil, ""
		}
	}
	var out []*sitter.Node
	for _, k := range f.commandArgs(method, as) {
		switch {
		case typeOf(k) == "array": // del([a, b]), mget([a, b])
			out = append(out, args(k)...)
		case typeOf(k) == "spread_element":
			// del(...ids.map((id) => `k:${id}`)): the element a mapped list
			// gives, where every argument from the spread on is a key
			if el := f.tsMapped(spreadList(k), 0); el != nil && keysFrom(commandName(method), slices.Index(as, k)) {
				out = append(out, el)
			}
		default:
			if el := f.tsMapped(k, 0); el != nil { // mget(ids.map((id) => `k:${id}`))
				out = append(out, el)
			} else {
				out = append(out, k)
			}
		}
	}
	return out, commandName(method)
}

// tsMapped is the element a mapped list gives: the value the function
// given to map returns (xs.map((x) => `k:${x}`), xs.map(function (x) {
// return … })), directly or through a variable given only the list; nil
// for any other expression.
func (f *srcFile) tsMapped(n *sitter.Node, depth int) *sitter.Node {
	if n == nil || depth > 4 {
		return nil
	}
	switch typeOf(n) {
	case "identifier":
		if bs := f.lookup(f.text(n), n); len(bs) == 1 && bs[0].value != nil {
			return f.tsMapped(bs[0].value, depth+1)
		}
	case "call_expression":
		fn := n.ChildByFieldName("function")
		as := args(n.ChildByFieldName("arguments"))
		if typeOf(fn) != "member_expression" || f.text(fn.ChildByFieldName("property")) != "map" || len(as) != 1 {
			return nil
		}
		switch typeOf(as[0]) {
		case "arrow_function", "function_expression", "function":
			body := as[0].ChildByFieldName("body")
			if typeOf(body) != "statement_block" {
				return body
			}
			var rets []*sitter.Node
			f.returns(nil, body, &rets)
			if len(rets) == 1 {
				return rets[0]
			}
		}
	}
	return nil
}

func tsEval(f *srcFile, n *sitter.Node, depth int) (keyshape.Shape, bool, bool) {
	switch typeOf(n) {
	case "string", "template_string":
		s, _ := f.stringShape(n, false, false, depth)
		return s, false, true
	case "as_expression", "non_null_expression", "satisfies_expression", "type_assertion":
		if n.NamedChildCount() > 0 {
			s, b := f.eval(n.NamedChild(0), depth+1)
			return s, b, true
		}
	case "member_expression":
		obj, prop := n.ChildByFieldName("object"), f.text(n.ChildByFieldName("property"))
		if typeOf(obj) == "this" {
			s, b := f.evalName("this."+prop, n, depth)
			return s, b, true
		}
		if prop == "key" {
			if _, b := f.eval(obj, depth+1); b {
				return keyshape.Shape{}, true, true
			}
		}
		if v := f.tsObjectProp(obj, prop); v != nil { // this.settings.keyPrefix, settings = {keyPrefix: …}
			s, b := f.eval(v, depth+1)
			return s, b, true
		}
		if f.proj != nil && typeOf(obj) == "identifier" {
			if g, v, ok := tsConstant(f, n); ok { // Keys.SESSION, an enum's member
				s, b := g.evalIn(nil, v, depth+1)
				return s, b, true
			}
		}
	case "call_expression":
		s, b := f.tsCall(n, depth)
		return s, b, true
	}
	return keyshape.Shape{}, false, false
}

// tsObjectProp is the value of property prop in the object literal obj
// (a variable or this.field) is given, when it is given one only and that
// literal sets prop: this.settings = {keyPrefix: prefix + ':'}, then
// this.settings.keyPrefix. nil otherwise.
func (f *srcFile) tsObjectProp(obj *sitter.Node, prop string) *sitter.Node {
	name := ""
	switch typeOf(obj) {
	case "identifier":
		name = f.text(obj)
	case "member_expression":
		if typeOf(obj.ChildByFieldName("object")) != "this" {
			return nil
		}
		name = "this." + f.text(obj.ChildByFieldName("property"))
	default:
		return nil
	}
	bs := f.lookup(name, obj)
	if len(bs) != 1 || bs[0].value == nil || typeOf(bs[0].value) != "object" {
		return nil
	}
	lit := bs[0].value
	var found *sitter.Node
	for i := 0; i < int(lit.NamedChildCount()); i++ {
		c := lit.NamedChild(i)
		switch typeOf(c) {
		case "pair":
			if strings.Trim(f.text(c.ChildByFieldName("key")), `"'`) == prop {
				found = c.ChildByFieldName("value")
			}
		case "shorthand_property_identifier":
			if f.text(c) == prop {
				return nil // {keyPrefix}: a variable of that name, followed by its own binding elsewhere
			}
		case "spread_element":
			found = nil // {...defaults, …}: what the spread gives is not read
		}
	}
	return found
}

func (f *srcFile) tsCall(n *sitter.Node, depth int) (keyshape.Shape, bool) {
	fn := n.ChildByFieldName("function")
	as := args(n.ChildByFieldName("arguments"))
	name := lastName(f.text(fn))
	switch {
	case f.c.IsBuilder(keyshape.TypeScript, name, len(as)):
		return keyshape.Shape{}, true
	case typeOf(fn) == "identifier" && name == "String" && len(as) == 1:
		return f.eval(as[0], depth+1)
	case typeOf(fn) == "member_expression" && name == "toString" && len(as) == 0:
		if s, b := f.eval(fn.ChildByFieldName("object"), depth+1); b {
			return s, true
		}
	case typeOf(fn) == "member_expression" && name == "join" && len(as) == 1:
		if o := fn.ChildByFieldName("object"); typeOf(o) == "array" {
			return f.join(as[0], args(o), depth), false
		}
	}
	if s, ok := f.projectCall(n, depth); ok {
		return s, false
	}
	return f.hole(n, ""), false
}
