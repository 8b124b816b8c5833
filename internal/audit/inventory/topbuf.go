package inventory

import (
	"math/bits"
	"slices"
	"strings"
	"unsafe"

	"github.com/keyguard/keyguard/internal/hugepage"
)

// topBuf keeps the best n keys offered (the top and hot key lists), one
// per identity (name, full length, database), the best offer of each, and
// what each carries (V). It is not a heap: keys that beat the threshold go
// to a buffer with room for n/2 more, and when it fills, a settle keeps
// the best offer of each identity and then the best n of those; the n-th
// best becomes the threshold the next keys must beat. A key is compared
// once against the threshold and, when taken in, appended with its name
// copied to the list's own blocks of names: nothing is looked up per key.
// Keys arrive in no order of size, so a few hundred thousand of a million
// beat the threshold of a list of 100,000; a heap sifted each through ~17
// levels of slots scattered in memory, and a table of the buffer probed
// per key missed the cache on each, in line with the walk. The settle
// finds a key offered twice (a walker's duplicate, or one key in two
// files) by a table of the whole buffer built in one loop, whose probes
// do not wait on each other.
//
// The keys are kept apart from what they carry, and hold their names as
// places in the blocks, not as strings: the buffer of keys has no
// pointers, so the collector never reads it. It read the whole buffer of
// items with strings, the pages push had not written yet too, which the
// kernel then mapped to its shared zero page: push's first write to each
// cost a copy and a flush of the other cores' TLBs (an interrupt to each,
// dear in a VM) on top of the fault, ~2,500 times for a list of 100,000.
type topBuf[V any] struct {
	n     int
	keys  []listKey // the keys kept at the last settle, then those taken in since
	vals  []V       // what keys[i] carries
	fresh int       // keys[fresh:] were taken in since the last settle
	ranks []rankRef
	drop  []bool   // settle's: by buffer index, left out
	slots []uint32 // settle's: the buffer by key hash: its top 7 bits, then index+1; 0 is empty
	// names holds the names of the keys taken in, so that they cost no
	// allocation each and lie together for the report's sort and
	// encoding; a settle copies the names of the keys it keeps to blocks
	// of their own (a name in a block is never written again).
	names    []byte
	namesLen int // bytes of names taken in since the last settle's copy, over all blocks
	// namesAdvised is the block names is written to while it holds
	// hugepage.MakeSlice's advice (see namesFilled).
	namesAdvised []byte
	// blocks are the blocks holding the names of keys and thresh (a
	// listKey's blk); spare, blocks whose names were all copied away by a
	// settle, which later names are written to: a new block cost a page
	// fault per 4 KiB, and the collector let the heap grow by the blocks
	// left behind.
	blocks, spare [][]byte
	thresh        listKey // the n-th best at the last settle
	cut           bool    // thresh is set: the list holds n keys
	dirty         bool    // keys were taken in since the last settle
	// tie orders two offers of one identity at one score by what they
	// carry (a worse than b), so that the one kept does not depend on
	// which came first: the aggregators of a pipeline offer in no fixed
	// order. nil keeps the first.
	tie func(a, b *V) bool
	// scanned: V holds pointers, so the collector reads the whole of vals'
	// room, pages no key was written to too (mapped to the zero page,
	// then copied at push's first write). Such a buffer grows by doubling
	// rather than at once to room: a hot list of 100,000 that only ever
	// takes in 20,000 keys above the floor kept 13 MB read for nothing.
	scanned bool
	// unique: the source offers each identity at most once (one RDB
	// file: Options.UniqueKeys), so a settle does not look for a key
	// offered twice; its table of the buffer was a quarter of a settle.
	unique bool
	// checked: list looked for keys offered twice in a unique list, and
	// none was taken in since; repeats counts the offers it dropped.
	checked bool
	repeats int
	// advised: keys and vals were made at room with the advice of
	// hugepage.MakeSlice, taken back once they are full.
	advised bool
	dupes   int // offers a settle dropped as a better offer's repeat
}

