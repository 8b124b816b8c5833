package investigate

import (
	"encoding/json"
	"slices"
	"sort"
	"testing"
	"unicode/utf8"
)

func TestStringShape(t *testing.T) {
	for _, tt := range []struct {
		v      string
		kind   string
		fields []string
	}{
		{`{"activityId":12345,"discountType":1,"discountValue":50}`, KindJSON, []string{"activityId", "discountType", "discountValue"}},
		{` { "a" : {"x":[1,2,{"y":"}"}]}, "b\u0041" : "q\"", "c": null } `, KindJSON, []string{"a", "bA", "c"}},
		{`{"couponAmount":10,"promoTotal":3`, KindJSON, []string{"couponAmount", "promoTotal"}}, // cut
		{`{"a":"cut here`, KindJSON, []string{"a"}},
		{`{}`, KindJSON, []string{}},
		{`{"a\/b":1}`, KindJSON, []string{`a\/b`}},
		{`{abc`, KindText, nil},
		{`[1,2]`, KindJSONArray, nil},
		{`12345`, KindInteger, nil},
		{`hello world`, KindText, nil},
		{"\x00\x01\xff", KindBinary, nil},
		{"", KindEmpty, nil},
		{"   ", KindText, nil},
	} {
		kind, fields := stringShape([]byte(tt.v))
		if kind != tt.kind || !slices.Equal(fields, tt.fields) {
			t.Errorf("stringShape(%q) = %s %q, want %s %q", tt.v, kind, fields, tt.kind, tt.fields)
		}
	}
}

// FuzzJSONKeys: any bytes are read without panicking; an object encoded by
// encoding/json gives back its keys; a cut object gives a prefix of them.
func FuzzJSONKeys(f *testing.F) {
	f.Add([]byte(`{"a":1,"b":[{"c":"}"}],"d":"\"x"}`), "k1", "k\"2", 7)
	f.Add([]byte(`{"a`), "", "x", 0)
	f.Add([]byte(`[{"a":1}]`), "\u00e9", "\\", 3)
	f.Fuzz(func(t *testing.T, raw []byte, k1, k2 string, cut int) {
		stringShape(raw)
		if k1 == k2 || !utf8.ValidString(k1) || !utf8.ValidString(k2) {
			return // json.Marshal would write two invalid keys as one "\ufffd"
		}
		obj := map[string]any{k1: []any{1, map[string]any{"}": "{"}}, k2: "x\"y"}
		b, err := json.Marshal(obj)
		if err != nil {
			return
		}
		kind, keys := stringShape(b)
		want := []string{k1, k2}
		sort.Strings(want)
		got := slices.Clone(keys)
		sort.Strings(got)
		if kind != KindJSON || !slices.Equal(got, want) {
			t.Fatalf("%s: got %s %q, want %q", b, kind, keys, want)
		}
		if cut < 0 || cut > len(b) {
			return
		}
		_, part := stringShape(b[:cut])
		for i, k := range part {
			if i >= len(keys) || keys[i] != k {
				t.Fatalf("%s cut at %d: keys %q are not a prefix of %q", b, cut, part, keys)
			}
		}
	})
}
