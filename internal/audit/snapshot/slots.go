package snapshot

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/keyguard/keyguard/internal/audit/inventory"
	"github.com/keyguard/keyguard/internal/human"
	"github.com/keyguard/keyguard/internal/keyslot"
)

// slotEvery is how often a file's keys are sampled for the Cluster slots
// they lie in: one key in 64, after the first slotFirst, which all are (a
// small file has few keys to tell its slots by).
const (
	slotEvery = 64
	slotFirst = 16384
)

// slotSample is which Cluster slots the sampled keys of a file lie in.
type slotSample struct {
	seen [keyslot.Slots / 64]uint64
	n    int64 // keys sampled
}

func (s *slotSample) add(key string) {
	slot := keyslot.Slot(key)
	s.seen[slot/64] |= 1 << (slot % 64)
	s.n++
}

func (s *slotSample) merge(o *slotSample) {
	for i, w := range o.seen {
		s.seen[i] |= w
	}
	s.n += o.n
}

func (s *slotSample) has(slot int) bool { return s.seen[slot/64]&(1<<(slot%64)) != 0 }

// slotGapNote says, for files whose sampled keys leave a long run of
// Cluster slots empty where keys spread like the others' would have put
// dozens, which slots hold them: the files look like some nodes of a
// Cluster, not all, which a file of Redis 7.0 cannot say itself (no slot
// map). "" when the keys cover every slot as far as the sample can tell
// (a server that is not a Cluster node, all the masters' files).
func slotGapNote(ins []*Input, res []fileResult) string {
	var all slotSample
	for i := range res {
		if ins[i].stream {
			return "" // a node's snapshot: its slots are known
		}
		all.merge(&res[i].slots)
	}
	if all.n == 0 {
		return ""
	}
	// Gaps: runs of slots without a sampled key where keys spread over
	// every slot would have put 32 sampled keys (a run that empty by
	// chance is rarer than e^-32), and at least 256 slots. The slots
	// between them are the keys' (a shorter run is the sample's).
	minGap := max(inventory.MinSlotGap, int(32*keyslot.Slots/all.n)+1)
	type span struct{ lo, hi int }
	var gaps []span
	longest, missing := 0, 0
	for i := 0; i < keyslot.Slots; {
		if all.has(i) {
			i++
			continue
		}
		j := i
		for j < keyslot.Slots && !all.has(j) {
			j++
		}
		if j-i >= minGap {
			gaps = append(gaps, span{i, j - 1})
			longest, missing = max(longest, j-i), missing+j-i
		}
		i = j
	}
	if longest == 0 {
		return ""
	}
	var ranges []string
	lo := 0
	for _, g := range append(gaps, span{keyslot.Slots, keyslot.Slots}) {
		switch {
		case g.lo-1 > lo:
			ranges = append(ranges, fmt.Sprintf("%d-%d", lo, g.lo-1))
		case g.lo-1 == lo:
			ranges = append(ranges, strconv.Itoa(lo))
		}
		lo = g.hi + 1
	}
	return inventory.SlotsNote(len(ins) > 1, strings.Join(ranges, ","),
		fmt.Sprintf("%s sampled, none in the other %s slots", human.Plural(all.n, "key"), human.Count(int64(missing))))
}