// listKey is a key of a top or hot list: what the list orders keys by
// (score, then hash, then name and database) and tells them apart by
// (name, full length, database). 32 bytes, no pointers.
type listKey struct {
	score  int64  // size or LFU counter: higher is better
	hash   uint64 // keyHash(name): among keys of one score, lower is better
	off    uint32 // the name: n bytes at off in the list's block blk
	blk    uint16
	n      uint16
	keyLen int32 // the key's full length: the name may be cut
	db     int32
}

// rankRef is a key of the buffer by its rank, for the selection to move
// 24 bytes rather than the key.
type rankRef struct {
	score int64
	hash  uint64
	i     int32
}

func newTopBuf[V any](n int) topBuf[V] {
	return topBuf[V]{n: n, scanned: hugepage.HasPointers[V]()}
}

// full reports whether the list holds n keys: root is then the worst.
func (h *topBuf[V]) full() bool { return h.cut }

// root is the threshold, the n-th best key at the last settle, and its
// name. Only valid when full.
func (h *topBuf[V]) root() (*listKey, string) { return &h.thresh, h.name(&h.thresh) }

// name is the name of a key of the list (or of its threshold). It lies in
// the list's blocks: valid until the next push.
func (h *topBuf[V]) name(k *listKey) string {
	if k.n == 0 {
		return ""
	}
	return unsafe.String(&h.blocks[k.blk][k.off], int(k.n))
}

// worse orders the list's keys: by score, then hash (higher worse), then
// name (greater worse), then database (greater worse), as findWorse
// orders findings. The names are read only when score and hash agree.
func (h *topBuf[V]) worse(a, b *listKey) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	if a.hash != b.hash {
		return a.hash > b.hash
	}
	return keyWorse(a, h.name(a), b, h.name(b))
}

// keyWorse is worse for keys of one score and hash, by name and database.
func keyWorse(a *listKey, an string, b *listKey, bn string) bool {
	return an > bn || an == bn && a.db > b.db
}

// room is how many keys the buffer holds before a settle: half as many
// again as it keeps (buffer indexes must fit idxMask).
func (h *topBuf[V]) room() int { return min(h.n+max(h.n/2, 16), idxMask+1) }

// push takes k (named name, carrying v) in when it beats the threshold,
// and reports whether it did (a later settle may still drop it). k's
// place of its name is set here: name is copied, it may be the walker's
// buffer.
func (h *topBuf[V]) push(k listKey, name string, v V) bool {
	if h.n == 0 {
		return false
	}
	if len(name) > maxKeepKey {
		name = name[:maxKeepKey] // the lists keep cut names; n holds 16 bits
	}
	if len(h.keys) >= h.room() {
		h.settle()
	}
	if h.cut {
		t := &h.thresh
		if t.score != k.score {
			if t.score > k.score {
				return false
			}
		} else if t.hash != k.hash {
			if t.hash < k.hash {
				return false
			}
		} else if keyWorse(&k, name, t, h.name(t)) {
			// An offer equal to the threshold (its own key again) is
			// taken in: the settle decides between the two by tie.
			return false
		}
	}
	if len(h.keys) == cap(h.keys) {
		// Doubling to 1,024 keys, then room at once: append's own growth
		// copied the buffer many times on the way to room. (Values with
		// pointers keep doubling: see scanned.)
		next := max(2*cap(h.keys), 64)
		if next > 1024 && !h.scanned {
			next = h.room()
		}
		next = min(next, h.room())
		if next == h.room() && !h.scanned {
			// At room the buffers are written in full before the first
			// settle: 2 MiB pages where the kernel gives them (see
			// hugepage), taken back at that settle.
			h.keys = append(hugepage.MakeSlice[listKey](next)[:0], h.keys...)
			h.vals = append(hugepage.MakeSlice[V](next)[:0], h.vals...)
			h.advised = true
		} else {
			h.keys = append(make([]listKey, 0, next), h.keys...)
			h.vals = append(make([]V, 0, next), h.vals...)
		}
	}
	k.blk, k.off, k.n = h.copyName(name, 0)
	h.keys = append(h.keys, k)
	h.vals = append(h.vals, v)
	h.dirty = true
	return true
}

