package scancode

import (
	"strings"

	sitter "github.com/smacker/go-tree-sitter"
	"github.com/smacker/go-tree-sitter/java"

	"github.com/keyguard/keyguard/internal/keyshape"
	"github.com/keyguard/keyguard/keytmpl"
)

func javaLanguage() *language {
	return (&language{
		name:    keyshape.Java,
		grammar: java.GetLanguage(),
		scopes:  set("method_declaration", "constructor_declaration", "lambda_expression", "class_body", "interface_body", "enum_body", "program"),
		classes: set("class_body", "enum_body"),
		bind:    javaBind,
		bindTypes: []string{"local_variable_declaration", "field_declaration", "formal_parameter", "spread_parameter",
			"resource", "enhanced_for_statement", "assignment_expression"},
		callTypes: []string{"method_invocation"},
		keyArgs:   javaKeyArgs,
		spread:    javaSpread,
		eval:      javaEval,
		intType: func(t string) bool {
			return set("int", "long", "short", "byte", "Integer", "Long", "Short", "BigInteger")[t]
		},
		keyType:    func(t string) bool { return t == "Key" || t == "Keys.Key" },
		declTypes:  []string{"method_declaration", "class_declaration", "interface_declaration", "enum_declaration"},
		decl:       javaDecl,
		callees:    javaCallees,
		constant:   javaConstant,
		elements:   func(f *srcFile, n *sitter.Node) []*sitter.Node { return f.javaElements(n, 0) },
		clientType: func(t string) bool { return javaTypeClient(t) != javaNone },
		isClient:   func(f *srcFile, n *sitter.Node, _ int) bool { return f.javaReceiver(n) != javaNone },
	}).compile()
}

// javaDecl indexes a class, interface or method.
func javaDecl(f *srcFile, n *sitter.Node) {
	switch typeOf(n) {
	case "class_declaration", "interface_declaration", "enum_declaration":
		c := &classDef{f: f, node: n, name: f.text(n.ChildByFieldName("name"))}
		for i := 0; i < int(n.NamedChildCount()); i++ {
			switch k := n.NamedChild(i); typeOf(k) {
			case "superclass", "super_interfaces", "extends_interfaces":
				f.typeNames(k, &c.bases)
			}
		}
		f.classes = append(f.classes, c)
	case "method_declaration":
		d := &funcDef{f: f, node: n, body: n.ChildByFieldName("body"), name: f.text(n.ChildByFieldName("name")), rest: -1,
			typ: f.text(n.ChildByFieldName("type"))}
		for _, p := range args(n.ChildByFieldName("parameters")) {
			switch typeOf(p) {
			case "formal_parameter":
				d.params = append(d.params, f.text(p.ChildByFieldName("name")))
			case "spread_parameter":
				d.rest = len(d.params)
				for i := 0; i < int(p.NamedChildCount()); i++ {
					if v := p.NamedChild(i); typeOf(v) == "variable_declarator" {
						d.params = append(d.params, f.text(v.ChildByFieldName("name")))
					}
				}
			}
		}
		if m := javaModifiers(n); m != nil {
			d.static = strings.Contains(f.text(m), "static")
		}
		f.funcs = append(f.funcs, d)
	}
}

// typeNames collects the simple names of the types under n.
func (f *srcFile) typeNames(n *sitter.Node, out *[]string) {
	for i := 0; i < int(n.NamedChildCount()); i++ {
		c := n.NamedChild(i)
		switch typeOf(c) {
		case "type_identifier", "scoped_type_identifier", "generic_type":
			*out = append(*out, baseName(f.text(c)))
		default:
			f.typeNames(c, out)
		}
	}
}

// javaModifiers is a declaration's modifiers node, nil when none.
func javaModifiers(n *sitter.Node) *sitter.Node {
	for i := 0; i < int(n.NamedChildCount()); i++ {
		if c := n.NamedChild(i); typeOf(c) == "modifiers" {
			return c
		}
	}
	return nil
}

