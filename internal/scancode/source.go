package scancode

import (
	"fmt"
	"slices"
	"strings"

	sitter "github.com/smacker/go-tree-sitter"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/keyshape"
	"github.com/keyguard/keyguard/keytmpl"
)

// language is what the tree-sitter engine needs to know of one language.
type language struct {
	name    keyshape.Lang
	grammar *sitter.Language
	// scopes are the node types that own variables: functions, classes,
	// the file.
	scopes map[string]bool
	// classes are the scope types whose this./self. members are fields.
	classes map[string]bool
	// bind records the variables a node declares or assigns; bindTypes
	// are the node types it looks at, callTypes those keyArgs looks at.
	bind                 func(f *srcFile, n *sitter.Node)
	bindTypes, callTypes []string
	// query finds the nodes of bindTypes (pattern 0) and callTypes
	// (pattern 1) in one pass inside tree-sitter: far fewer calls from Go
	// into C than walking every node.
	query *sitter.Query
	// keyArgs returns the arguments of a call that Redis receives as keys,
	// nil when the node is not a Redis call, and the command or client
	// method the call names (lower case), which tells --suggest the type.
	keyArgs func(f *srcFile, call *sitter.Node) (keys []*sitter.Node, command string)
	// eval rebuilds the shape of a language-specific expression; ok false
	// leaves the node to the common cases.
	eval func(f *srcFile, n *sitter.Node, depth int) (s keyshape.Shape, builder, ok bool)
	// intType and keyType tell from a declared type that a value is an
	// integer, or a generated builder's key.
	intType func(typ string) bool
	keyType func(typ string) bool
	// broken says why the grammar cannot be used (its files are then
	// listed as not analysed).
	broken error
	// declTypes are the node types decl looks at (pattern 2 of the
	// query): functions, methods, classes, whose declarations the
	// project's index records.
	declTypes []string
	decl      func(f *srcFile, n *sitter.Node)
	// callees are the project's functions a call may call, by evidence
	// (the receiver's declared type, this/self, a module's function).
	callees func(f *srcFile, call *sitter.Node) []*funcDef
	// constant follows a name the file does not bind (an imported
	// constant, Class.NAME) into the project's other files.
	constant func(f *srcFile, n *sitter.Node) (*srcFile, *sitter.Node, bool)
	// elements are the elements of a list expression the source shows
	// (List.of(…), a stream mapped to keys), for a list handed to a
	// wrapper's list of keys; nil when not known (and for languages
	// without).
	elements func(f *srcFile, n *sitter.Node) []*sitter.Node
	// spread is, for a Redis call that hands on a list of values as its
	// arguments (client.del(...keys), r.delete(*keys), evalsha.apply(client,
	// args), Jedis del(keys) with keys a variadic parameter), the command,
	// the arguments before the list's values (pre), and the list; list is
	// nil for any other call. recv is the receiver when it is a parameter
	// of the function the call is in, not known to be a client: its
	// callers must pass one.
	spread func(f *srcFile, call *sitter.Node) (command string, pre []*sitter.Node, list, recv *sitter.Node)
	// clientType reports a declared type that is a Redis client; isClient
	// an expression whose value is one.
	clientType func(typ string) bool
	isClient   func(f *srcFile, n *sitter.Node, depth int) bool
	// extraArgs: a call may pass more arguments than a method declares,
	// which it then ignores (JavaScript).
	extraArgs bool
}

// srcFile is one parsed file of a tree-sitter language.
type srcFile struct {
	path    string
	src     []byte
	lang    *language
	c       *keyshape.Classifier
	binds   map[string][]binding
	out     []Finding
	tree    *sitter.Tree
	calls   []*sitter.Node
	funcs   []*funcDef // the functions declared here
	classes []*classDef
	enums   map[string][]map[string]*sitter.Node // TypeScript enums: name → member → value
	// indexes of funcs and classes by the span of their node, and the
	// names the file imports a module as (TypeScript, JavaScript)
	funcBySpan  map[span]*funcDef
	classBySpan map[span]*classDef
	modules     map[string]bool
	// used is what the file calls on each receiver (TypeScript,
	// JavaScript), read once: the evidence of a client of unknown type.
	used map[string]*tsUsage
	// proj is the index of every file of the language family; cur is the
	// function whose summary is being computed (its parameters become
	// marked holes), nil when checking.
	proj *project
	cur  *funcDef
	// self is the class self stands for while code of that class or of
	// one of its bases is evaluated on behalf of a use in it (Python:
	// BaseRegistry.__init__'s self.key_template for a use of self.key in
	// a StartedJobRegistry); selfExact when self is an instance of that
	// class itself, not of a subclass. "" is the class of the code.
	self      string
	selfExact bool
}

