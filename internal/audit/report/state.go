package report

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// StateVersion is the version of State this build writes and reads.
// Version 2 added PII: version 1 kept personal data as per-key findings.
const StateVersion = 2

// State is the part of a report that lets its aggregates be carried on:
// what a resumed audit starts from, and what merge adds up. The report's
// own lists (findings, top keys) are part of it too; State holds what
// the report shows only rounded, extrapolated or not at all: exact
// counts, TTL sketches, field samples, the hot-key candidates.
type State struct {
	Version      int           `json:"version"`
	Options      StateOptions  `json:"options"`
	Totals       StateTotals   `json:"totals"`
	TTLHistogram [][2]int64    `json:"ttl_histogram"` // keys and bytes per slot of TTLHistogram, not extrapolated
	Groups       []StateGroup  `json:"groups"`
	Fields       []StateFields `json:"fields,omitempty"`
	Hot          []StateHot    `json:"hot,omitempty"`
	PII          []StatePII    `json:"pii,omitempty"`
	PIILost      int64         `json:"pii_lost,omitempty"` // keys of unregistered families past the bound, not judged

	// RunIDs are the run_id of each node walked, by address: a resumed
	// audit walks a node again whose run_id changed since.
	RunIDs map[string]string `json:"run_ids,omitempty"`
}

// StateOptions are the aggregation's bounds.
type StateOptions struct {
	MaxFindings  int     `json:"max_findings"`
	TopKeys      int     `json:"top_keys"`
	HotKeys      int     `json:"hot_keys"`
	HotFreqFloor int     `json:"hot_freq_floor"`
	MaxGroups    int     `json:"max_groups"`
	Sampled      bool    `json:"sampled,omitempty"`
	SampleRatio  float64 `json:"sample_ratio,omitempty"`
	// SampleWeighted: the counts are sums of per-key weights (a
	// stratified sample), already extrapolated.
	SampleWeighted bool `json:"sample_weighted,omitempty"`
}

// StateTotals are the report's totals before extrapolation, and counts
// the report does not show.
type StateTotals struct {
	Keys         int64    `json:"keys"`
	Bytes        int64    `json:"bytes"`
	BytesUnknown int64    `json:"bytes_unknown"`
	NoTTL        int64    `json:"no_ttl"`
	Unregistered int64    `json:"unregistered"`
	Severity     [3]int64 `json:"severity"` // findings decided per key, by severity
	FreqKnown    int64    `json:"freq_known"`
	FoldedCap    int64    `json:"folded_cap"`
	FoldedLate   int64    `json:"folded_late,omitempty"`
	FoldedLong   int64    `json:"folded_long"`
	FamilyMisses int64    `json:"family_misses"`
}

// StateGroup is one group's counters.
type StateGroup struct {
	Kind     string   `json:"kind"` // template, prefix (a family) or other
	Name     Str      `json:"name"` // the template as written, or the family as inferred
	DB       int      `json:"db,omitempty"`
	Keys     int64    `json:"keys"`
	Bytes    int64    `json:"bytes"`
	NoTTL    int64    `json:"no_ttl"`
	Findings int64    `json:"findings"` // decided per key
	Types    []int64  `json:"types"`    // by TypeNames
	TTL      StateTTL `json:"ttl"`
	WithTTL  int64    `json:"with_ttl,omitempty"` // keys with a TTL, weighted (ttl's count without a weighted sample)
	Example  Str      `json:"example,omitempty"`
	// A family whose first segment holds a placeholder: the first
	// segment all its keys share, or that they do not.
	First       Str  `json:"first,omitempty"`
	FirstVaries bool `json:"first_varies,omitempty"`

	TTLHistogram [][3]int64 `json:"ttl_histogram,omitempty"` // [slot of the report's ttl_histogram, keys, bytes], the slots that hold keys
}

// StateTTL is a TTL sketch: count, exact bounds and the log buckets.
type StateTTL struct {
	N       int64      `json:"n"`
	MinMS   int64      `json:"min_ms,omitempty"`
	MaxMS   int64      `json:"max_ms,omitempty"`
	Buckets [][2]int64 `json:"buckets,omitempty"` // [bucket, count], only the counted ones
}