// javaCallees are the project's methods a call may call: a method of the
// receiver's declared class (or of the classes implementing it), of this
// class, a static method of a class named, or of
// SpringUtils.getBean(X.class).
func javaCallees(f *srcFile, call *sitter.Node) []*funcDef {
	if typeOf(call) != "method_invocation" || f.proj == nil {
		return nil
	}
	name := f.text(call.ChildByFieldName("name"))
	obj := call.ChildByFieldName("object")
	if obj == nil || typeOf(obj) == "this" {
		if c := f.classAt(call); c != nil {
			return f.proj.methods(c.name, name)
		}
		return nil
	}
	if cls := f.javaClassOf(obj); cls != "" {
		return f.proj.methods(cls, name)
	}
	return nil
}

// javaClassOf is the project class a receiver is declared as, "" when it
// is none (or the file does not say).
func (f *srcFile) javaClassOf(obj *sitter.Node) string {
	var typ string
	switch typeOf(obj) {
	case "identifier":
		name := f.text(obj)
		_, t, found := f.resolve(name, obj)
		switch {
		case found:
			typ = t
		case f.proj.isClass(name):
			typ = name // a static call: Utils.key(id)
		default:
			typ = f.javaFieldType(name, obj)
		}
	case "field_access":
		if o := obj.ChildByFieldName("object"); typeOf(o) == "this" {
			field := f.text(obj.ChildByFieldName("field"))
			if _, t, found := f.resolve("this."+field, obj); found {
				typ = t
			}
		}
	case "method_invocation": // SpringUtils.getBean(RedisCache.class)
		if f.text(obj.ChildByFieldName("name")) == "getBean" {
			for _, a := range args(obj.ChildByFieldName("arguments")) {
				if typeOf(a) == "class_literal" && a.NamedChildCount() > 0 {
					typ = f.text(a.NamedChild(0))
				}
			}
		}
	case "object_creation_expression":
		typ = f.text(obj.ChildByFieldName("type"))
	}
	if b := baseName(typ); b != "" && f.proj.isClass(b) {
		return b
	}
	return ""
}

// javaFieldType is the declared type of a field inherited from a class of
// the project (the file does not declare it).
func (f *srcFile) javaFieldType(name string, at *sitter.Node) string {
	c := f.classAt(at)
	if c == nil {
		return ""
	}
	for _, b := range c.bases {
		for _, bc := range f.proj.classes[b] {
			if _, t, found := bc.f.resolve(name, bc.node.ChildByFieldName("body")); found && t != "" {
				return t
			}
		}
	}
	return ""
}

// javaConstant follows Class.NAME or a statically imported NAME to the
// project's static final field (or interface constant).
func javaConstant(f *srcFile, n *sitter.Node) (*srcFile, *sitter.Node, bool) {
	cls, field := "", ""
	switch typeOf(n) {
	case "identifier":
		field = f.text(n)
	case "field_access":
		cls, field = baseName(f.text(n.ChildByFieldName("object"))), f.text(n.ChildByFieldName("field"))
	default:
		return nil, nil, false
	}
	var hit *srcFile
	var val *sitter.Node
	for _, g := range f.proj.files {
		for _, c := range g.classes {
			if cls != "" && c.name != cls {
				continue
			}
			body := c.node.ChildByFieldName("body")
			if body == nil {
				continue
			}
			for i := 0; i < int(body.NamedChildCount()); i++ {
				d := body.NamedChild(i)
				if t := typeOf(d); t != "field_declaration" && t != "constant_declaration" {
					continue
				}
				m := javaModifiers(d)
				constant := typeOf(d) == "constant_declaration" || typeOf(c.node) == "interface_declaration" ||
					m != nil && strings.Contains(g.text(m), "static") && strings.Contains(g.text(m), "final")
				if !constant {
					continue
				}
				for j := 0; j < int(d.NamedChildCount()); j++ {
					v := d.NamedChild(j)
					if typeOf(v) == "variable_declarator" && g.text(v.ChildByFieldName("name")) == field && v.ChildByFieldName("value") != nil {
						if hit != nil && (cls == "" || g.text(v.ChildByFieldName("value")) != hit.text(val)) {
							return nil, nil, false // two constants of that name
						}
						hit, val = g, v.ChildByFieldName("value")
					}
				}
			}
		}
	}
	return hit, val, hit != nil
}

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