// copyName copies s to the block of names, starting a block of at least
// size bytes when the block is full, and returns its place.
func (h *topBuf[V]) copyName(s string, size int) (blk uint16, off uint32, n uint16) {
	if len(s) == 0 {
		return 0, 0, 0
	}
	if cap(h.names)-len(h.names) < len(s) {
		// Blocks grow with the names taken in, up to maxNameBlock each
		// while there are fewer than 1,024 of them (a place holds 16 bits
		// of block number and 32 of offset).
		limit := maxNameBlock
		if len(h.blocks) >= 1024 {
			limit = 1 << 31
		}
		// A long list starts with a block the size of the names its
		// buffer will hold (32 bytes a key), not 4 KiB doubled up to it.
		size = max(size, len(s), min(max(h.namesLen, 4<<10, h.room()*32), limit))
		h.namesFilled()
		h.names = nil
		for i := len(h.spare) - 1; i >= 0; i-- {
			if b := h.spare[i]; cap(b) >= size {
				h.names = b[:0]
				h.spare = slices.Delete(h.spare, i, i+1)
				break
			}
		}
		if h.names == nil {
			// Written from start to end as names are taken in: 2 MiB
			// pages where the block holds some (see hugepage).
			h.names = hugepage.MakeSlice[byte](size)[:0]
			h.namesAdvised = h.names[:size]
		}
		h.blocks = append(h.blocks, h.names[:cap(h.names)])
	}
	h.namesLen += len(s)
	at := len(h.names)
	h.names = append(h.names, s...)
	return uint16(len(h.blocks) - 1), uint32(at), uint16(len(s))
}

// maxNameBlock bounds a block of names (while there are fewer than 1,024
// blocks): 4 MiB, two whole 2 MiB pages for hugepage's advice.
const maxNameBlock = 4 << 20

// namesFilled takes back the advice on the block of names being written
// (hugepage.Filled), when the block is left or the list is read.
func (h *topBuf[V]) namesFilled() {
	if h.namesAdvised != nil {
		hugepage.Filled(h.namesAdvised)
		h.namesAdvised = nil
	}
}

// buffersFilled takes back the advice on keys and vals (see advised).
func (h *topBuf[V]) buffersFilled() {
	if h.advised {
		hugepage.Filled(h.keys[:cap(h.keys)])
		hugepage.Filled(h.vals[:cap(h.vals)])
		h.advised = false
	}
}

// idxMask32 holds a buffer index + 1 in the low bits of a slot, under a
// tag of the hash's top bits.
const idxMask32 = 1<<25 - 1

func slotTag(hash uint64) uint32 { return uint32(hash>>57) << 25 }

// list settles the buffer and returns the best n keys (at most n), one
// per identity, in no order, and what they carry. The names are valid
// until the next push.
func (h *topBuf[V]) list() ([]listKey, []V) {
	if h.unique && (h.dirty || !h.checked) && len(h.keys) > 1 {
		// A source that promised each key once may still repeat one (a
		// damaged file, or one Redis did not write), and a list must not
		// name a key twice. The settles before took the promise and did
		// not look; this one looks at every key of the buffer, the n kept
		// and those taken in since, before it keeps the best n.
		before := h.dupes
		h.unique, h.fresh, h.dirty = false, 0, true
		h.settle()
		h.unique = true
		h.repeats += h.dupes - before
	}
	h.settle()
	h.checked = true
	h.buffersFilled()
	h.namesFilled()
	h.letGo()
	return h.keys, h.vals
}

// letGo drops what only settles write (the table of a dedupe, the marks
// of the keys left out) and the spare blocks of names: a list is read
// once its keys are all in, and its report's entries and names are then
// written to that memory, once collected, rather than to fresh pages
// (for 100,000 top keys: 8 MiB of spare blocks). The ranks stay: the
// report's sort borrows them (lendWords). A push after list makes them
// again as needed.
func (h *topBuf[V]) letGo() {
	h.slots, h.drop, h.spare = nil, nil, nil
}

