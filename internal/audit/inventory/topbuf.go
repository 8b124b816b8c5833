package inventory

import (
	"math/bits"
	"slices"
	"strings"
	"unsafe"
)

// topBuf keeps the best n items offered (the top and hot key lists), one
// per identity, the best offer of each. It is not a heap: items that beat
// the threshold go to a buffer with room for n/2 more, and when it
// fills, a settle keeps the best offer of each identity and then the best
// n of those; the n-th best becomes the threshold the next items must
// beat. An item is compared once against the threshold and, when taken
// in, appended with its name copied to the list's own block of names:
// nothing is looked up per item. Keys arrive in no order of size, so a
// few hundred thousand of a million beat the threshold of a list of
// 100,000; a heap sifted each through ~17 levels of slots scattered in
// memory, and a table of the buffer probed per item missed the cache on
// each, in line with the walk. The settle finds a key offered twice (a
// walker's duplicate, or one key in two files) by a table of the whole
// buffer built in one loop, whose probes do not wait on each other.
// worse must order by the score rank gives first, then by the hash
// (higher hash worse).
type topBuf[T any] struct {
	n     int
	buf   []T // the items kept at the last settle, then those taken in since
	fresh int // buf[fresh:] were taken in since the last settle
	ranks []rankRef
	drop  []bool   // settle's: by buffer index, left out
	slots []uint32 // settle's: the buffer by key hash: its top 7 bits, then index+1; 0 is empty
	// names holds the names of the items taken in, so that they cost no
	// allocation each and lie together for the report's sort and
	// encoding; a settle copies the names of the items it keeps to a new
	// block (a string into a block is never written again).
	names    []byte
	namesLen int // bytes of names taken in since the last settle's copy, over all blocks
	// blocks are the blocks holding the names of buf and thresh; spare,
	// blocks whose names were all copied away by a settle, which later
	// names are written to: a new block cost a page fault per 4 KiB, and
	// the collector let the heap grow by the blocks left behind.
	blocks, spare [][]byte
	worse         func(a, b *T) bool
	rank          func(*T) (int64, uint64)
	id            func(*T) itemID
	name          func(*T) *string // the item's key name, which push copies
	thresh        T                // the n-th best at the last settle
	cut           bool             // thresh is set: the list holds n items
	dirty         bool             // items were taken in since the last settle
}

// rankRef is an item of the buffer by its rank, for the selection to move
// 24 bytes rather than the item.
type rankRef struct {
	score int64
	hash  uint64
	i     int32
}

