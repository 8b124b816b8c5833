package inventory

// bheap keeps the best n items seen. worse(a, b) orders items so that the
// root is the worst one kept, the one the next better item replaces. The
// slice grows only as items arrive, up to n.
type bheap[T any] struct {
	n     int
	items []T
	worse func(a, b *T) bool
}

func newBHeap[T any](n int, worse func(a, b *T) bool) bheap[T] {
	return bheap[T]{n: n, worse: worse}
}

// full reports whether the heap holds n items.
func (h *bheap[T]) full() bool { return len(h.items) >= h.n }

// root is the worst item kept; only valid when the heap is not empty.
func (h *bheap[T]) root() *T { return &h.items[0] }

// push adds x: appended while there is room, else it replaces the root
// when the root is worse than x. It reports whether x was kept.
func (h *bheap[T]) push(x T) bool {
	if len(h.items) < h.n {
		h.items = append(h.items, x)
		h.up(len(h.items) - 1)
		return true
	}
	if h.n == 0 || !h.worse(&h.items[0], &x) {
		return false
	}
	h.items[0] = x
	h.down(0)
	return true
}

// removeAt drops item i (used to replace a duplicate key).
func (h *bheap[T]) removeAt(i int) {
	last := len(h.items) - 1
	if i != last {
		h.items[i] = h.items[last]
	}
	var zero T
	h.items[last] = zero
	h.items = h.items[:last]
	if i < len(h.items) {
		h.down(i)
		h.up(i)
	}
}

func (h *bheap[T]) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.worse(&h.items[i], &h.items[p]) {
			return
		}
		h.items[i], h.items[p] = h.items[p], h.items[i]
		i = p
	}
}

func (h *bheap[T]) down(i int) {
	n := len(h.items)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && h.worse(&h.items[r], &h.items[l]) {
			m = r
		}
		if !h.worse(&h.items[m], &h.items[i]) {
			return
		}
		h.items[i], h.items[m] = h.items[m], h.items[i]
		i = m
	}
}

// ranked is a scored key: higher score first, then lower key. Capped
// lists keep the best ranked items, so the result does not depend on the
// order items arrive in.
func rankedWorse(aScore int64, aKey string, bScore int64, bKey string) bool {
	if aScore != bScore {
		return aScore < bScore
	}
	return aKey > bKey
}

// fentry is a finding heap's entry: the rank of a kept finding and where
// it lives in the slab. Swapping these (32 bytes) is what keeps the heap
// ordered; the findings themselves (about 180 bytes) never move.
type fentry struct {
	score int64
	key   string
	idx   int32
}

// findHeap keeps the best n findings of a rule, like bheap with
// findWorse, but the heap orders small entries into items, a slab that
// only grows (to n) and whose slots are overwritten in place when a
// better finding replaces the worst one.
type findHeap struct {
	n     int
	items []findItem // the kept findings, in no particular order
	h     []fentry
}

func newFindHeap(n int) findHeap { return findHeap{n: n} }

func fentryWorse(a, b *fentry) bool { return rankedWorse(a.score, a.key, b.score, b.key) }

// full reports whether the heap holds n findings.
func (h *findHeap) full() bool { return len(h.items) >= h.n }

// rootRank is the score and key of the worst finding kept; only valid
// when the heap is not empty.
func (h *findHeap) rootRank() (int64, string) { return h.h[0].score, h.h[0].key }

// push adds x: appended while there is room, else it replaces the root
// when the root is worse than x. It reports whether x was kept.
func (h *findHeap) push(x findItem) bool {
	e := fentry{score: x.score, key: x.f.Key}
	if len(h.items) < h.n {
		e.idx = int32(len(h.items))
		h.items = append(h.items, x)
		h.h = append(h.h, e)
		h.up(len(h.h) - 1)
		return true
	}
	if h.n == 0 || !fentryWorse(&h.h[0], &e) {
		return false
	}
	e.idx = h.h[0].idx
	h.items[e.idx] = x
	h.h[0] = e
	h.down(0)
	return true
}

func (h *findHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !fentryWorse(&h.h[i], &h.h[p]) {
			return
		}
		h.h[i], h.h[p] = h.h[p], h.h[i]
		i = p
	}
}

func (h *findHeap) down(i int) {
	n := len(h.h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && fentryWorse(&h.h[r], &h.h[l]) {
			m = r
		}
		if !fentryWorse(&h.h[m], &h.h[i]) {
			return
		}
		h.h[i], h.h[m] = h.h[m], h.h[i]
		i = m
	}
}
