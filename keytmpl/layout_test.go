package keytmpl

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestLookupAgreesWithScan checks the flattened matcher (slots, tails,
// long literals, the literal length filter) against a scan of every
// template, choosing by rank, on registries built to exercise each path.
func TestLookupAgreesWithScan(t *testing.T) {
	for _, tt := range []struct {
		name string
		srcs []string
	}{
		{"tails", []string{"a:b:{x:int}:c", "a:d:{x:int}:{y:date}", "a:e:u{u}", "a:f:{x:int}:gg:{y}:h", "a:g:{x:int}:c:d:e:f", "x:y"}},
		{"long literals", []string{"abcdefgh:ijklmnopq:{x:int}", "abcdefgh:ijklmnopr:{x:int}", "abcdefghi:{x}", "abcdefgh\x00:z", "abcdefgh:ijklmnopq:r"}},
		{"terminal inside chain", []string{"a:b", "a:b:c", "a:b:c:d", "a:{x}:c:d", "{x}:{y}:c"}},
		{"overlapping", []string{"promo:{x}:{y}", "promo:sku:{id}", "promo:sku:{id:int}", "promo:sku:{r:region}", "promo:{x}:1001", "{a}"}},
		{"literal lengths over 31", []string{"a:12345678901234567890123456789012345:{x}", "a:1234567890123456789012345678901:{x}", "a:{n:int}"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var ts []*Template
			for _, s := range tt.srcs {
				ts = append(ts, MustParse(s, ':'))
			}
			m := Compile(ts)
			rng := rand.New(rand.NewPCG(7, 8))
			var keys []string
			for _, tpl := range ts {
				ex := tpl.Example()
				keys = append(keys, ex)
				segs := strings.Split(ex, ":")
				for range 50 { // mutate: drop, repeat, swap or change a segment
					s := append([]string(nil), segs...)
					i := rng.IntN(len(s))
					switch rng.IntN(5) {
					case 0:
						s = append(s[:i], s[i+1:]...)
					case 1:
						s = append(s[:i+1], s[i:]...)
					case 2:
						s[i] = segs[rng.IntN(len(segs))]
					case 3:
						s[i] = fmt.Sprint(rng.IntN(1000))
					default:
						s[i] += "x"
					}
					keys = append(keys, strings.Join(s, ":"))
				}
			}
			for _, k := range keys {
				checkLookup(t, m, ts, k)
			}
		})
	}
}

// FuzzMatcherLayout compiles fuzzed registries (so tails, long literals
// and odd bytes reach the flattened layout) and checks Lookup against a
// scan of the templates by rank.
func FuzzMatcherLayout(f *testing.F) {
	f.Add("a:b:{x:int}:c", "a:{y}:c", "abcdefghij:{z:hex}", "a:b:123:c")
	f.Add("x:{d:date}{n:int}", "x:y:z:w", "{a}:{b}", "x:20240101:z")
	f.Add("k\x00:{u:uuid}", "k\x00:v:w:x:y", "k\x00", "k\x00:v:w:x:y")
	f.Fuzz(func(t *testing.T, s1, s2, s3, key string) {
		var ts []*Template
		for _, s := range []string{s1, s2, s3} {
			if tpl, err := Parse(s, ':'); err == nil {
				ts = append(ts, tpl)
			}
		}
		m := Compile(ts)
		keys := []string{key}
		for _, tpl := range ts {
			keys = append(keys, tpl.Example())
		}
		for _, k := range keys {
			checkLookup(t, m, ts, k)
		}
	})
}

// checkLookup holds m.Lookup(k) to a scan of the templates: the matching
// template of lowest rank.
func checkLookup(t *testing.T, m *Matcher, ts []*Template, k string) {
	t.Helper()
	want := -1
	for i, tpl := range ts {
		if tpl.Matches(k) && (want < 0 || m.rankOf[i] < m.rankOf[want]) {
			want = i
		}
	}
	if got := m.Lookup(k); got != want {
		t.Errorf("Lookup(%q) = %d (%s), want %d (%s)", k, got, nameOf(ts, got), want, nameOf(ts, want))
	}
}
