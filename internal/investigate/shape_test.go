package investigate

import (
	"slices"
	"testing"
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
		{`{"a\/b":1}`, KindJSON, []string{"a/b"}},
		{`{"a\q":1}`, KindText, nil}, // not a JSON name
		{" \n{ } ", KindJSON, nil},
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

// BenchmarkStringShape: the kind and keys of a small JSON value, as the
// capture reads every written value.
func BenchmarkStringShape(b *testing.B) {
	v := []byte(`{"activityId":12345,"discountType":1,"discountValue":50,"rule":{"min":100,"tiers":[1,2,3]},"note":"spring"}`)
	b.SetBytes(int64(len(v)))
	b.ReportAllocs()
	for b.Loop() {
		stringShape(v)
	}
}
