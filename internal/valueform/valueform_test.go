package valueform

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"strconv"
	"testing"
)

func TestOf(t *testing.T) {
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write([]byte(`{"a":1}`))
	w.Close()
	cases := []struct {
		in   string
		want Form
	}{
		{`{"id":1,"name":"p"}`, Object},
		{"  \n{", Object},
		{"", Empty},
		{" \r\n\t", Empty},
		{"null", Null},
		{"null\n", Null},
		{"nullable", Text},
		{"0", Number},
		{"-12.5e3", Number},
		{"1700000000000", Number},
		{"12 ", Number},
		{"12ab", Text},
		{"-", Text},
		{"true", Bool},
		{"false", Bool},
		{"trueish", Text},
		{`[1,2]`, Array},
		{`"quoted"`, String},
		{"legacy-plain-7", Text},
		{"折扣 50", Text},
		{"caf\xc3", Text}, // a character the head cuts
		{"\xac\xed\x00\x05sr\x00", Java},
		{gz.String(), Gzip},
		{"\x80\x04\x95\x10", Pickle},
		{"\x80\x01", Binary},
		{"\x08\x96\x01", Binary}, // protobuf
		{"\x83\xa2id", Binary},   // MessagePack map
		{"ab\x00cd", Binary},
		{"\xff\xfe", Binary},
	}
	for _, c := range cases {
		if got := Of([]byte(c.in)); got != c.want {
			t.Errorf("Of(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

// What encoding/json parses as a whole value has the form of its kind;
// only objects are not Foreign.
func TestOfAgreesWithJSON(t *testing.T) {
	for _, v := range []any{map[string]int{"a": 1}, []int{1}, "s", 12.5, -3, true, false, nil, map[string]any{}} {
		b, _ := json.Marshal(v)
		f := Of(b)
		_, isObj := v.(map[string]int)
		if _, ok := v.(map[string]any); ok {
			isObj = true
		}
		if f.Foreign() == (isObj || v == nil) {
			t.Errorf("Of(%s) = %v: Foreign %v", b, f, f.Foreign())
		}
	}
	for i := range 1000 {
		if Of([]byte(strconv.Itoa(i*7919-3000))) != Number {
			t.Fatalf("%d is not a number", i*7919-3000)
		}
	}
}

func TestForeign(t *testing.T) {
	for f := range Binary + 1 {
		want := f != Unknown && f != Object && f != Empty && f != Null
		if f.Foreign() != want {
			t.Errorf("%v.Foreign() = %v", f, f.Foreign())
		}
		if f.String() == "unknown" && f != Unknown {
			t.Errorf("form %d has no name", f)
		}
	}
}

func FuzzOf(f *testing.F) {
	f.Add([]byte(`{"a":1}`))
	f.Add([]byte("\xac\xed"))
	f.Add([]byte("12 x"))
	f.Fuzz(func(t *testing.T, b []byte) {
		got := Of(b)
		if got == Unknown {
			t.Fatalf("Of(%q) = Unknown", b)
		}
		// A head of headBytes past the white space is as good as the
		// whole value: the live audit reads 4 KiB, an RDB file's
		// compressed strings give 16 bytes, short ones all of them.
		ws := len(b) - len(bytes.TrimLeft(b, " \t\r\n"))
		if cut := b[:min(len(b), ws+headBytes)]; Of(cut) != got {
			t.Fatalf("Of(%q) = %v but its head %q gives %v", b, got, cut, Of(cut))
		}
		// A longer head never turns an object into something else, nor
		// something else into an object.
		if got2 := Of(append(bytes.Clone(b), " x"...)); (got == Object) != (got2 == Object) {
			t.Fatalf("Of(%q) = %v but Of(… x) = %v", b, got, got2)
		}
	})
}
