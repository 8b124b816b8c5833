package inventory

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/report"
)

// TestFindTopSameAsBHeap checks that the finding buffer keeps the same
// findings as a plain heap ordered by findWorse, whatever the order they
// arrive in, ties included: the kept ranks are the best n of all pushed.
func TestFindTopSameAsBHeap(t *testing.T) {
	worse := func(a, b *findItem) bool { return findWorse(a.score, a.hash, a.key, b.score, b.hash, b.key) }
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tt := range []struct{ n, items, scores, keys int }{
		{0, 10, 5, 5}, {1, 50, 3, 10}, {5, 200, 4, 30}, {20, 1000, 50, 100}, {100, 50, 10, 20}, {64, 5000, 1000, 4000},
		{64, 5000, 1, 10}, {300, 20000, 3, 100000}, {1000, 30000, 1 << 30, 1 << 30},
	} {
		for _, order := range []string{"random", "growing", "shrinking"} {
			items := make([]findItem, tt.items)
			for i := range items {
				key := "k" + strconv.Itoa(rng.IntN(tt.keys))
				score := int64(rng.IntN(tt.scores))
				// Texts shared by many findings and texts of one key
				// each: the details table interns the first and drops
				// the second as their findings go.
				items[i] = findItem{score: score, hash: keyHash(key), keyLen: int32(i), key: key,
					template: "t" + strconv.Itoa(int(score%3)), message: "m" + key, owner: "o", hint: strconv.Itoa(i % 2)}
			}
			switch order {
			case "growing":
				slices.SortFunc(items, func(p, q findItem) int { return cmp.Compare(p.score, q.score) })
			case "shrinking":
				slices.SortFunc(items, func(p, q findItem) int { return cmp.Compare(q.score, p.score) })
			}
			fh, bh := newFindTop(tt.n), newBHeap(tt.n, worse)
			for _, it := range items {
				fh.push(it)
				bh.push(it)
				if len(fh.h) > fh.room() || len(fh.details) > 2*fh.room() {
					t.Fatalf("n=%d: buffer of %d (%d texts) past room %d", tt.n, len(fh.h), len(fh.details), fh.room())
				}
			}
			var got []findItem
			for _, e := range fh.kept() {
				it := fh.item(&e)
				if it.score != e.score || it.key != e.key || it.hash != e.hash || it.hash != keyHash(it.key) ||
					it.template != "t"+strconv.Itoa(int(it.score%3)) || it.message != "m"+it.key || it.owner != "o" || it.hint != strconv.Itoa(int(it.keyLen)%2) {
					t.Fatalf("n=%d: entry %+v out of step with its item %+v", tt.n, e, it)
				}
				got = append(got, it)
			}
			want := slices.Clone(bh.items)
			byRank := func(p, q findItem) int { return cmpRanked(p.score, p.key, q.score, q.key) }
			slices.SortFunc(got, byRank)
			slices.SortFunc(want, byRank)
			if len(got) != len(want) {
				t.Fatalf("n=%d %s: %d kept, bheap %d", tt.n, order, len(got), len(want))
			}
			for i := range got {
				if got[i].score != want[i].score || got[i].key != want[i].key {
					t.Fatalf("n=%d %s #%d: %d %q, bheap %d %q", tt.n, order, i, got[i].score, got[i].key, want[i].score, want[i].key)
				}
			}
		}
	}
}

// TestSelectEntries checks the quickselect on its own: s[:k] are the k
// best, for every k, with many equal entries.
func TestSelectEntries(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, size := range []int{2, 3, 5, 17, 100, 1000} {
		for _, distinct := range []int{1, 2, 10, 1 << 20} {
			base := make([]fentry, size)
			for i := range base {
				v := rng.IntN(distinct)
				base[i] = fentry{score: int64(v % 7), hash: uint64(v), key: strconv.Itoa(v)}
			}
			sorted := slices.Clone(base)
			slices.SortFunc(sorted, cmpOf(func(p, q *fentry) bool { return fentryWorse(q, p) })) // better first
			for k := 1; k < size; k++ {
				s := slices.Clone(base)
				selectEntries(s, k)
				for _, in := range s[:k] {
					for _, out := range s[k:] {
						if fentryWorse(&in, &out) {
							t.Fatalf("size %d k %d: %+v kept, %+v dropped", size, k, in, out)
						}
					}
				}
				if k > 200 {
					k += size / 10 // keep the big cases quick
				}
			}
		}
	}
}

