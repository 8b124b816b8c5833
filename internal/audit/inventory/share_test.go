package inventory

import (
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// offerBetter is the reference's choice between two offers of one key
// in one database: the larger, then the lower number (what the lists'
// tie decides by in these tests).
func offerBetter(a, b *offer) bool {
	return a.score > b.score || a.score == b.score && a.tag < b.tag
}

// shareOffers offers each goroutine's share of offers to one shared list
// through a feed of its own that pushes every at keys, as a pipeline's
// aggregators do, and returns the list once every feed is flushed.
func shareOffers(t *testing.T, n, goroutines, at int, offers []offer, deal func(i int) int) *sharedList[int] {
	t.Helper()
	s := newSharedList[int](n)
	s.list.tie = func(a, b *int) bool { return *a > *b }
	var wg sync.WaitGroup
	for w := range goroutines {
		wg.Go(func() {
			f := newFeed(s, nil)
			f.at = at
			for i := range offers {
				if deal(i) != w {
					continue
				}
				o := &offers[i]
				hash, ok := f.admits(o.score, o.key)
				if !ok {
					continue
				}
				if hash != o.hash {
					t.Errorf("admits hashed %q to %x, not %x", o.key, hash, o.hash)
				}
				f.add(listKey{score: o.score, hash: hash, keyLen: int32(o.keyLen), db: int32(o.db)}, o.key, o.tag)
				if i%7 == 0 {
					runtime.Gosched() // let the others push and settle in between
				}
			}
			f.flush(true)
		})
	}
	wg.Wait()
	return s
}

// checkShared holds the shared list to the reference: the best n of the
// best offer (offerBetter) of each key and database, each key carrying
// the number of that very offer.
func checkShared(t *testing.T, what string, n int, s *sharedList[int], offers []offer) {
	t.Helper()
	best := map[itemID]offer{}
	for _, o := range offers {
		if b, ok := best[offerID(&o)]; !ok || offerBetter(&o, &b) {
			best[offerID(&o)] = o
		}
	}
	keys, tags := s.list.list()
	for i := range keys {
		id := itemID{s.list.name(&keys[i]), int(keys[i].keyLen), int(keys[i].db)}
		if b := best[id]; tags[i] != b.tag {
			t.Fatalf("%s: key %v carries offer %d (%+v), want the best offer %d (%+v)", what, id, tags[i], offers[tags[i]], b.tag, b)
		}
	}
	untagged := map[itemID]offer{}
	for id, o := range best {
		o.tag = 0
		untagged[id] = o
	}
	checkTop(t, what, n, listOffers(t, &s.list, offers), untagged, offerWorse)
	if !s.list.full() {
		return
	}
	// The bar lags the threshold (list settled last), never passes it.
	k, _ := s.list.root()
	if b := s.bar.Load(); b != nil && (b.score > k.score || b.score == k.score && b.hash < k.hash) {
		t.Fatalf("%s: bar %+v above the threshold %+v", what, b, k)
	}
	s.publish()
	if b := s.bar.Load(); b == nil || b.score != k.score || b.hash != k.hash {
		t.Fatalf("%s: bar %+v published, threshold %+v", what, b, k)
	}
}

// TestSharedList offers keys, many of them several times at one size
// with different values, to a list shared by 1 to 4 goroutines, dealt
// in turn, at random and in runs: what the list keeps is the single
// list's reference whatever goroutine offered a key first.
func TestSharedList(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{1, 7, 50, 1000} {
		for _, keys := range []int{n, 5 * n} {
			per := 12
			if testing.Short() && n >= 1000 {
				per = 3
			}
			var offers []offer
			for range per * keys {
				o := offer{score: int64(rng.IntN(keys/4 + 2)), key: "k" + strconv.Itoa(rng.IntN(keys)), db: rng.IntN(2), tag: len(offers)}
				if rng.IntN(5) == 0 {
					o.key += strings.Repeat("-", 200)
				}
				o.keyLen, o.hash = len(o.key), keyHash(o.key)
				offers = append(offers, o)
			}
			for _, g := range []int{1, 2, 4} {
				for _, at := range []int{1, 5, feedAt} {
					for d, deal := range []func(int) int{
						func(i int) int { return i % g },
						func(i int) int { return int(keyHash(strconv.Itoa(i)) % uint64(g)) },
						func(i int) int { return i * g / len(offers) },
					} {
						s := shareOffers(t, n, g, at, offers, deal)
						checkShared(t, "n="+strconv.Itoa(n)+" keys="+strconv.Itoa(keys)+" g="+strconv.Itoa(g)+" at="+strconv.Itoa(at)+" deal "+strconv.Itoa(d), n, s, offers)
					}
				}
			}
		}
	}
}

// FuzzSharedList holds a list shared by goroutines to the same
// reference for any offers: each 3 bytes offer key b[0]%32 in database
// b[1]%3 at size b[2] (keys come again, larger, smaller and equal, with
// the number of the offer as their value); g8 sets 1 to 4 goroutines,
// at8 how many keys a feed holds before it pushes them (1 to 8, so that
// pushes and settles come between the others' offers), and b[0]'s high
// bits which goroutine offers it. A third of the names are long, so
// that settles pack them.
func FuzzSharedList(f *testing.F) {
	f.Add(uint8(3), uint8(1), uint8(0), []byte{1, 0, 5, 1, 1, 5, 1, 0, 9, 2, 0, 1, 1, 0, 2, 65, 0, 5, 129, 0, 5})
	f.Add(uint8(1), uint8(3), uint8(2), []byte{0, 0, 1, 64, 0, 1, 128, 0, 1, 192, 1, 1})
	f.Fuzz(func(t *testing.T, n8, g8, at8 uint8, b []byte) {
		n, g, at := int(n8%40), 1+int(g8%4), 1+int(at8%8)
		var offers []offer
		var who []int
		for ; len(b) >= 3; b = b[3:] {
			key := "user:" + strconv.Itoa(int(b[0]%32))
			if b[0]%3 == 0 {
				key += strings.Repeat("-", 300)
			}
			offers = append(offers, offer{score: int64(b[2]), key: key, keyLen: len(key), hash: keyHash(key), db: int(b[1] % 3), tag: len(offers)})
			who = append(who, int(b[0]>>6)%g)
		}
		s := shareOffers(t, n, g, at, offers, func(i int) int { return who[i] })
		checkShared(t, "shared", n, s, offers)
	})
}

// BenchmarkTwoAggregators offers 1,000,000 keys of which nine in ten have
// one size (as the top list of an RDB file sees them), dealt in turn to
// two goroutines, to a list of n: each goroutine's own list merged at the
// end (as before the lists were shared), or one list shared through a
// feed each.
func BenchmarkTwoAggregators(b *testing.B) {
	rng := rand.New(rand.NewPCG(13, 14))
	items := make([]offer, 1_000_000)
	for i := range items {
		key := "cache:product:detail:p" + strconv.Itoa(i)
		size := int64(200)
		if rng.IntN(10) == 0 {
			size = int64(700 + rng.IntN(30))
		}
		items[i] = offer{score: size, key: key, keyLen: len(key), hash: keyHash(key)}
	}
	lk := func(o *offer, hash uint64) listKey {
		return listKey{score: o.score, hash: hash, keyLen: int32(o.keyLen)}
	}
	for _, n := range []int{50, 100_000} {
		b.Run("own+merge/top="+strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				var lists [2]topBuf[int]
				var wg sync.WaitGroup
				for w := range lists {
					lists[w] = newTopBuf[int](n)
					wg.Go(func() {
						h := &lists[w]
						for i := w; i < len(items); i += 2 {
							if hash, ok := beats(h, items[i].score, items[i].key); ok {
								h.push(lk(&items[i], hash), items[i].key, i)
							}
						}
					})
				}
				wg.Wait()
				keys, vals := lists[1].list()
				for i := range keys {
					lists[0].push(keys[i], lists[1].name(&keys[i]), vals[i])
				}
				lists[0].list()
			}
		})
		b.Run("shared/top="+strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				s := newSharedList[int](n)
				var wg sync.WaitGroup
				for w := range 2 {
					wg.Go(func() {
						f := newFeed(s, nil)
						for i := w; i < len(items); i += 2 {
							if hash, ok := f.admits(items[i].score, items[i].key); ok {
								f.add(lk(&items[i], hash), items[i].key, i)
							}
						}
						f.flush(true)
					})
				}
				wg.Wait()
				s.list.list()
			}
		})
	}
}