// binding is one declaration of, or assignment to, a name.
type binding struct {
	scope span         // the function, class or file it belongs to
	value *sitter.Node // the value given; nil for a parameter or a value not known
	typ   string       // the declared type, "" when none
	param bool
	iter  *sitter.Node // for a loop variable, what it iterates over
	// inject is the text of a Java field's @Value("${…}"): the value
	// Spring gives it from the configuration's properties.
	inject string
	// after, for a parameter's new value given by an assignment
	// statement directly in its function's body (see rebound): where
	// that statement's value ends; 0 otherwise.
	after uint32
}

type span struct{ start, end uint32 }

func spanOf(n *sitter.Node) span { return span{n.StartByte(), n.EndByte()} }

func (s span) contains(n *sitter.Node) bool { return s.start <= n.StartByte() && n.EndByte() <= s.end }

// holds reports whether the span holds another.
func (s span) holds(o span) bool { return s.start <= o.start && o.end <= s.end }

// text is a node's source text; "" for a missing node (tree-sitter leaves
// fields out of code it could not parse).
func (f *srcFile) text(n *sitter.Node) string {
	if n == nil {
		return ""
	}
	return n.Content(f.src)
}

func typeOf(n *sitter.Node) string {
	if n == nil {
		return ""
	}
	return n.Type()
}

// scopeOf is the nearest enclosing scope of n (for this./self. members,
// the nearest class).
func (f *srcFile) scopeOf(n *sitter.Node, member bool) span {
	for p := n.Parent(); p != nil; p = p.Parent() {
		if member && f.lang.classes[typeOf(p)] || !member && f.lang.scopes[typeOf(p)] {
			return spanOf(p)
		}
	}
	return span{0, uint32(len(f.src))}
}

// declare records that name gets value (nil: unknown) where n stands.
func (f *srcFile) declare(name string, n, value *sitter.Node, typ string, param bool) {
	if name == "" {
		return
	}
	member := strings.HasPrefix(name, "this.") || strings.HasPrefix(name, "self.")
	b := binding{scope: f.scopeOf(n, member), value: value, typ: typ, param: param}
	if !param && value != nil {
		for _, o := range f.binds[name] {
			if o.param && o.scope == b.scope && topStatement(value, b.scope) {
				b.after = value.EndByte()
				break
			}
		}
	}
	f.binds[name] = append(f.binds[name], b)
}

// resolve finds what name means at node at: the bindings of the innermost
// scope that declares it. It returns the one value the name ever gets
// there (nil when it gets several or one not known), and its declared
// type.
func (f *srcFile) resolve(name string, at *sitter.Node) (value *sitter.Node, typ string, found bool) {
	best := f.lookup(name, at)
	if best == nil {
		return nil, "", false
	}
	for _, b := range best {
		if b.typ != "" {
			typ = b.typ
		}
	}
	if len(best) != 1 || best[0].param {
		return nil, typ, true
	}
	return best[0].value, typ, true
}

// lookup is every binding of name in the innermost scope around at that
// declares it.
func (f *srcFile) lookup(name string, at *sitter.Node) []binding {
	bs := f.binds[name]
	if len(bs) == 0 {
		return nil
	}
	var best []binding
	var bestScope span
	where := spanOf(at) // once: each position is a call into tree-sitter
	for _, b := range bs {
		if !b.scope.holds(where) {
			continue
		}
		switch {
		case best == nil || b.scope.end-b.scope.start < bestScope.end-bestScope.start:
			best, bestScope = []binding{b}, b.scope
		case b.scope == bestScope:
			best = append(best, b)
		}
	}
	if len(best) == 2 {
		return rebound(best, where)
	}
	return best
}

