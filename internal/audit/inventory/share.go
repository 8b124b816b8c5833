package inventory

import (
	"cmp"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// sharedList is one top or hot list for all the aggregators of a
// Pipeline. Each aggregator kept a list of its own before, merged at the
// end: with two of them, each list's threshold was its own half's n-th
// best key, about the 2n-th of all, so that half as many keys again
// were taken in (1M keys, n = 100,000: ~600,000 against ~390,000), the
// merge took n more, and each list held its n keys.
// Now an aggregator takes the keys that beat the list's published bar
// into a small buffer of its own (listFeed) and pushes the buffer into
// the list under its lock when full, so the list takes in what one
// aggregator's list would, and the lock is taken once per few hundred
// keys taken in, not per key.
//
// bar is read for every key offered, by every aggregator, while the one
// holding mu writes the list: it has a cache line of its own (padded
// from the list and from what was allocated next to it), which the
// writes to the list do not take from the other cores.
type sharedList[V any] struct {
	_    cpu.CacheLinePad
	bar  atomic.Pointer[listBar]
	_    cpu.CacheLinePad
	mu   sync.Mutex
	list topBuf[V]   // under mu
	det  *topDetails // under mu: the details of a top list's keys
	_    cpu.CacheLinePad
}

// listBar is the threshold of a shared list at its last settle, as much
// of it as tells most keys apart without their names: a key below it is
// below the threshold, which only rises.
type listBar struct {
	score int64
	hash  uint64
}

func newSharedList[V any](n int) *sharedList[V] {
	return &sharedList[V]{list: newTopBuf[V](n), det: &topDetails{}}
}

// publish sets the bar to the list's threshold. Under mu.
func (s *sharedList[V]) publish() {
	if !s.list.full() {
		return
	}
	t := &s.list.thresh
	if b := s.bar.Load(); b == nil || b.score != t.score || b.hash != t.hash {
		s.bar.Store(&listBar{t.score, t.hash})
	}
}

// listFeed is one aggregator's way into a shared list: the keys it took
// in since its last flush, their names in its own buffer.
//
// Each aggregator writes its feed for every key it takes in; the feeds
// of a pipeline are made one after the other, so the padding keeps each
// on cache lines of its own.
type listFeed[V any] struct {
	_     cpu.CacheLinePad
	s     *sharedList[V]
	keys  []listKey // a name is at off in names
	vals  []V
	names []byte
	// conv turns what a key carries into what the list's keys carry,
	// under the list's lock (a top key's details); nil: as it is.
	conv func(*V)
	// at is how many keys the feed holds before it pushes them when the
	// list is free; at 16 times as many it waits for the list.
	at int
	_  cpu.CacheLinePad
}

// feedAt is a feed's at: the lock is taken once per 256 keys taken in,
// and a feed holds at most 4,096 keys (some 200 KiB).
const feedAt = 256

func newFeed[V any](s *sharedList[V], conv func(*V)) *listFeed[V] {
	return &listFeed[V]{s: s, conv: conv, at: feedAt}
}

// admits reports whether a key named ck of this score may beat the
// list's threshold, and its hash; a key below the bar's score is turned
// away before its name is hashed. Keys of the bar's score and hash are
// let through: the list decides by their names.
func (f *listFeed[V]) admits(score int64, ck string) (uint64, bool) {
	return f.s.bar.Load().admits(score, ck)
}

// admits reports whether a key named ck of this score may beat the bar
// (nil: no bar yet), and its hash, which a key below the bar's score is
// turned away without.
func (b *listBar) admits(score int64, ck string) (uint64, bool) {
	if b == nil {
		return keyHash(ck), true
	}
	if score < b.score {
		return 0, false
	}
	hash := keyHash(ck)
	return hash, score > b.score || hash <= b.hash
}

// add takes k, named name (copied) and carrying v, in, and flushes the
// feed when it is full.
func (f *listFeed[V]) add(k listKey, name string, v V) {
	name = clip(name, maxKeepKey)
	k.off, k.n = uint32(len(f.names)), uint16(len(name))
	f.names = append(f.names, name...)
	f.keys = append(f.keys, k)
	f.vals = append(f.vals, v)
	if len(f.keys) >= f.at {
		f.flush(len(f.keys) >= 16*f.at)
	}
}

// flush pushes the feed's keys into the list, if the list is free or
// wait is set (then once it is).
func (f *listFeed[V]) flush(wait bool) {
	if len(f.keys) == 0 {
		return
	}
	if !f.s.mu.TryLock() {
		if !wait {
			return // another aggregator holds the list, maybe settling it: later
		}
		f.s.mu.Lock()
	}
	for i := range f.keys {
		k := &f.keys[i]
		if f.conv != nil {
			f.conv(&f.vals[i])
		}
		var name string
		if k.n > 0 {
			name = unsafe.String(&f.names[k.off], int(k.n))
		}
		f.s.list.push(*k, name, f.vals[i])
	}
	f.s.publish()
	f.s.mu.Unlock()
	clear(f.vals) // what they carry may hold strings
	f.keys, f.vals, f.names = f.keys[:0], f.vals[:0], f.names[:0]
}

// shareLists gives the aggregators of a pipeline one top list and one
// hot list (takeLists hands them back to the first).
func shareLists(aggs []*Aggregator) {
	if len(aggs) < 2 {
		return
	}
	top := newSharedList[topVal](aggs[0].top.n)
	top.list.tie = topTie(top.det)
	hot := newSharedList[hotVal](aggs[0].hot.n)
	hot.list.tie = hotWorse
	top.list.unique, hot.list.unique = aggs[0].top.unique, aggs[0].hot.unique
	for _, a := range aggs {
		a.topIn = newFeed(top, a.sharedDet)
		a.hotIn = newFeed(hot, nil)
	}
}

// takeLists flushes every aggregator's feeds and makes the shared lists
// the first aggregator's own, as if it had taken in every key: the
// others' lists are empty, so that Merge adds nothing of them.
func takeLists(aggs []*Aggregator) {
	if len(aggs) < 2 || aggs[0].topIn == nil {
		return
	}
	for _, a := range aggs {
		a.topIn.flush(true)
		a.hotIn.flush(true)
	}
	a := aggs[0]
	top, hot := a.topIn.s, a.hotIn.s
	a.top, a.topDet, a.hot = top.list, top.det, hot.list
	for _, a := range aggs {
		a.topIn, a.hotIn, a.detMap = nil, nil, nil
	}
}

// sharedDet is the index in the shared list's details of the detail of
// index i in a's. Under the list's lock.
func (a *Aggregator) sharedDet(v *topVal) {
	i := int(v.det)
	if i >= len(a.detMap) {
		a.detMap = append(a.detMap, make([]uint32, i+1-len(a.detMap))...)
	}
	if m := a.detMap[i]; m != 0 {
		v.det = m - 1
		return
	}
	d := a.topDet.at(v.det)
	m := a.topIn.s.det.of(d.typ, d.template, d.node)
	a.detMap[i] = m + 1
	v.det = m
}

// topTie orders two offers of one top key at one size by what they
// carry, its details in d.
func topTie(d *topDetails) func(a, b *topVal) bool {
	return func(a, b *topVal) bool {
		if a.elements != b.elements {
			return a.elements < b.elements
		}
		if a.ttl != b.ttl {
			return a.ttl < b.ttl
		}
		if a.det == b.det {
			return false
		}
		x, y := d.at(a.det), d.at(b.det)
		return cmp.Or(strings.Compare(x.typ, y.typ), strings.Compare(x.template, y.template), strings.Compare(x.node, y.node)) > 0
	}
}

// hotWorse orders two offers of one hot key at one counter by what they
// carry.
func hotWorse(a, b *hotVal) bool {
	if a.bytes != b.bytes {
		return a.bytes < b.bytes
	}
	if a.protected != b.protected {
		return !a.protected
	}
	return cmp.Or(strings.Compare(a.template, b.template), strings.Compare(a.owner, b.owner),
		strings.Compare(a.kind, b.kind), strings.Compare(a.node, b.node)) > 0
}