// lendWords lends the settle's rank references, which only a settle
// writes, as n wordKeys (nil when they are fewer bytes): the report's
// sort then writes to pages the settles touched, not to fresh ones.
// Valid until the next push.
func (h *topBuf[V]) lendWords(n int) []wordKey {
	if n == 0 || cap(h.ranks)*int(unsafe.Sizeof(rankRef{})) < n*int(unsafe.Sizeof(wordKey{})) {
		return nil
	}
	return unsafe.Slice((*wordKey)(unsafe.Pointer(unsafe.SliceData(h.ranks[:cap(h.ranks)]))), n)
}

// settle keeps the best offer of each identity, then the best n of those,
// and raises the threshold to the worst of them.
func (h *topBuf[V]) settle() {
	if !h.dirty {
		return
	}
	h.dirty = false
	if len(h.keys) == cap(h.keys) {
		h.buffersFilled()
	}
	fresh := cap(h.ranks) < len(h.keys)
	if fresh {
		// At its full size at once: grown by append, the copies on the way
		// cost twice its size in fresh memory.
		h.ranks = hugepage.MakeSlice[rankRef](max(len(h.keys), h.room()))[:0]
	}
	r := h.ranks[:len(h.keys)]
	for i := range h.keys {
		r[i] = rankRef{score: h.keys[i].score, hash: h.keys[i].hash, i: int32(i)}
	}
	if fresh {
		hugepage.Filled(h.ranks[:cap(h.ranks)])
	}
	if cap(h.drop) < len(h.keys) {
		h.drop = make([]bool, cap(h.keys))
	}
	drop := h.drop[:len(h.keys)]
	if h.fresh < len(h.keys) && !h.unique && h.dedupe(r, drop) {
		n := len(r)
		r = slices.DeleteFunc(r, func(x rankRef) bool { return drop[x.i] })
		h.dupes += n - len(r)
	}
	switch {
	case len(r) > h.n:
		// The threshold is the worst kept, which the selection leaves
		// last.
		h.selectRanks(r, h.n)
		for _, x := range r[h.n:] {
			drop[x.i] = true
		}
		r = r[:h.n]
		h.thresh, h.cut = h.keys[r[h.n-1].i], true
	case len(r) == h.n:
		w := 0
		for j := range r {
			if h.worseRef(&r[j], &r[w]) {
				w = j
			}
		}
		h.thresh, h.cut = h.keys[r[w].i], true
	}
	h.ranks = r[:0]
	// Fill the places of the keys left out with the last keys kept: the
	// list has no order, and most keys stay where they are.
	k := len(h.keys)
	for i := 0; i < k; i++ {
		if !drop[i] {
			continue
		}
		for k--; k > i && drop[k]; k-- {
		}
		if k > i {
			h.keys[i] = h.keys[k]
			h.vals[i] = h.vals[k]
		}
	}
	clear(drop)
	clear(h.vals[k:]) // drop what the keys left out carried
	h.keys, h.vals = h.keys[:k], h.vals[:k]
	h.fresh = k
	h.packNames()
}

// packNames copies the names of the keys kept to blocks of their own,
// once the blocks hold more names of keys left out than of keys kept.
func (h *topBuf[V]) packNames() {
	total := 0
	for i := range h.keys {
		total += int(h.keys[i].n)
	}
	if h.namesLen <= 2*total {
		return
	}
	old := h.blocks
	h.namesFilled()
	h.names, h.namesLen, h.blocks = nil, 0, nil
	// Blocks of the size of what is kept and the names of the next keys
	// in proportion, up to maxNameBlock each: spare blocks of that size
	// are written again (the old blocks only become spare once copied
	// from, so a pack to one block the size of all always took fresh
	// memory).
	size := min(total+total*(h.room()-len(h.keys))/max(len(h.keys), 1), maxNameBlock)
	// The names are read from the old blocks while the new are written:
	// old holds them until the loop is done.
	str := func(k *listKey) string {
		if k.n == 0 {
			return ""
		}
		return unsafe.String(&old[k.blk][k.off], int(k.n))
	}
	for i := range h.keys {
		k := &h.keys[i]
		k.blk, k.off, k.n = h.copyName(str(k), size)
	}
	if h.cut {
		k := &h.thresh
		k.blk, k.off, k.n = h.copyName(str(k), size)
	}
	// Nothing holds a name of the old blocks now: the keys left out were
	// dropped, and a name given to the list was copied when taken in.
	for _, b := range old {
		h.spare = append(h.spare, b[:0])
	}
}