func newTopBuf[T any](n int, worse func(a, b *T) bool, rank func(*T) (int64, uint64), id func(*T) itemID, name func(*T) *string) topBuf[T] {
	return topBuf[T]{n: n, worse: worse, rank: rank, id: id, name: name}
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
// (a later settle may still drop it). x's name is copied: it may be the
// walker's buffer. x is compared in its place at the end of the buffer:
// its address passed to worse would move every x offered to the heap.
func (h *topBuf[T]) push(x T) bool {
	if h.n == 0 {
		return false
	}
	if len(h.buf) >= h.room() {
		h.settle()
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
	y := &h.buf[len(h.buf)-1]
	if h.cut && !h.worse(&h.thresh, y) {
		var zero T
		*y = zero // keep no reference to x's strings
		h.buf = h.buf[:len(h.buf)-1]
		return false
	}
	k := h.name(y)
	*k = h.copyName(*k, 0)
	h.dirty = true
	return true
}

// copyName copies s to the block of names, starting a block of at least
// size bytes when the block is full.
func (h *topBuf[T]) copyName(s string, size int) string {
	if len(s) == 0 {
		return ""
	}
	if cap(h.names)-len(h.names) < len(s) {
		// Blocks grow with the names taken in, up to 1 MiB each.
		size = max(size, len(s), min(max(h.namesLen, 4<<10), 1<<20))
		h.names = nil
		for i := len(h.spare) - 1; i >= 0; i-- {
			if b := h.spare[i]; cap(b) >= size {
				h.names = b[:0]
				h.spare = slices.Delete(h.spare, i, i+1)
				break
			}
		}
		if h.names == nil {
			h.names = make([]byte, 0, size)
		}
		h.blocks = append(h.blocks, h.names)
	}
	h.namesLen += len(s)
	at := len(h.names)
	h.names = append(h.names, s...)
	return unsafe.String(&h.names[at], len(s))
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

// settle keeps the best offer of each identity, then the best n of those,
// and raises the threshold to the worst of them.
func (h *topBuf[T]) settle() {
	if !h.dirty {
		return
	}
	h.dirty = false
	if cap(h.ranks) < len(h.buf) {
		// At its full size at once: grown by append, the copies on the way
		// cost twice its size in fresh memory.
		h.ranks = make([]rankRef, 0, max(len(h.buf), h.room()))
	}
	r := h.ranks[:0]
	for i := range h.buf {
		s, k := h.rank(&h.buf[i])
		r = append(r, rankRef{score: s, hash: k, i: int32(i)})
	}
	if cap(h.drop) < len(h.buf) {
		h.drop = make([]bool, cap(h.buf))
	}
	drop := h.drop[:len(h.buf)]
	if h.fresh < len(h.buf) && h.dedupe(r, drop) {
		r = slices.DeleteFunc(r, func(x rankRef) bool { return drop[x.i] })
	}
	if len(r) > h.n {
		h.selectRanks(r, h.n)
		for _, x := range r[h.n:] {
			drop[x.i] = true
		}
		r = r[:h.n]
	}
	if len(r) == h.n {
		// The threshold is the worst kept, found by the ranks.
		w := 0
		for j := range r {
			if h.worseRef(&r[j], &r[w]) {
				w = j
			}
		}
		h.thresh, h.cut = h.buf[r[w].i], true
	}
	h.ranks = r[:0]
	// Fill the places of the items left out with the last items kept: the
	// list has no order, and most items stay where they are.
	k := len(h.buf)
	for i := 0; i < k; i++ {
		if !drop[i] {
			continue
		}
		for k--; k > i && drop[k]; k-- {
		}
		if k > i {
			h.buf[i] = h.buf[k]
		}
	}
	clear(drop)
	clear(h.buf[k:]) // drop the strings of the items left out
	h.buf = h.buf[:k]
	h.fresh = k
	h.packNames()
}

// packNames copies the names of the items kept to one block, with room
// for the names of the next items in proportion, once the blocks hold
// more names of items left out than of items kept.
func (h *topBuf[T]) packNames() {
	total := 0
	for i := range h.buf {
		total += len(*h.name(&h.buf[i]))
	}
	if h.namesLen <= 2*total {
		return
	}
	old := h.blocks
	h.names, h.namesLen, h.blocks = nil, 0, nil
	size := total + total*(h.room()-len(h.buf))/max(len(h.buf), 1)
	for i := range h.buf {
		p := h.name(&h.buf[i])
		*p = h.copyName(*p, size)
	}
	if h.cut {
		p := h.name(&h.thresh)
		*p = h.copyName(*p, size)
	}
	// Nothing holds a name of the old blocks now: the items left out were
	// cleared, and a name given to the list was copied when taken in.
	for _, b := range old {
		h.spare = append(h.spare, b[:0])
	}
}

// dedupe marks in drop the worse offers of an identity offered twice, and
// reports whether it found any. r holds the buffer's ranks by index. The
// items kept at the last settle are one per identity, so only the items
// taken in since go into a table by hash (half a MiB for a list of
// 100,000, which the cache holds), and the kept ones look themselves up
// in it. Each loop's probes do not wait on each other.
func (h *topBuf[T]) dedupe(r []rankRef, drop []bool) bool {
	fresh := len(r) - h.fresh
	size := 1 << bits.Len(uint(fresh+fresh/2)) // at most 2/3 full
	if cap(h.slots) < size {
		h.slots = make([]uint32, size)
	}
	slots := h.slots[:size]
	clear(slots)
	mask := uint64(size - 1)
	found := false
next:
	for i := h.fresh; i < len(r); i++ {
		hash := r[i].hash
		tag := slotTag(hash)
		s := hash & mask
		for ; slots[s] != 0; s = (s + 1) & mask {
			if j := int(slots[s]&idxMask32 - 1); slots[s]&^idxMask32 == tag && h.same(r, j, i) {
				if h.worse(&h.buf[j], &h.buf[i]) {
					drop[j] = true
					slots[s] = tag | uint32(i+1)
				} else {
					drop[i] = true
				}
				found = true
				continue next
			}
		}
		slots[s] = tag | uint32(i+1)
	}
	for k := range h.fresh {
		hash := r[k].hash
		tag := slotTag(hash)
		for s := hash & mask; slots[s] != 0; s = (s + 1) & mask {
			if j := int(slots[s]&idxMask32 - 1); slots[s]&^idxMask32 == tag && h.same(r, j, k) {
				if h.worse(&h.buf[j], &h.buf[k]) {
					drop[j] = true
				} else {
					drop[k] = true
				}
				found = true
				break // the table holds one item per identity
			}
		}
	}
	return found
}

// same reports whether the buffer's items i and j are one identity.
func (h *topBuf[T]) same(r []rankRef, i, j int) bool {
	return r[i].hash == r[j].hash && h.id(&h.buf[i]) == h.id(&h.buf[j])
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
			// worseRef(&p, &s[j]), written out: the hot loop of a settle.
			if q := &s[j]; p.score < q.score || p.score == q.score && (p.hash > q.hash || p.hash == q.hash && h.worse(&h.buf[p.i], &h.buf[q.i])) {
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

// topDetail is what a top key shares with the other keys of its group:
// its type, its group's name and its node, held once.
type topDetail struct{ typ, template, node string }

// topDetails holds each topDetail once: three strings in each item took
// 48 of its bytes.
type topDetails struct {
	// by the address of its group's name: the keys taken in one after
	// the other are mostly of different groups.
	recent [64]*topDetail
	all    map[topDetail]*topDetail
}

// of returns the detail of these strings. template must be kept by the
// caller (a group's name); the others are copied when first seen.
func (d *topDetails) of(typ, template, node string) *topDetail {
	slot := &d.recent[uintptr(unsafe.Pointer(unsafe.StringData(template)))>>4&63]
	if l := *slot; l != nil && l.typ == typ && l.template == template && l.node == node {
		return l
	}
	p := d.all[topDetail{typ, template, node}]
	if p == nil {
		if d.all == nil {
			d.all = map[topDetail]*topDetail{}
		}
		p = &topDetail{retainType(typ), template, strings.Clone(node)}
		d.all[*p] = p
	}
	*slot = p
	return p
}
