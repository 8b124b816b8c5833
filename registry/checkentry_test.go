package registry

import (
	"fmt"
	"strings"
	"testing"

	"github.com/keyguard/keyguard/finding"
)

// checkEntryRegistry has placeholders of every kind, with and without
// pii: allow, so that CheckEntry's shortcut meets each rule it skips.
const checkEntryRegistry = `version: 1
policy: {max_key_bytes: 48}
domains: {order: {owner: o}, user: {owner: u}, verify: {owner: v}}
keys:
  - {key: "order:{orderId:int}:base", ttl: 1m}
  - {key: "order:ref:{ref}", ttl: 1m}
  - {key: "order:x{hex:hex}y{rest}", ttl: 1m}
  - {key: "user:{uid:uuid}:{day:date}:{region:region}", ttl: 1m}
  - {key: "user:mail:{addr}", ttl: 1m, pii: allow}
  - {key: "verify:{phone:hash}:{scene:enum(LOGIN,RESET)}", ttl: 1m}
  - {key: "order:lit", ttl: 1m}
  - {key: "order:{{t}}:{n:int}-{m:hex}", ttl: 1m}
  - {key: "verify:code:{phone:hash}", ttl: 1m}
`

var checkEntryKeys = []string{
	"order:1:base", "order:13812345678:base", "order:1381234567:base", "order:8613812345678:base",
	"order:11010519491231002X:base", "order:110105194912310021:base",
	"order:ref:a@b.cd", "order:ref:a b", "order:ref:\"q\"", "order:ref:{tag}", "order:ref:x{t}y", "order:ref:é",
	"order:ref:13812345678", "order:ref:ab-13812345678", "order:ref:" + strings.Repeat("7", 40), "order:ref:\x00",
	"order:ref:Mixed_Case.ok", "order:xdeadbeefy13812345678", "order:xdeadbeefy`", "order:lit",
	"user:123e4567-e89b-12d3-a456-426614174000:20240101:cn-north", "user:mail:a@b.cd", "user:mail:13812345678",
	"verify:0123456789abcdef:LOGIN", "order:ref:" + strings.Repeat("a", 60),
	"unregistered:key:1", "", "order:ref:", "order:ref:@",
	// Literal braces count one byte each: 10 and 11 digits past them.
	"order:{t}:1381234567-a", "order:{t}:13812345678-a", "order:{t}:1-13812345678", "order:{t}:12-1381234567",
	"verify:code:0123456789abcdef",
}

func checkFindings(c *Checker, key string, entry bool) string {
	var b strings.Builder
	emit := func(f finding.Finding) { fmt.Fprintf(&b, "%+v\n", f) }
	var res Result
	if entry {
		res = c.CheckEntry(key, c.reg.Lookup(key), emit)
	} else {
		res = c.Check(key, emit)
	}
	name := "<nil>"
	if res.Entry != nil {
		name = res.Entry.Key
	}
	fmt.Fprintf(&b, "entry %s inferred %q", name, res.Inferred)
	return b.String()
}

// CheckEntry, which skips matching the placeholders of quiet keys,
// reports exactly what Check reports.
func TestCheckEntrySameFindings(t *testing.T) {
	r, err := Parse("k.yaml", []byte(checkEntryRegistry))
	if err != nil {
		t.Fatal(err)
	}
	c := r.NewChecker()
	var all strings.Builder
	for _, k := range checkEntryKeys {
		want, got := checkFindings(c, k, false), checkFindings(c, k, true)
		if got != want {
			t.Errorf("key %q:\nCheckEntry\n%s\nCheck\n%s", k, got, want)
		}
		all.WriteString(want)
	}
	for _, rule := range []string{finding.PII, finding.Charset, finding.Length} {
		if !strings.Contains(all.String(), "Rule:"+rule+" ") {
			t.Errorf("no key of the table breaks %s: the test misses the shortcut's edge", rule)
		}
	}
}

func FuzzCheckEntry(f *testing.F) {
	r, err := Parse("k.yaml", []byte(checkEntryRegistry))
	if err != nil {
		f.Fatal(err)
	}
	for _, k := range checkEntryKeys {
		f.Add(k)
	}
	c := r.NewChecker()
	f.Fuzz(func(t *testing.T, key string) {
		if want, got := checkFindings(c, key, false), checkFindings(c, key, true); got != want {
			t.Fatalf("key %q:\nCheckEntry\n%s\nCheck\n%s", key, got, want)
		}
	})
}