// rebound is, for a parameter given a new value once, by a statement of
// the function's own body (key = self.prefixed_key(key), key = prefix +
// key), the binding in effect at where: the new value after that
// statement, the parameter before it and in its right-hand side. Other
// pairs of bindings are returned as they are: a name given values in
// branches or loops gets any of them.
func rebound(bs []binding, where span) []binding {
	p, v := bs[0], bs[1]
	if !p.param {
		p, v = v, p
	}
	if !p.param || v.after == 0 {
		return bs
	}
	if where.start >= v.after {
		return []binding{v}
	}
	return []binding{p}
}

// topStatement reports whether value is the right-hand side of an
// assignment statement directly in the body of the function whose span
// is fn (not in a branch, loop or nested block).
func topStatement(value *sitter.Node, fn span) bool {
	asg := value.Parent()
	if asg == nil {
		return false
	}
	stmt := asg.Parent()
	if stmt == nil || !strings.HasSuffix(typeOf(stmt), "statement") {
		return false
	}
	body := stmt.Parent()
	return body != nil && body.Parent() != nil && spanOf(body.Parent()) == fn
}

// values are the values name gets in the innermost scope that declares
// it, nil ones (unknown) left out.
func (f *srcFile) values(name string, at *sitter.Node) []*sitter.Node {
	var out []*sitter.Node
	for _, b := range f.lookup(name, at) {
		if b.value != nil {
			out = append(out, b.value)
		}
	}
	return out
}

// compile builds the language's query from the node types its grammar
// knows (JavaScript has no public_field_definition, TypeScript no
// field_definition).
func (l *language) compile() *language {
	named := namedTypes(l.grammar)
	alt := func(types []string) string {
		var b strings.Builder
		for _, t := range types {
			if knows(l.grammar, named, t) {
				b.WriteString(" (" + t + ")")
			}
		}
		return "[" + b.String() + " ]"
	}
	q, err := sitter.NewQuery([]byte(alt(l.bindTypes)+" @bind\n"+alt(l.callTypes)+" @call\n"+alt(l.declTypes)+" @decl"), l.grammar)
	if err != nil {
		l.broken = fmt.Errorf("the %s grammar does not load: %v", l.name, err)
		return l
	}
	l.query = q
	return l
}

// knows reports whether a query of the grammar g can name node type t:
// one of its regular symbols (named), else whether such a query compiles
// (a supertype such as expression, ERROR, or a type the grammar lacks).
// Compiling a query of every type cost ~4 ms a type for TypeScript's
// grammar; the symbols answer for all of those the lists name but the
// few a grammar lacks.
func knows(g *sitter.Language, named map[string]bool, t string) bool {
	if named[t] {
		return true
	}
	q, err := sitter.NewQuery([]byte("("+t+")"), g)
	if err != nil {
		return false
	}
	q.Close()
	return true
}

// namedTypes are the regular symbols of a grammar: node types a query
// can name.
func namedTypes(g *sitter.Language) map[string]bool {
	n := g.SymbolCount()
	out := make(map[string]bool, n)
	for s := range sitter.Symbol(n) {
		if g.SymbolType(s) == sitter.SymbolTypeRegular {
			out[g.SymbolName(s)] = true
		}
	}
	return out
}

// collect records the file's bindings, calls and declarations in one
// pass of the language's query.
func (f *srcFile) collect(root *sitter.Node) {
	qc := sitter.NewQueryCursor()
	defer qc.Close()
	qc.Exec(f.lang.query, root)
	for {
		m, ok := qc.NextMatch()
		if !ok {
			break
		}
		for _, c := range m.Captures {
			switch m.PatternIndex {
			case 0:
				f.lang.bind(f, c.Node)
			case 1:
				f.calls = append(f.calls, c.Node)
			default:
				f.lang.decl(f, c.Node)
			}
		}
	}
}