func javaBind(f *srcFile, n *sitter.Node) {
	switch typeOf(n) {
	case "local_variable_declaration", "field_declaration":
		typ := f.text(n.ChildByFieldName("type"))
		for i := 0; i < int(n.NamedChildCount()); i++ {
			d := n.NamedChild(i)
			if typeOf(d) != "variable_declarator" {
				continue
			}
			name := f.text(d.ChildByFieldName("name"))
			f.declare(name, n, d.ChildByFieldName("value"), typ, false)
			if typeOf(n) == "field_declaration" {
				f.declare("this."+name, n, d.ChildByFieldName("value"), typ, false)
				if inject := f.springValue(n, name); inject != "" {
					f.inject(name, inject)
					f.inject("this."+name, inject)
				}
			}
		}
	case "formal_parameter":
		if name := n.ChildByFieldName("name"); name != nil {
			f.declare(f.text(name), n, nil, f.text(n.ChildByFieldName("type")), true)
		}
	case "spread_parameter": // String... keys: its name is its declarator's
		for i := 0; i < int(n.NamedChildCount()); i++ {
			if v := n.NamedChild(i); typeOf(v) == "variable_declarator" {
				f.declare(f.text(v.ChildByFieldName("name")), n, nil, "", true)
			}
		}
	case "resource":
		if name := n.ChildByFieldName("name"); name != nil {
			f.declare(f.text(name), n, n.ChildByFieldName("value"), f.text(n.ChildByFieldName("type")), false)
		}
	case "enhanced_for_statement":
		if name := n.ChildByFieldName("name"); name != nil {
			f.declare(f.text(name), n, nil, f.text(n.ChildByFieldName("type")), false)
			f.loopOver(f.text(name), n.ChildByFieldName("value"))
		}
	case "assignment_expression":
		left, value := n.ChildByFieldName("left"), n.ChildByFieldName("right")
		if op := n.ChildByFieldName("operator"); op != nil && f.text(op) != "=" {
			value = nil
		}
		switch typeOf(left) {
		case "identifier":
			f.declare(f.text(left), n, value, "", false)
		case "field_access":
			if o := left.ChildByFieldName("object"); o != nil && typeOf(o) == "this" {
				field := f.text(left.ChildByFieldName("field"))
				f.declare("this."+field, n, value, "", false)
				f.declare(field, n, value, "", false)
			}
		}
	}
}

type javaClient int

const (
	javaNone     javaClient = iota
	javaCommands            // Jedis, Lettuce: methods named after commands
	javaTemplate            // Spring RedisTemplate / StringRedisTemplate
	javaOps                 // the opsForValue()… of a template: the key comes first
	javaRedisson            // RedissonClient: getBucket(name)…
)

// javaTypeClient classifies a declared or constructed type.
func javaTypeClient(typ string) javaClient {
	base := typ
	if i := strings.IndexByte(base, '<'); i >= 0 {
		base = base[:i]
	}
	base = lastName(strings.TrimSpace(base))
	switch {
	case javaTemplates[base]:
		return javaTemplate
	case javaRedissons[base]:
		return javaRedisson
	case javaCommandTypes[base] || strings.HasPrefix(base, "Redis") && strings.HasSuffix(base, "Commands"):
		return javaCommands
	}
	return javaNone
}

// The client types, by their exact names: a project's RedisCacheService
// or JedisUtil is not one (its methods are followed as a wrapper's).
var (
	javaTemplates = set("RedisTemplate", "StringRedisTemplate", "ReactiveRedisTemplate", "ReactiveStringRedisTemplate",
		"RedisOperations", "ReactiveRedisOperations")
	javaRedissons    = set("RedissonClient", "Redisson", "RedissonReactiveClient", "RedissonRxClient")
	javaCommandTypes = set("Jedis", "JedisPooled", "JedisCluster", "UnifiedJedis", "ShardedJedis", "BinaryJedis",
		"JedisCommands", "Pipeline", "Transaction", "PipelineBase", "MultiKeyPipelineBase")
)

