package inventory

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestFindTopSameAsBHeap checks that the finding buffer keeps the same
// findings as a plain heap ordered by findWorse, whatever the order they
// arrive in, ties included: the kept ranks are the best n of all pushed.
func TestFindTopSameAsBHeap(t *testing.T) {
	type findItem struct {
		fentry
		findDetail
	}
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
				items[i] = findItem{fentry{score: score, hash: keyHash(key), keyLen: int32(i), key: key},
					findDetail{template: "t" + strconv.Itoa(int(score%3)), message: "m" + key, owner: "o", hint: strconv.Itoa(i % 2)}}
			}
			switch order {
			case "growing":
				slices.SortFunc(items, func(p, q findItem) int { return cmp.Compare(p.score, q.score) })
			case "shrinking":
				slices.SortFunc(items, func(p, q findItem) int { return cmp.Compare(q.score, p.score) })
			}
			fh, bh := newFindTop(tt.n), newBHeap(tt.n, worse, func(it *findItem) (int64, uint64) { return it.score, it.hash })
			for _, it := range items {
				fh.push(it.fentry, it.findDetail)
				bh.push(it)
				if len(fh.h) > fh.room() || len(fh.details) > 2*fh.room() {
					t.Fatalf("n=%d: buffer of %d (%d texts) past room %d", tt.n, len(fh.h), len(fh.details), fh.room())
				}
			}
			var got []findItem
			for _, e := range fh.kept() {
				it := findItem{e, fh.details[e.detail]}
				if it.score != e.score || it.key != e.key || it.hash != e.hash || it.hash != keyHash(it.key) ||
					it.template != "t"+strconv.Itoa(int(it.score%3)) || it.message != "m"+it.key || it.owner != "o" || it.hint != strconv.Itoa(int(it.keyLen)%2) {
					t.Fatalf("n=%d: entry %+v out of step with its item %+v", tt.n, e, it)
				}
				got = append(got, it)
			}
			want := slices.Clone(bh.items)
			byRank := func(p, q findItem) int { return cmp.Or(cmp.Compare(q.score, p.score), strings.Compare(p.key, q.key)) }
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

// offer is a key offered to a topBuf in the tests: the rank and identity
// the list gives it, and its number, which the list carries as its value.
type offer struct {
	score      int64
	hash       uint64
	key        string
	keyLen, db int
	tag        int
}

// offerWorse is the order the lists keep: as findWorse, then by database.
func offerWorse(a, b *offer) bool {
	return findWorse(a.score, a.hash, a.key, b.score, b.hash, b.key) || a.score == b.score && a.key == b.key && a.db > b.db
}

func offerRank(o *offer) (int64, uint64) { return o.score, o.hash }

func offerID(o *offer) itemID { return itemID{o.key, o.keyLen, o.db} }

func pushOffer(h *topBuf[int], o offer) bool {
	return h.push(listKey{score: o.score, hash: o.hash, keyLen: int32(o.keyLen), db: int32(o.db)}, o.key, o.tag)
}

// listOffers is what h keeps, as offers without their numbers, once it
// has checked that each key carries the number of an offer of its own
// identity and score: a value moved with its key.
func listOffers(t *testing.T, h *topBuf[int], offers []offer) []offer {
	t.Helper()
	keys, tags := h.list()
	if len(keys) != len(tags) {
		t.Fatalf("%d keys, %d values", len(keys), len(tags))
	}
	out := make([]offer, len(keys))
	for i := range keys {
		k := &keys[i]
		out[i] = offer{score: k.score, hash: k.hash, key: h.name(k), keyLen: int(k.keyLen), db: int(k.db)}
		o := offers[tags[i]]
		if offerID(&o) != offerID(&out[i]) || o.score != k.score || o.hash != k.hash {
			t.Fatalf("key %+v carries the value of offer %+v", out[i], o)
		}
	}
	return out
}

