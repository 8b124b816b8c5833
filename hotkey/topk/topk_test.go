package topk

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"sync"
	"testing"
)

// zipfStream returns n draws from a Zipf distribution over m keys with a
// fixed seed, and the exact count of every key.
func zipfStream(seed uint64, s float64, m, n int) ([]string, map[string]int) {
	r := rand.New(rand.NewPCG(seed, seed^0x5bd1e995))
	z := rand.NewZipf(r, s, 1, uint64(m-1))
	keys := make([]string, m)
	for i := range keys {
		keys[i] = "cache:product:detail:P" + strconv.Itoa(i*7919%1000003)
	}
	stream := make([]string, n)
	exact := map[string]int{}
	for i := range stream {
		k := keys[z.Uint64()]
		stream[i] = k
		exact[k]++
	}
	return stream, exact
}

func exactTop(exact map[string]int, k int) []string {
	keys := make([]string, 0, len(exact))
	for key := range exact {
		keys = append(keys, key)
	}
	sort.Slice(keys, func(i, j int) bool {
		if exact[keys[i]] != exact[keys[j]] {
			return exact[keys[i]] > exact[keys[j]]
		}
		return keys[i] < keys[j]
	})
	return keys[:k]
}

func recall(got []Item, want []string) float64 {
	hit := 0
	for _, w := range want {
		for _, g := range got {
			if g.Key == w {
				hit++
				break
			}
		}
	}
	return float64(hit) / float64(len(want))
}

// TestZipfRecall: on a Zipf workload the top 10 of the sketch hold at
// least 9 of the exact top 10, single-threaded and from 4 goroutines.
func TestZipfRecall(t *testing.T) {
	for _, tc := range []struct {
		s       float64
		workers int
	}{{1.1, 1}, {1.1, 4}, {1.2, 1}, {1.5, 1}, {1.2, 4}} {
		if testing.Short() && tc.s != 1.1 {
			continue // the flattest skew, alone and concurrent, is the hardest case
		}
		t.Run(fmt.Sprintf("s=%g/workers=%d", tc.s, tc.workers), func(t *testing.T) {
			stream, exact := zipfStream(42, tc.s, 100_000, 400_000)
			sk := New(Options{K: 32, Seed: 7})
			var wg sync.WaitGroup
			per := len(stream) / tc.workers
			for w := range tc.workers {
				wg.Go(func() {
					for _, k := range stream[w*per : (w+1)*per] {
						sk.Observe(k)
					}
				})
			}
			wg.Wait()
			top := sk.Top(nil)
			if len(top) > 10 {
				top = top[:10]
			}
			want := exactTop(exact, 10)
			r := recall(top, want)
			t.Logf("top-10 recall %.2f; heaviest key estimated %d of %d", r, sk.Count(want[0]), exact[want[0]])
			if r < 0.9 {
				t.Errorf("top-10 recall %.2f < 0.9\ngot  %v\nwant %v", r, top, want)
			}
			// No overestimate beyond the true count (fingerprint
			// collisions aside, which 32 bits make vanishingly rare here).
			for _, it := range top {
				if int(it.Count) > exact[it.Key] {
					t.Errorf("%s: estimate %d above the true count %d", it.Key, it.Count, exact[it.Key])
				}
			}
			// The heaviest key's estimate is within 5% of its count.
			if c := exact[want[0]]; int(sk.Count(want[0])) < c*95/100 {
				t.Errorf("heaviest key %s: estimate %d, true %d", want[0], sk.Count(want[0]), c)
			}
		})
	}
}

// TestExactWhenAlone: without collisions every key counts exactly.
func TestExactWhenAlone(t *testing.T) {
	sk := New(Options{K: 4, Width: 1 << 12, Seed: 1})
	want := map[string]uint32{"a": 5, "b": 3, "c": 9, "": 2, "long:key:with:many:segments:0123456789": 4}
	for k, n := range want {
		for range n {
			sk.Observe(k)
		}
	}
	for k, n := range want {
		if got := sk.Count(k); got != n {
			t.Errorf("Count(%q) = %d, want %d", k, got, n)
		}
	}
	top := sk.Top(nil)
	if len(top) != 4 || top[0].Key != "c" || top[0].Count != 9 {
		t.Errorf("Top = %v, want 4 items led by c:9", top)
	}
	if sk.Count("never") != 0 {
		t.Errorf("unseen key has a count")
	}
}

