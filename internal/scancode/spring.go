package scancode

import (
	"slices"
	"strings"

	sitter "github.com/smacker/go-tree-sitter"

	"github.com/keyguard/keyguard/internal/keyshape"
	"github.com/keyguard/keyguard/keytmpl"
)

// springCacheKeys are the keys Spring's cache annotations make: a method
// annotated @Cacheable, @CachePut or @CacheEvict stores name::key for each
// cache name (value or cacheNames, or the class's @CacheConfig), key from
// its SpEL key ('literal', #param, + between them) or, without one, from
// the method's parameters; the prefix the project configures in code
// replaces name:: (see cachePrefix). The finding is on the annotation.
func (f *srcFile) springCacheKeys() []Finding {
	var out []Finding
	for _, d := range f.funcs {
		mods := javaModifiers(d.node)
		if mods == nil {
			continue
		}
		var classNames []keyshape.Shape
		if d.class != nil {
			if cm := javaModifiers(d.class.node); cm != nil {
				for _, a := range f.annotations(cm) {
					if f.text(a.ChildByFieldName("name")) == "CacheConfig" {
						classNames = f.cacheNames(a)
					}
				}
			}
		}
		for _, a := range f.annotations(mods) {
			kind := f.text(a.ChildByFieldName("name"))
			if kind != "Cacheable" && kind != "CachePut" && kind != "CacheEvict" {
				continue
			}
			if f.annotationValue(a, "allEntries") != nil {
				continue // every key of the cache: no one key
			}
			names := f.cacheNames(a)
			if names == nil {
				names = classNames
			}
			key := f.spelKey(d, f.annotationValue(a, "key"))
			cmd := "get"
			if kind == "CachePut" {
				cmd = "set"
			} else if kind == "CacheEvict" {
				cmd = "del"
			}
			for _, name := range names {
				saved := f.out
				f.out = nil
				f.report(a, keyshape.Concat(f.cachePrefix(name), key), cmd, "@"+kind)
				out = append(out, f.out...)
				f.out = saved
			}
		}
	}
	return out
}

// annotations are the annotation nodes of a modifiers node.
func (f *srcFile) annotations(mods *sitter.Node) []*sitter.Node {
	var out []*sitter.Node
	for i := 0; i < int(mods.NamedChildCount()); i++ {
		if c := mods.NamedChild(i); typeOf(c) == "annotation" || typeOf(c) == "marker_annotation" {
			out = append(out, c)
		}
	}
	return out
}

// annotationValue is the value of an annotation's element (value when
// it is the only, unnamed, argument), nil when it is not given.
func (f *srcFile) annotationValue(a *sitter.Node, name string) *sitter.Node {
	list := a.ChildByFieldName("arguments")
	for _, c := range args(list) {
		if typeOf(c) == "element_value_pair" {
			if f.text(c.ChildByFieldName("key")) == name {
				return c.ChildByFieldName("value")
			}
		} else if name == "value" {
			return c
		}
	}
	return nil
}

// cacheNames are the shapes of an annotation's cache names (value or
// cacheNames: a string, a constant, or an array of them).
func (f *srcFile) cacheNames(a *sitter.Node) []keyshape.Shape {
	v := f.annotationValue(a, "cacheNames")
	if v == nil {
		v = f.annotationValue(a, "value")
	}
	if v == nil {
		return nil
	}
	els := []*sitter.Node{v}
	if typeOf(v) == "element_value_array_initializer" {
		els = args(v)
	}
	var out []keyshape.Shape
	for _, e := range els {
		s, _ := f.eval(e, 0)
		out = append(out, s)
	}
	return out
}

// spelKey reads the key of a cache annotation: a SpEL expression of
// 'literals', #parameters (#p0, #a0, #root.args[0] by position) and +.
// Without one the key is the method's parameters (Spring's SimpleKey).
func (f *srcFile) spelKey(d *funcDef, v *sitter.Node) keyshape.Shape {
	if v == nil {
		switch len(d.params) {
		case 0:
			return keyshape.Lit("SimpleKey []")
		case 1:
			return f.paramHole(d, 0)
		}
		return keyshape.Hole(keytmpl.Any, "params", "")
	}
	s, _ := f.eval(v, 0)
	expr, ok := s.Literal()
	if !ok {
		return keyshape.Hole(keytmpl.Any, "key", "")
	}
	var parts []keyshape.Shape
	for _, term := range splitPlus(expr) {
		term = strings.TrimSpace(term)
		switch {
		case len(term) >= 2 && term[0] == '\'' && term[len(term)-1] == '\'':
			parts = append(parts, keyshape.Lit(strings.ReplaceAll(term[1:len(term)-1], "''", "'")))
		case strings.HasPrefix(term, "#"):
			name := strings.TrimPrefix(term, "#")
			prop := "" // #user.username: the property read, the placeholder's name
			if i := strings.IndexAny(name, ".[("); i >= 0 {
				if path := name[i:]; path[0] == '.' && !strings.ContainsAny(path, "[(") {
					prop = strings.TrimPrefix(path[strings.LastIndex(path, "."):], ".")
					prop = strings.TrimPrefix(prop, "?") // #user?.name
				}
				name = name[:i]
			}
			switch i := slices.Index(d.params, name); {
			case prop != "":
				parts = append(parts, keyshape.Hole(keytmpl.Any, prop, ""))
			case i >= 0:
				parts = append(parts, f.paramHole(d, i))
			default:
				parts = append(parts, keyshape.Hole(keytmpl.Any, name, ""))
			}
		default:
			parts = append(parts, keyshape.Hole(keytmpl.Any, "", ""))
		}
	}
	return keyshape.Concat(parts...)
}