// TestTopBuf checks the top list against a reference, the best n of
// the best offer per key, with keys offered many times in every order,
// and its threshold against the list it keeps.
func TestTopBuf(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 2, 7, 50, 1000} {
		for _, keys := range []int{3, n, 5 * n} {
			for _, order := range []string{"random", "growing", "shrinking"} {
				var items []offer
				for range 20 * keys {
					it := offer{score: int64(rng.IntN(4 * keys)), key: "k" + strconv.Itoa(rng.IntN(keys)), db: rng.IntN(2)}
					it.keyLen, it.hash = len(it.key), keyHash(it.key)
					items = append(items, it)
				}
				switch order {
				case "growing":
					slices.SortFunc(items, func(p, q offer) int { return cmp.Compare(p.score, q.score) })
				case "shrinking":
					slices.SortFunc(items, func(p, q offer) int { return cmp.Compare(q.score, p.score) })
				}
				for i := range items {
					items[i].tag = i
				}
				h := newTopBuf[int](n)
				ref := newKeyedHeap(n, offerWorse, offerRank, offerID)
				best := map[itemID]offer{}
				for i, it := range items {
					if i == len(items)/2 {
						// A list read midway (a merge reads one, then pushes
						// into it) takes keys in after its scratch was let go.
						listOffers(t, &h, items)
					}
					pushOffer(&h, it)
					it.tag = 0
					ref.push(it)
					if b, ok := best[offerID(&it)]; !ok || b.score < it.score || b.score == it.score && offerWorse(&b, &it) {
						best[offerID(&it)] = it
					}
					if len(h.keys) > h.room() || len(h.vals) != len(h.keys) {
						t.Fatalf("n=%d: buffer of %d keys, %d values past room %d", n, len(h.keys), len(h.vals), h.room())
					}
				}
				var want []offer
				for _, it := range best {
					want = append(want, it)
				}
				better := cmpOf(func(p, q *offer) bool { return offerWorse(q, p) })
				slices.SortFunc(want, better)
				want = want[:min(n, len(want))]
				got := listOffers(t, &h, items)
				slices.SortFunc(got, better)
				if !slices.Equal(got, want) {
					t.Fatalf("n=%d keys=%d %s: kept %v, want %v", n, keys, order, got, want)
				}
				old := slices.Clone(ref.items)
				slices.SortFunc(old, better)
				if !slices.Equal(got, old) {
					t.Fatalf("n=%d keys=%d %s: kept %v, the heap %v", n, keys, order, got, old)
				}
				if h.full() != (len(got) == n) {
					t.Fatalf("n=%d: full %v with %d kept", n, h.full(), len(got))
				}
				if h.full() {
					k, name := h.root()
					root := offer{score: k.score, hash: k.hash, key: name, keyLen: int(k.keyLen), db: int(k.db)}
					if last := got[len(got)-1]; offerWorse(&last, &root) || offerWorse(&root, &last) {
						t.Fatalf("n=%d: the threshold %v is not the worst kept, %v", n, root, last)
					}
				}
			}
		}
	}
}

// BenchmarkTopKeys offers 200,000 keys of random sizes (a tenth of them
// twice, as a walker's duplicates) to top lists of 50 and of 100,000: the
// cost per key must not grow with the list's length past its log.
func BenchmarkTopKeys(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	items := make([]offer, 200_000)
	for i := range items {
		k := i
		if i%10 == 0 {
			k = rng.IntN(len(items))
		}
		key := "order:order:" + strconv.Itoa(k) + ":base"
		items[i] = offer{score: int64(rng.IntN(1 << 20)), key: key, keyLen: len(key), hash: keyHash(key)}
	}
	for _, n := range []int{50, 100_000} {
		b.Run("top="+strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				a := &Aggregator{top: newTopBuf[topVal](n)}
				for _, it := range items {
					if _, ok := beats(&a.top, it.score, it.key); ok {
						a.top.push(listKey{score: it.score, hash: it.hash, keyLen: int32(it.keyLen)}, it.key, topVal{})
					}
				}
			}
		})
	}
}

// FuzzTopBuf holds the top list to a reference (the best n of the best
// offer per key and database) for any sequence of offers: each 3 bytes
// offer key b[0]%32 in database b[1]%3 at size or frequency b[2], so that
// keys come again, in other databases, larger and smaller. Its names are
// long for a third of the keys, so that settles pack them.
func FuzzTopBuf(f *testing.F) {
	f.Add(uint8(3), []byte{1, 0, 5, 1, 1, 5, 1, 0, 9, 2, 0, 1, 1, 0, 2})
	f.Add(uint8(1), []byte{0, 0, 1, 0, 0, 1, 0, 1, 1})
	f.Fuzz(func(t *testing.T, n8 uint8, b []byte) {
		n := int(n8 % 40)
		top := newTopBuf[int](n)
		best := map[itemID]offer{}
		var offers []offer
		for ; len(b) >= 3; b = b[3:] {
			key := "user:" + strconv.Itoa(int(b[0]%32))
			if b[0]%3 == 0 {
				key += strings.Repeat("-", 300)
			}
			offerTracked(&top, offer{score: int64(b[2]), key: key, keyLen: len(key), hash: keyHash(key), db: int(b[1] % 3)}, &offers, best)
		}
		checkTop(t, "top", n, listOffers(t, &top, offers), best, offerWorse)
	})
}

