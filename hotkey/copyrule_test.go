package hotkey

import (
	"slices"
	"testing"

	"github.com/keyguard/keyguard/registry"
)

// copyRuleRegistry has a replicated template without and with a hash tag,
// one with a single copy, and one without hot protection. Their
// placeholders are ints, so no copy name matches a template as it is.
const copyRuleRegistry = `version: 1
domains:
  k: {owner: a}
  n: {owner: a}
  one: {owner: a}
  t: {owner: a}
keys:
  - {key: "k:{id:int}", ttl: 1m, hot: {replicas: 4}}
  - {key: "{{t:{id:int}}}:v", ttl: 1m, hot: {replicas: 4}}
  - {key: "one:{id:int}", ttl: 1m, hot: {replicas: 1}}
  - {key: "n:{id:int}", ttl: 1m}
`

func copyRuleReg(t testing.TB) *registry.Registry {
	t.Helper()
	reg, err := registry.Parse("copies.yaml", []byte(copyRuleRegistry))
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// checkCopyRule holds registry.Lookup and Classify to BaseKey for name: a
// name no template matches as it is belongs to the template of BaseKey's
// key when BaseKey finds a copy suffix and that key's template keeps
// copies, with the captures of that key; otherwise to none.
func checkCopyRule(t *testing.T, reg *registry.Registry, name string) {
	got := reg.Lookup(name)
	if got != nil {
		if _, direct := got.Template.Match(name); direct {
			return
		}
	}
	var want *registry.Entry
	base, ok := BaseKey(name)
	if ok {
		if e := reg.Lookup(base); e != nil && e.Hot != nil && e.Hot.Replicas > 1 {
			if _, direct := e.Template.Match(base); direct {
				want = e
			}
		}
	}
	if got != want {
		t.Fatalf("registry.Lookup(%q) = %v; BaseKey gives %q, %v, whose entry is %v", name, got, base, ok, want)
	}
	if want == nil {
		return
	}
	_, caps := reg.Classify(name)
	_, baseCaps := reg.Classify(base)
	if !slices.Equal(caps, baseCaps) {
		t.Fatalf("registry.Classify(%q) captures %v, its key %q %v", name, caps, base, baseCaps)
	}
}

// TestRegistryCopyRule: the registry classifies the copies ReplicaKeys
// names to their key's template when it keeps copies, as BaseKey reads
// them, and names that only look like copies as BaseKey does.
func TestRegistryCopyRule(t *testing.T) {
	reg := copyRuleReg(t)
	for _, key := range []string{"k:1001", "{t:42}:v", "one:7", "n:5", "k:-3"} {
		for _, name := range ReplicaKeys(key, 16) {
			checkCopyRule(t, reg, name)
			if e := reg.Lookup(name); (e != nil) != (key[0] == 'k' || key[0] == '{') {
				t.Errorf("registry.Lookup(%q) = %v", name, e)
			}
		}
	}
	for _, name := range []string{"k:1#", "#1", "k:#1", "{#1}:v", "{t:1}:v#2", "{t:1#2}:v#3", "k:1#2#3", "{t:1#2#3}:v", "{t:1}#2:v", "{t:#2}:v", "k:1#02", "n:1#2", "one:1#2"} {
		checkCopyRule(t, reg, name)
	}
}

func FuzzRegistryCopyRule(f *testing.F) {
	for _, s := range append(ReplicaKeys("k:1001", 4), ReplicaKeys("{t:42}:v", 4)...) {
		f.Add(s)
	}
	for _, s := range []string{"k:1#", "{#1}:v", "{t:1#2}:v#3", "k:1#2#3", "{t:1}#2:v", "n:1#2"} {
		f.Add(s)
	}
	reg := copyRuleReg(f)
	f.Fuzz(func(t *testing.T, name string) { checkCopyRule(t, reg, name) })
}