// paramHole is the hole of a method's parameter, an int when its type
// says so.
func (f *srcFile) paramHole(d *funcDef, i int) keyshape.Shape {
	kind := keytmpl.Any
	ps := args(d.node.ChildByFieldName("parameters"))
	if i < len(ps) && f.lang.intType(f.text(ps[i].ChildByFieldName("type"))) {
		kind = keytmpl.Int
	}
	return keyshape.Hole(kind, d.params[i], "")
}

// splitPlus splits a SpEL expression at the + outside quotes.
func splitPlus(s string) []string {
	var out []string
	quoted := false
	start := 0
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\'':
			quoted = !quoted
		case s[i] == '+' && !quoted:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// prefixFunc turns a cache name into the prefix of its keys.
type prefixFunc func(name keyshape.Shape) keyshape.Shape

// cachePrefix is the prefix of the keys of a cache: the one the project's
// code configures for that cache (withCacheConfiguration("name", cfg)),
// else the one it configures for every cache, else, where the code
// configures none, the one of the configuration files, else Spring's
// name::.
func (f *srcFile) cachePrefix(name keyshape.Shape) keyshape.Shape {
	if f.proj != nil {
		ps := f.proj.cachePrefixes()
		if lit, ok := name.Literal(); ok && ps[lit] != nil {
			return ps[lit](name)
		}
		if ps[""] != nil {
			return ps[""](name)
		}
		// Code that configures no prefix leaves Spring Boot's, from the
		// configuration files of the file's module.
		if pf := f.proj.conf.of(f.path).cachePrefix(); len(ps) == 0 && pf != nil {
			return pf(name)
		}
	}
	return keyshape.Concat(name, keyshape.Lit("::"))
}

// cachePrefixes finds, once, the cache key prefixes the project's Java
// code configures on RedisCacheConfiguration: by cache name when the
// configuration is given to one cache (see configuredCaches), "" for the
// others (cacheDefaults, a @Bean of the default configuration).
func (p *project) cachePrefixes() map[string]prefixFunc {
	if p.prefixes != nil {
		return p.prefixes
	}
	p.prefixes = map[string]prefixFunc{}
	for _, f := range p.files {
		if f.lang.name != keyshape.Java {
			continue
		}
		saved := f.cur
		f.cur = nil // evaluated as constants, not as a function's parameters
		for _, n := range f.calls {
			pf := f.prefixConfig(n)
			if pf == nil || conditional(n) {
				continue // a prefix set only sometimes is not the keys' prefix
			}
			names := f.configuredCaches(n)
			if names == nil {
				names = []string{""}
			}
			for _, name := range names {
				p.prefixes[name] = pf
			}
		}
		f.cur = saved
	}
	return p.prefixes
}

// conditional reports whether a call runs only sometimes in its method:
// in a branch of an if, a ternary or a switch, a loop's body or a catch
// (yudao's cache configuration calls disableKeyPrefix() only when
// use-key-prefix is false, which it is not by default).
func conditional(n *sitter.Node) bool {
	for c, up := n, n.Parent(); up != nil; c, up = up, up.Parent() {
		switch typeOf(up) {
		case "if_statement", "ternary_expression":
			if cond := up.ChildByFieldName("condition"); cond == nil || !spanOf(cond).holds(spanOf(c)) {
				return true
			}
		case "switch_block_statement_group", "switch_rule", "catch_clause", "while_statement", "do_statement",
			"for_statement", "enhanced_for_statement":
			return true
		case "method_declaration", "constructor_declaration", "class_body":
			return false
		}
	}
	return false
}

// configuredCaches are the caches a configuration call is given to:
// withCacheConfiguration("users", …prefixCacheNameWith("app:")), a map's
// put("users", …) (withInitialCacheConfigurations), or a variable given
// the configuration and then handed to them; none when it is not given to
// one cache.
func (f *srcFile) configuredCaches(n *sitter.Node) []string {
	for up := n.Parent(); up != nil; up = up.Parent() {
		t := typeOf(up)
		if t == "variable_declarator" && up.ChildByFieldName("value") != nil && spanOf(up.ChildByFieldName("value")).contains(n) {
			return f.cachesGiven(func(a *sitter.Node) bool {
				return typeOf(a) == "identifier" && f.text(a) == f.text(up.ChildByFieldName("name"))
			})
		}
		if strings.HasSuffix(t, "statement") || strings.HasSuffix(t, "declaration") {
			return nil
		}
		if t == "method_invocation" && cacheConfigCalls[f.text(up.ChildByFieldName("name"))] {
			as := args(up.ChildByFieldName("arguments"))
			if len(as) != 2 || !spanOf(as[1]).contains(n) {
				return nil
			}
			return f.cacheName(as[0])
		}
	}
	return nil
}

// cacheConfigCalls give a configuration to the cache they name.
var cacheConfigCalls = map[string]bool{"withCacheConfiguration": true, "put": true}

// cachesGiven are the caches the file's withCacheConfiguration and put
// calls give a configuration that matches.
func (f *srcFile) cachesGiven(match func(*sitter.Node) bool) []string {
	var out []string
	for _, c := range f.calls {
		if !cacheConfigCalls[f.text(c.ChildByFieldName("name"))] {
			continue
		}
		if as := args(c.ChildByFieldName("arguments")); len(as) == 2 && match(as[1]) {
			out = append(out, f.cacheName(as[0])...)
		}
	}
	return out
}

// cacheName is a constant cache name, none when it is not one.
func (f *srcFile) cacheName(n *sitter.Node) []string {
	s, _ := f.eval(n, 0)
	if name, ok := s.Literal(); ok && name != "" {
		return []string{name}
	}
	return nil
}

// prefixConfig reads a call of RedisCacheConfiguration that sets the key
// prefix: prefixCacheNameWith(p) (p + name + "::"), prefixKeysWith(p)
// (p alone), disableKeyPrefix() (no prefix), computePrefixWith(fn) with a
// lambda or CacheKeyPrefix.simple()/prefixed(p). Nil for any other call,
// and for a prefix function it cannot read.
func (f *srcFile) prefixConfig(n *sitter.Node) prefixFunc {
	as := args(n.ChildByFieldName("arguments"))
	switch f.text(n.ChildByFieldName("name")) {
	case "prefixCacheNameWith":
		if len(as) == 1 {
			pre, _ := f.eval(as[0], 0)
			return func(name keyshape.Shape) keyshape.Shape {
				return keyshape.Concat(pre, name, keyshape.Lit("::"))
			}
		}
	case "prefixKeysWith":
		if len(as) == 1 {
			pre, _ := f.eval(as[0], 0)
			return func(keyshape.Shape) keyshape.Shape { return pre }
		}
	case "disableKeyPrefix":
		if len(as) == 0 {
			return func(keyshape.Shape) keyshape.Shape { return keyshape.Lit("") }
		}
	case "computePrefixWith":
		if len(as) == 1 {
			return f.prefixFunction(as[0])
		}
	}
	return nil
}

// prefixFunction reads the CacheKeyPrefix given to computePrefixWith: a
// lambda whose body (or single return) concatenates strings and its
// parameter, or CacheKeyPrefix.simple() / prefixed(p).
func (f *srcFile) prefixFunction(a *sitter.Node) prefixFunc {
	switch typeOf(a) {
	case "method_invocation":
		as := args(a.ChildByFieldName("arguments"))
		switch name := f.text(a.ChildByFieldName("name")); {
		case name == "simple" && len(as) == 0:
			return func(name keyshape.Shape) keyshape.Shape { return keyshape.Concat(name, keyshape.Lit("::")) }
		case name == "prefixed" && len(as) == 1:
			pre, _ := f.eval(as[0], 0)
			return func(name keyshape.Shape) keyshape.Shape { return keyshape.Concat(pre, name, keyshape.Lit("::")) }
		}
	case "lambda_expression":
		param := a.ChildByFieldName("parameters")
		if typeOf(param) != "identifier" && param != nil && param.NamedChildCount() == 1 {
			param = param.NamedChild(0)
			if n := param.ChildByFieldName("name"); n != nil {
				param = n // (String name) -> …
			}
		}
		if typeOf(param) != "identifier" {
			return nil
		}
		body := a.ChildByFieldName("body")
		if typeOf(body) == "block" {
			var ret *sitter.Node
			for _, c := range args(body) {
				if typeOf(c) != "return_statement" || c.NamedChildCount() != 1 || ret != nil {
					return nil // more than a return: not followed
				}
				ret = c.NamedChild(0)
			}
			body = ret
		}
		if body == nil {
			return nil
		}
		pname := f.text(param)
		return func(name keyshape.Shape) keyshape.Shape { return f.evalWith(body, pname, name) }
	}
	return nil
}

// evalWith is the shape of a lambda's + expression with its parameter
// given.
func (f *srcFile) evalWith(n *sitter.Node, param string, arg keyshape.Shape) keyshape.Shape {
	switch typeOf(n) {
	case "parenthesized_expression":
		if n.NamedChildCount() == 1 {
			return f.evalWith(n.NamedChild(0), param, arg)
		}
	case "identifier":
		if f.text(n) == param {
			return arg
		}
	case "binary_expression":
		if op := n.ChildByFieldName("operator"); op != nil && f.text(op) == "+" {
			return keyshape.Concat(f.evalWith(n.ChildByFieldName("left"), param, arg), f.evalWith(n.ChildByFieldName("right"), param, arg))
		}
	}
	saved := f.cur
	f.cur = nil // the lambda's other names are constants, not a method's parameters
	s, _ := f.eval(n, 0)
	f.cur = saved
	return s
}

// springValue is the property a field named name holds: the text of its
// @Value("…") annotation when it names one ("${redis.key.admin}", with a
// default or around literal text), or, in a class annotated
// @ConfigurationProperties(prefix = "jwt"), ${jwt.name} for a field that
// is not static; "" otherwise.
func (f *srcFile) springValue(field *sitter.Node, name string) string {
	mods := javaModifiers(field)
	if v := f.valueAnnotation(mods); v != "" {
		return v
	}
	if mods != nil && strings.Contains(f.text(mods), "static") || name == "" {
		return ""
	}
	if prefix, ok := f.configPrefix(field); ok {
		return "${" + prefix + "." + name + "}"
	}
	return ""
}

// configPrefix is the prefix of the @ConfigurationProperties class a
// field is declared in.
func (f *srcFile) configPrefix(field *sitter.Node) (string, bool) {
	body := field.Parent()
	if body == nil || typeOf(body) != "class_body" || body.Parent() == nil {
		return "", false
	}
	cm := javaModifiers(body.Parent())
	if cm == nil {
		return "", false
	}
	for _, a := range f.annotations(cm) {
		if name := f.text(a.ChildByFieldName("name")); name != "ConfigurationProperties" && !strings.HasSuffix(name, ".ConfigurationProperties") {
			continue
		}
		v := f.annotationValue(a, "prefix")
		if v == nil {
			v = f.annotationValue(a, "value")
		}
		if v == nil || typeOf(v) != "string_literal" {
			return "", false
		}
		s, _ := f.stringShape(v, false, false, 0)
		if text, ok := s.Literal(); ok && text != "" {
			return text, true
		}
	}
	return "", false
}

// valueAnnotation is the text of an @Value("${…}") among mods.
func (f *srcFile) valueAnnotation(mods *sitter.Node) string {
	if mods == nil {
		return ""
	}
	for _, a := range f.annotations(mods) {
		if name := f.text(a.ChildByFieldName("name")); name != "Value" && !strings.HasSuffix(name, ".Value") {
			continue
		}
		v := f.annotationValue(a, "value")
		if v == nil || typeOf(v) != "string_literal" {
			return ""
		}
		s, _ := f.stringShape(v, false, false, 0)
		if text, ok := s.Literal(); ok && strings.Contains(text, "${") {
			return text
		}
	}
	return ""
}

// inject marks the last binding of name as a field whose value Spring
// injects from the configuration (text is its @Value's).
func (f *srcFile) inject(name, text string) {
	if bs := f.binds[name]; len(bs) > 0 {
		bs[len(bs)-1].inject = text
	}
}

// configGetter is the property a getter of a @ConfigurationProperties
// class gives (properties.getOnlineKey(), the getter Lombok's @Data
// writes, which the source does not show): the shape its field holds;
// false when obj is no such class or the class has no such field.
func (f *srcFile) configGetter(obj *sitter.Node, method string, depth int) (keyshape.Shape, bool) {
	field := ""
	switch {
	case strings.HasPrefix(method, "get") && len(method) > 3:
		field = method[3:]
	case strings.HasPrefix(method, "is") && len(method) > 2:
		field = method[2:]
	default:
		return keyshape.Shape{}, false
	}
	field = strings.ToLower(field[:1]) + field[1:]
	cls := f.javaClassOf(obj)
	if cls == "" {
		return keyshape.Shape{}, false
	}
	for _, c := range f.proj.classes[cls] {
		body := c.node.ChildByFieldName("body")
		if body == nil {
			continue
		}
		if bs := c.f.lookup("this."+field, body); len(bs) == 1 && bs[0].inject != "" {
			s, _ := c.f.evalName("this."+field, body, depth+1)
			return nameHole(s, field), true // not configured: named after the field
		}
	}
	return keyshape.Shape{}, false
}
