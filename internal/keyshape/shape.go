package keyshape

import (
	"slices"
	"strconv"
	"strings"

	"github.com/keyguard/keyguard/keytmpl"
)

// Part is a piece of a key shape: literal text, or a hole for a value the
// scanner cannot know.
type Part struct {
	Lit  string       // literal text when !Hole
	Hole bool         // a value unknown where the key is built
	Kind keytmpl.Kind // what the value is known to be: Any, or Int for integer types and %d
	Name string       // a name for the value (the variable's), "" when it has none
	Expr string       // the value's source text, for suggested fixes ("" when not worth quoting)
	// Param is i+1 when the value is parameter i of the function whose
	// shape is being summarized (a helper that returns a key, a wrapper
	// that sends one), 0 otherwise: its callers substitute their argument.
	Param int
}

// Shape is the key a Redis call builds, as far as the source shows it.
type Shape struct {
	Parts []Part
}

// Lit is a shape of literal text only.
func Lit(s string) Shape {
	if s == "" {
		return Shape{}
	}
	return Shape{Parts: []Part{{Lit: s}}}
}

// Hole is a shape of one unknown value.
func Hole(kind keytmpl.Kind, name, expr string) Shape {
	return Shape{Parts: []Part{{Hole: true, Kind: kind, Name: name, Expr: expr}}}
}

// Concat joins shapes, merging adjacent literal text.
func Concat(ss ...Shape) Shape {
	var out Shape
	for _, s := range ss {
		for _, p := range s.Parts {
			n := len(out.Parts)
			if !p.Hole && n > 0 && !out.Parts[n-1].Hole {
				out.Parts[n-1].Lit += p.Lit
				continue
			}
			if !p.Hole && p.Lit == "" {
				continue
			}
			out.Parts = append(out.Parts, p)
		}
	}
	return out
}

// Param is a hole for parameter i of the function being summarized.
func Param(i int, kind keytmpl.Kind, name string) Shape {
	return Shape{Parts: []Part{{Hole: true, Kind: kind, Name: name, Param: i + 1}}}
}

// WholeParam is the parameter index when the shape is one parameter of
// the function being summarized, whole; -1 otherwise.
func (s Shape) WholeParam() int {
	if len(s.Parts) == 1 && s.Parts[0].Param > 0 {
		return s.Parts[0].Param - 1
	}
	return -1
}

// HasParam reports whether the shape holds a parameter of the function
// being summarized.
func (s Shape) HasParam() bool {
	for _, p := range s.Parts {
		if p.Param > 0 {
			return true
		}
	}
	return false
}

// Subst replaces the parameter holes with the shapes arg gives (ok false:
// the hole stays, unmarked), as a call of the summarized function builds
// its key.
func (s Shape) Subst(arg func(i int) (Shape, bool)) Shape {
	parts := make([]Shape, 0, len(s.Parts))
	for _, p := range s.Parts {
		if p.Param == 0 {
			parts = append(parts, Shape{Parts: []Part{p}})
			continue
		}
		if a, ok := arg(p.Param - 1); ok {
			parts = append(parts, a)
			continue
		}
		p.Param = 0
		parts = append(parts, Shape{Parts: []Part{p}})
	}
	return Concat(parts...)
}

// Unmark drops the parameter marks: the shape as a finding shows it.
func (s Shape) Unmark() Shape {
	if !s.HasParam() {
		return s
	}
	out := Shape{Parts: slices.Clone(s.Parts)}
	for i := range out.Parts {
		out.Parts[i].Param = 0
	}
	return out
}

// Literal returns the key when the shape has no hole.
func (s Shape) Literal() (string, bool) {
	var b strings.Builder
	for _, p := range s.Parts {
		if p.Hole {
			return "", false
		}
		b.WriteString(p.Lit)
	}
	return b.String(), true
}

// Holes counts the holes.
func (s Shape) Holes() int {
	n := 0
	for _, p := range s.Parts {
		if p.Hole {
			n++
		}
	}
	return n
}

// String writes the shape as a template a person reads: literal braces
// doubled as in the registry, a hole as {name} (or {name:int}), {} when the
// value has no name. "user:" + id + ":info" is "user:{id}:info".
func (s Shape) String() string {
	var b strings.Builder
	for _, p := range s.Parts {
		if !p.Hole {
			writeEscaped(&b, p.Lit)
			continue
		}
		b.WriteByte('{')
		b.WriteString(p.Name)
		if p.Kind != keytmpl.Any {
			if p.Name == "" {
				b.WriteString("v")
			}
			b.WriteByte(':')
			b.WriteString(p.Kind.String())
		}
		b.WriteByte('}')
	}
	return b.String()
}

// template writes the shape with every hole a placeholder h0, h1… of its
// kind, which keytmpl parses: a hole stands for a non-empty value inside one
// segment.
func (s Shape) template() string {
	var b strings.Builder
	h := 0
	for _, p := range s.Parts {
		if !p.Hole {
			writeEscaped(&b, p.Lit)
			continue
		}
		b.WriteString("{h")
		b.WriteString(strconv.Itoa(h))
		if p.Kind != keytmpl.Any {
			b.WriteByte(':')
			b.WriteString(p.Kind.String())
		}
		b.WriteByte('}')
		h++
	}
	return b.String()
}

func writeEscaped(b *strings.Builder, lit string) {
	for i := 0; i < len(lit); i++ {
		c := lit[i]
		if c == '{' || c == '}' {
			b.WriteByte(c)
		}
		b.WriteByte(c)
	}
}
