// Package topk finds the most frequent keys of a stream in bounded memory:
// a HeavyKeeper sketch (count with exponential decay) plus a list of the k
// heaviest keys, safe for concurrent use without a lock on the common path.
//
//	s := topk.New(topk.Options{K: 32})
//	s.Observe("cache:product:detail:P1001") // from any goroutine, 0 allocs
//	for _, it := range s.Top(nil) { fmt.Println(it.Key, it.Count) }
//
// Counts age with Halve (the caller's window): a key seen at a steady rate
// r and halved every w counts about 2·r·w.
//
// It imports no package of this module.
package topk

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Options sizes a Sketch. Zero values take the defaults.
type Options struct {
	// K is how many keys Top reports (default 32).
	K int
	// Width is the number of buckets per row, rounded up to a power of two
	// (default 16·K, at least 256; at most 65536).
	Width int
	// Depth is the number of rows (default 4).
	Depth int
	// Base is HeavyKeeper's decay base b: a bucket holding count c is
	// decremented by a colliding key with probability b^-c (default 1.08).
	Base float64
	// Seed seeds the key hash. Zero picks one from the clock; tests pass a
	// fixed seed.
	Seed uint64
}

// Item is one key of the top list and its estimated count.
type Item struct {
	Key   string
	Count uint32
}

// Sketch is a concurrent HeavyKeeper with a top-k list.
//
// Each row has Width buckets of {fingerprint, count} packed in one
// uint64, updated by compare-and-swap. A key increments its bucket in
// every row when the bucket holds its fingerprint or is empty; a bucket
// held by another key decays with probability Base^-count and is taken
// over when it reaches zero. Small keys thus wear each other out while a
// heavy key keeps its buckets, and its count is the largest of its rows.
// Counts never overestimate except on a 32-bit fingerprint collision in
// the same bucket.
type Sketch struct {
	seed    uint64
	depth   int
	shift   uint   // log2(width)
	mask    uint64 // width - 1
	buckets []atomic.Uint64
	// decay[c] is the probability Base^-c as a threshold on a uniform
	// 16-bit draw; a count past the table (p < 2^-16) does not decay
	// until Halve.
	decay []uint16
	top   topList
}

// New returns an empty sketch.
func New(o Options) *Sketch {
	if o.K <= 0 {
		o.K = 32
	}
	if o.Depth <= 0 {
		o.Depth = 4
	}
	if o.Width <= 0 {
		o.Width = max(256, 16*o.K)
	}
	if o.Base <= 1 {
		o.Base = 1.08
	}
	if o.Seed == 0 {
		o.Seed = uint64(time.Now().UnixNano())
	}
	w := 1 << bits.Len(uint(min(o.Width, 1<<16)-1))
	s := &Sketch{
		seed:    fmix(o.Seed),
		depth:   o.Depth,
		shift:   uint(bits.TrailingZeros(uint(w))),
		mask:    uint64(w - 1),
		buckets: make([]atomic.Uint64, w*o.Depth),
	}
	// Base^-c as a fraction of 2^16, until it rounds to zero.
	for c := 0; ; c++ {
		p := math.Pow(o.Base, -float64(c)) * 0x1p16
		if p < 1 {
			break
		}
		s.decay = append(s.decay, uint16(min(p, math.MaxUint16)))
	}
	s.top.init(o.K)
	return s
}

// K returns the size of the top list.
func (s *Sketch) K() int { return s.top.k }

// Observe counts one occurrence of key and returns its estimated count.
// It does not allocate unless key enters the top list (a copy is kept).
func (s *Sketch) Observe(key string) uint32 {
	h := hashString(s.seed, key)
	fp := fingerprint(h)
	var est uint32
	var r coins
	for row := 0; row < s.depth; row++ {
		if c := s.bump(&s.buckets[row<<s.shift|int(rowIndex(h, row)&s.mask)], fp, &r); c > est {
			est = c
		}
	}
	if est > s.top.min.Load() && !s.top.contains(h) {
		s.top.offer(s, key, h, est)
	}
	return est
}

// coins hands out 16-bit random draws, four per 64-bit draw of the
// runtime's per-thread generator, drawn only when a decay is tried.
type coins struct {
	bits uint64
	left int
}

