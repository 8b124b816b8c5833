package investigate

import (
	"strconv"
	"unicode/utf8"
)

// maxFields bounds the field names kept from one value (hash fields or
// top-level JSON keys); a value with more is an open map, not a style.
const maxFields = 64

// String value kinds, as reported for a key or a write.
const (
	KindJSON      = "json"       // a JSON object: Fields are its top-level keys
	KindJSONArray = "json-array" // a JSON array
	KindInteger   = "integer"
	KindText      = "text"   // printable UTF-8 that is not JSON
	KindBinary    = "binary" // anything else
	KindEmpty     = "empty"
)

// stringShape tells what a string value looks like from its first bytes
// (it may be cut): a JSON object gives its top-level keys, at most
// maxFields; other values give a kind only.
func stringShape(b []byte) (kind string, fields []string) {
	i := skipSpace(b, 0)
	if i == len(b) {
		if len(b) == 0 {
			return KindEmpty, nil
		}
		return KindText, nil
	}
	switch b[i] {
	case '{':
		if keys, ok := jsonObjectKeys(b, i); ok {
			return KindJSON, keys
		}
	case '[':
		return KindJSONArray, nil
	}
	if _, err := strconv.ParseInt(string(b), 10, 64); err == nil {
		return KindInteger, nil
	}
	if utf8.Valid(b) {
		for _, r := range string(b) {
			if r < 0x20 && r != '\t' && r != '\n' && r != '\r' {
				return KindBinary, nil
			}
		}
		return KindText, nil
	}
	return KindBinary, nil
}

// jsonObjectKeys reads the keys of the object that starts at b[i] ('{').
// The value may be cut anywhere: the keys read before the cut count, and
// ok is true once the object has started well (a '{' then a key or '}').
// A key whose value is cut still counts: its name is whole.
func jsonObjectKeys(b []byte, i int) (keys []string, ok bool) {
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return []string{}, true
	}
	for len(keys) < maxFields {
		if i >= len(b) || b[i] != '"' {
			return keys, len(keys) > 0
		}
		end, fine := skipString(b, i)
		if !fine {
			return keys, len(keys) > 0
		}
		k := b[i:end]
		j := skipSpace(b, end)
		if j >= len(b) || b[j] != ':' {
			return keys, len(keys) > 0
		}
		keys = append(keys, unquoteJSON(k))
		i, fine = skipValue(b, skipSpace(b, j+1))
		if !fine {
			return keys, true
		}
		i = skipSpace(b, i)
		if i >= len(b) || b[i] != ',' {
			return keys, true
		}
		i = skipSpace(b, i+1)
	}
	return keys, true
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string that starts at b[i] ('"').
func skipString(b []byte, i int) (int, bool) {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1, true
		}
	}
	return len(b), false
}

// skipValue returns the index after the JSON value at b[i]; false when the
// value is cut or is not JSON.
func skipValue(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, true
				}
			case '"':
				end, ok := skipString(b, i)
				if !ok {
					return end, false
				}
				i = end
				continue
			}
			i++
		}
		return i, false
	}
	start := i
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i, i > start
		}
		i++
	}
	return i, false // a number or literal at the very end may be cut
}

// unquoteJSON turns a quoted JSON string into its text; escapes Go does
// not read (such as \/) leave the raw text between the quotes.
func unquoteJSON(q []byte) string {
	for _, c := range q[1 : len(q)-1] {
		if c == '\\' {
			if s, err := strconv.Unquote(string(q)); err == nil {
				return s
			}
			break
		}
	}
	return string(q[1 : len(q)-1])
}