// javaReceiver tells what kind of Redis client a call's receiver is.
func (f *srcFile) javaReceiver(obj *sitter.Node) javaClient {
	switch typeOf(obj) {
	case "method_invocation":
		m := f.text(obj.ChildByFieldName("name"))
		switch {
		case strings.HasPrefix(m, "opsFor"):
			return javaOps
		case set("sync", "async", "reactive", "getResource", "pipelined", "multi")[m]:
			return javaCommands
		}
		return javaNone
	case "object_creation_expression":
		return javaTypeClient(f.text(obj.ChildByFieldName("type")))
	case "ternary_expression":
		if k := f.javaReceiver(obj.ChildByFieldName("consequence")); k != javaNone {
			return k
		}
		return f.javaReceiver(obj.ChildByFieldName("alternative"))
	case "parenthesized_expression", "cast_expression":
		if obj.NamedChildCount() > 0 {
			return f.javaReceiver(obj.NamedChild(int(obj.NamedChildCount()) - 1))
		}
	case "identifier":
		return f.javaNamed(f.text(obj), f.text(obj), obj)
	case "field_access":
		if o := obj.ChildByFieldName("object"); o != nil && typeOf(o) == "this" {
			field := f.text(obj.ChildByFieldName("field"))
			return f.javaNamed("this."+field, field, obj)
		}
	}
	return javaNone
}

// javaNamed classifies a variable or field by evidence: its declared type
// (a field the class inherits from a project class too), or the one value
// it is given; never by its name.
func (f *srcFile) javaNamed(name, short string, at *sitter.Node) javaClient {
	v, typ, found := f.resolve(name, at)
	if !found && f.proj != nil {
		typ = f.javaFieldType(short, at)
	}
	if k := javaTypeClient(typ); k != javaNone {
		return k
	}
	if v != nil {
		return f.javaReceiver(v)
	}
	return javaNone
}

var redissonGetters = set("getBucket", "getBuckets", "getMap", "getMapCache", "getLocalCachedMap", "getLock", "getFairLock",
	"getSpinLock", "getFencedLock", "getReadWriteLock", "getSet", "getSetCache", "getSortedSet", "getScoredSortedSet",
	"getLexSortedSet", "getList", "getQueue", "getDeque", "getBlockingQueue", "getBlockingDeque", "getDelayedQueue",
	"getPriorityQueue", "getAtomicLong", "getAtomicDouble", "getLongAdder", "getDoubleAdder", "getRateLimiter",
	"getSemaphore", "getPermitExpirableSemaphore", "getCountDownLatch", "getHyperLogLog", "getBitSet", "getBloomFilter",
	"getStream", "getGeo", "getBinaryStream", "getTimeSeries", "getIdGenerator", "getJsonBucket", "getListMultimap",
	"getSetMultimap", "getTopic", "getReliableTopic")

var templateKeyMethods = set("delete", "unlink", "hasKey", "countExistingKeys", "expire", "expireAt", "getExpire",
	"persist", "type", "move", "dump", "restore", "rename", "renameIfAbsent", "boundValueOps", "boundHashOps",
	"boundListOps", "boundSetOps", "boundZSetOps", "boundGeoOps", "boundStreamOps")

func javaKeyArgs(f *srcFile, n *sitter.Node) ([]*sitter.Node, string) {
	if typeOf(n) != "method_invocation" {
		return nil, ""
	}
	obj := n.ChildByFieldName("object")
	if obj == nil {
		return nil, ""
	}
	keys, cmd := f.javaKeys(n, obj)
	return keys, strings.ToLower(cmd)
}