// StateFields is the field-set census of one template or family.
type StateFields struct {
	Kind     string     `json:"kind"` // template or prefix
	Name     Str        `json:"name"`
	Hits     int64      `json:"hits"`
	Misses   int64      `json:"misses"`
	Census   bool       `json:"census,omitempty"`   // the values' field sets were counted
	Overflow bool       `json:"overflow,omitempty"` // too many field sets to keep
	Values   int64      `json:"values,omitempty"`   // values counted
	Sets     []StateSet `json:"sets,omitempty"`
	// The forms of the strings read: JSON objects, strings of other
	// forms, and which (bit n: the string form n, as the audit numbers
	// them: number 4, text 8…).
	Objects int64  `json:"objects,omitempty"`
	Foreign int64  `json:"foreign,omitempty"`
	Forms   uint32 `json:"forms,omitempty"`
}

// StateSet is one field set of a census: its normalized names, how many
// values hold it, and the keys kept of them.
type StateSet struct {
	Names []string      `json:"names"`
	Count int64         `json:"count"`
	Lost  bool          `json:"lost,omitempty"` // keys were not kept
	Keys  []StateSample `json:"keys,omitempty"`
}

// StateSample is one key kept in a census.
type StateSample struct {
	Key   Str   `json:"key"`
	DB    int   `json:"db,omitempty"`
	Bytes int64 `json:"bytes"`
}

// StatePII is the evidence of personal data in one template's
// placeholders, or in the unregistered keys of one family form: what a
// merge or a resumed audit judges again over all the keys.
type StatePII struct {
	Kind  string         `json:"kind"` // template or prefix (a family form: its numbers written {num})
	Name  Str            `json:"name"`
	Slots []StatePIISlot `json:"slots"`
}

// StatePIISlot is the evidence of one placeholder and kind of datum:
// counts, the smallest and largest number, and the keys kept (bounded).
type StatePIISlot struct {
	Slot   int           `json:"slot"` // the placeholder's position
	Name   string        `json:"name"` // the placeholder's name
	Kind   string        `json:"kind"` // mobile, e164, idcard, card or email
	Hits   int64         `json:"hits"`
	Misses int64         `json:"misses"`
	Lo     uint64        `json:"lo,omitempty"`
	Hi     uint64        `json:"hi,omitempty"`
	Lost   int64         `json:"lost,omitempty"` // hits whose key was not kept
	Keys   []StatePIIKey `json:"keys,omitempty"`
}

// StatePIIKey is one key kept as holding a datum; the datum only masked.
type StatePIIKey struct {
	Key    Str    `json:"key"`
	KeyLen int    `json:"key_len,omitempty"`
	DB     int    `json:"db,omitempty"`
	Bytes  int64  `json:"bytes"`
	Masked string `json:"masked"`
	Group  Str    `json:"group,omitempty"` // unregistered keys: the family the key was counted in
}

// StateHot is a candidate of the hot-key set.
type StateHot struct {
	Key       Str    `json:"key"`
	KeyLen    int    `json:"key_len,omitempty"`
	Freq      int    `json:"freq"`
	Bytes     int64  `json:"bytes"`
	Template  Str    `json:"template"`
	Owner     string `json:"owner,omitempty"`
	Kind      string `json:"kind"`
	Protected bool   `json:"protected,omitempty"`
	Node      string `json:"node,omitempty"`
	DB        int    `json:"db,omitempty"`
}

// Str is a string of any bytes: JSON text when it is UTF-8, else
// {"b64": "..."}, so that binary keys survive a round trip.
type Str string

// MarshalJSON implements json.Marshaler.
func (s Str) MarshalJSON() ([]byte, error) {
	if utf8.ValidString(string(s)) {
		return json.Marshal(string(s))
	}
	return json.Marshal(struct {
		B64 string `json:"b64"`
	}{base64.StdEncoding.EncodeToString([]byte(s))})
}

// UnmarshalJSON implements json.Unmarshaler.
func (s *Str) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '{' {
		var v struct {
			B64 string `json:"b64"`
		}
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		raw, err := base64.StdEncoding.DecodeString(v.B64)
		if err != nil {
			return fmt.Errorf("b64: %w", err)
		}
		*s = Str(raw)
		return nil
	}
	var v string
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*s = Str(v)
	return nil
}