// scan finds the Redis calls of the file, direct or through the
// project's own functions, and reports their keys.
func (f *srcFile) scan() {
	for _, n := range f.calls {
		fn := f.funcAt(n)
		f.cur = fn
		keys, command := f.lang.keyArgs(f, n)
		for _, a := range keys {
			if a == nil || typeOf(a) == "dictionary" || typeOf(a) == "object" {
				continue // mset({k: v}): the keys of a map are not followed
			}
			s, builder := f.eval(a, 0)
			if i, _ := f.paramOf(a); builder || fn != nil && (i >= 0 || composed(s)) {
				continue // a parameter passed whole, or composed: its callers are checked
			}
			if ss := f.bySubclass(fn, a, s); ss != nil {
				for _, s := range ss {
					f.report(a, s, command, "")
				}
				continue
			}
			f.report(a, s, command, "")
		}
		if keys != nil {
			continue
		}
		for _, k := range f.proj.sinkArgs(f, n) {
			if k.list {
				continue // a list handed on: its values are not seen here
			}
			if k.shape != nil {
				if fn == nil || !composed(*k.shape) {
					f.report(k.arg, *k.shape, k.command, k.via)
				}
				continue
			}
			args := []*sitter.Node{k.arg}
			if f.lang.elements != nil {
				if els := f.lang.elements(f, k.arg); els != nil {
					args = els // a list of keys: each of them
				}
			}
			for _, a := range args {
				s, builder := f.eval(a, 0)
				if i, _ := f.paramOf(a); builder || fn != nil && (i >= 0 || composed(s)) {
					continue
				}
				f.report(a, s, k.command, k.via)
			}
		}
	}
	f.cur = nil
}

// bySubclass is, for a key built in a method of a class that subclasses
// set apart (Python: BaseRegistry's self.key, whose key_template each
// registry sets), the key of each class the method may run as: that
// class and each subclass that does not declare the method again, as an
// instance of it alone. It is nil unless
// each such key has more literal text than s, the key of an instance of
// any of them, and there are at most maxSubclasses: a call that hands
// Redis one of several keys is reported once for each.
func (f *srcFile) bySubclass(fn *funcDef, a *sitter.Node, s keyshape.Shape) []keyshape.Shape {
	if fn == nil || fn.class == nil || f.proj == nil || s.Holes() == 0 || f.lang.name != keyshape.Python {
		return nil
	}
	classes := f.proj.runsAs(fn.class.name, fn.name)
	if len(classes) == 0 || len(classes) >= maxSubclasses {
		return nil
	}
	classes = append([]string{fn.class.name}, classes...)
	base := literalBytes(s)
	var out []keyshape.Shape
	seen := map[string]bool{}
	for _, c := range classes {
		k, b := f.asSelf(c, true, func() (keyshape.Shape, bool) { return f.eval(a, 0) })
		if b || literalBytes(k) <= base {
			return nil
		}
		if !seen[k.String()] {
			seen[k.String()] = true
			out = append(out, k)
		}
	}
	return out
}

// maxSubclasses bounds the classes bySubclass evaluates a key for.
const maxSubclasses = 16

// literalBytes is how much of s is literal text.
func literalBytes(s keyshape.Shape) int {
	n := 0
	for _, p := range s.Parts {
		if !p.Hole {
			n += len(p.Lit)
		}
	}
	return n
}

// asSelf runs eval with self an instance of class cls (exactly that
// class with exact, else of it or a subclass; "" the class of the code),
// then restores what self was.
func (f *srcFile) asSelf(cls string, exact bool, eval func() (keyshape.Shape, bool)) (keyshape.Shape, bool) {
	saved, savedExact := f.self, f.selfExact
	f.self, f.selfExact = cls, exact
	defer func() { f.self, f.selfExact = saved, savedExact }()
	return eval()
}

// report adds the finding for a key argument.
func (f *srcFile) report(a *sitter.Node, s keyshape.Shape, command, via string) {
	fd := f.c.Finding(f.lang.name, s.Unmark())
	if via != "" {
		fd.Message += " (via " + via + ")"
	}
	p := a.StartPoint()
	fd.File, fd.Line, fd.Column = f.path, int(p.Row)+1, int(p.Column)+1
	f.out = append(f.out, Finding{Finding: fd, Lang: f.lang.name, Command: command, Via: via})
}