// dedupe marks in drop the worse offers of an identity offered twice, and
// reports whether it found any. r holds the buffer's ranks by index. The
// keys kept at the last settle are one per identity, so only the keys
// taken in since go into a table by hash (half a MiB for a list of
// 100,000, which the cache holds), and the kept ones look themselves up
// in it. Each loop's probes do not wait on each other.
func (h *topBuf[V]) dedupe(r []rankRef, drop []bool) bool {
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
			if j := int(slots[s]&idxMask32 - 1); slots[s]&^idxMask32 == tag && h.same(j, i) {
				if h.worseOffer(j, i) {
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
			if j := int(slots[s]&idxMask32 - 1); slots[s]&^idxMask32 == tag && h.same(j, k) {
				if h.worseOffer(j, k) {
					drop[j] = true
				} else {
					drop[k] = true
				}
				found = true
				break // the table holds one key per identity
			}
		}
	}
	return found
}

// same reports whether the buffer's keys i and j are one identity.
func (h *topBuf[V]) same(i, j int) bool {
	a, b := &h.keys[i], &h.keys[j]
	return a.hash == b.hash && a.keyLen == b.keyLen && a.db == b.db && a.n == b.n && h.name(a) == h.name(b)
}

// worseOffer orders two offers i and j of one identity in the buffer: by
// score, then by what they carry.
func (h *topBuf[V]) worseOffer(i, j int) bool {
	if a, b := h.keys[i].score, h.keys[j].score; a != b {
		return a < b
	}
	return h.tie != nil && h.tie(&h.vals[i], &h.vals[j])
}

// idxMask bounds a buffer index.
const idxMask = 1<<24 - 1

// worseRef orders rank references as worse orders their keys.
func (h *topBuf[V]) worseRef(a, b *rankRef) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	if a.hash != b.hash {
		return a.hash > b.hash
	}
	return h.worse(&h.keys[a.i], &h.keys[b.i])
}

// selectRanks reorders s so that s[:k] holds its k best, the worst of
// them at s[k-1] (quickselect with a median-of-three pivot; 0 < k <
// len(s)).
func (h *topBuf[V]) selectRanks(s []rankRef, k int) {
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
			if q := &s[j]; p.score < q.score || p.score == q.score && (p.hash > q.hash || p.hash == q.hash && h.worse(&h.keys[p.i], &h.keys[q.i])) {
				s[i], s[j] = s[j], s[i]
				i++
			}
		}
		s[i], s[hi] = s[hi], s[i]
		switch {
		case i == k-1:
			return
		case i > k-1:
			hi = i - 1
		default:
			lo = i + 1
		}
	}
}

// topDetail is what a top key shares with the other keys of its group:
// its type, its group's name and its node, held once.
type topDetail struct{ typ, template, node string }

// topDetails holds each topDetail once: three strings in each key took
// 48 of its bytes. A key names its detail by its index, not by a pointer,
// so that what a top key carries has no pointers either (see topBuf).
type topDetails struct {
	// index+1 by the address of its group's name: the keys taken in one
	// after the other are mostly of different groups.
	recent [64]uint32
	all    map[topDetail]uint32
	list   []topDetail
}

// of returns the index of the detail of these strings. template must be
// kept by the caller (a group's name); the others are copied when first
// seen.
func (d *topDetails) of(typ, template, node string) uint32 {
	slot := &d.recent[uintptr(unsafe.Pointer(unsafe.StringData(template)))>>4&63]
	if i := *slot; i != 0 {
		if l := &d.list[i-1]; l.typ == typ && l.template == template && l.node == node {
			return i - 1
		}
	}
	i, ok := d.all[topDetail{typ, template, node}]
	if !ok {
		if d.all == nil {
			d.all = map[topDetail]uint32{}
		}
		i = uint32(len(d.list))
		d.list = append(d.list, topDetail{retainType(typ), template, strings.Clone(node)})
		d.all[d.list[i]] = i
	}
	*slot = i + 1
	return i
}

// at is the detail of index i.
func (d *topDetails) at(i uint32) *topDetail { return &d.list[i] }
