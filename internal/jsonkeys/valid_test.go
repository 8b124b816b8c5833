package jsonkeys

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func scanKeys(s string) ([]string, bool) {
	var keys []string
	ok := Valid(s, func(k string) { keys = append(keys, k) })
	return keys, ok
}

func TestValid(t *testing.T) {
	tests := []struct {
		in   string
		keys []string // nil: not a JSON object
	}{
		{`{}`, []string{}},
		{` {"a":1} `, []string{"a"}},
		{`{"activityId":7,"discountType":"PCT","discountValue":0.5}`, []string{"activityId", "discountType", "discountValue"}},
		{`{"a":{"b":[1,"]",{"c":null}]},"d":true,"e":false,"f":-0.5e+10}`, []string{"a", "d", "e", "f"}},
		{`{"a\"b":1,"\u0063":2,"\ud83d\ude00":3,"x\\":4}`, []string{`a"b`, "c", "😀", `x\`}},
		{`{"a":1,"a":2}`, []string{"a", "a"}},
		{"{\"名称\":\"值\"}", []string{"名称"}},
		{`{"a":"}"}`, []string{"a"}},
		// Not objects, or not JSON.
		{``, nil},
		{`  `, nil},
		{`[1]`, nil},
		{`"{}"`, nil},
		{`12`, nil},
		{`null`, nil},
		{`{"a":1}x`, nil},
		{`{"a":1}{}`, nil},
		{`{"a":1,}`, nil},
		{`{"a" 1}`, nil},
		{`{a:1}`, nil},
		{`{"a":01}`, nil},
		{`{"a":1.}`, nil},
		{`{"a":.5}`, nil},
		{`{"a":-}`, nil},
		{`{"a":1e}`, nil},
		{`{"a":tru}`, nil},
		{`{"a":"\x"}`, nil},
		{`{"a":"\u12"}`, nil},
		{"{\"a\":\"\x01\"}", nil},
		{`{"a":[1,]}`, nil},
		{`{"a":[1}`, nil},
		{`{"a":1`, nil},
		{`{"a`, nil},
		{`{'a':1}`, nil},
	}
	for _, tt := range tests {
		keys, ok := scanKeys(tt.in)
		if ok != (tt.keys != nil) {
			t.Errorf("%q: object %v, want %v", tt.in, ok, tt.keys != nil)
			continue
		}
		if ok && !slices.Equal(keys, tt.keys) {
			t.Errorf("%q: keys %q, want %q", tt.in, keys, tt.keys)
		}
		if ok != (json.Valid([]byte(tt.in)) && strings.HasPrefix(strings.TrimLeft(tt.in, " \t\r\n"), "{")) {
			t.Errorf("%q: disagrees with encoding/json", tt.in)
		}
	}
}

func TestValidDepth(t *testing.T) {
	nest := func(n int) string {
		return `{"a":` + strings.Repeat("[", n-1) + strings.Repeat("]", n-1) + "}"
	}
	if _, ok := scanKeys(nest(maxDepth)); !ok {
		t.Errorf("%d levels refused", maxDepth)
	}
	if _, ok := scanKeys(nest(maxDepth + 1)); ok {
		t.Errorf("%d levels accepted", maxDepth+1)
	}
	// A deep value is refused quickly and without growing the stack.
	if _, ok := scanKeys(`{"a":` + strings.Repeat("[", 1<<20)); ok {
		t.Error("unterminated deep value accepted")
	}
}

func TestValidAllocs(t *testing.T) {
	s := `{"activityId":7,"discountType":"PCT","discountValue":{"v":[0.5,"x"]}}`
	n := 0
	allocs := testing.AllocsPerRun(100, func() {
		Valid(s, func(string) { n++ })
	})
	if allocs != 0 {
		t.Errorf("%v allocations per scan", allocs)
	}
}

// depth is the deepest nesting of brackets outside strings in s, for the
// fuzz test to tell a too-deep value from an invalid one.
func depth(s string) int {
	d, deepest, in := 0, 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case in && c == '\\':
			i++
		case c == '"':
			in = !in
		case in:
		case c == '{' || c == '[':
			d++
			deepest = max(deepest, d)
		case c == '}' || c == ']':
			d--
		}
	}
	return deepest
}

// FuzzValid holds the scanner to encoding/json: it accepts exactly the
// valid JSON texts whose value is an object (within the depth bound) and
// reports the keys encoding/json decodes, in order; Top reads the same
// keys from a valid object.
func FuzzValid(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1}`, `{"a":{"b":[1,"]"]},"c":"\\"}`, `{"a`, `{`, `[{"a":1}]`,
		`{"\u00e9\ud83d\ude00":[true,false,null,-1.5E-3]}`, " {\"x\" : \"y\" } \n", `{"a":1,"a":2}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		keys, ok := scanKeys(s)
		want := json.Valid([]byte(s)) && strings.HasPrefix(strings.TrimLeft(s, " \t\r\n"), "{")
		if want && !ok && depth(s) > maxDepth {
			return
		}
		if ok != want {
			t.Fatalf("%q: object %v, encoding/json says %v", s, ok, want)
		}
		if ok {
			// Top reads a valid object's keys as Valid does.
			if top := Top(nil, []byte(s), len(keys)+1, nil); !slices.Equal(top, keys) && len(keys)+len(top) > 0 {
				t.Fatalf("%q: Valid's keys %q, Top's %q", s, keys, top)
			}
		}
		if !ok || !utf8.ValidString(s) {
			return // encoding/json rewrites invalid UTF-8 in keys
		}
		dec := json.NewDecoder(bytes.NewReader([]byte(s)))
		var wantKeys []string
		if _, err := dec.Token(); err != nil { // {
			t.Fatal(err)
		}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				t.Fatal(err)
			}
			wantKeys = append(wantKeys, k.(string))
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				t.Fatal(err)
			}
		}
		if !slices.Equal(keys, wantKeys) {
			t.Fatalf("%q: keys %q, encoding/json %q", s, keys, wantKeys)
		}
	})
}

// BenchmarkValid: the scan of a 4 KiB JSON value, beside
// encoding/json.Valid (which validates the same bytes) and a decode into a
// map of raw values (what reading the keys with encoding/json costs).
func BenchmarkValid(b *testing.B) {
	s := `{"threshold":100,"discount":{"tiers":[` + strings.Repeat(`{"min":100,"pct":5,"note":"tier"},`, 120) + `{"min":0}]}}`
	raw := []byte(s)
	b.Run("scan", func(b *testing.B) {
		b.SetBytes(int64(len(s)))
		b.ReportAllocs()
		n := 0
		for b.Loop() {
			Valid(s, func(string) { n++ })
		}
	})
	b.Run("json.Valid", func(b *testing.B) {
		b.SetBytes(int64(len(s)))
		b.ReportAllocs()
		for b.Loop() {
			json.Valid(raw)
		}
	})
	b.Run("json.Unmarshal", func(b *testing.B) {
		b.SetBytes(int64(len(s)))
		b.ReportAllocs()
		for b.Loop() {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(raw, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
}