// eval rebuilds the shape of an expression; builder is true when its value
// comes from a generated builder.
func (f *srcFile) eval(n *sitter.Node, depth int) (s keyshape.Shape, builder bool) {
	if n == nil {
		return keyshape.Hole(keytmpl.Any, "", ""), false
	}
	if depth > 12 {
		return f.hole(n, ""), false
	}
	if s, b, ok := f.lang.eval(f, n, depth); ok {
		return s, b
	}
	switch typeOf(n) {
	case "parenthesized_expression":
		if n.NamedChildCount() == 1 {
			return f.eval(n.NamedChild(0), depth+1)
		}
	case "binary_expression", "binary_operator":
		if op := n.ChildByFieldName("operator"); op != nil && f.text(op) == "+" {
			l, lb := f.eval(n.ChildByFieldName("left"), depth+1)
			r, rb := f.eval(n.ChildByFieldName("right"), depth+1)
			if lb {
				l = f.hole(n.ChildByFieldName("left"), "")
			}
			if rb {
				r = f.hole(n.ChildByFieldName("right"), "")
			}
			return keyshape.Concat(l, r), false
		}
	case "identifier":
		return f.evalName(f.text(n), n, depth)
	case "decimal_integer_literal", "integer", "number":
		t := strings.TrimRight(f.text(n), "lLn")
		if isDigits(t) {
			return keyshape.Lit(t), false
		}
	}
	return f.hole(n, ""), false
}

// evalName follows a variable to the one value it gets; a parameter of
// the function being summarized becomes its marked hole; a name the file
// does not bind may be a constant of another file.
func (f *srcFile) evalName(name string, at *sitter.Node, depth int) (keyshape.Shape, bool) {
	bs := f.lookup(name, at)
	v, typ, found := f.resolve(name, at)
	if found && typ != "" && f.lang.keyType(typ) {
		return keyshape.Shape{}, true
	}
	if len(bs) == 1 && bs[0].param && f.cur != nil && bs[0].scope == spanOf(f.cur.node) {
		if i := slices.Index(f.cur.params, name); i >= 0 {
			h := f.hole(at, typ)
			return keyshape.Param(i, h.Parts[0].Kind, h.Parts[0].Name), false
		}
	}
	if len(bs) == 1 && bs[0].inject != "" && f.proj != nil {
		if text, ok := f.proj.conf.of(f.path).value(bs[0].inject, 0); ok {
			return keyshape.Lit(text), false
		}
	}
	if v != nil {
		// A value the scan cannot know, such as a call's result, is
		// named after the variable that holds it.
		s, b := f.eval(v, depth+1)
		return nameHole(s, strings.TrimPrefix(strings.TrimPrefix(name, "this."), "self.")), b
	}
	if !found && f.proj != nil {
		if g, val, ok := f.lang.constant(f, at); ok {
			return g.evalIn(nil, val, depth+1)
		}
	}
	return f.hole(at, typ), false
}

// nameHole names s after name when s is one unnamed hole (not a
// parameter's), and returns s as it is otherwise.
func nameHole(s keyshape.Shape, name string) keyshape.Shape {
	if len(s.Parts) != 1 || !s.Parts[0].Hole || s.Parts[0].Name != "" || s.Parts[0].Param != 0 {
		return s
	}
	p := s.Parts[0]
	p.Name = name
	return keyshape.Shape{Parts: []keyshape.Part{p}}
}

// evalIn evaluates n in this file as part of function fn's summary (nil:
// no parameter is marked), restoring the function being summarized.
func (f *srcFile) evalIn(fn *funcDef, n *sitter.Node, depth int) (keyshape.Shape, bool) {
	saved := f.cur
	f.cur = fn
	defer func() { f.cur = saved }()
	return f.eval(n, depth)
}

