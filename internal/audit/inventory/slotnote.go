package inventory

import (
	"strings"

	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/keyslot"
)

// SlotsNote is the note of an RDB audit whose keys lie in some Cluster
// slots only (ranges), with what the sample showed (detail, "" in a
// merge); several: of more than one file.
func SlotsNote(several bool, ranges, detail string) string {
	files, are := "this file", "it is one of"
	if several {
		files, are = "these files", "they are"
	}
	if detail != "" {
		detail = " (" + detail + ")"
	}
	return "the keys of " + files + slotsNoteMid + ranges + " only" + detail + ": if " + are +
		" a Redis Cluster's nodes, the nodes serving the other slots are not here, nor their keys; the report covers the files given"
}

const slotsNoteMid = " lie in Cluster slots "

// MinSlotGap is the shortest run of slots without a key that a note
// calls a gap (a shorter one is the sample's).
const MinSlotGap = 256

// slotsNoteRanges reads the slots of a SlotsNote; false for another note.
func slotsNoteRanges(n string) ([]int, bool) {
	if !strings.HasPrefix(n, "the keys of ") {
		return nil, false
	}
	_, rest, ok := strings.Cut(n, slotsNoteMid)
	if !ok {
		return nil, false
	}
	ranges, _, ok := strings.Cut(rest, " only")
	if !ok || !report.ValidSlotRanges(ranges) {
		return nil, false
	}
	return report.ParseSlotRanges(ranges), true
}

// mergedSlots is the SlotsNote of reports merged, from the slots each
// part's note names; "" when together they cover every slot, or a part
// has no such note (its keys lie in every slot, or it cannot say).
func mergedSlots(reps []*report.Report) string {
	var seen [keyslot.Slots]bool
	noted := false
	for _, rep := range reps {
		found := false
		for _, n := range rep.Notes {
			if slots, ok := slotsNoteRanges(n); ok {
				found, noted = true, true
				for _, s := range slots {
					seen[s] = true
				}
			}
		}
		if !found {
			return "" // its keys lie in every slot, or it does not say
		}
	}
	// Each part's ranges end at the last slot its sampled keys lay in: the
	// few slots between two parts' ranges are nobody's gap.
	for i := 0; i < keyslot.Slots; {
		j := i
		for j < keyslot.Slots && !seen[j] {
			j++
		}
		if j-i < MinSlotGap {
			for k := i; k < j; k++ {
				seen[k] = true
			}
		}
		i = j + 1
	}
	var slots []int
	for s, ok := range seen {
		if ok {
			slots = append(slots, s)
		}
	}
	if !noted || len(slots) == keyslot.Slots {
		return ""
	}
	return SlotsNote(true, report.SlotRanges(slots), "")
}
