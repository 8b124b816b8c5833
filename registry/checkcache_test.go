package registry

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/naming"
)

// The Checker's caches change nothing a fresh Checker would say: the
// findings of a reused Checker, past the caches' capacity and with long
// keys, equal those of a new Checker per key.
func TestCheckerCachesKeepFindings(t *testing.T) {
	r, err := Parse("k.yaml", []byte("version: 1\nenv: prod\ndomains: {order: {owner: o}}\nkeys:\n  - {key: \"order:{id:int}\", ttl: 1m}\n"))
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for i := range maxCachedMsgs + 100 {
		keys = append(keys, fmt.Sprintf("prod:dom%d:item:%d", i, i), fmt.Sprintf("fam%d_%d", i%7, i),
			fmt.Sprintf("prod:order:%d:x", 1000000+i*7), fmt.Sprintf("u_%d_tok", 1700000000+i)) // keys of a few shapes
	}
	keys = append(keys, "prod:"+strings.Repeat("x", 600)+":1", strings.Repeat("y", 600)+":1", "prod:order:1", "")
	collect := func(c *Checker, key string) string {
		var b strings.Builder
		res := c.Check(key, func(f finding.Finding) { fmt.Fprintf(&b, "%+v\n", f) })
		fmt.Fprintf(&b, "inferred %q", res.Inferred)
		return b.String()
	}
	want := make([]string, len(keys))
	for i, k := range keys {
		want[i] = collect(r.NewChecker(), k)
	}
	reused := r.NewChecker()
	defer func() {
		if reused.shapes.Found() == 0 {
			t.Error("no key inferred by its shape")
		}
	}()
	for round := range 2 { // the second round hits the caches
		for i, k := range keys {
			if got := collect(reused, k); got != want[i] {
				t.Fatalf("round %d, key %.40q: reused Checker\n%s\nfresh Checker\n%s", round, k, got, want[i])
			}
		}
	}
}

// Check of a key just inferred does not infer it again.
func TestCheckerInferRemembers(t *testing.T) {
	r, err := Load("testdata/spec.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := r.NewChecker()
	for i := range 3000 {
		key := fmt.Sprintf("legacy_cart_%d_items", i)
		inf := c.Infer(key)
		if inf != naming.Infer(key, r.Separator) {
			t.Fatalf("Infer(%q) = %q", key, inf)
		}
		res := c.Check(key, func(finding.Finding) {})
		if unsafe.StringData(res.Inferred) != unsafe.StringData(inf) {
			t.Fatalf("Check(%q) inferred the key again", key)
		}
	}
}

// NoRegistry leaves out the unregistered and domain findings, and only
// them: the naming and personal-data findings of a key are those of a
// Checker without it.
func TestCheckerNoRegistry(t *testing.T) {
	r, err := Parse("k.yaml", []byte("version: 1\nkeys: []\n"))
	if err != nil {
		t.Fatal(err)
	}
	keys := []string{"shop3:order:1", "Bad Key:x", "user:13812345678:profile", "nosep", "", "a::b", strings.Repeat("k", 300)}
	for _, key := range keys {
		var all, quiet []string
		full, noreg := r.NewChecker(), r.NewChecker()
		noreg.NoRegistry()
		full.Check(key, func(f finding.Finding) {
			if f.Rule != finding.Unregistered && f.Rule != finding.Domain {
				all = append(all, fmt.Sprintf("%+v", f))
			}
		})
		res := noreg.Check(key, func(f finding.Finding) {
			if f.Rule == finding.Unregistered || f.Rule == finding.Domain {
				t.Errorf("%q: NoRegistry emitted %s", key, f.Rule)
			}
			quiet = append(quiet, fmt.Sprintf("%+v", f))
		})
		if strings.Join(all, "\n") != strings.Join(quiet, "\n") {
			t.Errorf("%q: findings\n%s\nwant\n%s", key, quiet, all)
		}
		if want := full.Infer(key); res.Inferred != want {
			t.Errorf("%q: inferred %q, want %q", key, res.Inferred, want)
		}
	}
}

// The texts a caller keeps per family (CheckInferredTexts) change nothing
// the findings say: keys of families with one first segment, several
// (a placeholder's values), declared and undeclared domains, with and
// without the env prefix, checked with the family's texts carried from
// key to key, give the findings of a fresh Checker per key.
func TestCheckerFamilyTexts(t *testing.T) {
	r, err := Parse("k.yaml", []byte("version: 1\nenv: prod\ndomains: {order: {owner: o}}\nkeys:\n  - {key: \"order:{id:int}\", ttl: 1m}\n"))
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for i := range 30 {
		keys = append(keys, fmt.Sprintf("prod:shop%d:item:%d", i%3, i), fmt.Sprintf("prod:order:x%d:y", i), fmt.Sprintf("shop%d:item:%d", i%2, i),
			fmt.Sprintf("nosep%d", i), fmt.Sprintf("prod:legacy:%d", i))
	}
	collect := func(c *Checker, key string, texts *FamilyTexts) string {
		var b strings.Builder
		inferred := c.Infer(key)
		res := c.CheckInferredTexts(key, inferred, texts, func(f finding.Finding) { fmt.Fprintf(&b, "%+v\n", f) })
		fmt.Fprintf(&b, "inferred %q", res.Inferred)
		return b.String()
	}
	kept := r.NewChecker()
	texts := map[string]*FamilyTexts{}
	for round := range 2 {
		for _, k := range keys {
			inferred := kept.Infer(k)
			if texts[inferred] == nil {
				texts[inferred] = &FamilyTexts{}
			}
			if got, want := collect(kept, k, texts[inferred]), collect(r.NewChecker(), k, nil); got != want {
				t.Fatalf("round %d, key %q: with the family's texts\n%s\nwant\n%s", round, k, got, want)
			}
		}
	}
}
