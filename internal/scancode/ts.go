package scancode

import (
	"strings"

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
		eval:      tsEval,
		intType:   func(t string) bool { return t == "number" || t == "bigint" },
		keyType:   func(t string) bool { return t == "Key" || strings.HasSuffix(t, ".Key") },
	}).compile()
}

func typeScript() *language  { return tsLanguage(typescript.GetLanguage()) }
func tsxLanguage() *language { return tsLanguage(tsx.GetLanguage()) }
func jsLanguage() *language  { return tsLanguage(javascript.GetLanguage()) }

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
		p := n.ChildByFieldName("pattern")
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
			if p := n.NamedChild(i); typeOf(p) == "identifier" {
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
// pipeline or multi: bound to new Redis(…), createClient(…), .pipeline()…,
// typed as one, or named like one when the file does not say.
func (f *srcFile) tsClient(obj *sitter.Node, depth int) bool {
	if depth > 8 {
		return false
	}
	switch typeOf(obj) {
	case "identifier":
		return f.tsNamed(f.text(obj), f.text(obj), obj, depth)
	case "member_expression":
		prop := f.text(obj.ChildByFieldName("property"))
		if o := obj.ChildByFieldName("object"); o != nil && typeOf(o) == "this" {
			return f.tsNamed("this."+prop, prop, obj, depth)
		}
		return nameSays(prop)
	case "new_expression":
		c := lastName(f.text(obj.ChildByFieldName("constructor")))
		return c == "Redis" || c == "IORedis" || c == "Cluster"
	case "await_expression", "parenthesized_expression", "non_null_expression", "as_expression":
		if obj.NamedChildCount() > 0 {
			return f.tsClient(obj.NamedChild(0), depth+1)
		}
	case "call_expression":
		fn := obj.ChildByFieldName("function")
		name := lastName(f.text(fn))
		switch {
		case name == "createClient" || name == "createCluster":
			return true
		case typeOf(fn) == "member_expression" && (set("pipeline", "multi", "duplicate", "connect", "withTypeMapping")[name] || commandKeys(commandName(name), 1, noInt) != nil):
			return f.tsClient(fn.ChildByFieldName("object"), depth+1)
		}
		return nameSays(name)
	}
	return false
}

func noInt(int) (string, bool) { return "", false }

func (f *srcFile) tsNamed(name, short string, at *sitter.Node, depth int) bool {
	v, typ, found := f.resolve(name, at)
	for _, t := range []string{"Redis", "Cluster", "Pipeline", "ChainableCommander", "Multi"} {
		if strings.Contains(typ, t) {
			return true
		}
	}
	if v != nil {
		return f.tsClient(v, depth+1)
	}
	return (!found || typ == "") && nameSays(short)
}

func tsKeyArgs(f *srcFile, n *sitter.Node) ([]*sitter.Node, string) {
	if typeOf(n) != "call_expression" {
		return nil, ""
	}
	fn := n.ChildByFieldName("function")
	if fn == nil || typeOf(fn) != "member_expression" || !f.tsClient(fn.ChildByFieldName("object"), 0) {
		return nil, ""
	}
	method := f.text(fn.ChildByFieldName("property"))
	keys, cmd := f.tsKeys(method, args(n.ChildByFieldName("arguments")))
	return keys, cmd
}

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
		if typeOf(k) == "array" { // del([a, b]), mget([a, b])
			out = append(out, args(k)...)
		} else if typeOf(k) != "spread_element" {
			out = append(out, k)
		}
	}
	return out, commandName(method)
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
	case "call_expression":
		s, b := f.tsCall(n, depth)
		return s, b, true
	}
	return keyshape.Shape{}, false, false
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
	return f.hole(n, ""), false
}
