package registry

import (
	"strings"
	"testing"

	"github.com/keyguard/keyguard/finding"
)

const copiesRegistry = `version: 1
domains:
  product: {owner: catalog-team}
  cart: {owner: cart-team}
  order: {owner: order-team}
keys:
  - key: "product:hot:{sku:int}"
    ttl: 30m
    hot: {replicas: 8}
  - key: "{{cart:{userId:int}}}:items"
    type: hash
    ttl: 1h
    hot: {replicas: 4, local_ttl: 5s}
  - key: "product:name:{sku}"
    ttl: 30m
    hot: {replicas: 2}
  - key: "order:order:{orderId:int}:base"
    type: hash
    ttl: 1h
  - key: "order:local:{orderId:int}"
    ttl: 1h
    hot: {replicas: 1, local_ttl: 5s}
`

// TestCopiesClassified: a hot key's copy is a key of its template when the
// template keeps copies, with the captures of the key it copies; a '#'
// anywhere else, or on a template without copies, is no copy.
func TestCopiesClassified(t *testing.T) {
	r, err := Parse("k.yaml", []byte(copiesRegistry))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		key      string
		template string // "" unregistered
		capture  string // the first capture's value
	}{
		{"product:hot:1001#3", "product:hot:{sku:int}", "1001"},
		{"product:hot:1001#12", "product:hot:{sku:int}", "1001"},
		{"product:hot:1001", "product:hot:{sku:int}", "1001"},
		{"{cart:42#3}:items", "{{cart:{userId:int}}}:items", "42"},
		{"{cart:42}:items", "{{cart:{userId:int}}}:items", "42"},
		{"product:name:P1001#3", "product:name:{sku}", "P1001#3"}, // {sku} holds '#': the template matches as it is
		{"order:order:1001:base#3", "", ""},                       // no copies kept
		{"order:local:1001#3", "", ""},                            // replicas: 1 is the key alone
		{"product:hot:1001#", "", ""},
		{"product:hot:1001#x", "", ""},
		{"product:hot:#3", "", ""},
		{"#3", "", ""},
		{"{cart:42}:items#3", "", ""}, // the copy suffix of a tagged key is inside the tag
		{"{#3}:items", "", ""},
		{"{cart:42#3}:items#3", "", ""},
	} {
		e, caps := r.Classify(tt.key)
		switch {
		case tt.template == "" && e != nil:
			t.Errorf("Classify(%q) = %q, want unregistered", tt.key, e.Key)
		case tt.template == "":
		case e == nil || e.Key != tt.template:
			t.Errorf("Classify(%q) = %v, want %q", tt.key, e, tt.template)
		case len(caps) == 0 || caps[0].Value != tt.capture:
			t.Errorf("Classify(%q) captures %v, want %s first", tt.key, caps, tt.capture)
		}
		if got := r.Lookup(tt.key); got != e {
			t.Errorf("Lookup(%q) = %v, Classify says %v", tt.key, got, e)
		}
	}
}

// TestCopiesChecked: the Checker reports a copy as a key of its template:
// no unregistered, no naming/charset for the '#', the values of the key it
// copies; a '#n' key of a template without copies is still both.
func TestCopiesChecked(t *testing.T) {
	r, err := Parse("k.yaml", []byte(copiesRegistry))
	if err != nil {
		t.Fatal(err)
	}
	c := r.NewChecker()
	for _, key := range []string{"product:hot:1001#3", "{cart:42#3}:items"} {
		var got []string
		res := c.Check(key, func(f finding.Finding) { got = append(got, f.Rule) })
		if res.Entry == nil || len(got) > 0 || len(res.Captures) != 1 || strings.Contains(res.Captures[0].Value, "#") {
			t.Errorf("Check(%q) = %+v with %v, want its template, no findings, the base key's values", key, res, got)
		}
		got = nil
		if res := c.CheckEntry(key, r.Lookup(key), func(f finding.Finding) { got = append(got, f.Rule) }); res.Entry == nil || len(got) > 0 {
			t.Errorf("CheckEntry(%q) = %+v with %v", key, res, got)
		}
	}
	got := map[string]bool{}
	c.Check("order:order:1001:base#3", func(f finding.Finding) { got[f.Rule] = true })
	if !got[finding.Unregistered] || !got[finding.Charset] {
		t.Errorf("a '#n' key of a template without copies: %v, want unregistered and naming/charset", got)
	}
}

// TestCopiesLookupAllocs: a copy is looked up without allocating, inside a
// hash tag too, and a registry without copies pays nothing for a '#'.
func TestCopiesLookupAllocs(t *testing.T) {
	r, err := Parse("k.yaml", []byte(copiesRegistry))
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"product:hot:1001#3", "{cart:42#3}:items", "order:order:1001:base#3", "nothing#1"} {
		if a := testing.AllocsPerRun(100, func() { r.Lookup(key) }); a != 0 {
			t.Errorf("Lookup(%q) allocates %v", key, a)
		}
	}
	c := r.NewChecker()
	c.Check("{cart:42#3}:items", func(finding.Finding) {})
	if a := testing.AllocsPerRun(100, func() { c.Check("{cart:42#3}:items", func(finding.Finding) {}) }); a != 0 {
		t.Errorf("Check of a tagged copy allocates %v", a)
	}
}

func BenchmarkLookupCopy(b *testing.B) {
	r, err := Parse("k.yaml", []byte(copiesRegistry))
	if err != nil {
		b.Fatal(err)
	}
	// A hit, misses without and with a '#', and the copies (the misses
	// and the copies are what the copy rule costs).
	for _, key := range []string{"order:order:1001:base", "legacy:user:1001:profile", "legacy:user#1001:profile", "product:hot:1001", "product:hot:1001#3", "{cart:42#3}:items", "order:order:1001:base#3"} {
		b.Run(key, func(b *testing.B) {
			for b.Loop() {
				r.Lookup(key)
			}
		})
	}
}
