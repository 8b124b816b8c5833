package keytmpl

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// benchTemplates returns n templates of four shapes over 50 domains, the
// way a large shared Redis looks: many entities per domain, typed IDs,
// user-prefixed segments, dates, regions.
func benchTemplates(n int) []*Template {
	ts := make([]*Template, n)
	for i := range n {
		a := i % 50
		var src string
		switch i % 4 {
		case 0:
			src = fmt.Sprintf("d%d:e%d:{id:int}:f%d", a, i, i%7)
		case 1:
			src = fmt.Sprintf("d%d:e%d:u{uid}", a, i)
		case 2:
			src = fmt.Sprintf("d%d:e%d:{day:date}:{n:int}", a, i)
		default:
			src = fmt.Sprintf("d%d:{r:region}:e%d", a, i)
		}
		ts[i] = MustParse(src, ':')
	}
	return ts
}

// benchKeys builds count keys: 90% from templates picked uniformly with
// random values, 10% unregistered.
func benchKeys(ts []*Template, count int) []string {
	rng := rand.New(rand.NewPCG(1, 2))
	return benchKeysFrom(ts, count, rng, func() int { return rng.IntN(len(ts)) })
}

// benchKeysZipf picks templates with a Zipf(1.1) law, as real key spaces
// are skewed: a few templates hold most keys.
func benchKeysZipf(ts []*Template, count int) []string {
	rng := rand.New(rand.NewPCG(3, 4))
	z := rand.NewZipf(rng, 1.1, 1, uint64(len(ts)-1))
	perm := rng.Perm(len(ts)) // the popular templates are spread over the registry
	return benchKeysFrom(ts, count, rng, func() int { return perm[z.Uint64()] })
}

func benchKeysFrom(ts []*Template, count int, rng *rand.Rand, pick func() int) []string {
	keys := make([]string, count)
	for i := range keys {
		if i%10 == 9 {
			keys[i] = fmt.Sprintf("tmp_data_%d", rng.IntN(1e9))
			continue
		}
		t := ts[pick()]
		var b strings.Builder
		for si, s := range t.Segments() {
			if si > 0 {
				b.WriteByte(':')
			}
			for _, p := range s.Parts {
				switch {
				case !p.IsPlaceholder():
					b.WriteString(p.Lit)
				case p.Kind == Int:
					fmt.Fprintf(&b, "%d", rng.Int64N(1e12))
				case p.Kind == Date:
					fmt.Fprintf(&b, "2024%02d%02d", 1+rng.IntN(12), 1+rng.IntN(28))
				case p.Kind == Region:
					fmt.Fprintf(&b, "%d", 110000+rng.IntN(700000))
				default:
					fmt.Fprintf(&b, "%x", rng.Uint32())
				}
			}
		}
		keys[i] = b.String()
	}
	return keys
}

// regexpPeer is the straightforward approach: one regexp per template,
// tried in order (how redis_exporter's key groups classify keys).
type regexpPeer []*regexp.Regexp

func newRegexpPeer(ts []*Template) regexpPeer {
	var out regexpPeer
	for _, t := range ts {
		var b strings.Builder
		b.WriteString("^")
		for si, s := range t.Segments() {
			if si > 0 {
				b.WriteString(":")
			}
			for _, p := range s.Parts {
				if !p.IsPlaceholder() {
					b.WriteString(regexp.QuoteMeta(p.Lit))
					continue
				}
				b.WriteString(map[Kind]string{Any: "[^:]+", Int: "-?[0-9]+", Hex: "[0-9a-fA-F]+", Date: "[0-9]{8}", Region: "[1-9][0-9]{5}", Hash: "[0-9a-f]{16}", UUID: "[0-9a-fA-F-]{36}"}[p.Kind])
			}
		}
		b.WriteString("$")
		out = append(out, regexp.MustCompile(b.String()))
	}
	return out
}

func (p regexpPeer) lookup(key string) int {
	for i, re := range p {
		if re.MatchString(key) {
			return i
		}
	}
	return -1
}

const benchKeyPool = 1_000_000

// BenchmarkClassify is the foundation benchmark: classify generated keys
// against 10, 1,000 and 10,000 templates with the compiled matcher and
// with the regexp peer. Reported per key.
func BenchmarkClassify(b *testing.B) {
	for _, n := range []int{10, 1000, 10000} {
		ts := benchTemplates(n)
		pool := benchKeyPool
		if testing.Short() {
			pool = 10000
		}
		keys := benchKeys(ts, pool)
		m := Compile(ts)
		run := func(keys []string) func(b *testing.B) {
			return func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					m.Lookup(keys[i%len(keys)])
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "keys/s")
			}
		}
		b.Run(fmt.Sprintf("matcher/templates=%d", n), run(keys))
		b.Run(fmt.Sprintf("matcher-zipf/templates=%d", n), run(benchKeysZipf(ts, pool)))
		// The same keys (from the ten templates every registry size
		// shares) against each registry: what registry size alone costs.
		b.Run(fmt.Sprintf("matcher-samekeys/templates=%d", n), run(benchKeys(ts[:10], pool)))
		peer := newRegexpPeer(ts)
		b.Run(fmt.Sprintf("regexp/templates=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				peer.lookup(keys[i%len(keys)])
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "keys/s")
		})
	}
}

// TestBenchmarkCorpusAgrees checks that the matcher and the regexp peer
// classify the benchmark keys alike (the peer picks the first match, which
// for these disjoint templates is the only one).
func TestBenchmarkCorpusAgrees(t *testing.T) {
	ts := benchTemplates(1000)
	m := Compile(ts)
	if len(m.Overlaps()) != 0 {
		t.Fatalf("benchmark templates overlap: %v", m.Overlaps()[0])
	}
	peer := newRegexpPeer(ts)
	for _, k := range benchKeys(ts, 5000) {
		if got, want := m.Lookup(k), peer.lookup(k); got != want {
			t.Fatalf("Lookup(%q) = %d, regexp peer %d", k, got, want)
		}
	}
}

// BenchmarkRelateLiteralHeads: templates of different first segments, as
// the suggestions of an audit's largest families and a registry's lint
// compare them pair by pair: disjoint at the first segment.
func BenchmarkRelateLiteralHeads(b *testing.B) {
	x := MustParse("promo:sku:{id:int}:detail", ':')
	y := MustParse("order:order:{orderId:int}:base", ':')
	z := MustParse("promo:sku:{id:int}:stock", ':')
	b.ReportAllocs()
	for b.Loop() {
		if Relate(x, y).Relation != Disjoint || Relate(x, z).Relation != Disjoint {
			b.Fatal("not disjoint")
		}
	}
}

// BenchmarkParse parses templates of a legacy registry's shape: a domain,
// a family, a typed placeholder and an attribute (a registry of 15,000
// such entries spends most of its load here).
func BenchmarkParse(b *testing.B) {
	srcs := make([]string, 1000)
	for i := range srcs {
		srcs[i] = fmt.Sprintf("d%d:fam%d:{id:int}:attr%d", i%40, i, i%7)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := Parse(srcs[i%len(srcs)], ':'); err != nil {
			b.Fatal(err)
		}
	}
}