// TestSortFindings holds sortFindings to the plain comparison: severity
// (highest first), rule in SPEC order, bytes (largest first), key.
func TestSortFindings(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	rules := []string{finding.NoTTL, finding.Unregistered, finding.PII, "zz-custom", finding.BigKey}
	prefixes := []string{"", "tmp_data_2024", "tmp_data_2024\x00", "user:", "\xff\xfe", "a_long_common_prefix_of_a_family_0123456789:"}
	for round := range 50 {
		var items []keptRef
		for range rng.IntN(300) {
			key := prefixes[rng.IntN(len(prefixes))] + strconv.Itoa(rng.IntN(50))
			if rng.IntN(3) == 0 {
				key += strings.Repeat("x", rng.IntN(40)) + strconv.Itoa(rng.IntN(3))
			}
			if rng.IntN(4) == 0 {
				key += "\x00"
			}
			items = append(items, keptRef{rule: rules[rng.IntN(len(rules))], ent: &fentry{score: int64(rng.IntN(4)), key: key, sev: finding.Severity(rng.IntN(3))}})
		}
		want := slices.Clone(items)
		slices.SortStableFunc(want, func(p, q keptRef) int {
			return cmp.Or(cmp.Compare(q.ent.sev, p.ent.sev), cmp.Compare(report.RuleRank(p.rule), report.RuleRank(q.rule)),
				strings.Compare(p.rule, q.rule), cmp.Compare(q.ent.score, p.ent.score), strings.Compare(p.ent.key, q.ent.key))
		})
		// As Report builds it, one block per rule (severities mixed in a
		// block), and in any order (the fallback).
		grouped := slices.Clone(items)
		slices.SortStableFunc(grouped, func(p, q keptRef) int { return strings.Compare(p.rule, q.rule) })
		for _, refs := range [][]keptRef{grouped, slices.Clone(items)} {
			order := sortFindings(refs)
			for i := range want {
				g, w := refs[order[i]], want[i]
				if g.ent.sev != w.ent.sev || g.rule != w.rule || g.ent.score != w.ent.score || g.ent.key != w.ent.key {
					t.Fatalf("round %d #%d: got %v %s %d %q, want %v %s %d %q", round, i,
						g.ent.sev, g.rule, g.ent.score, g.ent.key, w.ent.sev, w.rule, w.ent.score, w.ent.key)
				}
			}
		}
	}
}

// BenchmarkSortFindings is the report's order of four full finding lists
// (10,000 each) of two families: a few sizes, so that most comparisons
// go past the bytes to the keys.
func BenchmarkSortFindings(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	rules := []string{finding.Unregistered, finding.NoTTL, finding.Separator, finding.GuardForeign}
	var refs []keptRef
	for _, rule := range rules {
		for range 10000 {
			key := "order:order:" + strconv.Itoa(100000+rng.IntN(900000)) + ":base"
			if rng.IntN(2) == 0 {
				key = "tmp_data_2024032115" + strconv.Itoa(1000+rng.IntN(9000)) + "_" + strconv.Itoa(100000+rng.IntN(900000))
			}
			refs = append(refs, keptRef{rule: rule, ent: &fentry{score: int64(100 + 8*rng.IntN(4)), key: key, sev: finding.Warning}})
		}
	}
	kept := make([]keptRef, len(refs))
	for b.Loop() {
		copy(kept, refs)
		sortFindings(kept)
	}
}

// TestSortRanks holds the rank quicksort and its heapsort fallback to
// slices.SortFunc on inputs of the shapes that break naive pivots:
// sorted, reversed, all equal, organ pipe, few distinct values, random.
func TestSortRanks(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	cmpRank := cmpOf(rankLess)
	shapes := map[string]func(i, n int) uint64{
		"sorted":   func(i, n int) uint64 { return uint64(i) },
		"reversed": func(i, n int) uint64 { return uint64(n - i) },
		"equal":    func(i, n int) uint64 { return 7 },
		"pipe":     func(i, n int) uint64 { return uint64(min(i, n-i)) },
		"few":      func(i, n int) uint64 { return uint64(rng.IntN(3)) },
		"random":   func(i, n int) uint64 { return rng.Uint64() },
	}
	for name, shape := range shapes {
		for _, n := range []int{0, 1, 2, 12, 13, 100, 1000, 5000} {
			s := make([]rankKey, n)
			for i := range s {
				v := shape(i, n)
				s[i] = rankKey{top: v >> 60, words: [3]uint64{v, v >> 3, uint64(i % 2)}, i: int32(i)}
			}
			want := slices.Clone(s)
			slices.SortStableFunc(want, cmpRank)
			for _, sorter := range []func([]rankKey){sortRanks, heapRanks} {
				got := slices.Clone(s)
				sorter(got)
				for i := range got {
					if cmpRank(got[i], want[i]) != 0 {
						t.Fatalf("%s, %d entries: #%d is %+v, want %+v", name, n, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// cmpOf turns a strict order into the comparison slices.SortFunc takes.
func cmpOf[T any](less func(a, b *T) bool) func(a, b T) int {
	return func(a, b T) int {
		switch {
		case less(&a, &b):
			return -1
		case less(&b, &a):
			return 1
		}
		return 0
	}
}
