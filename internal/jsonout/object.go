package jsonout

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Object writes one JSON object field by field, the bytes Write gives a
// struct of those fields, without the whole document in memory: a
// field's value goes through encoding/json on its own, and a long array
// (a report's keys or findings) element by element through an append
// function, so a report of 100,000 keys needs a buffer of one field or
// a few elements, not of the document, twice over as encoding/json's
// indentation holds it.
//
//	o := jsonout.NewObject(w)
//	o.Field("target", r.Target)
//	jsonout.Array(o, "keys", r.Keys, appendKey) // appendKey writes an element as Write indents it
//	err := o.Close()
type Object struct {
	w      *bufio.Writer
	buf    bytes.Buffer
	encs   []*json.Encoder // by depth - 1
	fields int
	err    error
}

// NewObject starts an object on w.
func NewObject(w io.Writer) *Object {
	o := &Object{w: bufio.NewWriterSize(w, 32<<10)}
	o.w.WriteByte('{')
	return o
}

// Key starts the next field of the object; the name needs no escaping.
func (o *Object) Key(name string) {
	if o.fields > 0 {
		o.w.WriteByte(',')
	}
	o.fields++
	o.w.WriteString("\n  \"")
	o.w.WriteString(name)
	o.w.WriteString("\": ")
}

// Field writes a field whose value encoding/json encodes.
func (o *Object) Field(name string, v any) {
	o.Key(name)
	o.Value(1, v)
}

// Value writes v as encoding/json indents a value depth levels deep
// (1: a field of the object, 2: a field of an object or an element of an
// array in it), without the encoder's newline.
func (o *Object) Value(depth int, v any) {
	if o.err != nil {
		return
	}
	for len(o.encs) < depth {
		enc := json.NewEncoder(&o.buf)
		enc.SetIndent(Indent(len(o.encs)+1), "  ")
		enc.SetEscapeHTML(false)
		o.encs = append(o.encs, enc)
	}
	o.buf.Reset()
	if o.err = o.encs[depth-1].Encode(v); o.err != nil {
		return
	}
	b := o.buf.Bytes()
	o.Write(b[:len(b)-1])
}

// Write writes b as it is (the bytes of an element appended elsewhere).
func (o *Object) Write(b []byte) {
	if o.err == nil {
		_, o.err = o.w.Write(b)
	}
}

// WriteString writes s as it is.
func (o *Object) WriteString(s string) { o.w.WriteString(s) }

// WriteByte writes c as it is; an error is also Close's.
func (o *Object) WriteByte(c byte) error { return o.w.WriteByte(c) }

// Err is the first error of a write or an encoding, if any.
func (o *Object) Err() error { return o.err }

// Close ends the object and its line and flushes it.
func (o *Object) Close() error {
	o.w.WriteString("\n}\n")
	if o.err != nil {
		return o.err
	}
	return o.w.Flush()
}

// Indent is the indentation of what is depth levels deep: a field of
// the object 1, an element of an array in it 2.
func Indent(depth int) string { return strings.Repeat("  ", depth) }

// Array writes field name holding s, each element appended by add as
// encoding/json writes an element of an array in the object: add gets no
// indentation before the element's first byte and indents the lines
// after it for depth 2 (its closing brace at four spaces). A nil s is
// null and an empty one [], as encoding/json writes them.
func Array[T any](o *Object, name string, s []T, add func(b []byte, v *T) []byte) {
	o.Key(name)
	switch {
	case s == nil:
		o.w.WriteString("null")
		return
	case len(s) == 0:
		o.w.WriteString("[]")
		return
	}
	Elems(o, 1, s, add)
}

// Elems writes the brackets and elements of a non-empty array that is a
// value depth levels deep (1: a field of the object), each element on a
// line of its own, appended by add as encoding/json indents an element
// depth+1 levels deep, written a few kilobytes at a time.
func Elems[T any](o *Object, depth int, s []T, add func(b []byte, v *T) []byte) {
	sep := "\n" + Indent(depth+1)
	o.w.WriteByte('[')
	var b []byte
	for i := range s {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, sep...)
		b = add(b, &s[i])
		if len(b) >= 16<<10 {
			o.Write(b)
			b = b[:0]
		}
	}
	o.Write(b)
	o.w.WriteString("\n" + Indent(depth) + "]")
}

// Reflect returns an append function for Array (or any array depth - 1
// levels deep) that encodes an element with encoding/json, indented as an
// element depth levels deep (2 for Array's). It is for a program's own
// types, whose values encoding/json takes: it panics on one it refuses.
// The function reuses one buffer: one per goroutine.
func Reflect[T any](depth int) func(b []byte, v *T) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent(Indent(depth), "  ")
	enc.SetEscapeHTML(false)
	return func(b []byte, v *T) []byte {
		buf.Reset()
		if err := enc.Encode(v); err != nil {
			panic(fmt.Sprintf("jsonout: encode %T: %v", v, err))
		}
		return append(b, buf.Bytes()[:buf.Len()-1]...)
	}
}
