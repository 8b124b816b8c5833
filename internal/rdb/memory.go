package rdb

import (
	"math"
	"math/bits"
	"strconv"
)

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

// Thresholds of a Redis 7.0 server with the default configuration, which
// decide the encoding it gives a value when it loads the file.
const (
	maxListpackEntries = 128 // hash-max-listpack-entries, zset-max-listpack-entries
	maxListpackValue   = 64  // hash-max-listpack-value, zset-max-listpack-value
	maxIntsetEntries   = 512 // set-max-intset-entries
	maxSetLPEntries    = 128 // set-max-listpack-entries (Redis 7.2+, Valkey)
	maxSetLPValue      = 64  // set-max-listpack-value
	maxIntText         = 20  // digits and sign of the longest int64
	intsetHeaderSize   = 8
)

// Quicklist node compression (list-compress-depth > 0): a node is kept
// compressed when it has at least minCompressBytes and LZF saves more than
// minCompressImprove; it then takes a quicklistLZF header and the
// compressed bytes, the same LZF bytes the RDB file stores.
const (
	minCompressBytes   = 48
	minCompressImprove = 8
	sizeQuicklistLZF   = 8
)

// loadPack sizes the listpack (or intset) Redis builds from a hash, sorted
// set or set stored element by element, as long as the value stays within
// the thresholds that keep it compact.
type loadPack struct {
	bytes      int64 // listpack bytes so far
	n          int64 // elements
	maxLen     int64
	maxEntries int64
	maxValue   int64
	allInt     bool  // every element is an integer (intset)
	width      int64 // intset encoding: 2, 4 or 8 bytes
}

func newLoadPack(entries, value int64) loadPack {
	return loadPack{bytes: lpEmptyBytes, maxEntries: entries, maxValue: value, allInt: true, width: 2}
}

// add counts an element of header h; when complete, text holds it (an
// integer's text is at most maxIntText bytes, so a longer cut one is not
// one).
func (p *loadPack) add(h strHdr, text []byte, complete bool) {
	p.n++
	p.maxLen = max(p.maxLen, h.n)
	v, isInt := h.ival, h.kind == strInt
	if !isInt && complete {
		v, isInt = parseInt64(text)
	}
	if isInt {
		p.bytes += int64(lpIntEntrySize(v))
		switch {
		case v < math.MinInt32 || v > math.MaxInt32:
			p.width = 8
		case (v < math.MinInt16 || v > math.MaxInt16) && p.width < 4:
			p.width = 4
		}
		return
	}
	p.allInt = false
	p.bytes += int64(lpStrEntrySize(int(min(h.n, math.MaxInt32))))
}

// addScore counts a sorted set score, which Redis stores in the listpack
// as the text d2string() makes of it.
func (p *loadPack) addScore(score float64) {
	var buf [32]byte
	s := scoreText(buf[:0], score)
	if v, ok := parseInt64(s); ok {
		p.bytes += int64(lpIntEntrySize(v))
	} else {
		p.bytes += int64(lpStrEntrySize(len(s)))
	}
}

// fits reports whether Redis keeps a value of entries fields (or members)
// as a listpack: at most maxEntries, no element longer than maxValue.
func (p *loadPack) fits(entries int64) bool {
	return entries <= p.maxEntries && p.maxLen <= p.maxValue
}

// setListpack reports whether the server of a file of RDB version ver
// keeps a set of n members, counted in p, that is not an intset as a
// listpack. Redis 7.2 and Valkey (RDB 11 and later; Valkey 9 writes 80)
// do for at most 128 members of at most 64 bytes; Redis 7.0 never does.
// The file's server is taken to be the one that loads it.
func setListpack(ver int, n int64, p *loadPack) bool {
	return ver >= 11 && n <= maxSetLPEntries && p.maxLen <= maxSetLPValue
}

// scoreText is Redis 7.0's d2string: integers in decimal, others as %.17g.
func scoreText(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "nan"...)
	case math.IsInf(f, 1):
		return append(dst, "inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-inf"...)
	case f == 0:
		if math.Signbit(f) {
			return append(dst, "-0"...)
		}
		return append(dst, '0')
	case f > -(1<<52-1) && f < 1<<52 && f == math.Trunc(f):
		return strconv.AppendInt(dst, int64(f), 10)
	}
	return strconv.AppendFloat(dst, f, 'g', 17, 64)
}