// offerTracked offers it to top and records it: in offers, its tag its
// index there, and in best when it is its identity's best offer so far.
func offerTracked(top *topBuf[int], it offer, offers *[]offer, best map[itemID]offer) {
	it.tag = len(*offers)
	*offers = append(*offers, it)
	pushOffer(top, it)
	it.tag = 0
	if p, ok := best[offerID(&it)]; !ok || offerWorse(&p, &it) {
		best[offerID(&it)] = it
	}
}

func checkTop[T any](t *testing.T, what string, n int, got []T, best map[itemID]T, worse func(a, b *T) bool) {
	t.Helper()
	var want []T
	for _, it := range best {
		want = append(want, it)
	}
	better := cmpOf(func(p, q *T) bool { return worse(q, p) })
	slices.SortFunc(want, better)
	want = want[:min(n, len(want))]
	got = slices.Clone(got)
	slices.SortFunc(got, better)
	if len(got) != len(want) {
		t.Fatalf("%s n=%d: kept %d, want %d", what, n, len(got), len(want))
	}
	for i := range got {
		if better(got[i], want[i]) != 0 {
			t.Fatalf("%s n=%d: at %d kept %+v, want %+v", what, n, i, got[i], want[i])
		}
	}
}

// keyHashBytes is keyHash as first written, a byte at a time for the
// tail: the reference its faster tail must agree with (the hash orders
// reports and is saved in their state).
func keyHashBytes(s string) uint64 {
	const m = 0x9e3779b97f4a7c15
	h := uint64(len(s)) * m
	for ; len(s) >= 8; s = s[8:] {
		v := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
			uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
		h = (h ^ v) * m
		h ^= h >> 29
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		v |= uint64(s[i]) << (8 * i)
	}
	return mix64((h ^ v) * m)
}

// FuzzKeyHash holds keyHash, of a string and of bytes, to the reference
// for any key; the seeds cover every length up to 40.
func FuzzKeyHash(f *testing.F) {
	for n := range 41 {
		f.Add(strings.Repeat("\xff", n))
		f.Add("cache:product:detail:p1234567890"[:min(n, 32)])
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := keyHashBytes(s)
		if got := keyHash(s); got != want {
			t.Fatalf("keyHash(%q) = %x, want %x", s, got, want)
		}
		if got := keyHash([]byte(s)); got != want {
			t.Fatalf("keyHash([]byte(%q)) = %x, want %x", s, got, want)
		}
	})
}

// TestTopBufListLetsGo checks that a long list, once read, holds no spare
// blocks of names nor a settle's scratch (its report's entries are
// written to that memory instead), and that its names are still its keys'.
func TestTopBufListLetsGo(t *testing.T) {
	const n = 20000
	h := newTopBuf[int](n)
	rng := rand.New(rand.NewPCG(7, 8))
	var items []offer
	for i := range 10 * n {
		it := offer{score: int64(rng.IntN(1 << 30)), key: fmt.Sprintf("order:order:%d:detail", i), tag: i}
		it.keyLen, it.hash = len(it.key), keyHash(it.key)
		items = append(items, it)
		pushOffer(&h, it)
	}
	if len(h.spare) == 0 || h.drop == nil {
		t.Fatalf("before list: %d spare blocks, drop %v: the test no longer reaches a pack of names", len(h.spare), h.drop != nil)
	}
	got := listOffers(t, &h, items)
	if len(got) != n {
		t.Fatalf("kept %d keys, want %d", len(got), n)
	}
	if h.spare != nil || h.drop != nil || h.slots != nil {
		t.Fatalf("after list: %d spare blocks, drop %d, slots %d: still held", len(h.spare), cap(h.drop), cap(h.slots))
	}
	if h.lendWords(n) == nil {
		t.Fatal("after list: the ranks the report's sort borrows are gone")
	}
}