func (c *coins) next() uint16 {
	if c.left == 0 {
		c.bits, c.left = rand.Uint64(), 4
	}
	v := uint16(c.bits)
	c.bits >>= 16
	c.left--
	return v
}

// bump applies one occurrence of fingerprint fp to bucket b and returns
// fp's count there (0 when another key holds the bucket).
func (s *Sketch) bump(b *atomic.Uint64, fp uint32, r *coins) uint32 {
	for {
		old := b.Load()
		ofp, oc := uint32(old>>32), uint32(old)
		var nv uint64
		switch {
		case oc == 0:
			nv = uint64(fp)<<32 | 1
		case ofp == fp:
			if oc == math.MaxUint32 {
				return oc
			}
			nv = old + 1
		default:
			if int(oc) >= len(s.decay) || r.next() >= s.decay[oc] {
				return 0
			}
			if oc == 1 {
				nv = uint64(fp)<<32 | 1 // worn out: the bucket is ours
			} else {
				nv = old - 1
			}
		}
		if b.CompareAndSwap(old, nv) {
			if uint32(nv>>32) == fp {
				return uint32(nv)
			}
			return 0
		}
	}
}

// Count returns the estimated count of key without counting it.
func (s *Sketch) Count(key string) uint32 { return s.countHash(hashString(s.seed, key)) }

func (s *Sketch) countHash(h uint64) uint32 {
	fp := fingerprint(h)
	var est uint32
	for row := 0; row < s.depth; row++ {
		v := s.buckets[row<<s.shift|int(rowIndex(h, row)&s.mask)].Load()
		if uint32(v>>32) == fp && uint32(v) > est {
			est = uint32(v)
		}
	}
	return est
}

// Halve halves every count, ageing the sketch by one window. Buckets that
// reach zero are freed.
func (s *Sketch) Halve() {
	for i := range s.buckets {
		b := &s.buckets[i]
		for {
			old := b.Load()
			c := uint32(old) >> 1
			nv := old&^math.MaxUint32 | uint64(c)
			if c == 0 {
				nv = 0
			}
			if old == nv || b.CompareAndSwap(old, nv) {
				break
			}
		}
	}
	s.top.mu.Lock()
	s.top.refreshMin(s)
	s.top.mu.Unlock()
}

// Reset empties the sketch and the top list.
func (s *Sketch) Reset() {
	for i := range s.buckets {
		s.buckets[i].Store(0)
	}
	s.top.mu.Lock()
	for _, it := range s.top.items {
		s.top.remove(it.h)
	}
	s.top.items = s.top.items[:0]
	s.top.min.Store(0)
	s.top.mu.Unlock()
}

