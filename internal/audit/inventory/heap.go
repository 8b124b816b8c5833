package inventory

import (
	"slices"

	"github.com/keyguard/keyguard/finding"
)

// fentry is a finding kept in a findTop: its rank, its key, and the
// index of what it shares with other findings of the list (template,
// owner, message, hint) in the list's details. Selections move these
// (48 bytes).
type fentry struct {
	score  int64
	hash   uint64 // keyHash(key)
	key    string
	keyLen int32  // of the key before it was cut
	detail uint32 // in findTop.details
	db     int32
	sev    finding.Severity
	// ttlHi, ttlLo: the TTL in the message of a ttl-mismatch finding,
	// in seconds (24 bits: the entry stays 48 bytes), 0 none; see
	// Aggregator.addTTL.
	ttlHi uint8
	ttlLo uint16
}

// ttlSec is e's TTL in seconds (0: its message holds no TTL).
func (e *fentry) ttlSec() uint32 { return uint32(e.ttlHi)<<16 | uint32(e.ttlLo) }

// setTTLSec sets e's TTL in seconds (at most maxTTLArg).
func (e *fentry) setTTLSec(s uint32) { e.ttlHi, e.ttlLo = uint8(s>>16), uint16(s) }

// findDetail is the text of a kept finding besides its key: the findings
// of a list share a few of them (a message, the hint of a family).
type findDetail struct{ template, owner, message, hint, tail string } // tail: see ttlArg

// findWorse orders findings for the capped lists: fewer bytes is worse;
// among equal bytes the order is a fixed hash of the key, then the key.
// Many keys of a family have the same size: ranking those by the hash
// keeps an even sample of the families instead of the keys that sort
// first, and it spares comparing long common prefixes, which the heap
// did once per level for every finding it took in.
func findWorse(aScore int64, aHash uint64, aKey string, bScore int64, bHash uint64, bKey string) bool {
	if aScore != bScore {
		return aScore < bScore
	}
	if aHash != bHash {
		return aHash > bHash
	}
	return aKey > bKey
}

// findTop keeps the best n findings of a rule (by findWorse). It is not
// a heap: entries of the findings taken in go to a buffer with room for
// half as many again, and when the buffer fills, a selection keeps the
// best n and the n-th best becomes the threshold a finding must beat to
// be taken in. Keys arrive in whatever order the walker sees them, often
// growing in size, so that nearly every finding past the cap beats the
// worst kept one: a heap re-sorted ~13 levels for each, this does a few
// comparisons per finding. An entry holds all of its finding but the
// texts it shares with others, which are interned in details: no finding
// is written anywhere but in the buffer.
type findTop struct {
	n       int
	h       []fentry     // the entries taken in since the last selection, up to room()
	details []findDetail // the texts of the entries
	// slots finds a detail by its texts: index+1 in details by a hash of
	// the texts, 0 empty; one per slot, the last added. Two details of
	// one slot (or the slot's detail overwritten) only make a text that
	// is already in details be added again, which the next compaction
	// drops once no entry uses it. A map of the details by content cost
	// a keyspace of thousands of families (a hint and template each) a
	// fifth of its run: hashing four strings per finding taken in, and
	// growing, clearing and refilling its tables at every compaction.
	slots  []uint32
	last   int      // the detail of the last entry taken in, or -1
	remap  []uint32 // compactDetails' scratch
	thresh fentry   // the n-th best at the last selection
	cut    bool     // thresh is set
}

// Detail slots: a table starts small and doubles while the details
// outnumber its slots (a list of many families' texts), up to a limit.
const (
	minDetailSlots = 1 << 8
	maxDetailSlots = 1 << 16
)

func newFindTop(n int) findTop { return findTop{n: n, last: -1} }

