package jsonout

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func TestWrite(t *testing.T) {
	var b strings.Builder
	v := map[string]any{"key": "<a&b>", "n": []int{1, 2}}
	if err := Write(&b, v); err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"key\": \"<a&b>\",\n  \"n\": [\n    1,\n    2\n  ]\n}\n"
	if b.String() != want {
		t.Fatalf("got %q, want %q", b.String(), want)
	}
	var back map[string]any
	if err := json.Unmarshal([]byte(b.String()), &back); err != nil || back["key"] != "<a&b>" {
		t.Fatalf("round trip: %v %v", back, err)
	}
}

// TestObjectAsWrite: an Object writes the bytes Write gives the struct of
// its fields, a field's value at any depth, an array null, empty or long.
func TestObjectAsWrite(t *testing.T) {
	type inner struct {
		A []int           `json:"a"`
		M map[string]bool `json:"m"`
	}
	type elem struct {
		K string  `json:"k"`
		F float64 `json:"f"`
	}
	type doc struct {
		S     string `json:"s"`
		In    inner  `json:"in"`
		Nil   []elem `json:"nil"`
		Empty []elem `json:"empty"`
		Long  []elem `json:"long"`
	}
	d := doc{S: "<&>\xff", In: inner{A: []int{1, 2}, M: map[string]bool{"x": true}}, Empty: []elem{}}
	for i := range 2000 { // past the 16 KiB an Array writes at a time
		d.Long = append(d.Long, elem{K: strings.Repeat("k", i%40), F: float64(i) / 3})
	}
	var want, got strings.Builder
	if err := Write(&want, d); err != nil {
		t.Fatal(err)
	}
	o := NewObject(&got)
	o.Field("s", d.S)
	o.Key("in")
	o.WriteString("{\n    \"a\": ")
	o.Value(2, d.In.A)
	o.WriteString(",\n    \"m\": ")
	o.Value(2, d.In.M)
	o.WriteString("\n  }")
	appendElem := func(b []byte, e *elem) []byte {
		b = AppendString(append(b, "{\n      \"k\": "...), e.K)
		return append(AppendFloat(append(b, ",\n      \"f\": "...), e.F), "\n    }"...)
	}
	Array(o, "nil", d.Nil, appendElem)
	Array(o, "empty", d.Empty, Reflect[elem](2))
	Array(o, "long", d.Long, appendElem)
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Fatalf("Object wrote\n%s\nWrite\n%s", got.String(), want.String())
	}
}

// FuzzAppendAsEncoded holds AppendString and AppendFloat to
// encoding/json's bytes.
func FuzzAppendAsEncoded(f *testing.F) {
	f.Add("promo:sku:1001", 1.5)
	f.Add("\xff\x00\"\\<>&\u2028\u2029\t", 1e-7)
	f.Add("ünïcode", 1e21)
	f.Add("", -2.5e-9)
	f.Fuzz(func(t *testing.T, s string, x float64) {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		if got, want := string(AppendString(nil, s)), strings.TrimSuffix(b.String(), "\n"); got != want {
			t.Fatalf("AppendString(%q) = %s, encoding/json %s", s, got, want)
		}
		if math.IsNaN(x) || math.IsInf(x, 0) {
			if got := string(AppendFloat(nil, x)); got != "null" {
				t.Fatalf("AppendFloat(%v) = %s, want null", x, got)
			}
			return
		}
		want, err := json.Marshal(x)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(AppendFloat(nil, x)); got != string(want) {
			t.Fatalf("AppendFloat(%v) = %s, encoding/json %s", x, got, want)
		}
	})
}