// TestHalve: halving ages counts, frees buckets and lets a new heavy key
// displace an old one.
func TestHalve(t *testing.T) {
	sk := New(Options{K: 1, Width: 1 << 10, Seed: 3})
	for range 100 {
		sk.Observe("old")
	}
	sk.Halve()
	if c := sk.Count("old"); c != 50 {
		t.Fatalf("after Halve: %d, want 50", c)
	}
	for range 6 {
		sk.Halve()
	}
	if c := sk.Count("old"); c != 0 {
		t.Fatalf("after 7 halvings: %d, want 0", c)
	}
	for range 10 {
		sk.Observe("new")
	}
	if top := sk.Top(nil); len(top) != 1 || top[0].Key != "new" {
		t.Fatalf("Top = %v, want [new]", top)
	}
	sk.Reset()
	if top := sk.Top(nil); len(top) != 0 || sk.Count("new") != 0 {
		t.Fatalf("after Reset: %v", top)
	}
}

// TestTopKeepsCopies: a key given as a string aliasing a reused buffer is
// copied when it enters the list.
func TestTopKeepsCopies(t *testing.T) {
	sk := New(Options{K: 2, Seed: 5})
	buf := []byte("key:aaaa")
	for range 3 {
		sk.Observe(string(buf)) // a fresh string each time, as the compiler may alias
	}
	copy(buf, "key:bbbb")
	if top := sk.Top(nil); len(top) != 1 || top[0].Key != "key:aaaa" {
		t.Fatalf("Top = %v", top)
	}
}

// TestPresenceSet exercises insert and remove with wrap-around and
// collisions against a map.
func TestPresenceSet(t *testing.T) {
	var tl topList
	tl.init(16) // 64 slots
	r := rand.New(rand.NewPCG(1, 2))
	in := map[uint64]bool{}
	var pool []uint64
	for i := 0; i < 64; i++ {
		// Many hashes share a home slot near the end so that probing wraps.
		pool = append(pool, uint64(60+r.IntN(8))|uint64(r.Uint32())<<8)
	}
	for step := 0; step < 4000; step++ {
		h := pool[r.IntN(len(pool))]
		switch {
		case in[h]:
			tl.remove(h)
			delete(in, h)
		case len(in) < 40:
			tl.insert(h)
			in[h] = true
		}
		for _, p := range pool {
			if tl.contains(p) != in[p] {
				t.Fatalf("step %d: contains(%x) = %v, want %v", step, p, !in[p], in[p])
			}
		}
	}
}

// TestConcurrentObserve runs Observe, Top and Halve together (for -race)
// and checks that a dominant key stays on top.
func TestConcurrentObserve(t *testing.T) {
	sk := New(Options{K: 8, Seed: 11})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 20000 {
				if i%2 == 0 {
					sk.Observe("hot")
				} else {
					sk.Observe("k" + strconv.Itoa(w*100000+i))
				}
			}
		})
	}
	wg.Go(func() {
		for range 50 {
			sk.Top(nil)
			sk.Halve()
		}
	})
	wg.Wait()
	// The halvings may have outlasted the writers: the key comes back on top.
	for range 1000 {
		sk.Observe("hot")
	}
	top := sk.Top(nil)
	if len(top) == 0 || top[0].Key != "hot" {
		t.Fatalf("Top = %v, want hot first", top)
	}
	if !slices.IsSortedFunc(top, func(a, b Item) int { return int(b.Count) - int(a.Count) }) {
		t.Fatalf("Top not sorted: %v", top)
	}
}

func TestObserveDoesNotAllocate(t *testing.T) {
	sk := New(Options{K: 16, Seed: 9})
	keys := make([]string, 64)
	for i := range keys {
		keys[i] = "cache:product:detail:P" + strconv.Itoa(i)
	}
	for _, k := range keys { // fill the list first
		for range 10 {
			sk.Observe(k)
		}
	}
	i := 0
	if n := testing.AllocsPerRun(10000, func() {
		sk.Observe(keys[i%len(keys)])
		i++
	}); n != 0 {
		t.Fatalf("Observe allocates %.1f times per call", n)
	}
}

// FuzzHash: the hash reads every byte (keys differing in one byte hash
// apart) and never panics on any input length.
func FuzzHash(f *testing.F) {
	f.Add("cache:product:detail:P1001", 3)
	f.Add("", 0)
	f.Add("12345678", 7)
	f.Fuzz(func(t *testing.T, s string, pos int) {
		h := hashString(1, s)
		if len(s) == 0 {
			return
		}
		if pos < 0 {
			pos = -pos
		}
		pos %= len(s)
		b := []byte(s)
		b[pos] ^= 0x01
		if hashString(1, string(b)) == h {
			t.Fatalf("flipping byte %d of %q does not change the hash", pos, s)
		}
	})
}
