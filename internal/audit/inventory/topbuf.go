package inventory

import (
	"cmp"
	"slices"
)

// topBuf keeps the best n items offered (the top and hot key lists), one
// per identity, the best offer of each. It is not a heap: items that beat
// the threshold go to a buffer with room for n more, and when the buffer
// fills, one pass keeps the best offer of each identity and a selection
// the best n; the n-th best becomes the threshold the next items must
// beat. An item is compared once against the threshold and, when taken
// in, appended: a heap of 100,000 sifted every item taken in through ~17
// levels of slots scattered in memory, and looked it up in an index, so
// that a long list cost twice the run (keys arrive in no order of size,
// so a few hundred thousand of a million beat the root of a list of
// 100,000). worse must order by the score rank gives first, then by the
// hash (higher hash worse).
type topBuf[T any] struct {
	n      int
	buf    []T // the items kept at the last settle, then those taken in since
	ranks  []rankRef
	keys   []uint64 // settle's: key hashes with buffer indexes
	dup    []bool   // settle's: by buffer index, a worse offer of an identity
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
	if len(h.buf) == cap(h.buf) {
		// Doubling to 1,024 items, then room at once: append's own growth
		// copied the (large) items many times on the way to room.
		next := max(2*cap(h.buf), 64)
		if next > 1024 {
			next = h.room()
		}
		h.buf = slices.Grow(h.buf, min(next, h.room())-len(h.buf))
	}
	h.buf = append(h.buf, x)
	h.dirty = true
	return true
}

// list settles the buffer and returns the best n items (at most n), one
// per identity, in no order.
func (h *topBuf[T]) list() []T {
	h.settle()
	return h.buf
}

// settle keeps the best offer of each identity, then the best n items,
// and raises the threshold to the worst of them.
func (h *topBuf[T]) settle() {
	if !h.dirty {
		return
	}
	h.dirty = false
	// Offers of one identity share their key hash: sorted by it (its
	// top 40 bits, the buffer index below), they sit side by side.
	keys := h.keys[:0]
	for i := range h.buf {
		_, k := h.rank(&h.buf[i])
		keys = append(keys, k&^idxMask|uint64(i))
	}
	slices.Sort(keys)
	for lo := 0; lo < len(keys); {
		hi := lo + 1
		for hi < len(keys) && keys[hi]&^idxMask == keys[lo]&^idxMask {
			hi++
		}
		if hi-lo > 1 {
			h.markDups(keys[lo:hi])
		}
		lo = hi
	}
	r := h.ranks[:0]
	for i := range h.buf {
		if i < len(h.dup) && h.dup[i] {
			continue
		}
		s, k := h.rank(&h.buf[i])
		r = append(r, rankRef{score: s, hash: k, i: int32(i)})
	}
	clear(h.dup)
	if len(r) > h.n {
		h.selectRanks(r, h.n)
		r = r[:h.n]
	}
	// Keep r's items in place: by index, each moves down or stays.
	slices.SortFunc(r, func(a, b rankRef) int { return cmp.Compare(a.i, b.i) })
	worst := -1
	for k, x := range r {
		h.buf[k] = h.buf[x.i]
		if worst < 0 || h.worse(&h.buf[k], &h.buf[worst]) {
			worst = k
		}
	}
	clear(h.buf[len(r):]) // drop the strings of the items left out
	h.buf, h.ranks, h.keys = h.buf[:len(r)], r[:0], keys[:0]
	if len(h.buf) >= h.n && worst >= 0 {
		h.thresh, h.cut = h.buf[worst], true
	}
}

// idxMask holds a buffer index in the low bits of a sort key.
const idxMask = 1<<24 - 1

// markDups marks, in a run of sort keys of one key hash, the offers of an
// identity another offer beats.
func (h *topBuf[T]) markDups(run []uint64) {
	if len(h.dup) < len(h.buf) {
		h.dup = make([]bool, cap(h.buf))
	}
	for i := 1; i < len(run); i++ {
		xi := int(run[i] & idxMask)
		x := &h.buf[xi]
		for j := range i {
			yi := int(run[j] & idxMask)
			y := &h.buf[yi]
			if h.dup[yi] || h.id(x) != h.id(y) {
				continue
			}
			if h.worse(y, x) {
				h.dup[yi] = true
			} else {
				h.dup[xi] = true
			}
			break
		}
	}
}

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
