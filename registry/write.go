package registry

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Writer writes registry YAML: the one writer of keyguard.yaml text, for
// keyguard init, the audits' suggested entries and scan-code's. What it
// writes, Parse reads back to the same values; TTLs are written as
// FormatTTL writes them (7d, not 168h). Templates, descriptions and field
// names are double-quoted; names (types, owners, domains) are plain when
// YAML reads them as the same text, else quoted.
//
// A write error, or a value YAML cannot hold (text that is not UTF-8),
// stops the writer: later calls write nothing and Err returns it.
type Writer struct {
	w   io.Writer
	err error
}

// NewWriter returns a Writer writing to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Err is the first error met, or nil.
func (w *Writer) Err() error { return w.err }

func (w *Writer) put(s string) {
	if w.err == nil {
		_, w.err = io.WriteString(w.w, s)
	}
}

// Comment writes text as comment lines ("# ...") indented by indent
// spaces, one per line of text.
func (w *Writer) Comment(indent int, text string) {
	pad := strings.Repeat(" ", indent)
	for _, line := range strings.Split(text, "\n") {
		if line == "" {
			w.put(pad + "#\n")
			continue
		}
		w.put(pad + "# " + commentText(line) + "\n")
	}
}

// Blank writes an empty line.
func (w *Writer) Blank() { w.put("\n") }

// Text writes YAML the caller holds as it is: a part copied from a
// registry file or a suggestion read from a report. Parse is what checks
// it.
func (w *Writer) Text(yaml string) { w.put(yaml) }

// Header writes the top of a full registry: version, separator and env
// (when not "").
func (w *Writer) Header(version int, sep byte, env string) {
	w.put("version: " + strconv.Itoa(version) + "\n")
	w.put("separator: " + w.quote(string(sep)) + "\n")
	if env != "" {
		w.put("env: " + w.name(env) + "\n")
	}
}

// Section starts a top-level mapping or list: "domains:", "keys:".
func (w *Writer) Section(name string) { w.put(name + ":\n") }

// Domain writes a domain under domains:, on one line:
//
//	order: {owner: order-team, desc: "orders"}
func (w *Writer) Domain(d Domain) {
	var fields []string
	if d.Owner != "" {
		fields = append(fields, "owner: "+w.name(d.Owner))
	}
	if d.Desc != "" {
		fields = append(fields, "desc: "+w.quote(d.Desc))
	}
	w.put("  " + w.name(d.Name) + ": {" + strings.Join(fields, ", ") + "}\n")
}

// Draft is an entry to write and what to tell its reader. Of the Entry,
// the fields a person writes are written (Key, Name, Type, TTL,
// TTLJitter, Persistent, Owner, Fields, FieldsExtra, Guard, Hot, Writers,
// Readers, PIIAllow, Deprecated, Domain, EntityType, Attribute, Desc), in
// that order, each only when it is not the zero value.
type Draft struct {
	Entry
	// Above are comment lines written above the entry.
	Above []string
	// Notes are comments by field name as the file spells it ("ttl",
	// "owner"): after the field's value when the field is written, or in
	// the field's place ("# ttl: note") when it is not.
	Notes map[string]string
}