// javaSpread is the language's spread: a Jedis or Lettuce command whose
// last argument is the variadic parameter of the method it is in, handed
// on whole (del(keys), evalsha(sha, 2, args) in f(String... args)).
func javaSpread(f *srcFile, n *sitter.Node) (string, []*sitter.Node, *sitter.Node, *sitter.Node) {
	obj := n.ChildByFieldName("object")
	if typeOf(n) != "method_invocation" || obj == nil || f.cur == nil || f.cur.rest < 0 {
		return "", nil, nil, nil
	}
	as := args(n.ChildByFieldName("arguments"))
	if len(as) == 0 || typeOf(as[len(as)-1]) != "identifier" || f.text(as[len(as)-1]) != f.cur.params[f.cur.rest] ||
		f.javaReceiver(obj) != javaCommands {
		return "", nil, nil, nil
	}
	return commandName(f.text(n.ChildByFieldName("name"))), as[:len(as)-1], as[len(as)-1], nil
}

func (f *srcFile) javaKeys(n, obj *sitter.Node) ([]*sitter.Node, string) {
	name := f.text(n.ChildByFieldName("name"))
	as := args(n.ChildByFieldName("arguments"))
	if len(as) == 0 {
		return nil, ""
	}
	switch f.javaReceiver(obj) {
	case javaOps:
		ops := f.text(obj.ChildByFieldName("name"))
		switch name {
		case "multiGet":
			return f.javaElements(as[0], 0), ops
		case "multiSet", "multiSetIfAbsent":
			return nil, ""
		}
		return as[:1], ops
	case javaTemplate:
		switch {
		case name == "rename" || name == "renameIfAbsent":
			return pick(as, []int{0, 1}), name
		case templateKeyMethods[name]:
			if els := f.javaElements(as[0], 0); els != nil {
				return els, name
			}
			return as[:1], name
		case name == "execute" && len(as) >= 2:
			return f.javaElements(as[1], 0), "eval"
		}
	case javaRedisson:
		if redissonGetters[name] {
			return as[:1], name
		}
	case javaCommands:
		if (name == "eval" || name == "evalsha") && len(as) >= 2 {
			if els := f.javaElements(as[1], 0); els != nil { // Jedis eval(script, keys, args)
				return els, name
			}
			if typeOf(as[1]) == "field_access" { // Lettuce eval(script, ScriptOutputType.X, keys…)
				return as[2:], name
			}
		}
		return f.commandArgs(name, as), commandName(name)
	}
	return nil, ""
}

// javaElements are the elements of List.of(…), Arrays.asList(…), a set or
// an array initializer, or the one element a stream maps to, directly or
// through a variable; nil otherwise.
func (f *srcFile) javaElements(n *sitter.Node, depth int) []*sitter.Node {
	if depth > 8 {
		return nil
	}
	switch typeOf(n) {
	case "method_invocation":
		m := f.text(n.ChildByFieldName("name"))
		if set("of", "asList", "singletonList", "singleton", "copyOf")[m] {
			return args(n.ChildByFieldName("arguments"))
		}
		if el := f.streamElement(n); el != nil {
			return []*sitter.Node{el}
		}
	case "array_creation_expression":
		if v := n.ChildByFieldName("value"); v != nil {
			return args(v)
		}
	case "array_initializer":
		return args(n)
	case "identifier":
		if v, _, _ := f.resolve(f.text(n), n); v != nil {
			return f.javaElements(v, depth+1)
		}
	}
	return nil
}

func javaEval(f *srcFile, n *sitter.Node, depth int) (keyshape.Shape, bool, bool) {
	switch typeOf(n) {
	case "string_literal":
		s, _ := f.stringShape(n, false, false, depth)
		return s, false, true
	case "character_literal":
		return keyshape.Lit(unescape(strings.Trim(f.text(n), "'"))), false, true
	case "cast_expression":
		if v := n.ChildByFieldName("value"); v != nil {
			s, b := f.eval(v, depth+1)
			return s, b, true
		}
	case "field_access":
		obj, field := n.ChildByFieldName("object"), f.text(n.ChildByFieldName("field"))
		if typeOf(obj) == "this" {
			s, b := f.evalName("this."+field, n, depth)
			return s, b, true
		}
		if typeOf(obj) == "identifier" { // a constant of a class: Keys.PREFIX
			if f.proj != nil {
				if g, v, ok := javaConstant(f, n); ok {
					s, b := g.evalIn(nil, v, depth+1)
					return s, b, true
				}
			}
			if v, typ, found := f.resolve(field, n); found && v != nil {
				s, b := f.eval(v, depth+1)
				return s, b, true
			} else if found {
				return f.hole(n, typ), false, true
			}
		}
	case "method_invocation":
		s, b := f.javaCall(n, depth)
		return s, b, true
	}
	return keyshape.Shape{}, false, false
}

