package migrate

import (
	"time"

	"github.com/keyguard/keyguard/internal/audit/report"
)

// Counts are what a run did with the keys it saw. Copy fills Copied,
// Existing, Expired, NotFit, WrongType and NoFields; Verify fills Verified
// and Mismatched; Cleanup fills Removed, Tombstoned, Changed and
// Mismatched, and for the tombstones its walk finds Rechecked and
// Restored; Restore fills Keys (tombstones of the plan), Restored,
// Existing and Expired. In a dry run they count what would have happened.
type Counts struct {
	Scanned    int64 `json:"scanned"`                       // keys SCAN returned
	Keys       int64 `json:"keys"`                          // keys of the old template among them
	Copied     int64 `json:"copied,omitempty"`              // new key written
	Existing   int64 `json:"skipped_existing,omitempty"`    // new key already there, left alone
	Expired    int64 `json:"expired,omitempty"`             // old key gone between SCAN and the copy
	NotFit     int64 `json:"not_fit,omitempty"`             // a value does not fit the new template
	WrongType  int64 `json:"wrong_type,omitempty"`          // old key of another type than the template's
	NoFields   int64 `json:"no_fields,omitempty"`           // --fields: the old hash has none of them
	Verified   int64 `json:"verified,omitempty"`            // new key matches the old one
	Mismatched int64 `json:"mismatched,omitempty"`          // new key missing or different
	Removed    int64 `json:"removed,omitempty"`             // old key (or its moved fields) deleted
	Changed    int64 `json:"changed,omitempty"`             // old or new key changed between verify and delete, old key left alone
	Tombstoned int64 `json:"tombstoned,omitempty"`          // of Removed: kept as a tombstone for the grace period (across Cluster slots)
	Restored   int64 `json:"restored,omitempty"`            // Restore: old key brought back from its tombstone; Cleanup: brought back because its new key no longer verifies
	Rechecked  int64 `json:"rechecked,omitempty"`           // Cleanup: tombstone found by the walk whose new key still verifies (left until the grace period ends)
	TTLSet     int64 `json:"ttl_from_template,omitempty"`   // of Copied: expiry set by the new template's TTL policy (the old one had none, a longer one, or one a persistent template drops)
	TTLBreaks  int64 `json:"ttl_breaks_template,omitempty"` // of Copied, with KeepTTL: the old expiry kept breaks the new template
}

func (c *Counts) add(o Counts) {
	c.Scanned += o.Scanned
	c.Keys += o.Keys
	c.Copied += o.Copied
	c.Existing += o.Existing
	c.Expired += o.Expired
	c.NotFit += o.NotFit
	c.WrongType += o.WrongType
	c.NoFields += o.NoFields
	c.Verified += o.Verified
	c.Mismatched += o.Mismatched
	c.Removed += o.Removed
	c.Changed += o.Changed
	c.Tombstoned += o.Tombstoned
	c.Restored += o.Restored
	c.Rechecked += o.Rechecked
	c.TTLSet += o.TTLSet
	c.TTLBreaks += o.TTLBreaks
}

// Mismatch kinds.
const (
	MismatchMissing   = "missing"    // no new key
	MismatchType      = "type"       // the new key has another type
	MismatchContent   = "content"    // the values differ
	MismatchTTL       = "ttl"        // the expiries differ by more than the tolerance
	MismatchNotFit    = "not-fit"    // the old key has no new key: a value does not fit
	MismatchWrongType = "wrong-type" // the old key is not of the template's type: not copied
	WarningTTL        = "ttl-policy" // copied with KeepTTL, its expiry breaks the new template
)

// Mismatch is an old key whose new key does not verify.
type Mismatch struct {
	Old    string `json:"old"`
	New    string `json:"new,omitempty"`
	Kind   string `json:"kind"`
	Detail string `json:"detail"`
}

// NodeResult is one master's part of a run.
type NodeResult struct {
	ID     string `json:"id"` // "db0" (a standalone server's database), or the slot ranges a Cluster master serves
	Addr   string `json:"addr"`
	Cursor uint64 `json:"cursor"`          // a server: where the SCAN stopped (0 and Done: finished)
	Slots  string `json:"slots,omitempty"` // a Cluster: the slots whose keys were handled
	Done   bool   `json:"done"`
	Counts Counts `json:"counts"`
}

// Result is the outcome of Copy, Verify or Cleanup.
type Result struct {
	Op         string        `json:"op"` // copy, verify, cleanup or restore
	From       string        `json:"from"`
	To         string        `json:"to"`
	Type       string        `json:"type"` // the Redis type of the template's keys
	Fields     []string      `json:"fields,omitempty"`
	DryRun     bool          `json:"dry_run,omitempty"`
	StartedAt  time.Time     `json:"started_at"`
	Duration   time.Duration `json:"-"`
	DurationMS int64         `json:"duration_ms"`
	// Complete is true when every key of every master (every slot of a
	// Cluster, through failovers and migrations) was handled, in one life
	// of its server. Coverage says what was walked, and what not and why.
	Complete bool             `json:"complete"`
	Coverage *report.Coverage `json:"coverage,omitempty"`
	// Stopped says why an incomplete run stopped: interrupted, max-keys,
	// or the error.
	Stopped   string `json:"stopped,omitempty"`
	ResumedOf string `json:"resumed_from,omitempty"` // the cursor file a run continued
	Counts    Counts `json:"counts"`                 // with the earlier runs' when resumed
	// RunKeys is the template's keys this run handled: Counts.Keys less
	// what a resumed run carried over. The speed is this over Duration.
	RunKeys    int64        `json:"run_keys"`
	Nodes      []NodeResult `json:"nodes"`
	Mismatches []Mismatch   `json:"mismatches,omitempty"`
	// Tombstones counts, after a complete Verify, the plan's old keys kept
	// as tombstones by a cleanup across Cluster slots (Restore brings them
	// back).
	Tombstones int64 `json:"tombstones,omitempty"`
	// MoreMismatches counts mismatches beyond Options.MaxMismatches.
	MoreMismatches int64 `json:"more_mismatches,omitempty"`
	// Warnings are keys Copy wrote with KeepTTL whose expiry breaks the
	// new template (Kind WarningTTL); MoreWarnings counts those beyond
	// Options.MaxMismatches.
	Warnings     []Mismatch `json:"warnings,omitempty"`
	MoreWarnings int64      `json:"more_warnings,omitempty"`
	// PlanNotes are the plan's notes (what the migration does); Notes what
	// happened in this run (a resume, a restarted master).
	PlanNotes []string `json:"plan_notes,omitempty"`
	Notes     []string `json:"notes,omitempty"`
}
