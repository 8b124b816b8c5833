package registry

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/keyguard/keyguard/keytmpl"
)

// TestWriterFormat: the text of one entry as keyguard.yaml writes it, TTLs
// in days, notes beside their field or in the place of a missing one.
func TestWriterFormat(t *testing.T) {
	var b strings.Builder
	w := NewWriter(&b)
	w.Header(1, ':', "")
	w.Section("domains")
	w.Domain(Domain{Name: "order", Owner: "FILL-IN", Desc: "FILL-IN: what the order keys are for"})
	w.Domain(Domain{Name: "2fa", Owner: "id team"})
	w.Section("keys")
	w.Entry(Draft{
		Entry: Entry{Key: "order:{id:int}:items", Type: "hash", TTL: 7 * 24 * time.Hour, Owner: "FILL-IN",
			Fields: []string{"sku", `q"ty`}, FieldsExtra: true, Desc: "FILL-IN: inferred from 3 keys"},
		Above: []string{"narrowed to \"x\"", "a note\non two lines"},
		Notes: map[string]string{"ttl": "longest remaining TTL seen: 6d 23h", "owner": "the team", "readers": "nobody yet"},
	})
	w.Entry(Draft{Entry: Entry{Key: "2fa:{phone:hash}", TTL: 90 * time.Second, TTLJitter: 36 * time.Hour,
		Hot: &Hot{Replicas: 4, LocalTTL: 5 * time.Second}, Writers: []string{"sms-service", "yes"}}})
	if err := w.Err(); err != nil {
		t.Fatal(err)
	}
	want := `version: 1
separator: ":"
domains:
  order: {owner: FILL-IN, desc: "FILL-IN: what the order keys are for"}
  "2fa": {owner: "id team"}
keys:
  # narrowed to "x"
  # a note
  # on two lines
  - key: "order:{id:int}:items"
    type: hash
    ttl: 7d # longest remaining TTL seen: 6d 23h
    owner: FILL-IN # the team
    fields: ["sku", "q\"ty"]
    fields_extra: allow
    # readers: nobody yet
    desc: "FILL-IN: inferred from 3 keys"
  - key: "2fa:{phone:hash}"
    ttl: 1m30s
    ttl_jitter: 1d12h
    hot: {replicas: 4, local_ttl: 5s}
    writers: [sms-service, "yes"]
`
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
	r, err := Parse("w.yaml", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if e := r.Entries[0]; e.TTL != 7*24*time.Hour || !slices.Equal(e.Fields, []string{"sku", `q"ty`}) {
		t.Fatalf("read back %+v", e)
	}
}

// TestWriterRefusesNonUTF8: YAML has no form for bytes that are not UTF-8
// text ("\xff" reads back as "ÿ"), so the writer stops and says so rather
// than write another key.
func TestWriterRefusesNonUTF8(t *testing.T) {
	var b strings.Builder
	w := NewWriter(&b)
	w.Entry(Draft{Entry: Entry{Key: "bin:\xff:{id}", Type: "string"}})
	w.Entry(Draft{Entry: Entry{Key: "next:{id}"}})
	if err := w.Err(); err == nil || !strings.Contains(err.Error(), "not UTF-8") {
		t.Fatalf("err %v, wrote %q", err, b.String())
	}
	if strings.Contains(b.String(), "next") {
		t.Fatalf("wrote on after the error: %q", b.String())
	}
}

// roundTrip writes a registry of one domain and the draft (plus a fixed
// second entry), reads it back and compares. It fails the test on any
// difference; it returns false when the draft is not a valid entry (the
// comparison is then meaningless) or holds text YAML cannot.
func roundTrip(t *testing.T, sep byte, env string, dom Domain, d Draft) bool {
	t.Helper()
	e := &d.Entry
	if _, err := keytmpl.Parse(e.Key, sep); err != nil || env != "" && (strings.IndexByte(env, sep) >= 0 || strings.ContainsAny(env, "{} \t\n")) {
		return false
	}
	if env != "" {
		if _, err := keytmpl.Parse(env+string(sep)+e.Key, sep); err != nil {
			return false
		}
	}
	if e.Name != "" && !validName(e.Name) || dom.Name == "" || e.Fields != nil && e.Type != "hash" && e.Type != "string" {
		return false
	}
	seen := map[string]bool{}
	for _, f := range e.Fields {
		if f == "" || seen[f] || f == NSField && e.Guard {
			return false
		}
		seen[f] = true
	}
	for _, s := range append([]string{e.Key, e.Desc, e.Owner, dom.Name, dom.Owner, dom.Desc, e.Domain, env}, append(e.Fields, e.Writers...)...) {
		if !utf8.ValidString(s) {
			var b strings.Builder
			w := NewWriter(&b)
			w.Header(1, sep, env)
			w.Section("domains")
			w.Domain(dom)
			w.Section("keys")
			w.Entry(d)
			if w.Err() == nil {
				t.Fatalf("wrote %q without an error", b.String())
			}
			return false
		}
	}
	var b strings.Builder
	w := NewWriter(&b)
	w.Comment(0, "a registry\nwritten by the round-trip test: "+e.Desc)
	w.Header(1, sep, env)
	w.Section("domains")
	w.Domain(dom)
	w.Blank()
	w.Section("keys")
	w.Entry(d)
	w.Blank()
	lit := "q"
	if sep == 'q' {
		lit = "r"
	}
	w.Entry(Draft{Entry: Entry{Key: lit + string(sep) + lit, Type: "set", Persistent: true}, Above: []string{e.Desc}})
	if err := w.Err(); err != nil {
		t.Fatalf("%v", err)
	}
	r, err := Parse("rt.yaml", []byte(b.String()))
	if err != nil {
		t.Fatalf("what the writer wrote does not load: %v\n%s", err, b.String())
	}
	if r.Separator != sep || r.Env != env || len(r.Domains) != 1 || len(r.Entries) != 2 {
		t.Fatalf("read back sep %q env %q, %d domains, %d entries:\n%s", r.Separator, r.Env, len(r.Domains), len(r.Entries), b.String())
	}
	if g := r.Domains[0]; g.Name != dom.Name || g.Owner != dom.Owner || g.Desc != dom.Desc {
		t.Fatalf("domain read back as %+v, wrote %+v:\n%s", g, dom, b.String())
	}
	g, want := r.Entries[0], *e
	if want.Type == "" {
		want.Type = "string"
	}
	if want.Owner == "" {
		want.Owner = g.Owner // inherited from its domain, when there is one
	}
	if want.Domain == "" {
		want.Domain = g.Domain // derived from the template
	}
	if len(want.Fields) == 0 {
		want.Fields = nil
	}
	same := g.Key == want.Key && g.Name == want.Name && g.Type == want.Type && g.TTL == want.TTL && g.TTLJitter == want.TTLJitter &&
		g.Persistent == want.Persistent && g.Owner == want.Owner && g.Desc == want.Desc && g.Guard == want.Guard &&
		slices.Equal(g.Fields, want.Fields) && g.FieldsExtra == want.FieldsExtra && slices.Equal(g.Writers, want.Writers) &&
		slices.Equal(g.Readers, want.Readers) && g.PIIAllow == want.PIIAllow && g.Domain == want.Domain &&
		g.EntityType == want.EntityType && g.Attribute == want.Attribute &&
		(g.Hot == nil) == (want.Hot == nil) && (g.Hot == nil || *g.Hot == *want.Hot) &&
		(g.Deprecated == nil) == (want.Deprecated == nil) && (g.Deprecated == nil || *g.Deprecated == *want.Deprecated)
	if !same {
		t.Fatalf("read back\n%+v\nwrote\n%+v\n%s", g, want, b.String())
	}
	return true
}

// draftOf builds a draft from the fuzzer's values.
func draftOf(key, text, name string, n uint64) (Draft, Domain) {
	seconds := func(v uint64) time.Duration { return time.Duration(v%(400*86400)) * time.Second }
	d := Draft{Entry: Entry{Key: key, Desc: text, Owner: name, TTL: seconds(n), Persistent: n%7 == 0}}
	d.Type = [...]string{"", "string", "hash", "list", "set", "zset", "stream"}[n%7]
	if n%3 == 0 {
		d.Fields = []string{text, name + "x"}
		d.Type = "hash"
		d.FieldsExtra = n%2 == 0
	}
	if n%5 == 0 {
		d.TTLJitter = seconds(n / 5)
		d.Hot = &Hot{Replicas: int(n % 11), LocalTTL: seconds(n / 3)}
		d.Writers = []string{name, "svc-" + name}
		d.Readers = []string{text}
		d.Guard = true
	}
	if n%4 == 1 {
		d.Deprecated = &Deprecated{ReplacedBy: key}
		d.PIIAllow = true
		d.EntityType, d.Attribute = name, text
	}
	if n%6 == 5 {
		d.Name = "E" + strings.Map(func(r rune) rune {
			if r < 128 && validName(string(r)) {
				return r
			}
			return -1
		}, name)
		d.Domain = name
	}
	d.Notes = map[string]string{"ttl": text, "name": name, "hot": text + "\n" + name}
	return d, Domain{Name: name, Owner: text, Desc: key}
}

var nasty = []string{"", "a", "FILL-IN", "yes", "Null", "~", "-", "1e3", "0x1f", " lead", "trail ", "a: b", "a #b", "#c",
	"\"q\"", "'s'", "back\\slash", "tab\there", "line\nbreak", "cr\rlf", "nul\x00", "esc\x1b", "del\x7f", "é", "😀",
	"\u2028", "\u0085", "\ufeff", "\ufffd", "{x}", "[a, b]", "&anchor", "*alias", "!tag", "%", "@", "`", "|", ">", "?", ",", "\xff", "\xc3"}

// TestWriterRoundTrip: what the writer writes, Parse reads back to the
// same entry and domain, over keys and texts of every awkward kind.
func TestWriterRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 2))
	n := 4000
	if testing.Short() {
		n = 1000
	}
	pick := func() string {
		if rng.IntN(3) == 0 {
			return nasty[rng.IntN(len(nasty))]
		}
		b := make([]byte, rng.IntN(12))
		for i := range b {
			switch rng.IntN(10) {
			case 0:
				b[i] = byte(rng.IntN(256))
			case 1, 2, 3, 4:
				b[i] = byte(' ' + rng.IntN(95))
			default:
				b[i] = "abc:_-. #\"\\\n\tx"[rng.IntN(14)]
			}
		}
		return string(b)
	}
	checked := 0
	for range n {
		sep := ":._/|#\"\\"[rng.IntN(8)]
		env := [...]string{"", "prod", "a#b", "'x'"}[rng.IntN(4)]
		key := pick() + string(sep) + "{id:int}"
		if rng.IntN(2) == 0 {
			key = "order" + string(sep) + pick()
		}
		d, dom := draftOf(key, pick(), pick(), rng.Uint64())
		if roundTrip(t, sep, env, dom, d) {
			checked++
		}
	}
	if checked < n/4 {
		t.Fatalf("only %d of %d drafts were valid entries: the test checks too little", checked, n)
	}
	t.Logf("%d of %d drafts round-tripped", checked, n)
}

func FuzzWriterRoundTrip(f *testing.F) {
	for i, s := range nasty {
		f.Add(byte(':'), "order:"+s+":{id}", s, nasty[(i+1)%len(nasty)], uint64(i))
	}
	f.Add(byte('#'), "a#{b}", "x # y", "FILL-IN", uint64(5))
	f.Fuzz(func(t *testing.T, sep byte, key, text, name string, n uint64) {
		if sep <= ' ' || sep >= 0x7f || sep == '{' || sep == '}' {
			return
		}
		d, dom := draftOf(key, text, name, n)
		roundTrip(t, sep, "", dom, d)
	})
}