func (f *srcFile) javaCall(n *sitter.Node, depth int) (keyshape.Shape, bool) {
	obj := n.ChildByFieldName("object")
	name := f.text(n.ChildByFieldName("name"))
	as := args(n.ChildByFieldName("arguments"))
	objText := ""
	if obj != nil {
		objText = f.text(obj)
	}
	switch {
	case f.c.IsBuilder(keyshape.Java, name, len(as)):
		return keyshape.Shape{}, true
	case (name == "key" || name == "toString") && len(as) == 0 && obj != nil:
		if s, b := f.eval(obj, depth+1); b {
			return s, true
		}
		if name == "toString" {
			if s, ok := f.javaBuilderChain(obj, depth); ok {
				return s, false
			}
			if s, ok := f.javaAppended(obj, depth); ok {
				return s, false
			}
			if v, typ, _ := f.resolve(objText, obj); typeOf(obj) == "identifier" && (javaTextBuilder(typ) || v != nil && javaTextBuilder(f.text(v.ChildByFieldName("type")))) {
				return nameHole(f.hole(n, ""), objText), false // a builder not followed: sb.toString() is {sb}
			}
		}
	case objText == "String" && name == "format" && len(as) >= 1:
		if s, ok := f.printf(as[0], as[1:], depth); ok {
			return s, false
		}
	case name == "formatted" && obj != nil:
		if s, ok := f.printf(obj, as, depth); ok {
			return s, false
		}
	case objText == "String" && name == "join" && len(as) >= 2:
		els := as[1:]
		if len(as) == 2 {
			if e := f.javaElements(as[1], 0); e != nil {
				els = e
			}
		}
		return f.join(as[0], els, depth), false
	case len(as) == 1 && (objText == "String" && name == "valueOf" || set("Long", "Integer")[objText] && name == "toString"):
		s, _ := f.eval(as[0], depth+1)
		return s, false
	}
	if s, ok := f.projectCall(n, depth); ok {
		return s, false
	}
	if len(as) == 0 && obj != nil && f.proj != nil {
		if s, ok := f.configGetter(obj, name, depth); ok {
			return s, false
		}
	}
	return f.hole(n, ""), false
}

// javaBuilderChain reads new StringBuilder(a).append(b).append(c).
func (f *srcFile) javaBuilderChain(n *sitter.Node, depth int) (keyshape.Shape, bool) {
	var parts []keyshape.Shape
	for n != nil && typeOf(n) == "method_invocation" && f.text(n.ChildByFieldName("name")) == "append" {
		as := args(n.ChildByFieldName("arguments"))
		if len(as) != 1 {
			return keyshape.Shape{}, false
		}
		s, b := f.eval(as[0], depth+1)
		if b {
			s = f.hole(as[0], "")
		}
		parts = append([]keyshape.Shape{s}, parts...)
		n = n.ChildByFieldName("object")
	}
	if typeOf(n) == "identifier" && len(parts) > 0 { // sb.append(id).toString(), sb written before
		s, ok := f.javaAppended(n, depth)
		if !ok {
			return keyshape.Shape{}, false
		}
		return keyshape.Concat(append([]keyshape.Shape{s}, parts...)...), true
	}
	if n == nil || typeOf(n) != "object_creation_expression" || !javaTextBuilder(f.text(n.ChildByFieldName("type"))) {
		return keyshape.Shape{}, false
	}
	init, ok := f.javaBuilderInit(n, "", depth)
	if !ok {
		return keyshape.Shape{}, false
	}
	return keyshape.Concat(append([]keyshape.Shape{init}, parts...)...), true
}

