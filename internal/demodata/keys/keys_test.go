package keys_test

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/keyguard/keyguard/internal/demodata"
	"github.com/keyguard/keyguard/internal/demodata/keys"
	"github.com/keyguard/keyguard/keybuild"
	"github.com/keyguard/keyguard/registry"
)

// TestTemplatesClassify builds a key of every template of the generated
// table and checks the registry classifies it back to that template with
// the same values, and that the table agrees with the registry's policy.
func TestTemplatesClassify(t *testing.T) {
	reg, err := registry.Parse(demodata.File, demodata.Registry)
	if err != nil {
		t.Fatal(err)
	}
	specs := keys.Templates()
	if len(specs) != len(reg.Entries) {
		t.Fatalf("%d templates generated, registry has %d", len(specs), len(reg.Entries))
	}
	for i := range specs {
		s := &specs[i]
		re := reg.Entries[i]
		if s.Template != re.Template.String() || s.TTL != re.TTL || s.Owner != re.Owner || s.Type != re.Type || s.Persistent != re.Persistent {
			t.Errorf("%s: table %+v disagrees with the registry", s.Name, s)
		}
		var args []keybuild.Arg
		var want []string
		for _, p := range s.Parts {
			if p.Name == "" {
				continue
			}
			v := map[keybuild.Kind]string{keybuild.KindInt: "1001", keybuild.KindHash: "13800138000", keybuild.KindAny: "abc", keybuild.KindHex: "1b55c291c00ddd33"}[p.Kind]
			if p.Kind == keybuild.KindEnum {
				v = p.Enum[0]
			}
			args = append(args, keybuild.String(v))
			if p.Kind == keybuild.KindHash {
				v = keybuild.HashValue(v)
			}
			want = append(want, v)
		}
		k, err := keybuild.Build(s, args...)
		if err != nil {
			t.Errorf("%s: %v", s.Name, err)
			continue
		}
		e, caps := reg.Classify(k.String())
		if e != re {
			t.Errorf("%s: key %q classified as %v", s.Name, k, e)
			continue
		}
		for j := range caps {
			if caps[j].Value != want[j] {
				t.Errorf("%s: key %q captures %v, want %q", s.Name, k, caps, want)
			}
		}
	}
}

func TestTypedBuilders(t *testing.T) {
	if k := keys.OrderBase(1001); k.String() != "order:order:1001:base" || k.Owner() != "order-team" || k.Type() != "hash" {
		t.Errorf("OrderBase(1001) = %q owned by %s", k, k.Owner())
	}
	k, err := keys.VerifySMS("13800138000", keys.VerifySMSSceneLogin)
	if err != nil || k.String() != "verify:sms:a6942f9771d67f34:LOGIN" {
		t.Errorf("VerifySMS = %q, %v", k, err)
	}
	if _, err := keys.ProductDetail("a:b"); err == nil {
		t.Error("ProductDetail accepted a separator")
	}
	if k := keys.OrderNoSeq(); !k.Persistent() || k.TTL() != 0 {
		t.Errorf("OrderNoSeq: persistent %v, TTL %v", k.Persistent(), k.TTL())
	}
}

func ExampleOrderBase() {
	k := keys.OrderBase(1001)
	fmt.Println(k, k.Owner(), k.TTL())
	// Output: order:order:1001:base order-team 1h0m0s
}

// The three ways to build "order:sku:{skuId:int}:settle-preview", a
// 4-segment key: the generated builder, fmt.Sprintf and + concatenation.
var (
	benchSKU int64 = 1234567890
	sink     string
)

func BenchmarkGenerated(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sink = keys.OrderSettlePreview(benchSKU).String()
	}
}

func BenchmarkSprintf(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sink = fmt.Sprintf("order:sku:%d:settle-preview", benchSKU)
	}
}

func BenchmarkConcat(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sink = "order:sku:" + strconv.FormatInt(benchSKU, 10) + ":settle-preview"
	}
}

func TestOneAllocation(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { sink = keys.OrderSettlePreview(benchSKU).String() }); n != 1 {
		t.Errorf("%v allocations, want 1", n)
	}
	if n := testing.AllocsPerRun(100, func() {
		k, _ := keys.VerifySMS("13800138000", keys.VerifySMSSceneResetPwd)
		sink = k.String()
	}); n != 1 {
		t.Errorf("VerifySMS: %v allocations, want 1", n)
	}
}
