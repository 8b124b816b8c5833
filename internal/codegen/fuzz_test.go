package codegen

import (
	"strconv"
	"testing"

	"github.com/keyguard/keyguard/keybuild"
)

// FuzzBuildClassify: whatever the values, a key the builder accepts is
// classified by the registry's matcher to the template it was built from,
// with the values it was built from.
func FuzzBuildClassify(f *testing.F) {
	reg := testRegistry(f)
	if len(reg.Overlaps()) > 0 {
		f.Fatal("testdata/keyguard.yaml must have no overlapping templates")
	}
	specs := Specs(reg)
	f.Add(uint8(0), "1001", "sku-9", "x", int64(7), false)
	f.Add(uint8(1), "-1", "a b", "", int64(-1), true)
	f.Add(uint8(5), "110101", "20240229", "", int64(0), false)
	f.Add(uint8(7), "13800138000", "LOGIN", "", int64(0), false)
	f.Add(uint8(10), "news", "1x", "", int64(0), false)
	f.Add(uint8(2), "{x}", "a:b", "\n", int64(1<<62), true)
	f.Fuzz(func(t *testing.T, idx uint8, a, b, c string, n int64, ints bool) {
		spec := &specs[int(idx)%len(specs)]
		texts := []string{a, b, c}
		var args []keybuild.Arg
		var want []string
		for _, p := range spec.Parts {
			if p.Name == "" {
				continue
			}
			i := len(args)
			if ints && (p.Kind == keybuild.KindInt || p.Kind == keybuild.KindAny) {
				args = append(args, keybuild.Int(n+int64(i)))
				want = append(want, strconv.FormatInt(n+int64(i), 10))
				continue
			}
			v := texts[i%len(texts)]
			args = append(args, keybuild.String(v))
			if p.Kind == keybuild.KindHash {
				v = keybuild.HashValue(v)
			}
			want = append(want, v)
		}
		k, err := keybuild.Build(spec, args...)
		if err != nil {
			return
		}
		e, caps := reg.Classify(k.String())
		if e == nil || e.Template.String() != spec.Template {
			t.Fatalf("key %q built from %q is classified as %v", k, spec.Template, e)
		}
		if len(caps) != len(want) {
			t.Fatalf("key %q: captures %v, want %q", k, caps, want)
		}
		for i := range caps {
			if caps[i].Value != want[i] {
				t.Fatalf("key %q: captures %v, want %q", k, caps, want)
			}
		}
	})
}