// javaBuilderInit is the text a new StringBuilder(…) or StringBuffer(…)
// starts with: its string argument, nothing for none or for a capacity
// (an int: new StringBuilder(64)). name is the builder's variable, which
// its own argument may not use.
func (f *srcFile) javaBuilderInit(n *sitter.Node, name string, depth int) (keyshape.Shape, bool) {
	as := args(n.ChildByFieldName("arguments"))
	switch {
	case len(as) == 0:
		return keyshape.Lit(""), true
	case len(as) > 1 || name != "" && mentions(f, as[0], name) > 0:
		return keyshape.Shape{}, false
	case typeOf(as[0]) == "decimal_integer_literal":
		return keyshape.Lit(""), true
	}
	s, b := f.eval(as[0], depth+1)
	if b {
		s = f.hole(as[0], "")
	}
	if len(s.Parts) == 1 && s.Parts[0].Hole && s.Parts[0].Kind == keytmpl.Int {
		return keyshape.Lit(""), true
	}
	return s, true
}

func javaTextBuilder(typ string) bool {
	return strings.HasSuffix(typ, "StringBuilder") || strings.HasSuffix(typ, "StringBuffer")
}

// javaAppended reads a StringBuilder or StringBuffer local written
// statement by statement,
//
//	StringBuilder sb = new StringBuilder(PREFIX);
//	sb.append(id);
//	sb.append(':').append(field);
//	return sb.toString();
//
// as what was appended, in order, when every statement of the declaring
// block between the declaration and the one that reads it either leaves
// the builder alone or only appends to it. Any other use in between (an
// append in a loop or an if, the builder handed to a method,
// setLength, insert) leaves the key unknown.
func (f *srcFile) javaAppended(obj *sitter.Node, depth int) (keyshape.Shape, bool) {
	if typeOf(obj) != "identifier" {
		return keyshape.Shape{}, false
	}
	name := f.text(obj)
	bs := f.lookup(name, obj)
	if len(bs) != 1 || bs[0].param || bs[0].value == nil {
		return keyshape.Shape{}, false
	}
	val := bs[0].value
	if typeOf(val) != "object_creation_expression" || !javaTextBuilder(f.text(val.ChildByFieldName("type"))) {
		return keyshape.Shape{}, false
	}
	stmt := val.Parent()
	if typeOf(stmt) == "variable_declarator" {
		stmt = stmt.Parent()
	}
	if typeOf(stmt) != "local_variable_declaration" {
		return keyshape.Shape{}, false
	}
	init, ok := f.javaBuilderInit(val, name, depth)
	if !ok {
		return keyshape.Shape{}, false
	}
	parts := []keyshape.Shape{init}
	for st := stmt.NextNamedSibling(); st != nil; st = st.NextNamedSibling() {
		n := mentions(f, st, name)
		if spanOf(st).contains(obj) {
			if n != 1 { // the statement that reads it touches it once
				return keyshape.Shape{}, false
			}
			return keyshape.Concat(parts...), true
		}
		if n == 0 {
			continue
		}
		ps, ok := f.javaAppends(st, name, depth)
		if !ok {
			return keyshape.Shape{}, false
		}
		parts = append(parts, ps...)
	}
	return keyshape.Shape{}, false
}

// javaAppends reads a statement that only appends to the builder name:
// name.append(a).append(b);
func (f *srcFile) javaAppends(st *sitter.Node, name string, depth int) ([]keyshape.Shape, bool) {
	if typeOf(st) != "expression_statement" || st.NamedChildCount() != 1 {
		return nil, false
	}
	var parts []keyshape.Shape
	n := st.NamedChild(0)
	for typeOf(n) == "method_invocation" && f.text(n.ChildByFieldName("name")) == "append" {
		as := args(n.ChildByFieldName("arguments"))
		if len(as) != 1 || mentions(f, as[0], name) > 0 {
			return nil, false
		}
		s, b := f.eval(as[0], depth+1)
		if b {
			s = f.hole(as[0], "")
		}
		parts = append([]keyshape.Shape{s}, parts...)
		n = n.ChildByFieldName("object")
	}
	if typeOf(n) != "identifier" || f.text(n) != name || len(parts) == 0 {
		return nil, false
	}
	return parts, true
}

