package inventory

import (
	"math/bits"
)

// topBuf keeps the best n items offered (the top and hot key lists), one
// per identity, the best offer of each. It is not a heap: items that beat
// the threshold go to a buffer with room for n/2 more, and when it
// fills, a selection keeps the best n; the n-th best becomes the
// threshold the next items must beat. An item is compared once against
// the threshold and, when taken in, looked up by its key hash in a table
// of the buffer (a walker's duplicate, or one key in two files, replaces
// its worse offer in place) and appended: a heap of 100,000 sifted every
// item taken in through ~17 levels of slots scattered in memory, so that
// a long list cost twice the run (keys arrive in no order of size, so a
// few hundred thousand of a million beat the root of a list of 100,000).
// worse must order by the score rank gives first, then by the hash
// (higher hash worse).
type topBuf[T any] struct {
	n      int
	buf    []T // the items kept at the last settle, then those taken in since
	ranks  []rankRef
	keep   []bool   // settle's: by buffer index, among the best n
	slots  []uint32 // the buffer by key hash: its top 7 bits, then index+1; 0 is empty
	worse  func(a, b *T) bool
	rank   func(*T) (int64, uint64)
	id     func(*T) itemID
	thresh T    // the n-th best at the last settle
	cut    bool // thresh is set: the list holds n items
	dirty  bool // items were taken in since the last settle
}

// rankRef is an item of the buffer by its rank, for the selection to move
// 24 bytes rather than the item.
type rankRef struct {
	score int64
	hash  uint64
	i     int32
}

func newTopBuf[T any](n int, worse func(a, b *T) bool, rank func(*T) (int64, uint64), id func(*T) itemID) topBuf[T] {
	return topBuf[T]{n: n, worse: worse, rank: rank, id: id}
}

// full reports whether the list holds n items: root is then the worst.
func (h *topBuf[T]) full() bool { return h.cut }

// root is the threshold: the n-th best item at the last settle. Only
// valid when full.
func (h *topBuf[T]) root() *T { return &h.thresh }

// room is how many items the buffer holds before a settle: half as many
// again as it keeps (buffer indexes must fit idxMask).
func (h *topBuf[T]) room() int { return min(h.n+max(h.n/2, 16), idxMask+1) }

// push takes x in when it beats the threshold, and reports whether it did
// (a later settle may still drop it).
func (h *topBuf[T]) push(x T) bool {
	if h.n == 0 || h.cut && !h.worse(&h.thresh, &x) {
		return false
	}
	if len(h.buf) >= h.room() {
		h.settle()
		if h.cut && !h.worse(&h.thresh, &x) {
			return false
		}
	}
	if h.slots == nil {
		// At most 2/3 full at room, and small (1 MiB for a list of
		// 100,000) so that its probes mostly hit the cache.
		h.slots = make([]uint32, 1<<bits.Len(uint(h.room()+h.room()/2)))
	}
	_, hash := h.rank(&x)
	mask := uint64(len(h.slots) - 1)
	tag := slotTag(hash)
	id := h.id(&x)
	s := hash & mask
	for ; h.slots[s] != 0; s = (s + 1) & mask {
		if h.slots[s]&^idxMask32 != tag {
			continue
		}
		y := &h.buf[h.slots[s]&idxMask32-1]
		if _, yh := h.rank(y); yh != hash || h.id(y) != id {
			continue
		}
		if !h.worse(y, &x) {
			return false
		}
		*y = x
		h.dirty = true
		return true
	}
	if len(h.buf) == cap(h.buf) {
		// Doubling to 1,024 items, then room at once: append's own growth
		// copied the (large) items many times on the way to room.
		next := max(2*cap(h.buf), 64)
		if next > 1024 {
			next = h.room()
		}
		h.buf = append(make([]T, 0, min(next, h.room())), h.buf...)
	}
	h.buf = append(h.buf, x)
	h.slots[s] = tag | uint32(len(h.buf))
	h.dirty = true
	return true
}

// idxMask32 holds a buffer index + 1 in the low bits of a slot, under a
// tag of the hash's top bits.
const idxMask32 = 1<<25 - 1

func slotTag(hash uint64) uint32 { return uint32(hash>>57) << 25 }

// list settles the buffer and returns the best n items (at most n), one
// per identity, in no order.
func (h *topBuf[T]) list() []T {
	h.settle()
	return h.buf
}

// settle keeps the best n items and raises the threshold to the worst of
// them.
func (h *topBuf[T]) settle() {
	if !h.dirty {
		return
	}
	h.dirty = false
	if len(h.buf) > h.n {
		r := h.ranks[:0]
		for i := range h.buf {
			s, k := h.rank(&h.buf[i])
			r = append(r, rankRef{score: s, hash: k, i: int32(i)})
		}
		h.selectRanks(r, h.n)
		if len(h.keep) < len(h.buf) {
			h.keep = make([]bool, cap(h.buf))
		}
		for _, x := range r[:h.n] {
			h.keep[x.i] = true
		}
		// Keep the best in place: by index, each moves down or stays.
		k := 0
		for i := range h.buf {
			if h.keep[i] {
				h.buf[k] = h.buf[i]
				k++
			}
		}
		clear(h.keep)
		clear(h.buf[k:]) // drop the strings of the items left out
		h.buf, h.ranks = h.buf[:k], r[:0]
		clear(h.slots)
		mask := uint64(len(h.slots) - 1)
		for i := range h.buf {
			_, hash := h.rank(&h.buf[i])
			s := hash & mask
			for h.slots[s] != 0 {
				s = (s + 1) & mask
			}
			h.slots[s] = slotTag(hash) | uint32(i+1)
		}
	}
	if len(h.buf) >= h.n {
		worst := 0
		for k := range h.buf {
			if h.worse(&h.buf[k], &h.buf[worst]) {
				worst = k
			}
		}
		h.thresh, h.cut = h.buf[worst], true
	}
}

// idxMask bounds a buffer index.
const idxMask = 1<<24 - 1

// worseRef orders rank references as worse orders their items.
func (h *topBuf[T]) worseRef(a, b *rankRef) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	if a.hash != b.hash {
		return a.hash > b.hash
	}
	return h.worse(&h.buf[a.i], &h.buf[b.i])
}

// selectRanks reorders s so that s[:k] holds its k best (quickselect with
// a median-of-three pivot; 0 < k < len(s)).
func (h *topBuf[T]) selectRanks(s []rankRef, k int) {
	lo, hi := 0, len(s)-1
	for lo < hi {
		mid := lo + (hi-lo)/2
		if h.worseRef(&s[lo], &s[mid]) {
			s[lo], s[mid] = s[mid], s[lo]
		}
		if h.worseRef(&s[mid], &s[hi]) {
			s[mid], s[hi] = s[hi], s[mid]
			if h.worseRef(&s[lo], &s[mid]) {
				s[lo], s[mid] = s[mid], s[lo]
			}
		}
		s[mid], s[hi] = s[hi], s[mid]
		p := s[hi]
		i := lo
		for j := lo; j < hi; j++ {
			if h.worseRef(&p, &s[j]) {
				s[i], s[j] = s[j], s[i]
				i++
			}
		}
		s[i], s[hi] = s[hi], s[i]
		switch {
		case i == k || i == k-1:
			return
		case i > k:
			hi = i - 1
		default:
			lo = i + 1
		}
	}
}