// Entry writes an entry under keys:, indented by two spaces.
func (w *Writer) Entry(d Draft) {
	if w.err != nil {
		return
	}
	for _, a := range d.Above {
		w.Comment(2, a)
	}
	e := &d.Entry
	first := true
	field := func(name, value string, given bool) {
		note, noted := d.Notes[name]
		lead := "    "
		if first {
			lead = "  - "
		}
		switch {
		case given:
			first = false
			line := lead + name + ": " + value
			if noted {
				line += " # " + commentText(note)
			}
			w.put(line + "\n")
		case noted:
			w.put("    # " + name + ": " + commentText(note) + "\n")
		}
	}
	field("key", w.quote(e.Key), true)
	field("name", w.name(e.Name), e.Name != "")
	field("type", w.name(e.Type), e.Type != "")
	field("ttl", FormatTTL(e.TTL), e.TTL != 0)
	field("ttl_jitter", FormatTTL(e.TTLJitter), e.TTLJitter != 0)
	field("persistent", "true", e.Persistent)
	field("owner", w.name(e.Owner), e.Owner != "")
	field("fields", w.list(e.Fields, w.quote), len(e.Fields) > 0)
	field("fields_extra", "allow", e.FieldsExtra)
	field("guard", "true", e.Guard)
	if h := e.Hot; h != nil {
		var hot []string
		if h.Replicas != 0 {
			hot = append(hot, "replicas: "+strconv.Itoa(h.Replicas))
		}
		if h.LocalTTL != 0 {
			hot = append(hot, "local_ttl: "+FormatTTL(h.LocalTTL))
		}
		field("hot", "{"+strings.Join(hot, ", ")+"}", true)
	} else {
		field("hot", "", false)
	}
	field("writers", w.list(e.Writers, w.name), len(e.Writers) > 0)
	field("readers", w.list(e.Readers, w.name), len(e.Readers) > 0)
	field("pii", "allow", e.PIIAllow)
	if e.Deprecated != nil {
		field("deprecated", "{replaced_by: "+w.quote(e.Deprecated.ReplacedBy)+"}", true)
	} else {
		field("deprecated", "", false)
	}
	field("domain", w.name(e.Domain), e.Domain != "")
	field("entityType", w.name(e.EntityType), e.EntityType != "")
	field("attribute", w.name(e.Attribute), e.Attribute != "")
	field("desc", w.quote(e.Desc), e.Desc != "")
}

func (w *Writer) list(items []string, each func(string) string) string {
	out := make([]string, len(items))
	for i, s := range items {
		out[i] = each(s)
	}
	return "[" + strings.Join(out, ", ") + "]"
}

// name writes s plain when YAML reads it back as the same text (a word of
// letters, digits, '_', '.' and '-' that starts with a letter and is no
// YAML boolean or null), else quoted.
func (w *Writer) name(s string) string {
	if plainName(s) {
		return s
	}
	return w.quote(s)
}

func plainName(s string) bool {
	if s == "" || !(s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z' || s[0] == '_') {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	switch strings.ToLower(s) {
	case "y", "n", "yes", "no", "on", "off", "true", "false", "null":
		return false
	}
	return true
}

// quote writes s as a YAML double-quoted scalar. Printable characters
// stand as they are; the others are escaped as YAML reads them (\t, \n,
// \x1b, \u2028). Text that is not UTF-8 has no YAML form: YAML reads
// "\xff" as "ÿ" and a raw 0xff byte as U+FFFD. It stops the writer.
func (w *Writer) quote(s string) string {
	if !utf8.ValidString(s) {
		if w.err == nil {
			w.err = fmt.Errorf("%s is not UTF-8 text, which YAML cannot hold: write that entry by hand", strconv.Quote(s))
		}
		return `""`
	}
	return quoteYAML(s)
}

// quoteYAML writes s, which must be UTF-8, as a YAML double-quoted
// scalar.
func quoteYAML(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		default:
			switch {
			case r < 0x20 || r == 0x7f:
				fmt.Fprintf(&b, `\x%02x`, r)
			case r == utf8.RuneError || r == 0xfeff || !unicode.IsPrint(r) && r > 0x7f:
				if r > 0xffff {
					fmt.Fprintf(&b, `\U%08x`, r)
				} else {
					fmt.Fprintf(&b, `\u%04x`, r)
				}
			default:
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// commentText keeps a comment on its line: line breaks and other
// characters YAML does not allow in a comment are written escaped.
func commentText(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return r != '\t' && !unicode.IsPrint(r) }) && utf8.ValidString(s) {
		return s
	}
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}
