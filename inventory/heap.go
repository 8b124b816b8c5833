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
