package hotkeys

import (
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/keyguard/keyguard/registry"
)

// TestLFUTopKeepsWhatTopLFUKeeps: what the walk keeps keys in ends
// with the keys topLFU keeps of everything offered, in any order of
// offers, with counters that tie (LFU counters bunch on a few values).
func TestLFUTopKeepsWhatTopLFUKeeps(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 7, 100, 5000, -5000} {
		flat := n < 0 // every counter one of two: the lowest kept is cut by name
		n = max(n, -n)
		for _, k := range []int{1, 2, 3, 10, 64, 1000, 10000} {
			var all []LFUKey
			for range n {
				all = append(all, LFUKey{
					Key: fmt.Sprintf("k:%d", rng.IntN(max(n/2, 1))), DB: rng.IntN(3), Node: fmt.Sprintf("n%d", rng.IntN(2)),
					Freq: 10 + rng.IntN(6)*rng.IntN(50), // ties, and a few high
				})
				if flat {
					all[len(all)-1].Freq = 10 + rng.IntN(2)
				}
				if rng.IntN(100) == 0 { // counters OBJECT FREQ does not give, ordered all the same
					all[len(all)-1].Freq = 250 + rng.IntN(20) - 300*rng.IntN(2)
				}
			}
			top := &lfuTop{k: k}
			buf := make([]byte, 0, 64)
			for _, f := range all {
				// Offered through one buffer written again after each
				// offer: what is kept is a copy of the name.
				buf = append(buf[:0], f.Key...)
				f.Key = unsafe.String(unsafe.SliceData(buf), len(buf))
				top.offer(f)
				clear(buf[:cap(buf)])
			}
			kept := top.kept()
			if !slices.IsSortedFunc(kept, lfuCmp) {
				t.Fatalf("n=%d k=%d: kept not in lfuCmp's order", n, k)
			}
			got := topLFU(kept, k)
			want := topLFU(slices.Clone(all), k)
			if !slices.Equal(got, want) {
				t.Fatalf("n=%d k=%d: lfuTop kept %d keys, topLFU %d; first difference at %d", n, k, len(got), len(want), firstUnequal(got, want))
			}
			if held := len(top.kept()); held >= 3*k+64 {
				t.Fatalf("n=%d k=%d: %d keys held", n, k, held)
			}
		}
	}
}

// TestMergeLFU: the nodes' and databases' lists, each in lfuCmp's order,
// merge into the order a sort of them all gives.
func TestMergeLFU(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, lists := range []int{0, 1, 2, 3, 5, 8} {
		for _, size := range []int{0, 1, 10, 1000} {
			var in [][]LFUKey
			var all []LFUKey
			for l := range lists {
				var keys []LFUKey
				for range rng.IntN(size + 1) {
					keys = append(keys, LFUKey{Key: fmt.Sprintf("k:%d", rng.IntN(size+1)), DB: rng.IntN(2), Node: fmt.Sprintf("n%d", l), Freq: 10 + rng.IntN(5)})
				}
				slices.SortFunc(keys, lfuCmp)
				in = append(in, keys)
				all = append(all, keys...)
			}
			slices.SortFunc(all, lfuCmp)
			got := mergeLFU(in)
			if len(got) != len(all) || (len(all) > 0 && !slices.Equal(got, all)) {
				t.Fatalf("%d lists of up to %d: merged %d keys, want %d; first difference at %d", lists, size, len(got), len(all), firstUnequal(got, all))
			}
		}
	}
}

func firstUnequal(a, b []LFUKey) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// BenchmarkBuildReport: the report of --top 100000 keys of the LFU walk,
// each of a family inferred from its name, 45% of them hot (a finding
// each), written as JSON.
//
//	go test ./internal/hotkeys -run XXX -bench BuildReport -benchmem
func BenchmarkBuildReport(b *testing.B) {
	empty, err := registry.Parse("", []byte("version: 1\nkeys: []\n"))
	if err != nil {
		b.Fatal(err)
	}
	lfu := &LFUResult{Floor: 10}
	shapes := []string{"order:order:%d:base", "auth:session:u%d", "rank:shop:%d:sales", "queue:order:%d:events"}
	for i := range 100000 {
		lfu.Keys = append(lfu.Keys, LFUKey{Key: fmt.Sprintf(shapes[i%len(shapes)], 100000+i*7), Freq: 10 + i%180, Node: "127.0.0.1:6379"})
	}
	lfu.Keys = topLFU(lfu.Keys, len(lfu.Keys))
	opts := ReportOptions{Target: "redis://127.0.0.1:6379", Window: time.Minute, Top: 100000, NoRegistry: true}
	b.ReportAllocs()
	for b.Loop() {
		r := BuildReport(empty, nil, lfu, nil, opts)
		if err := r.WriteJSON(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
