package registry

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/keyguard/keyguard/finding"
)

const piiRegistry = `version: 1
domains: {token: {owner: a}, sess: {owner: a}, order: {owner: o}, user: {owner: u}, rate: {owner: r}}
keys:
  - {key: "token:{token:hex}", ttl: 1h}
  - {key: "sess:{sid:uuid}:data", ttl: 1h}
  - {key: "order:{orderId:int}:base", ttl: 1h}
  - {key: "user:{phone:int}:profile", ttl: 1h}
  - {key: "rate:login:{who}", ttl: 1m}
`

// TestPIITypedValues: identifiers in typed placeholders are not personal
// data, whatever digits they hold; a typed placeholder named for personal
// data and free text are still scanned.
func TestPIITypedValues(t *testing.T) {
	r, err := Parse("pii.yaml", []byte(piiRegistry))
	if err != nil {
		t.Fatal(err)
	}
	c := r.NewChecker()
	pii := func(key string, entry bool) []string {
		var got []string
		emit := func(f finding.Finding) {
			if f.Rule == finding.PII {
				got = append(got, f.Message)
			}
		}
		if entry {
			c.CheckEntry(key, r.Lookup(key), emit)
		} else {
			c.Check(key, emit)
		}
		return got
	}
	rng := rand.New(rand.NewPCG(3, 11))
	var b [16]byte
	keys := 0
	for i := 0; i < 10000; i++ {
		for j := range b {
			b[j] = byte(rng.Uint32())
		}
		sum := md5.Sum(b[:])
		h := hex.EncodeToString(b[:])
		for _, k := range []string{
			"token:" + hex.EncodeToString(sum[:]),
			fmt.Sprintf("sess:%s-%s-%s-%s-%s:data", h[:8], h[8:12], h[12:16], h[16:20], h[20:]),
			"order:" + fmt.Sprint(13000000000+rng.Int64N(7000000000)) + ":base", // an 11-digit order ID
		} {
			if r.Lookup(k) == nil {
				t.Fatalf("%q matches no template", k)
			}
			keys++
			for _, entry := range []bool{false, true} {
				if got := pii(k, entry); len(got) > 0 {
					t.Errorf("%q (CheckEntry %v): %v", k, entry, got)
				}
			}
		}
	}
	if keys != 30000 {
		t.Fatalf("%d keys checked", keys)
	}
	for _, k := range []string{"user:18812345678:profile", "rate:login:18812345678", "rate:login:a@example.com", "rate:login:+86-18812345678"} {
		for _, entry := range []bool{false, true} {
			if got := pii(k, entry); len(got) != 1 {
				t.Errorf("%q (CheckEntry %v): %d pii findings, want 1: %v", k, entry, len(got), got)
			}
		}
	}
	// A run inside a longer token of free text is not a phone number.
	if got := pii("rate:login:a3f18812345678bcde", false); len(got) > 0 {
		t.Errorf("hex token in free text: %v", got)
	}
	// Unregistered keys get the same token rule.
	if got := pii("legacy:"+strings.Repeat("ab", 3)+"18812345678ef", false); len(got) > 0 {
		t.Errorf("unregistered hex token: %v", got)
	}
	if got := pii("legacy:login:18812345678", false); len(got) != 1 {
		t.Errorf("unregistered phone: %v", got)
	}
}

// BenchmarkCheckEntryPII: the audit's per-key check on keys of typed
// placeholders (md5, UUID, numeric IDs) and free text.
func BenchmarkCheckEntryPII(b *testing.B) {
	r, err := Parse("pii.yaml", []byte(piiRegistry))
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 8))
	var keys []string
	var buf [16]byte
	for i := 0; i < 1000; i++ {
		for j := range buf {
			buf[j] = byte(rng.Uint32())
		}
		sum := md5.Sum(buf[:])
		h := hex.EncodeToString(buf[:])
		keys = append(keys, "token:"+hex.EncodeToString(sum[:]),
			fmt.Sprintf("sess:%s-%s-%s-%s-%s:data", h[:8], h[8:12], h[12:16], h[16:20], h[20:]),
			fmt.Sprintf("order:%d:base", 13000000000+rng.Int64N(7000000000)),
			fmt.Sprintf("rate:login:%d", 13000000000+rng.Int64N(7000000000)))
	}
	entries := make([]*Entry, len(keys))
	for i, k := range keys {
		entries[i] = r.Lookup(k)
	}
	c := r.NewChecker()
	n := 0
	emit := func(finding.Finding) { n++ }
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j, k := range keys {
			c.CheckEntry(k, entries[j], emit)
		}
	}
	b.ReportMetric(float64(b.N*len(keys))/b.Elapsed().Seconds(), "keys/s")
}
