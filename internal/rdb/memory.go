package rdb

import "math/bits"

// The memory model behind Record.MemoryEstimate; see "Memory model" in the
// package documentation (doc.go) for what it counts and why.

const (
	sizeRobj          = 16
	sizeDictEntry     = 24
	sizeDict          = 56
	sizeQuicklist     = 40
	sizeQuicklistNode = 40
	sizeZset          = 16
	sizeZskiplist     = 32
	sizeZslHeader     = 640 // class(24 + 32 levels x 16)
	sizeZslNodeAvg    = 53  // expected class(24 + 16 x level), level ~ Geometric(3/4)
	sizeStream        = 80
	sizeStreamCG      = 40
	sizeStreamNACK    = 24
	sizeStreamID      = 16
	sizeRaxNodeMem    = 4 + 8*30 // sizeof(raxNode) + Redis's fixed per-node overhead

	embstrLimit          = 44
	listNodeLimit        = 8192 // list-max-listpack-size -2
	lpEmptyBytes         = 7    // listpack header + end byte
	streamPrealloc       = 4096 // XADD\'s first allocation of a stream node
	sizeStreamConsumer70 = 24
	sizeStreamConsumer72 = 32
)

// jeSize is the jemalloc size class serving a request of n bytes.
func jeSize(n int64) int64 {
	switch {
	case n <= 8:
		return 8
	case n <= 16:
		return 16
	case n <= 64:
		return (n + 15) &^ 15
	}
	lg := bits.Len64(uint64(n-1)) - 1 // floor(log2(n-1))
	delta := int64(1) << (lg - 2)
	return (n + delta - 1) &^ (delta - 1)
}

func sdsHdr(n int64) int64 {
	switch {
	case n < 1<<5:
		return 1
	case n < 1<<8:
		return 3
	case n < 1<<16:
		return 5
	case n < 1<<32:
		return 9
	}
	return 17
}

// sdsAlloc is zmalloc_size of an sds of length n created by sdsnewlen.
func sdsAlloc(n int64) int64 { return jeSize(sdsHdr(n) + n + 1) }

// keyOverhead is what MEMORY USAGE adds on top of the value.
func keyOverhead(keyLen int64) int64 { return sizeDictEntry + sdsAlloc(keyLen) }

// dictSlots is the table size Redis reaches holding n entries.
func dictSlots(n int64) int64 {
	if n <= 0 {
		return 0
	}
	s := int64(4)
	for s < n {
		s <<= 1
	}
	return s
}

func stringMem(n int64, isInt bool) int64 {
	switch {
	case isInt:
		return sizeRobj
	case n <= embstrLimit:
		return jeSize(sizeRobj + 3 + n + 1)
	}
	return sizeRobj + sdsAlloc(n)
}

// raxCounter counts the nodes of the Redis radix tree (rax) holding a set
// of 128-bit stream IDs, fed in ascending order as the RDB lists them.
// Redis sizes a stream's rax as 16 bytes per key plus 244 per node, so the
// count matters. For sorted keys the tree is the compressed trie: a node
// for the root, for every child of a branching position, and for every
// position ending a single-child chain (a branch or a key's leaf). The
// counter keeps only the path of the last key (17 depths), so its memory
// does not grow with the number of IDs.
type raxCounter struct {
	n     int64
	prev  [sizeStreamID]byte
	c     [sizeStreamID + 1]int32 // children of the path node at each depth
	nodes int64                   // nodes of finished subtrees, root excluded
}

func (r *raxCounter) add(k []byte) {
	if len(k) != sizeStreamID {
		return
	}
	if r.n == 0 {
		for d := range sizeStreamID {
			r.c[d] = 1
		}
		r.c[sizeStreamID] = 0
		copy(r.prev[:], k)
		r.n = 1
		return
	}
	l := 0
	for l < sizeStreamID && r.prev[l] == k[l] {
		l++
	}
	if l == sizeStreamID {
		return // duplicate
	}
	for d := sizeStreamID; d > l; d-- {
		// The node at depth l is about to branch: its child is not in a chain.
		r.nodes += finishRaxNode(r.c[d], d-1 != l && r.c[d-1] == 1)
	}
	r.c[l]++
	for d := l + 1; d < sizeStreamID; d++ {
		r.c[d] = 1
	}
	r.c[sizeStreamID] = 0
	copy(r.prev[:], k)
	r.n++
}

// finishRaxNode is what a finished path node contributes: its children if
// it branches, itself if it ends a chain.
func finishRaxNode(children int32, parentInChain bool) int64 {
	var n int64
	if children >= 2 {
		n += int64(children)
	}
	if children != 1 && parentInChain {
		n++
	}
	return n
}

// total is the node count of the tree so far.
func (r *raxCounter) total() int64 {
	if r.n == 0 {
		return 1
	}
	n := r.nodes
	for d := sizeStreamID; d > 0; d-- {
		n += finishRaxNode(r.c[d], r.c[d-1] == 1)
	}
	if r.c[0] >= 2 {
		n += int64(r.c[0])
	}
	return n + 1
}

// mem is streamRadixTreeMemoryUsage() for the tree.
func (r *raxCounter) mem() int64 { return r.n*sizeStreamID + r.total()*sizeRaxNodeMem }

// listPacker sizes the quicklist Redis 7 builds when elements are pushed
// one by one (linked lists from old RDB files).
type listPacker struct {
	nodes int64
	cur   int64 // bytes of the open node, 0 = none
	mem   int64 // finished nodes
}

func (p *listPacker) add(entry int64) {
	if p.cur != 0 && p.cur+entry > listNodeLimit {
		p.mem += sizeQuicklistNode + jeSize(p.cur)
		p.cur = 0
	}
	if p.cur == 0 {
		p.nodes++
		p.cur = lpEmptyBytes
	}
	p.cur += entry
}

func (p *listPacker) total() int64 {
	m := p.mem
	if p.cur != 0 {
		m += sizeQuicklistNode + jeSize(p.cur)
	}
	return sizeRobj + sizeQuicklist + m
}