// hole is the shape of a value the scan cannot know, named after the
// variable, field or method it comes from.
func (f *srcFile) hole(n *sitter.Node, typ string) keyshape.Shape {
	kind := keytmpl.Any
	if typ != "" && f.lang.intType(typ) {
		kind = keytmpl.Int
	}
	name := ""
	switch typeOf(n) {
	case "identifier":
		name = f.text(n)
	case "field_access", "member_expression", "attribute":
		if last := n.NamedChild(int(n.NamedChildCount()) - 1); last != nil && n.NamedChildCount() > 0 {
			name = f.text(last)
		}
	case "method_invocation": // a getter's result is named after it: claims.getSubject() is {subject}
		if m := f.text(n.ChildByFieldName("name")); len(m) > 3 && strings.HasPrefix(m, "get") && m[3] >= 'A' && m[3] <= 'Z' {
			name = strings.ToLower(m[3:4]) + m[4:]
		}
	case "parenthesized_expression":
		if n.NamedChildCount() == 1 {
			name = f.hole(n.NamedChild(0), "").Parts[0].Name
		}
	case "binary_expression", "boolean_operator": // a value or its default: settings.prefix || defaults.prefix is {prefix}
		if op := n.ChildByFieldName("operator"); op != nil && (f.text(op) == "||" || f.text(op) == "??" || f.text(op) == "or") {
			name = f.hole(n.ChildByFieldName("left"), "").Parts[0].Name
		}
	}
	expr := f.text(n)
	if len(expr) > 80 || strings.ContainsAny(expr, "\n") {
		expr = ""
	}
	return keyshape.Hole(kind, name, expr)
}

// stringShape reads a string literal, template literal or f-string:
// its text, with a hole for each interpolated value.
// In a Python f-string, {{ and }} are literal braces.
func (f *srcFile) stringShape(n *sitter.Node, raw, fstring bool, depth int) (keyshape.Shape, bool) {
	var parts []keyshape.Shape
	for i := 0; i < int(n.ChildCount()); i++ {
		c := n.Child(i)
		switch typeOf(c) {
		case "string_fragment", "multiline_string_fragment", "string_content":
			t := f.text(c)
			if !raw {
				t = unescape(t)
			}
			if fstring {
				t = strings.ReplaceAll(strings.ReplaceAll(t, "{{", "{"), "}}", "}")
			}
			parts = append(parts, keyshape.Lit(t))
		case "escape_sequence":
			parts = append(parts, keyshape.Lit(unescape(f.text(c))))
		case "escape_interpolation": // {{ in an f-string
			parts = append(parts, keyshape.Lit(f.text(c)[:1]))
		case "interpolation", "template_substitution":
			e := c.ChildByFieldName("expression")
			if e == nil && c.NamedChildCount() > 0 {
				e = c.NamedChild(0)
			}
			if e == nil || c.ChildByFieldName("format_specifier") != nil || c.ChildByFieldName("type_conversion") != nil {
				parts = append(parts, f.hole(c, ""))
				continue
			}
			s, b := f.eval(e, depth+1)
			if b {
				s = f.hole(e, "")
			}
			parts = append(parts, s)
		}
	}
	return keyshape.Concat(parts...), false
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// unescape decodes the backslash escapes of a string literal; an escape
// it does not know stands for the character after the backslash.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case '0':
			b.WriteByte(0)
		case '\n': // a line continuation
		case 'u', 'x':
			w := 4
			if s[i] == 'x' {
				w = 2
			}
			if i+w < len(s) {
				if r, ok := hexRune(s[i+1 : i+1+w]); ok {
					b.WriteRune(r)
					i += w
					continue
				}
			}
			b.WriteByte(s[i])
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

func hexRune(h string) (rune, bool) {
	var r rune
	for i := 0; i < len(h); i++ {
		c := h[i]
		switch {
		case c >= '0' && c <= '9':
			r = r*16 + rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r*16 + rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r*16 + rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// Finding is one key the scan reports, with its language.
type Finding struct {
	finding.Finding
	Lang keyshape.Lang `json:"lang"`
	// Command is the Redis command or client method of the call, lower
	// case ("hset", "opsforhash", "getmap"), when known.
	Command string `json:"command,omitempty"`
	// Via is the project's function the key goes to Redis through
	// ("RedisService.set"), when the call is not the client's.
	Via string `json:"via,omitempty"`
}

// classOfBinding is the project class a name's bindings at obj give: a
// declared type that is a project class, or the class of the value it was
// assigned (followed by classOf, one level deeper). Python and TypeScript
// share it.
func (f *srcFile) classOfBinding(name string, obj *sitter.Node, depth int, classOf func(*sitter.Node, int) string) string {
	for _, b := range f.lookup(name, obj) {
		if t := baseName(b.typ); t != "" && f.proj.isClass(t) {
			return t
		}
		if b.value != nil {
			if c := classOf(b.value, depth+1); c != "" {
				return c
			}
		}
	}
	return ""
}
