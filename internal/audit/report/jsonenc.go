package report

import (
	"encoding/base64"
	"strconv"
	"unicode/utf8"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/jsonout"
)

// The findings are most of a big report's bytes, and encoding/json spends
// most of its time on them re-indenting what it has just written. These
// append the same bytes directly. TestAppendFindingAsEncoded and
// FuzzAppendFindingAsEncoded hold them to encoding/json's output with the
// settings of WriteJSON (two-space indent, no HTML escaping).

const hexDigits = "0123456789abcdef"

// appendFindingJSON appends f as encoding/json writes an element of the
// report's findings array (its first line unindented, the closing brace
// at four spaces).
func appendFindingJSON(b []byte, f *Finding) []byte {
	var e findingEncoder
	return e.append(b, f)
}

// findingEncoder is appendFindingJSON keeping the encoded form of the
// last template, owner, message and hint: the report lists findings rule
// by rule, and runs of them share those strings (one message, the hint of
// one family), so most are copied instead of escaped again.
type findingEncoder struct{ strs jsonout.StringCache }

func (e *findingEncoder) append(b []byte, f *Finding) []byte {
	b = append(b, "{\n      \"rule\": "...)
	b = jsonout.AppendString(b, f.Rule)
	b = appendField(b, "severity")
	b = jsonout.AppendString(b, f.Severity.String())
	b = appendStringField(b, "key", f.Key)
	b = e.field(b, 0, "template", f.Template)
	b = e.field(b, 1, "owner", f.Owner)
	b = e.strs.Append(appendField(b, "message"), 2, f.Message)
	b = e.field(b, 3, "hint", f.Hint)
	b = appendStringField(b, "file", f.File)
	b = appendIntField(b, "line", f.Line)
	b = appendIntField(b, "column", f.Column)
	b = appendStringField(b, "key_base64", f.KeyBase64)
	b = appendIntField(b, "key_len", f.KeyLen)
	if f.DB != nil {
		b = strconv.AppendInt(appendField(b, "db"), int64(*f.DB), 10)
	}
	if f.Bytes != 0 {
		b = strconv.AppendInt(appendField(b, "bytes"), f.Bytes, 10)
	}
	b = appendStringField(b, "doc", f.Doc)
	return append(b, "\n    }"...)
}

// field is appendStringField through the cache slot i.
func (e *findingEncoder) field(b []byte, i int, name, v string) []byte {
	if v == "" {
		return b
	}
	return e.strs.Append(appendField(b, name), i, v)
}

// appendStringField appends a string field unless v is empty (omitempty).
func appendStringField(b []byte, name, v string) []byte {
	if v == "" {
		return b
	}
	return jsonout.AppendString(appendField(b, name), v)
}

// appendIntField appends an int field unless v is 0 (omitempty).
func appendIntField(b []byte, name string, v int) []byte {
	if v == 0 {
		return b
	}
	return strconv.AppendInt(appendField(b, name), int64(v), 10)
}

// appendField starts the next field of a finding (never the first).
func appendField(b []byte, name string) []byte { return appendKey(b, fieldIndent1, name, false) }

// appendTopKey appends k as encoding/json writes an element of the
// report's top_keys array; e caches the template and node, which runs of
// top keys share.
func (e *findingEncoder) appendTopKey(b []byte, k *TopKey) []byte {
	b = append(b, "{\n      \"key\": "...)
	b = jsonout.AppendString(b, k.Key)
	b = appendStringField(b, "key_base64", k.KeyBase64)
	b = appendIntField(b, "key_len", k.KeyLen)
	b = jsonout.AppendString(appendField(b, "type"), k.Type)
	b = strconv.AppendInt(appendField(b, "bytes"), k.Bytes, 10)
	b = strconv.AppendInt(appendField(b, "elements"), k.Elements, 10)
	if k.TTLMS != nil {
		b = strconv.AppendInt(appendField(b, "ttl_ms"), *k.TTLMS, 10)
	}
	b = e.field(b, 0, "template", k.Template)
	b = e.field(b, 1, "node", k.Node)
	if k.DB != nil {
		b = strconv.AppendInt(appendField(b, "db"), int64(*k.DB), 10)
	}
	return append(b, "\n    }"...)
}

