package naming

import (
	"strings"
	"testing"
	"unsafe"
)

// InferValues hands over the e-mail addresses and the numbers that stand
// alone, with the placeholder's position in the inferred template; dates,
// time stamps, hex and digits inside words are not personal data.
func TestInferValues(t *testing.T) {
	for _, c := range []struct {
		key, tmpl string
		values    []string // "slot=value"
	}{
		{"user:13812345678:base", "user:{phone:hash}:base", []string{"0=13812345678"}},
		{"order:12800000001", "order:{id:int}", []string{"0=12800000001"}},
		{"a:7:b:12345678901234", "a:{id:int}:b:{id2:int}", []string{"1=12345678901234"}},
		{"login:u13812345678", "login:u{phone:hash}", []string{"0=13812345678"}},
		{"login:ab13812345678", "login:ab{phone:hash}", nil}, // "ab" may be a hex token's head
		{"tel:+8613712345678", "tel:{phone:hash}", []string{"0=+8613712345678"}},
		{"kyc:11010519491231002X", "kyc:{idcard:hash}", []string{"0=11010519491231002X"}},
		{"s:x:li.lei@example.com", "s:x:{email:hash}", []string{"0=li.lei@example.com"}},
		{"r:20240321150322:13812345678", "r:{date:date}{time:int}:{phone:hash}", []string{"2=13812345678"}},
		{"t:3f9a0c1b2d4e5f60", "t:{hex:hex}", nil},
		{"n:1234567", "n:{id:int}", nil},
		{"sha256:x", "sha256:x", nil},
	} {
		var got []string
		out := InferValues(nil, c.key, ':', func(slot int, v string) {
			got = append(got, string(rune('0'+slot))+"="+v)
		})
		if string(out) != c.tmpl || strings.Join(got, ",") != strings.Join(c.values, ",") {
			t.Errorf("InferValues(%q) = %q %q, want %q %q", c.key, out, got, c.tmpl, c.values)
		}
	}
}

// FuzzInferValues: InferValues infers what Infer does, and every value it
// hands over is a slice of the key, at a placeholder of the template.
func FuzzInferValues(f *testing.F) {
	for _, s := range []string{"user:13812345678:base", "tel:+8613712345678", "a@b.cn:x", "kyc:11010519491231002x", "zadd17:12345678901"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		out := InferValues(nil, key, ':', func(slot int, v string) {
			p, q := uintptr(unsafe.Pointer(unsafe.StringData(key))), uintptr(unsafe.Pointer(unsafe.StringData(v)))
			if len(v) == 0 || q < p || q+uintptr(len(v)) > p+uintptr(len(key)) {
				t.Fatalf("value %q is not a slice of %q", v, key)
			}
			if slot < 0 {
				t.Fatalf("slot %d", slot)
			}
		})
		if want := Infer(key, ':'); string(out) != want {
			t.Fatalf("InferValues(%q) = %q, Infer %q", key, out, want)
		}
	})
}
