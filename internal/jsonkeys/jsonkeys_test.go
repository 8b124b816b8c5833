package jsonkeys

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// refTopKeys is Top as first written, byte by byte: the reference
// for the faster scanners.
func refTopKeys(s []byte, max int) []string {
	ws := func(i int) int {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
			i++
		}
		return i
	}
	str := func(i int) int {
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
	value := func(i int) int {
		depth := 0
		for i < len(s) {
			switch s[i] {
			case '"':
				if i = str(i); i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			case ']':
				if depth--; depth < 0 {
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
	var out []string
	i := ws(0)
	if i >= len(s) || s[i] != '{' {
		return out
	}
	i++
	for n := 0; n < max; n++ {
		if i = ws(i); i >= len(s) || s[i] != '"' {
			return out
		}
		end := str(i)
		if end < 0 {
			return out
		}
		key := string(s[i+1 : end-1]) // a plain name is its bytes, valid UTF-8 or not
		if strings.ContainsAny(key, "\\\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f") {
			if err := json.Unmarshal(s[i:end], &key); err != nil {
				return out
			}
		}
		if i = ws(end); i >= len(s) || s[i] != ':' {
			return out
		}
		out = append(out, key) // known now, even if s cuts its value
		if i = value(i + 1); i < 0 {
			return out
		}
		if s[i] == '}' {
			return out
		}
		i++
	}
	return out
}

// TestJSONScanners compares Top (SWAR string scans, the interner's
// guess of the next key, the inlined value skip) with refTopKeys on
// JSON-like inputs and every prefix of them, reusing one interner so its
// guesses are sometimes right and sometimes wrong.
func TestJSONScanners(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	atoms := []string{`"a"`, `"productNo"`, `"p12345678901"`, `"x\"y"`, `"\\"`, `"\\\""`, `"tab\there"`, "\"ctl\x01\"",
		`"é"`, `"\u00e9"`, `12`, `-3.5e7`, `true`, `null`, `[1,"]",{"k":[]}]`, `{"in":"}"}`, `[]`, `{}`,
		`"` + strings.Repeat("long", 20) + `"`, `"a\\`, `]`, `}`, ` `, "\n", `,`, `:`, `"`}
	keys := []string{`"a"`, `"ab"`, `"abc"`, `"productNo"`, `"x\"y"`, `"ab\\"`, "\"a\x01\""}
	var in Interner
	for range 20000 {
		var b strings.Builder
		b.WriteString([]string{"{", " {", "[", "{\n"}[rng.IntN(4)])
		for k := range rng.IntN(6) {
			if k > 0 {
				b.WriteString([]string{",", ", ", ",\n  "}[rng.IntN(3)])
			}
			b.WriteString(keys[rng.IntN(len(keys))])
			b.WriteString([]string{":", " : "}[rng.IntN(2)])
			for range 1 + rng.IntN(2) {
				b.WriteString(atoms[rng.IntN(len(atoms))])
			}
		}
		b.WriteString([]string{"}", "", " }", "]"}[rng.IntN(4)])
		s := []byte(b.String())
		for _, cut := range []int{len(s), rng.IntN(len(s) + 1)} {
			want := strings.Join(refTopKeys(s[:cut], 4), "|")
			if got := strings.Join(Top(nil, s[:cut], 4, &in), "|"); got != want {
				t.Fatalf("%q: %q, reference %q", s[:cut], got, want)
			}
			if got := strings.Join(Top(nil, s[:cut], 4, nil), "|"); got != want {
				t.Fatalf("%q without interner: %q, reference %q", s[:cut], got, want)
			}
		}
	}
}

// FuzzTop holds Top to its reference, and to encoding/json on whole
// objects.
func FuzzTop(f *testing.F) {
	for _, s := range []string{`{"a":1,"b":"x"}`, `{"x\"y":[1,{"k":"}"}],"z":null}`, " {\n\"a\" : {\"b\":1} }", `{"a":`, `[1]`, `{"é":"\u00e9"}`} {
		f.Add([]byte(s))
	}
	var in Interner
	f.Fuzz(func(t *testing.T, s []byte) {
		want := strings.Join(refTopKeys(s, 8), "|")
		if got := strings.Join(Top(nil, s, 8, &in), "|"); got != want {
			t.Fatalf("%q: %q, reference %q", s, got, want)
		}
		var m map[string]json.RawMessage
		if utf8.Valid(s) && json.Unmarshal(s, &m) == nil && len(m) <= 8 {
			for _, k := range Top(nil, s, 8, nil) {
				if _, ok := m[k]; !ok {
					t.Fatalf("%q: key %q is not one of the object's", s, k)
				}
			}
		}
	})
}

func TestTopCases(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{`{"a":1,"b":"x","c":{"d":[1,2,{"e":"}"}]},"f":null}`, []string{"a", "b", "c", "f"}},
		{` {"activityId":"A1", "discountValue" : 10}`, []string{"activityId", "discountValue"}},
		{`{"a":1,"b":"cut here`, []string{"a", "b"}}, // the head of a value: the cut key counts
		{`{"a":1,"b`, []string{"a"}},
		{`{"esc\"aped":1,"uni\u00e9":2,"sl\/ash":3}`, []string{`esc"aped`, "unié", "sl/ash"}},
		{` { "a" : {"x":[1,2,{"y":"}"}]}, "b\u0041" : "q\"", "c": null } `, []string{"a", "bA", "c"}},
		{`{"couponAmount":10,"promoTotal":3`, []string{"couponAmount", "promoTotal"}}, // a number the head may cut
		{`{"a\q":1,"b":2}`, nil}, // not a JSON name: the scan stops
		{`{}`, nil},
		{`[1,2]`, nil},
		{`plain text`, nil},
		{``, nil},
		{`{"a" 1}`, nil},
	}
	for _, tt := range tests {
		if got := Top(nil, []byte(tt.in), 32, nil); !slices.Equal(got, tt.want) {
			t.Errorf("Top(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestTopMax: Top stops at max keys.
func TestTopMax(t *testing.T) {
	for _, c := range []struct {
		in   string
		max  int
		want string
	}{
		{`{"a":1,"b":{"c":[1,2,{"d":3}]},"e":"x,}y","f\"g":null}`, 10, `a|b|e|f"g`},
		{`  {"a":1,"b":2}`, 1, `a`},
		{`{"a":1,"b":`, 10, `a|b`}, // a prefix: keys until the cut, the cut one too
		{`[1,2]`, 10, ``},
		{`{}`, 10, ``},
		{`not json`, 10, ``},
	} {
		got := strings.Join(Top(nil, []byte(c.in), c.max, nil), "|")
		if got != c.want {
			t.Errorf("Top(%s) = %q, want %q", c.in, got, c.want)
		}
	}
}

// FuzzTopObjects: an object encoding/json writes gives back all its keys,
// and the object cut anywhere gives a prefix of them, in order.
func FuzzTopObjects(f *testing.F) {
	f.Add("k1", "k\"2", 7)
	f.Add("", "x", 0)
	f.Add("\u00e9", "\\", 3)
	f.Add("}", "{\"a\":", 12)
	f.Fuzz(func(t *testing.T, k1, k2 string, cut int) {
		if k1 == k2 || !utf8.ValidString(k1) || !utf8.ValidString(k2) {
			return // json.Marshal would write two invalid keys as one "\ufffd"
		}
		b, err := json.Marshal(map[string]any{k1: []any{1, map[string]any{"}": "{"}}, k2: "x\"y"})
		if err != nil {
			return
		}
		keys := Top(nil, b, 8, nil)
		got := slices.Sorted(slices.Values(keys))
		want := slices.Sorted(slices.Values([]string{k1, k2}))
		if !slices.Equal(got, want) {
			t.Fatalf("%s: keys %q, want %q", b, keys, want)
		}
		if cut < 0 || cut > len(b) {
			return
		}
		part := Top(nil, b[:cut], 8, nil)
		if len(part) > len(keys) || !slices.Equal(part, keys[:len(part)]) {
			t.Fatalf("%s cut at %d: keys %q are not a prefix of %q", b, cut, part, keys)
		}
	})
}

// BenchmarkTop: the keys of a small JSON value, the shape the audits and
// investigate read, with and without the interner.
func BenchmarkTop(b *testing.B) {
	v := []byte(`{"activityId":12345,"discountType":1,"discountValue":50,"rule":{"min":100,"tiers":[1,2,3]},"note":"spring"}`)
	for _, tt := range []struct {
		name string
		in   *Interner
	}{{"interned", &Interner{}}, {"plain", nil}} {
		b.Run(tt.name, func(b *testing.B) {
			b.SetBytes(int64(len(v)))
			b.ReportAllocs()
			var dst []string
			for b.Loop() {
				dst = Top(dst[:0], v, 64, tt.in)
			}
		})
	}
}
