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
// the method's parameters. The finding is on the annotation.
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
				f.report(a, keyshape.Concat(name, keyshape.Lit("::"), key), cmd, "@"+kind)
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
			if i := strings.IndexAny(name, ".[("); i >= 0 {
				name = name[:i]
			}
			if i := slices.Index(d.params, name); i >= 0 {
				parts = append(parts, f.paramHole(d, i))
			} else {
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
