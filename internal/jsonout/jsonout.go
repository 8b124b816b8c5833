// Package jsonout writes JSON the way every keyguard command does: indented
// by two spaces, one value per call ending in a newline, and without
// HTML escaping (keys hold <, > and & as they are; the HTML reports escape
// for themselves).
//
//	err := jsonout.Write(os.Stdout, report)
//
// Object writes the same bytes field by field, for a document too large
// to hold twice (a report of 100,000 keys); AppendString and AppendFloat
// append a string and a number as encoding/json does, for the append
// functions of its arrays.
//
// It imports internal/swar only.
package jsonout

import (
	"encoding/json"
	"io"
)

// Write writes v to w as indented JSON and a newline.
func Write(w io.Writer, v any) error { return NewEncoder(w).Encode(v) }

// NewEncoder is an encoder of that form, for a stream of values.
func NewEncoder(w io.Writer) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc
}
