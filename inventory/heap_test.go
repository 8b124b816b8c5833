package inventory

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/keyguard/keyguard/finding"
)

// TestFindHeapSameAsBHeap checks that the slab-backed finding heap keeps
// the same findings as the plain heap it replaced, whatever the order
// they arrive in, ties included.
func TestFindHeapSameAsBHeap(t *testing.T) {
	worse := func(a, b *findItem) bool { return rankedWorse(a.score, a.f.Key, b.score, b.f.Key) }
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tt := range []struct{ n, items, scores, keys int }{
		{0, 10, 5, 5}, {1, 50, 3, 10}, {5, 200, 4, 30}, {20, 1000, 50, 100}, {100, 50, 10, 20}, {64, 5000, 1000, 4000},
	} {
		fh, bh := newFindHeap(tt.n), newBHeap(tt.n, worse)
		for i := 0; i < tt.items; i++ {
			it := findItem{score: int64(rng.IntN(tt.scores)), keyLen: i, f: finding.Finding{Key: "k" + strconv.Itoa(rng.IntN(tt.keys))}}
			if a, b := fh.push(it), bh.push(it); a != b {
				t.Fatalf("n=%d item %d: findHeap kept %v, bheap %v", tt.n, i, a, b)
			}
			if fh.full() && len(fh.items) > 0 {
				s, k := fh.rootRank()
				if r := bh.root(); s != r.score || k != r.f.Key {
					t.Fatalf("n=%d item %d: root %d %q, bheap %d %q", tt.n, i, s, k, r.score, r.f.Key)
				}
			}
		}
		byRank := func(p, q findItem) int { return cmpRanked(p.score, p.f.Key, q.score, q.f.Key) }
		got, want := slices.Clone(fh.items), slices.Clone(bh.items)
		slices.SortStableFunc(got, byRank)
		slices.SortStableFunc(want, byRank)
		if len(got) != len(want) {
			t.Fatalf("n=%d: %d kept, bheap %d", tt.n, len(got), len(want))
		}
		for i := range got {
			if got[i].score != want[i].score || got[i].f.Key != want[i].f.Key {
				t.Errorf("n=%d #%d: %d %q, bheap %d %q", tt.n, i, got[i].score, got[i].f.Key, want[i].score, want[i].f.Key)
			}
		}
		// Position by position the same items (keyLen tells them apart):
		// ties between equal keys settle as before, and the report, which
		// reads the heap in order, sees the same sequence.
		for i, e := range fh.h {
			it := fh.items[e.idx]
			if it.score != e.score || it.f.Key != e.key {
				t.Errorf("n=%d: entry %d out of step with its item", tt.n, i)
			}
			if it.keyLen != bh.items[i].keyLen {
				t.Errorf("n=%d: position %d holds item %d, bheap item %d", tt.n, i, it.keyLen, bh.items[i].keyLen)
			}
		}
	}
}
