package codegen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"text/template"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

func funcs() template.FuncMap {
	return template.FuncMap{
		"goq":       strconv.Quote,
		"javaq":     javaQuote,
		"pyq":       pyQuote,
		"tsq":       tsQuote,
		"godur":     goDuration,
		"javadur":   javaDuration,
		"pydur":     pyDuration,
		"ms":        milliseconds,
		"javadoc":   javadocEscape,
		"jsdoc":     jsdocEscape,
		"pydoc":     pydocEscape,
		"join":      strings.Join,
		"last":      func(i, n int) bool { return i == n-1 },
		"header":    func() string { return Header },
		"pytuple":   pyTuple,
		"pyidtuple": pyExprTuple,
		"wrap":      wrapComment,
		"gorune":    func(b byte) string { return strconv.QuoteRune(rune(b)) },
	}
}

// javaQuote writes a Java string literal. Control characters use named or
// octal escapes, never \u000a, which javac would read as a line break.
func javaQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\%03o`, r)
		default:
			b.WriteRune(r) // non-ASCII becomes \uXXXX in javaASCII
		}
	}
	b.WriteByte('"')
	return b.String()
}

// javaASCII replaces every non-ASCII character of a Java source with a
// \uXXXX escape, so javac reads the file the same under any -encoding.
func javaASCII(src []byte) []byte {
	var b bytes.Buffer
	for len(src) > 0 {
		r, n := utf8.DecodeRune(src)
		if r < utf8.RuneSelf {
			b.WriteByte(src[0])
		} else if r1, r2 := utf16.EncodeRune(r); r1 != utf8.RuneError {
			fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
		} else {
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		src = src[n:]
	}
	return b.Bytes()
}

// pyQuote writes a Python 3 string literal (the source is UTF-8).
func pyQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r == 0x2028 || r == 0x2029 || r == 0x85:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// tsQuote writes a JavaScript string literal.
func tsQuote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

func goDuration(d time.Duration) string {
	units := []struct {
		d    time.Duration
		name string
	}{{time.Hour, "time.Hour"}, {time.Minute, "time.Minute"}, {time.Second, "time.Second"}, {time.Millisecond, "time.Millisecond"}}
	if d == 0 {
		return "0"
	}
	for _, u := range units {
		if d%u.d == 0 {
			if d == u.d {
				return u.name
			}
			return fmt.Sprintf("%d * %s", d/u.d, u.name)
		}
	}
	return fmt.Sprintf("%d", int64(d))
}

func javaDuration(d time.Duration) string {
	switch {
	case d == 0:
		return "Duration.ZERO"
	case d%time.Second == 0:
		return fmt.Sprintf("Duration.ofSeconds(%d)", d/time.Second)
	case d%time.Millisecond == 0:
		return fmt.Sprintf("Duration.ofMillis(%d)", d/time.Millisecond)
	}
	return fmt.Sprintf("Duration.ofNanos(%d)", int64(d))
}

func pyDuration(d time.Duration) string {
	switch {
	case d%time.Second == 0:
		return fmt.Sprintf("timedelta(seconds=%d)", d/time.Second)
	case d%time.Millisecond == 0:
		return fmt.Sprintf("timedelta(milliseconds=%d)", d/time.Millisecond)
	}
	return fmt.Sprintf("timedelta(microseconds=%d)", d/time.Microsecond)
}

func milliseconds(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', -1, 64)
}

// javadocEscape makes text safe inside /** */: no comment end, no HTML,
// no tags.
func javadocEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "@", "&#64;", "*/", "*&#47;", `\`, "&#92;").Replace(s)
}

// jsdocEscape makes text safe inside /** */ in TypeScript.
func jsdocEscape(s string) string {
	return strings.NewReplacer("*/", "*\\/", "@", "\\@").Replace(s)
}

// pydocEscape makes text safe inside a """docstring""".
func pydocEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"""`, `\"\"\"`).Replace(s)
}

// pyTuple writes a Python tuple of strings: (), ("a",), ("a", "b").
func pyTuple(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = pyQuote(s)
	}
	return pyExprTuple(q)
}

// pyExprTuple writes a Python tuple of expressions: (), (a,), (a, b).
func pyExprTuple(xs []string) string {
	switch len(xs) {
	case 0:
		return "()"
	case 1:
		return "(" + xs[0] + ",)"
	}
	return "(" + strings.Join(xs, ", ") + ")"
}

// wrapComment breaks text into lines of at most about 76 columns, each
// starting with prefix ("// "); a word longer than a line stays whole.
func wrapComment(prefix, text string) string {
	const width = 76
	var b strings.Builder
	n := 0
	for _, w := range strings.Fields(text) {
		switch {
		case n == 0:
		case n+1+len(w) > width:
			b.WriteByte('\n')
			n = 0
		default:
			b.WriteByte(' ')
			n++
		}
		if n == 0 {
			b.WriteString(prefix)
			n = len(prefix)
		}
		b.WriteString(w)
		n += len(w)
	}
	return b.String()
}