// appendStr appends s as encoding/json writes a Str at depth levels of
// indentation: Str's MarshalJSON writes it with json.Marshal (HTML
// characters escaped), a string of invalid UTF-8 as {"b64": ...}.
func appendStr(b []byte, s Str, depth int) []byte {
	if !utf8.ValidString(string(s)) {
		b = append(b, "{\n"...)
		b = appendSpaces(b, 2*depth+2)
		b = append(b, `"b64": "`...)
		b = base64.StdEncoding.AppendEncode(b, []byte(s))
		b = append(b, "\"\n"...)
		b = appendSpaces(b, 2*depth)
		return append(b, '}')
	}
	return appendJSONStringHTML(b, string(s))
}

func appendSpaces(b []byte, n int) []byte {
	for range n {
		b = append(b, ' ')
	}
	return b
}

// appendJSONStringHTML is appendJSONString with <, > and & escaped, as
// json.Marshal writes a string of valid UTF-8.
func appendJSONStringHTML(b []byte, s string) []byte {
	start := len(b)
	b = jsonout.AppendString(b, s)
	// Most strings hold none: look before copying.
	i := start + 1
	for ; i < len(b); i++ {
		if c := b[i]; c == '<' || c == '>' || c == '&' {
			break
		}
	}
	if i == len(b) {
		return b
	}
	var tmp [64]byte
	tail := append(tmp[:0], b[i:]...)
	b = b[:i]
	for _, c := range tail {
		if c == '<' || c == '>' || c == '&' {
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			continue
		}
		b = append(b, c)
	}
	return b
}

// appendStateHot appends h as encoding/json writes an element of the
// state's hot array (its first line unindented, the closing brace at
// six spaces).
func appendStateHot(b []byte, h *StateHot) []byte {
	b = append(b, "{\n        \"key\": "...)
	b = appendStr(b, h.Key, 4)
	if h.KeyLen != 0 {
		b = strconv.AppendInt(appendHotField(b, "key_len"), int64(h.KeyLen), 10)
	}
	b = strconv.AppendInt(appendHotField(b, "freq"), int64(h.Freq), 10)
	b = strconv.AppendInt(appendHotField(b, "bytes"), h.Bytes, 10)
	b = appendStr(appendHotField(b, "template"), h.Template, 4)
	if h.Owner != "" {
		b = jsonout.AppendString(appendHotField(b, "owner"), h.Owner)
	}
	b = jsonout.AppendString(appendHotField(b, "kind"), h.Kind)
	if h.Protected {
		b = append(appendHotField(b, "protected"), "true"...)
	}
	if h.Node != "" {
		b = jsonout.AppendString(appendHotField(b, "node"), h.Node)
	}
	if h.DB != 0 {
		b = strconv.AppendInt(appendHotField(b, "db"), int64(h.DB), 10)
	}
	return append(b, "\n      }"...)
}

// appendHotField starts the next field of a hot-key candidate (never the
// first).
func appendHotField(b []byte, name string) []byte { return appendKey(b, fieldIndent2, name, false) }

// FindingAppender returns an append function for jsonout.Array that
// writes a finding.Finding as encoding/json writes an element of an
// array of them in a report's top level (a hotkeys report's findings,
// one per hot key: tens of thousands): the audit report's own encoder,
// with a cache of strings of its own.
func FindingAppender() func([]byte, *finding.Finding) []byte {
	var e findingEncoder
	var rf Finding
	return func(b []byte, f *finding.Finding) []byte {
		rf.Finding = *f
		return e.append(b, &rf)
	}
}
