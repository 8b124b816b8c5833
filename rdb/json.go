package rdb

import "encoding/json"

// jsonTopKeys appends up to max top-level keys of the JSON object in s to
// dst. s may be a prefix of the value: scanning stops quietly at the end of
// s or at the first byte that is not JSON, keeping the keys seen so far.
// intern, when not nil, turns repeated key names into one string.
func jsonTopKeys(dst []string, s []byte, max int, intern func([]byte) string) []string {
	i := skipWS(s, 0)
	if i >= len(s) || s[i] != '{' {
		return dst
	}
	i++
	for n := 0; n < max; n++ {
		i = skipWS(s, i)
		if i >= len(s) || s[i] != '"' {
			return dst
		}
		end := skipJSONString(s, i)
		if end < 0 {
			return dst
		}
		key, ok := jsonKey(s[i:end], intern)
		if !ok {
			return dst
		}
		i = skipWS(s, end)
		if i >= len(s) || s[i] != ':' {
			return dst
		}
		i = skipJSONValue(s, i+1)
		if i < 0 {
			return dst
		}
		dst = append(dst, key)
		if s[i] == '}' {
			return dst
		}
		i++ // ','
	}
	return dst
}

func skipWS(s []byte, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// skipJSONString returns the index after the closing quote of the string
// starting at s[i] == '"', or -1.
func skipJSONString(s []byte, i int) int {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

func jsonKey(quoted []byte, intern func([]byte) string) (string, bool) {
	raw := quoted[1 : len(quoted)-1]
	plain := true
	for _, c := range raw {
		if c == '\\' || c < 0x20 {
			plain = false
			break
		}
	}
	if plain {
		if intern != nil {
			return intern(raw), true
		}
		return string(raw), true
	}
	var k string
	if err := json.Unmarshal(quoted, &k); err != nil {
		return "", false
	}
	return k, true
}

// skipJSONValue skips one value starting at or after s[i] and returns the
// index of the ',' or '}' that ends it at the top level, or -1.
func skipJSONValue(s []byte, i int) int {
	depth := 0
	for i < len(s) {
		switch s[i] {
		case '"':
			i = skipJSONString(s, i)
			if i < 0 {
				return -1
			}
			continue
		case '{', '[':
			depth++
		case ']':
			depth--
			if depth < 0 {
				return -1
			}
		case '}':
			if depth == 0 {
				return i
			}
			depth--
		case ',':
			if depth == 0 {
				return i
			}
		}
		i++
	}
	return -1
}
