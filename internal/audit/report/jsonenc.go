package report

import (
	"encoding/base64"
	"strconv"
	"unicode/utf8"

	"github.com/keyguard/keyguard/internal/swar"
)

// The findings are most of a big report's bytes, and encoding/json spends
// most of its time on them re-indenting what it has just written. These
// append the same bytes directly. TestAppendFindingAsEncoded and
// FuzzAppendFindingAsEncoded hold them to encoding/json's output with the
// settings of WriteJSON (two-space indent, no HTML escaping).

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string the way encoding/json
// writes it with HTML escaping off: quotes, backslashes and control bytes
// escaped, invalid UTF-8 as \ufffd, U+2028 and U+2029 escaped.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		// Eight plain bytes at a time: printable ASCII but '"' and '\\'.
		for i+8 <= len(s) && plain8(s, i) {
			i += 8
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

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
type findingEncoder struct {
	last [4]string
	enc  [4][]byte
}

func (e *findingEncoder) append(b []byte, f *Finding) []byte {
	b = append(b, "{\n      \"rule\": "...)
	b = appendJSONString(b, f.Rule)
	b = appendField(b, "severity")
	b = appendJSONString(b, f.Severity.String())
	b = appendStringField(b, "key", f.Key)
	b = e.field(b, 0, "template", f.Template)
	b = e.field(b, 1, "owner", f.Owner)
	b = e.str(appendField(b, "message"), 2, f.Message)
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
	return e.str(appendField(b, name), i, v)
}

// str is appendJSONString through the cache slot i.
func (e *findingEncoder) str(b []byte, i int, s string) []byte {
	if s == e.last[i] && e.enc[i] != nil {
		return append(b, e.enc[i]...)
	}
	start := len(b)
	b = appendJSONString(b, s)
	e.last[i], e.enc[i] = s, append(e.enc[i][:0], b[start:]...)
	return b
}

// appendStringField appends a string field unless v is empty (omitempty).
func appendStringField(b []byte, name, v string) []byte {
	if v == "" {
		return b
	}
	return appendJSONString(appendField(b, name), v)
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

// plain8 reports whether s[i:i+8] are all printable ASCII other than '"'
// and '\\': bytes appendJSONString copies as they are.
func plain8(s string, i int) bool {
	x := swar.Load(s, i)
	return swar.Less(x, 0x20)|swar.Eq(x, '"')|swar.Eq(x, '\\')|swar.High(x) == 0
}

// appendTopKey appends k as encoding/json writes an element of the
// report's top_keys array; e caches the template and node, which runs of
// top keys share.
func (e *findingEncoder) appendTopKey(b []byte, k *TopKey) []byte {
	b = append(b, "{\n      \"key\": "...)
	b = appendJSONString(b, k.Key)
	b = appendStringField(b, "key_base64", k.KeyBase64)
	b = appendIntField(b, "key_len", k.KeyLen)
	b = appendJSONString(appendField(b, "type"), k.Type)
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
	b = appendJSONString(b, s)
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
		b = appendJSONString(appendHotField(b, "owner"), h.Owner)
	}
	b = appendJSONString(appendHotField(b, "kind"), h.Kind)
	if h.Protected {
		b = append(appendHotField(b, "protected"), "true"...)
	}
	if h.Node != "" {
		b = appendJSONString(appendHotField(b, "node"), h.Node)
	}
	if h.DB != 0 {
		b = strconv.AppendInt(appendHotField(b, "db"), int64(h.DB), 10)
	}
	return append(b, "\n      }"...)
}

// appendHotField starts the next field of a hot-key candidate (never the
// first).
func appendHotField(b []byte, name string) []byte { return appendKey(b, fieldIndent2, name, false) }
