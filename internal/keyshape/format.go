package keyshape

import (
	"strings"

	"github.com/keyguard/keyguard/keytmpl"
)

// Verb is one conversion of a printf-style format: the argument it takes
// and its letter.
type Verb struct {
	Arg    int  // argument index, counting from 0
	Letter byte // 's', 'd', 'x'…
	Plain  bool // no flag, width or precision: %s writes the argument as it is
}

// Printf reads a printf-style format (Go's fmt, Java's String.format,
// Python's %) into a shape, asking arg for the shape of each conversion.
// It understands %%, flags, width, precision, Go's %[n]v and Java's %n$s
// argument indexes and Java's %n line break. It reports false for what it
// cannot follow (a * width, Python's %(name)s, a verb without a letter), so
// the caller treats the whole result as unknown.
func Printf(format string, arg func(v Verb) Shape) (Shape, bool) {
	var parts []Shape
	next := 0
	for i := 0; i < len(format); {
		j := strings.IndexByte(format[i:], '%')
		if j < 0 {
			parts = append(parts, Lit(format[i:]))
			break
		}
		parts = append(parts, Lit(format[i:i+j]))
		i += j + 1
		if i >= len(format) {
			return Shape{}, false
		}
		if format[i] == '%' {
			parts = append(parts, Lit("%"))
			i++
			continue
		}
		v := Verb{Arg: next, Plain: true}
		// Go's %[n] and Java's n$ choose the argument (1-based).
		if format[i] == '[' {
			k := strings.IndexByte(format[i:], ']')
			n, ok := atoi(format[i+1 : i+max(k, 1)])
			if k < 0 || !ok || n < 1 {
				return Shape{}, false
			}
			v.Arg = n - 1
			i += k + 1
		} else if n, w := digits(format[i:]); w > 0 && i+w < len(format) && format[i+w] == '$' {
			v.Arg = n - 1
			i += w + 1
			if v.Arg < 0 {
				return Shape{}, false
			}
		}
		if i >= len(format) || format[i] == '(' { // Python's %(name)s
			return Shape{}, false
		}
		for i < len(format) && strings.IndexByte("-+# 0,", format[i]) >= 0 {
			v.Plain = false
			i++
		}
		if i < len(format) && format[i] == '*' {
			return Shape{}, false
		}
		if _, w := digits(format[i:]); w > 0 {
			v.Plain = false
			i += w
		}
		if i < len(format) && format[i] == '.' {
			v.Plain = false
			i++
			_, w := digits(format[i:])
			i += w
		}
		if i >= len(format) || !isLetter(format[i]) {
			return Shape{}, false
		}
		v.Letter = format[i]
		i++
		if v.Letter == 'n' { // Java's line separator takes no argument
			parts = append(parts, Lit("\n"))
			continue
		}
		parts = append(parts, arg(v))
		next = v.Arg + 1
	}
	return Concat(parts...), true
}

// VerbHole is the hole a conversion writes when its argument is unknown:
// %d an integer, %x hex digits, anything else any text.
func VerbHole(v Verb, name, expr string) Shape {
	switch v.Letter {
	case 'd', 'i', 'u':
		return Hole(keytmpl.Int, name, expr)
	case 'x', 'X':
		return Hole(keytmpl.Hex, name, expr)
	}
	return Hole(keytmpl.Any, name, expr)
}

// Field is one replacement field of a brace format: its name or index as
// written ("" for an automatic one) and the automatic index it got.
type Field struct {
	Name  string // "0", "user", "user.id"; "" for {}
	Auto  int    // position among the automatic fields
	Plain bool   // no conversion (!r) or format spec (:>10)
}

// Brace reads a brace format (Python's str.format, Java's MessageFormat
// style {0}) into a shape, asking arg for the shape of each field. {{ and
// }} are literal braces. It reports false for a brace without its pair.
func Brace(format string, arg func(f Field) Shape) (Shape, bool) {
	var parts []Shape
	auto := 0
	var lit strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c == '}' {
			if i+1 < len(format) && format[i+1] == '}' {
				lit.WriteByte('}')
				i++
				continue
			}
			return Shape{}, false
		}
		if c != '{' {
			lit.WriteByte(c)
			continue
		}
		if i+1 < len(format) && format[i+1] == '{' {
			lit.WriteByte('{')
			i++
			continue
		}
		k := strings.IndexByte(format[i:], '}')
		if k < 0 {
			return Shape{}, false
		}
		body := format[i+1 : i+k]
		if strings.ContainsAny(body, "{") {
			return Shape{}, false // nested fields in a format spec
		}
		f := Field{Name: body, Plain: true}
		if p := strings.IndexAny(body, "!:"); p >= 0 {
			f.Name, f.Plain = body[:p], false
		}
		if f.Name == "" {
			f.Auto = auto
			auto++
		}
		parts = append(parts, Lit(lit.String()))
		lit.Reset()
		parts = append(parts, arg(f))
		i += k
	}
	parts = append(parts, Lit(lit.String()))
	return Concat(parts...), true
}

func digits(s string) (n, w int) {
	for w < len(s) && s[w] >= '0' && s[w] <= '9' && w < 9 {
		n = n*10 + int(s[w]-'0')
		w++
	}
	return n, w
}

func atoi(s string) (int, bool) {
	n, w := digits(s)
	return n, w > 0 && w == len(s)
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