// detailSlot is d's slot in a table of size slots (a power of two): the
// template's bytes (the family or template, which most tell details
// apart by) and the lengths of the others, so that equal texts have one
// slot whether or not they are the same strings.
func detailSlot(d *findDetail, size int) int {
	h := keyHash(d.template) ^ uint64(len(d.owner))<<48 ^ uint64(len(d.message))<<24 ^ uint64(len(d.hint))
	h *= 0x9e3779b97f4a7c15
	return int(h>>32) & (size - 1)
}

// detailOf interns d: the findings taken in one after the other mostly
// share their texts (same strings), so the last one answers first, then
// its slot.
func (h *findTop) detailOf(d findDetail) uint32 {
	if h.last >= 0 && h.details[h.last] == d {
		return uint32(h.last)
	}
	if h.slots == nil {
		h.slots = make([]uint32, minDetailSlots)
	}
	s := detailSlot(&d, len(h.slots))
	if i := h.slots[s]; i != 0 && h.details[i-1] == d {
		h.last = int(i - 1)
		return i - 1
	}
	id := uint32(len(h.details))
	if len(h.details) == cap(h.details) && cap(h.details) >= 1024 {
		// Past 1,024 texts (a keyspace of many families), room at once:
		// doubling copied the texts again at every step.
		h.details = slices.Grow(h.details, max(h.room(), cap(h.details)+cap(h.details)/4)-len(h.details))
	}
	h.details = append(h.details, d)
	h.slots[s] = id + 1
	h.last = int(id)
	if len(h.details) > len(h.slots) && len(h.slots) < maxDetailSlots {
		h.slots = make([]uint32, 2*len(h.slots))
		h.fillSlots()
	}
	return id
}

// fillSlots puts every detail in its slot (the later of two in one).
func (h *findTop) fillSlots() {
	if len(h.slots) == 0 {
		return
	}
	clear(h.slots)
	for i := range h.details {
		h.slots[detailSlot(&h.details[i], len(h.slots))] = uint32(i) + 1
	}
}

func fentryWorse(a, b *fentry) bool {
	// Ranks first: keys of one length compare their bytes, and most
	// entries differ in score or hash.
	if a.score == b.score && a.hash == b.hash && a.key == b.key {
		return a.db > b.db // the same key name in two databases
	}
	return findWorse(a.score, a.hash, a.key, b.score, b.hash, b.key)
}

// room is how many entries the buffer holds before a selection.
func (h *findTop) room() int { return h.n + max(h.n/2, 16) }

// admits reports whether a finding of this rank would be taken in (it
// may still be dropped by a later selection).
func (h *findTop) admits(score int64, hash uint64, key string) bool {
	if h.n == 0 {
		return false
	}
	return !h.cut || findWorse(h.thresh.score, h.thresh.hash, h.thresh.key, score, hash, key)
}

// push takes x, with its texts d, in when it beats the threshold, and
// reports whether it did.
func (h *findTop) push(x fentry, d findDetail) bool {
	if !h.admits(x.score, x.hash, x.key) {
		return false
	}
	if len(h.h) >= h.room() {
		h.selectBest()
	}
	if len(h.h) == cap(h.h) {
		// Doubling to 1,024 entries, then room at once: append's own
		// growth (by a quarter past 256 entries) copied the buffer some
		// twenty times on its way to room and left capacity past it.
		next := 2 * cap(h.h)
		switch {
		case next < 64:
			next = 64
		case next > 1024:
			next = h.room()
		}
		h.h = slices.Grow(h.h, min(next, h.room())-len(h.h))
	}
	x.detail = h.detailOf(d)
	h.h = append(h.h, x)
	return true
}

// kept settles the buffer and returns the entries of the best n findings
// (at most n), in no particular order.
func (h *findTop) kept() []fentry {
	if len(h.h) > h.n {
		h.selectBest()
	}
	return h.h
}