// Top appends the top keys with a non-zero count to dst, heaviest first
// (ties by key), and returns it.
func (s *Sketch) Top(dst []Item) []Item {
	s.top.mu.Lock()
	start := len(dst)
	for _, it := range s.top.items {
		if c := s.countHash(it.h); c > 0 {
			dst = append(dst, Item{Key: it.key, Count: c})
		}
	}
	s.top.mu.Unlock()
	slices.SortFunc(dst[start:], func(a, b Item) int {
		if a.Count != b.Count {
			if a.Count > b.Count {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Key, b.Key)
	})
	return dst
}

// topList holds the k keys with the largest estimates. Writers take mu;
// Observe reads min and the presence table without it, so a key already
// listed costs a few atomic loads.
type topList struct {
	k     int
	mu    sync.Mutex
	items []topItem
	// min is the smallest estimate in a full list at its last refresh, 0
	// while the list has room: a key must beat it to be offered.
	min atomic.Uint32
	// set holds the hashes of the listed keys (open addressing, linear
	// probing, 0 = empty). Readers may miss an entry being moved by a
	// deletion; they then take mu and look again.
	set     []atomic.Uint64
	setMask uint64
}

type topItem struct {
	key string
	h   uint64
}

func (t *topList) init(k int) {
	t.k = k
	n := 1 << bits.Len(uint(4*k-1))
	t.set = make([]atomic.Uint64, n)
	t.setMask = uint64(n - 1)
	t.items = make([]topItem, 0, k)
}

func setHash(h uint64) uint64 {
	if h == 0 {
		return 1
	}
	return h
}

func (t *topList) contains(h uint64) bool {
	h = setHash(h)
	for i := h & t.setMask; ; i = (i + 1) & t.setMask {
		switch t.set[i].Load() {
		case h:
			return true
		case 0:
			return false
		}
	}
}

// insert and remove run under mu.
func (t *topList) insert(h uint64) {
	h = setHash(h)
	i := h & t.setMask
	for t.set[i].Load() != 0 {
		i = (i + 1) & t.setMask
	}
	t.set[i].Store(h)
}

// remove deletes h by backward shifting the entries after it, so no
// tombstones accumulate.
func (t *topList) remove(h uint64) {
	h = setHash(h)
	i := h & t.setMask
	for t.set[i].Load() != h {
		if t.set[i].Load() == 0 {
			return
		}
		i = (i + 1) & t.setMask
	}
	for j := (i + 1) & t.setMask; ; j = (j + 1) & t.setMask {
		v := t.set[j].Load()
		if v == 0 {
			break
		}
		home := v & t.setMask
		// Move v into the hole at i when its home slot is not in (i, j].
		if (j > i && (home <= i || home > j)) || (j < i && home <= i && home > j) {
			t.set[i].Store(v)
			i = j
		}
	}
	t.set[i].Store(0)
}

// offer puts key in the list if it has room or key's estimate beats the
// weakest listed key.
func (t *topList) offer(s *Sketch, key string, h uint64, est uint32) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.contains(h) {
		return
	}
	if len(t.items) < t.k {
		t.items = append(t.items, topItem{strings.Clone(key), h})
		t.insert(h)
		if len(t.items) == t.k {
			t.refreshMin(s)
		}
		return
	}
	weak, wc := 0, uint32(math.MaxUint32)
	for i, it := range t.items {
		if c := s.countHash(it.h); c < wc {
			weak, wc = i, c
		}
	}
	if est <= wc {
		t.min.Store(wc) // wc is the list's minimum now
		return
	}
	t.remove(t.items[weak].h)
	t.items[weak] = topItem{strings.Clone(key), h}
	t.insert(h)
	t.refreshMin(s)
}

// refreshMin sets min from the current estimates; under mu.
func (t *topList) refreshMin(s *Sketch) {
	if len(t.items) < t.k {
		t.min.Store(0)
		return
	}
	m := uint32(math.MaxUint32)
	for _, it := range t.items {
		m = min(m, s.countHash(it.h))
	}
	t.min.Store(m)
}

// rowIndex derives row's bucket index from the key hash: 16 bits of it
// per row (Width is at most 1<<16), each row its own.
func rowIndex(h uint64, row int) uint64 {
	if row < 4 {
		return h >> (16 * row)
	}
	return fmix(h + uint64(row)*0x9e3779b97f4a7c15)
}

// fingerprint is a 32-bit digest of the key hash independent of its row
// bits, never 0 (0 marks an empty bucket).
func fingerprint(h uint64) uint32 {
	return uint32(fmix(h^0x9e3779b97f4a7c15)>>32) | 1
}

// hashString is a seeded 64-bit hash of s (murmur3-style rounds over
// 8-byte words and a final avalanche). It does not allocate.
func hashString(seed uint64, s string) uint64 {
	const c1, c2 = 0x87c37b91114253d5, 0x4cf5ad432745937f
	h := seed ^ uint64(len(s))*c2
	for len(s) >= 8 {
		_ = s[7] // one bounds check for the eight loads, which merge into one
		k := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
			uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
		k *= c1
		k = bits.RotateLeft64(k, 31)
		k *= c2
		h ^= k
		h = bits.RotateLeft64(h, 27)*5 + 0x52dce729
		s = s[8:]
	}
	if len(s) > 0 {
		var k uint64
		for i := len(s) - 1; i >= 0; i-- {
			k = k<<8 | uint64(s[i])
		}
		k *= c1
		k = bits.RotateLeft64(k, 31)
		k *= c2
		h ^= k
	}
	return fmix(h)
}

// fmix is murmur3's 64-bit finaliser.
func fmix(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}
