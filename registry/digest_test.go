package registry

import (
	"reflect"
	"strings"
	"testing"
)

const digestBase = `version: 1
env: prod
policy:
  max_key_bytes: 80
domains:
  order: {owner: order-service, desc: orders}
keys:
  - key: "order:order:{id:int}:base"
    type: hash
    ttl: 1h
    fields: [total, items]
    desc: the order's header
  - key: "order:cart:{uid:int}"
    ttl: 30m
    name: Cart
`

func mustDigest(t *testing.T, yaml string) string {
	t.Helper()
	r, err := Parse("keyguard.yaml", []byte(yaml))
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, yaml)
	}
	if len(r.Digest) != 16 {
		t.Fatalf("digest %q: want 16 hex digits", r.Digest)
	}
	return r.Digest
}

// TestDigest: the registry's digest stays when only the file's spelling
// changes, and changes with anything an audit reads.
func TestDigest(t *testing.T) {
	base := mustDigest(t, digestBase)
	same := map[string]string{
		"comments and blank lines": "# the shop's keys\n\n" + strings.ReplaceAll(digestBase, "    ttl: 1h\n", "    ttl: 1h # an hour\n\n"),
		"a description":            strings.Replace(strings.Replace(digestBase, "the order's header", "the header of an order", 1), "desc: orders}", "desc: the shop's orders}", 1),
		"an entry's name":          strings.Replace(digestBase, "name: Cart", "name: ShopCart", 1),
		"the order of fields":      strings.Replace(digestBase, "    type: hash\n    ttl: 1h\n", "    ttl: 1h\n    type: hash\n", 1),
		"quoting and flow style":   strings.Replace(digestBase, "fields: [total, items]", "fields:\n      - \"total\"\n      - 'items'", 1),
		"a TTL's spelling":         strings.Replace(digestBase, "ttl: 30m", "ttl: 1800s", 1),
	}
	for name, y := range same {
		if got := mustDigest(t, y); got != base {
			t.Errorf("%s: digest %s, want %s as before", name, got, base)
		}
	}
	changed := map[string]string{
		"an entry added":     digestBase + "  - key: \"order:item:{id:int}\"\n    ttl: 1h\n",
		"an entry removed":   strings.Split(digestBase, "  - key: \"order:cart")[0],
		"entries reordered":  strings.Replace(strings.Split(digestBase, "  - key: \"order:order")[0], "keys:\n", "", 1) + "keys:\n  - key: \"order:cart:{uid:int}\"\n    ttl: 30m\n    name: Cart\n  - key: \"order:order:{id:int}:base\"\n    type: hash\n    ttl: 1h\n    fields: [total, items]\n",
		"a template":         strings.Replace(digestBase, "order:cart:{uid:int}", "order:cart:{uid}", 1),
		"a type":             strings.Replace(digestBase, "type: hash", "type: string", 1),
		"a TTL":              strings.Replace(digestBase, "ttl: 30m", "ttl: 31m", 1),
		"persistent":         strings.Replace(digestBase, "    ttl: 30m\n", "    persistent: true\n", 1),
		"an owner":           strings.Replace(digestBase, "owner: order-service,", "owner: shop,", 1),
		"an entry's owner":   strings.Replace(digestBase, "    name: Cart\n", "    name: Cart\n    owner: cart-service\n", 1),
		"a field":            strings.Replace(digestBase, "[total, items]", "[total, items, qty]", 1),
		"open fields":        strings.Replace(digestBase, "    fields: [total, items]\n", "    fields: [total, items]\n    fields_extra: allow\n", 1),
		"the env":            strings.Replace(digestBase, "env: prod", "env: staging", 1),
		"the policy":         strings.Replace(digestBase, "max_key_bytes: 80", "max_key_bytes: 81", 1),
		"a writer":           strings.Replace(digestBase, "    name: Cart\n", "    name: Cart\n    writers: [checkout]\n", 1),
		"the guard":          strings.Replace(digestBase, "    type: hash\n", "    type: hash\n    guard: true\n", 1),
		"hot copies":         strings.Replace(digestBase, "    name: Cart\n", "    name: Cart\n    hot: {replicas: 4, local_ttl: 1s}\n", 1),
		"personal data kept": strings.Replace(digestBase, "    name: Cart\n", "    name: Cart\n    pii: allow\n", 1),
	}
	seen := map[string]string{base: "the base"}
	for name, y := range changed {
		got := mustDigest(t, y)
		if prev, dup := seen[got]; dup {
			t.Errorf("%s: digest %s, the same as %s's", name, got, prev)
		}
		seen[got] = name
	}
}

// TestDigestCoversEntry: every field of an entry is either in the digest
// or left out on purpose; a field added to Entry must be placed here.
func TestDigestCoversEntry(t *testing.T) {
	in := "Key Type TTL TTLJitter Persistent Owner Guard Fields FieldsExtra Hot Writers Readers PIIAllow Deprecated Domain"
	out := "Template Index Name Desc EntityType Attribute Pos" // derived from Key, or not read by an audit
	known := map[string]bool{}
	for _, f := range strings.Fields(in + " " + out) {
		known[f] = true
	}
	et := reflect.TypeFor[Entry]()
	for i := range et.NumField() {
		if f := et.Field(i); f.IsExported() && !known[f.Name] {
			t.Errorf("Entry.%s is neither in the registry's digest nor left out of it: add it to digest (registry/digest.go) or to this test's list", f.Name)
		}
	}
	rt := reflect.TypeFor[Registry]()
	for i := range rt.NumField() {
		if f := rt.Field(i); f.IsExported() && !strings.Contains("File Version Separator Env Policy Domains Entries BareList Digest", f.Name) {
			t.Errorf("Registry.%s is new: add it to digest (registry/digest.go) or to this test's list", f.Name)
		}
	}
}