// selectBest keeps the entries of the best n findings, raises the
// threshold to the worst one kept, and drops the details no entry uses
// any more once they outnumber the entries (texts that vary by key, such
// as a time stamp in a message, would pile up).
func (h *findTop) selectBest() {
	if len(h.h) <= h.n {
		return
	}
	selectEntries(h.h, h.n)
	clear(h.h[h.n:])
	h.h = h.h[:h.n]
	worst := 0
	for i := 1; i < len(h.h); i++ {
		if fentryWorse(&h.h[i], &h.h[worst]) {
			worst = i
		}
	}
	h.thresh, h.cut = h.h[worst], true
	if len(h.details) > h.room() {
		h.compactDetails()
	}
}

// compactDetails keeps the details the entries use, renumbered in their
// order, in place: the list's details keep their room, which a list of a
// keyspace of many families (a hint each) fills again and again.
func (h *findTop) compactDetails() {
	remap := h.remap[:0]
	if cap(remap) < len(h.details) {
		remap = make([]uint32, 0, cap(h.details))
	}
	remap = remap[:len(h.details)]
	clear(remap)
	for i := range h.h {
		remap[h.h[i].detail] = 1
	}
	// A kept detail moves to its rank among the kept, never later than
	// where it is: the copy reads each detail before it is overwritten.
	n := uint32(0)
	for i, used := range remap {
		if used == 0 {
			continue
		}
		h.details[n] = h.details[i]
		remap[i] = n
		n++
	}
	clear(h.details[n:])
	h.details = h.details[:n]
	for i := range h.h {
		e := &h.h[i]
		e.detail = remap[e.detail]
	}
	h.remap = remap[:0]
	h.fillSlots()
	h.last = -1
}

// selectEntries reorders s so that s[:k] holds its k best entries
// (quickselect with a median-of-three pivot; 0 < k < len(s)).
func selectEntries(s []fentry, k int) {
	lo, hi := 0, len(s)-1
	for lo < hi {
		// Median of three to s[hi], then a Lomuto partition: better
		// entries first.
		mid := lo + (hi-lo)/2
		if fentryWorse(&s[lo], &s[mid]) {
			s[lo], s[mid] = s[mid], s[lo]
		}
		if fentryWorse(&s[mid], &s[hi]) {
			s[mid], s[hi] = s[hi], s[mid]
			if fentryWorse(&s[lo], &s[mid]) {
				s[lo], s[mid] = s[mid], s[lo]
			}
		}
		// Now s[lo] >= s[mid] >= s[hi] (better first); pivot the median.
		s[mid], s[hi] = s[hi], s[mid]
		p := s[hi]
		i := lo
		for j := lo; j < hi; j++ {
			if fentryWorse(&p, &s[j]) {
				s[i], s[j] = s[j], s[i]
				i++
			}
		}
		s[i], s[hi] = s[hi], s[i]
		// s[lo:i] beat the pivot, s[i] is the pivot, s[i+1:] do not.
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

// keyHash is a fixed 64-bit hash of a key, so that samples and capped
// lists are reproducible across runs and aggregators: eight bytes at a
// time through a multiply and a shift (each step a bijection of the
// state), then murmur3's finalizer.
func keyHash[T string | []byte](s T) uint64 {
	const m = 0x9e3779b97f4a7c15
	whole, n := s, len(s)
	h := uint64(n) * m
	for ; len(s) >= 8; s = s[8:] {
		v := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
			uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
		h = (h ^ v) * m
		h ^= h >> 29
	}
	var v uint64
	switch {
	case len(s) == 0:
	case n >= 8:
		// The tail in the top bytes of the key's last eight, moved down:
		// one load, not a loop of up to seven steps whose end the
		// branch predictor misses (most keys of a top list are hashed).
		t := whole[n-8:]
		v = (uint64(t[0]) | uint64(t[1])<<8 | uint64(t[2])<<16 | uint64(t[3])<<24 |
			uint64(t[4])<<32 | uint64(t[5])<<40 | uint64(t[6])<<48 | uint64(t[7])<<56) >> (64 - 8*len(s))
	default:
		for i := 0; i < len(s); i++ {
			v |= uint64(s[i]) << (8 * i)
		}
	}
	return mix64((h ^ v) * m)
}

// mix64 is murmur3's finalizer.
func mix64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}
