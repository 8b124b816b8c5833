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
		name:      keyshape.Python,
		grammar:   python.GetLanguage(),
		scopes:    set("function_definition", "lambda", "class_definition", "module"),
		classes:   set("class_definition"),
		bind:      pythonBind,
		bindTypes: []string{"assignment", "augmented_assignment", "parameters", "lambda_parameters", "for_statement", "as_pattern"},
		callTypes: []string{"call"},
		keyArgs:   pythonKeyArgs,
		eval:      pythonEval,
		intType:   func(t string) bool { return t == "int" },
		keyType:   func(t string) bool { return t == "Key" || strings.HasSuffix(t, ".Key") },
	}).compile()
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
			case "identifier":
				f.declare(f.text(p), p, nil, "", true)
			case "typed_parameter":
				if p.NamedChildCount() > 0 && p.NamedChild(0).Type() == "identifier" {
					f.declare(f.text(p.NamedChild(0)), p, nil, f.text(p.ChildByFieldName("type")), true)
				}
			case "default_parameter", "typed_default_parameter":
				f.declare(f.text(p.ChildByFieldName("name")), p, nil, f.text(p.ChildByFieldName("type")), true)
			}
		}
	case "for_statement":
		if left := n.ChildByFieldName("left"); left != nil && typeOf(left) == "identifier" {
			f.declare(f.text(left), n, nil, "", false)
		}
	case "as_pattern": // with r.pipeline() as pipe:
		if alias := n.ChildByFieldName("alias"); alias != nil && n.NamedChildCount() > 0 {
			f.declare(strings.TrimSpace(f.text(alias)), n, n.NamedChild(0), "", false)
		}
	}
}

// pythonClient reports whether a receiver is a redis-py client or
// pipeline: bound to Redis(…), from_url(…), RedisCluster(…), .pipeline(),
// annotated with such a type, or, when the file does not show where it
// comes from, named like one.
func (f *srcFile) pythonClient(obj *sitter.Node, depth int) bool {
	if depth > 8 {
		return false
	}
	name := ""
	switch typeOf(obj) {
	case "identifier":
		name = f.text(obj)
	case "attribute":
		o := obj.ChildByFieldName("object")
		if f.text(o) != "self" {
			return nameSays(f.text(obj.ChildByFieldName("attribute")))
		}
		name = "self." + f.text(obj.ChildByFieldName("attribute"))
	case "call":
		fn := f.text(obj.ChildByFieldName("function"))
		switch lastName(fn) {
		case "Redis", "StrictRedis", "RedisCluster", "from_url", "master_for", "slave_for":
			return true
		case "pipeline":
			if fo := obj.ChildByFieldName("function"); typeOf(fo) == "attribute" {
				return f.pythonClient(fo.ChildByFieldName("object"), depth+1)
			}
		}
		return nameSays(lastName(fn)) // get_redis(), redis_client()
	default:
		return false
	}
	v, typ, found := f.resolve(name, obj)
	if strings.Contains(typ, "Redis") || strings.Contains(typ, "Pipeline") {
		return true
	}
	if v != nil {
		return f.pythonClient(v, depth+1)
	}
	return (!found || typ == "") && nameSays(name)
}

var pythonKeywordKeys = set("name", "key", "keys", "src", "dst", "source", "destination", "dest")

func pythonKeyArgs(f *srcFile, n *sitter.Node) ([]*sitter.Node, string) {
	if typeOf(n) != "call" {
		return nil, ""
	}
	fn := n.ChildByFieldName("function")
	if typeOf(fn) != "attribute" || !f.pythonClient(fn.ChildByFieldName("object"), 0) {
		return nil, ""
	}
	method := f.text(fn.ChildByFieldName("attribute"))
	var pos, out []*sitter.Node
	for _, a := range args(n.ChildByFieldName("arguments")) {
		switch typeOf(a) {
		case "keyword_argument":
			if pythonKeywordKeys[f.text(a.ChildByFieldName("name"))] {
				out = append(out, f.pythonElements(a.ChildByFieldName("value"))...)
			}
		case "list_splat", "dictionary_splat":
			// *keys: not visible
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
			out = append(out, f.pythonElements(k)...)
		}
	}
	return out, cmd
}

// pythonElements are the elements of a list or tuple literal, or the node.
func (f *srcFile) pythonElements(n *sitter.Node) []*sitter.Node {
	if typeOf(n) == "list" || typeOf(n) == "tuple" {
		return args(n)
	}
	return []*sitter.Node{n}
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
			s, b := f.evalName("self."+f.text(n.ChildByFieldName("attribute")), n, depth)
			return s, b, true
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
	if typeOf(fn) != "attribute" {
		return f.hole(n, ""), false
	}
	obj := fn.ChildByFieldName("object")
	switch {
	case name == "format" && typeOf(obj) == "string":
		fs, _ := f.eval(obj, depth+1)
		if lit, ok := fs.Literal(); ok {
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
