package inventory

// The heap the top and hot lists used before topBuf: the reference the
// tests hold topBuf and findTop to.

// itemID is what makes two kept items the same key: its (maybe cut) name,
// its full length and its database (topBuf's listKey holds the same).
type itemID struct {
	key        string
	keyLen, db int
}

// bheap keeps the best n items seen. worse(a, b) orders items so that the
// root is the worst one kept, the one the next better item replaces.
// items holds the kept items by slot, in no order; the heap orders slot
// numbers, so that moving an item is moving a 4-byte number, and an
// item stays in its slot until it is replaced. With an identity (newKeyedHeap)
// an index finds the slot of an item offered again, so a key seen twice is
// kept once in O(log n) rather than by a scan of the list. The slices grow
// only as items arrive, up to n.
type bheap[T any] struct {
	n     int
	items []T      // by slot
	heap  []hentry // heap order → slot
	pos   []int32  // slot → heap order
	worse func(a, b *T) bool
	rank  func(*T) (int64, uint64) // the first two orders of worse (score, then hash), kept in the heap
	id    func(*T) itemID          // nil: no index
	index map[uint64]int32         // idHash → slot
	spill map[itemID]int32         // items whose idHash another item holds
}

// hentry is a place of the heap: a slot and its item's rank (score, then
// key hash), so that sifting compares numbers in one small array and
// reads the items (large, scattered) only when both are equal.
type hentry struct {
	score int64
	hash  uint64
	slot  int32
}

func (h *bheap[T]) entry(x *T, slot int32) hentry {
	s, k := h.rank(x)
	return hentry{s, k, slot}
}

// newBHeap is a bheap; worse must order by the score rank gives first,
// then by the hash it gives (higher hash worse).
func newBHeap[T any](n int, worse func(a, b *T) bool, rank func(*T) (int64, uint64)) bheap[T] {
	return bheap[T]{n: n, worse: worse, rank: rank}
}

// newKeyedHeap is a bheap whose items are told apart by id: push keeps
// one item per id, the better one.
func newKeyedHeap[T any](n int, worse func(a, b *T) bool, rank func(*T) (int64, uint64), id func(*T) itemID) bheap[T] {
	return bheap[T]{n: n, worse: worse, rank: rank, id: id, index: map[uint64]int32{}}
}

// full reports whether the heap holds n items.
func (h *bheap[T]) full() bool { return len(h.items) >= h.n }

// root is the worst item kept; only valid when the heap is not empty.
func (h *bheap[T]) root() *T { return &h.items[h.heap[0].slot] }

// push adds x: appended while there is room, else it replaces the root
// when the root is worse than x. With an index, an item already kept
// under x's id is replaced by x when x is better, and x is dropped
// otherwise. It reports whether x was kept.
func (h *bheap[T]) push(x T) bool {
	if h.n == 0 {
		return false
	}
	e := h.entry(&x, 0)
	var id itemID
	var idh uint64
	if h.id != nil {
		id = h.id(&x)
		idh = idHash(e.hash, id)
		if s, ok := h.lookup(id, idh); ok {
			if !h.worse(&h.items[s], &x) {
				return false
			}
			h.items[s] = x // better: it can only move away from the root
			p := int(h.pos[s])
			e.slot = s
			h.heap[p] = e
			h.down(p)
			return true
		}
	}
	if len(h.items) < h.n {
		e.slot = int32(len(h.items))
		h.items = append(h.items, x)
		h.heap = append(h.heap, e)
		h.pos = append(h.pos, e.slot)
		if h.id != nil {
			h.insert(id, idh, e.slot)
		}
		h.up(len(h.heap) - 1)
		return true
	}
	root := h.heap[0]
	if !h.worse(&h.items[root.slot], &x) {
		return false
	}
	if h.id != nil {
		old := &h.items[root.slot]
		oid := h.id(old)
		h.remove(oid, idHash(root.hash, oid), root.slot)
		h.insert(id, idh, root.slot)
	}
	h.items[root.slot] = x
	e.slot = root.slot
	h.heap[0] = e
	h.down(0)
	return true
}

// idHash is the index's number for an item: its key hash, mixed with
// its length and database.
func idHash(hash uint64, id itemID) uint64 {
	return hash ^ mix64(uint64(id.keyLen)<<20^uint64(id.db)+1)
}

// lookup finds the slot of the item with id. The index maps id hashes
// (small, compared without reading the items); an item whose hash
// another id holds already is in spill.
func (h *bheap[T]) lookup(id itemID, idh uint64) (int32, bool) {
	if s, ok := h.index[idh]; ok && h.id(&h.items[s]) == id {
		return s, true
	}
	if len(h.spill) > 0 {
		s, ok := h.spill[id]
		return s, ok
	}
	return 0, false
}

func (h *bheap[T]) insert(id itemID, idh uint64, s int32) {
	if _, taken := h.index[idh]; !taken {
		h.index[idh] = s
		return
	}
	if h.spill == nil {
		h.spill = map[itemID]int32{}
	}
	h.spill[id] = s
}

func (h *bheap[T]) remove(id itemID, idh uint64, s int32) {
	if t, ok := h.index[idh]; ok && t == s {
		delete(h.index, idh)
		return
	}
	delete(h.spill, id)
}

func (h *bheap[T]) less(i, j int) bool {
	a, b := &h.heap[i], &h.heap[j]
	if a.score != b.score {
		return a.score < b.score
	}
	if a.hash != b.hash {
		return a.hash > b.hash
	}
	return h.worse(&h.items[a.slot], &h.items[b.slot])
}

func (h *bheap[T]) swap(i, j int) {
	h.heap[i], h.heap[j] = h.heap[j], h.heap[i]
	h.pos[h.heap[i].slot], h.pos[h.heap[j].slot] = int32(i), int32(j)
}

func (h *bheap[T]) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			return
		}
		h.swap(i, p)
		i = p
	}
}

func (h *bheap[T]) down(i int) {
	n := len(h.heap)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && h.less(r, l) {
			m = r
		}
		if !h.less(m, i) {
			return
		}
		h.swap(i, m)
		i = m
	}
}