// mentions counts the identifiers spelled name inside n.
func mentions(f *srcFile, n *sitter.Node, name string) int {
	if n == nil {
		return 0
	}
	if typeOf(n) == "identifier" {
		if f.text(n) == name {
			return 1
		}
		return 0
	}
	c := 0
	for i := 0; i < int(n.NamedChildCount()); i++ {
		c += mentions(f, n.NamedChild(i), name)
	}
	return c
}

// printf reads a printf-style format with its argument nodes.
func (f *srcFile) printf(format *sitter.Node, as []*sitter.Node, depth int) (keyshape.Shape, bool) {
	fs, _ := f.eval(format, depth+1)
	lit, ok := fs.Literal()
	if !ok {
		return keyshape.Shape{}, false
	}
	return keyshape.Printf(lit, func(v keyshape.Verb) keyshape.Shape {
		if v.Arg >= len(as) {
			return keyshape.Hole(keytmpl.Any, "", "")
		}
		a := as[v.Arg]
		s, b := f.eval(a, depth+1)
		if !b && v.Plain && (v.Letter == 's' || v.Letter == 'd' && isIntShape(s)) {
			return s
		}
		h := f.hole(a, "")
		return keyshape.VerbHole(v, h.Parts[0].Name, h.Parts[0].Expr)
	})
}

func isIntShape(s keyshape.Shape) bool {
	if lit, ok := s.Literal(); ok {
		return isDigits(strings.TrimPrefix(lit, "-"))
	}
	return len(s.Parts) == 1 && s.Parts[0].Kind == keytmpl.Int
}

// join reads sep.join(elements) in any language.
func (f *srcFile) join(sep *sitter.Node, els []*sitter.Node, depth int) keyshape.Shape {
	ss, _ := f.eval(sep, depth+1)
	var parts []keyshape.Shape
	for i, e := range els {
		if i > 0 {
			parts = append(parts, ss)
		}
		s, b := f.eval(e, depth+1)
		if b {
			s = f.hole(e, "")
		}
		parts = append(parts, s)
	}
	return keyshape.Concat(parts...)
}

// streamElement is the element of a list a stream collects:
// ids.stream().map(id -> PREFIX + id).collect(Collectors.toList()) (or
// toSet(), .toList(), .toArray(…), through filter, distinct, sorted…) is
// a list of PREFIX + id, whose lambda's expression is returned; nil for
// any other call, a map by a method reference or a block, or a stream
// joined into one string.
func (f *srcFile) streamElement(n *sitter.Node) *sitter.Node {
	switch f.text(n.ChildByFieldName("name")) {
	case "collect":
		as := args(n.ChildByFieldName("arguments"))
		if len(as) != 1 || typeOf(as[0]) != "method_invocation" || !set("toList", "toSet", "toUnmodifiableList", "toUnmodifiableSet", "toCollection")[f.text(as[0].ChildByFieldName("name"))] {
			return nil
		}
	case "toList", "toArray":
	default:
		return nil
	}
	for o := n.ChildByFieldName("object"); o != nil && typeOf(o) == "method_invocation"; o = o.ChildByFieldName("object") {
		switch f.text(o.ChildByFieldName("name")) {
		case "filter", "distinct", "sorted", "peek", "limit", "skip", "parallel", "sequential", "unordered":
			continue
		case "map":
			as := args(o.ChildByFieldName("arguments"))
			if len(as) == 1 && typeOf(as[0]) == "lambda_expression" {
				if b := as[0].ChildByFieldName("body"); b != nil && typeOf(b) != "block" {
					return b
				}
			}
		}
		return nil
	}
	return nil
}
