package migrate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"time"

	"github.com/keyguard/keyguard/internal/atomicfile"
)

// stateFile is the cursor file of a resumable run: per plan and per
// master, the SCAN cursor after the last fully processed batch and the
// counts up to it. It is rewritten whole (temporary file, fsync, rename),
// so an interrupted write leaves the previous version.
type stateFile struct {
	Version int          `json:"version"`
	Op      string       `json:"op"`
	SavedAt time.Time    `json:"saved_at"`
	Plans   []*planState `json:"plans"`
}

type planState struct {
	From      string       `json:"from"`
	To        string       `json:"to"`
	Fields    []string     `json:"fields,omitempty"`
	Match     string       `json:"match,omitempty"`
	Overwrite bool         `json:"overwrite,omitempty"`
	DryRun    bool         `json:"dry_run,omitempty"`
	KeepTTL   bool         `json:"keep_ttl,omitempty"`
	Complete  bool         `json:"complete"`
	Nodes     []*nodeState `json:"nodes"`
}

type nodeState struct {
	ID     string `json:"id"`
	Addr   string `json:"addr"`
	RunID  string `json:"run_id"` // the server's run_id: a cursor is only good on the process that gave it
	Cursor uint64 `json:"cursor"`
	// Slots are, on a Cluster, the slot ranges whose keys were all
	// handled: a resumed run walks the others.
	Slots  string `json:"slots,omitempty"`
	Done   bool   `json:"done"`
	Counts Counts `json:"counts"`
}

// stateVersion 2: a Cluster's progress is the slots handled (one state for
// the whole Cluster), not a SCAN cursor per master.
const stateVersion = 2

// loadState reads path, or returns an empty state when it does not exist.
func loadState(path, op string) (*stateFile, bool, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &stateFile{Version: stateVersion, Op: op}, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read cursor file: %w", err)
	}
	var s stateFile
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, false, fmt.Errorf("cursor file %s: %w\n\tTry: give another --cursor file, or remove this one to start over (copy never overwrites, so a new run is safe)", path, err)
	}
	if s.Version != stateVersion {
		return nil, false, fmt.Errorf("cursor file %s has version %d, this keyguard reads %d\n\tTry: remove it to start over", path, s.Version, stateVersion)
	}
	s.Plans = slices.DeleteFunc(s.Plans, func(p *planState) bool { return p == nil })
	for _, p := range s.Plans {
		p.Nodes = slices.DeleteFunc(p.Nodes, func(n *nodeState) bool { return n == nil })
	}
	if s.Op != op {
		return nil, false, fmt.Errorf("cursor file %s belongs to a %s run, not %s\n\tTry: give each of copy and cleanup its own --cursor file", path, s.Op, op)
	}
	return &s, true, nil
}

// plan returns the state of p in s, adding it when absent. A state written
// with other options is an error: its cursors mean something else.
func (s *stateFile) plan(p *Plan, opts *Options) (*planState, error) {
	for _, ps := range s.Plans {
		if ps.From != p.From || ps.To != p.To {
			continue
		}
		if !slices.Equal(ps.Fields, p.Fields) || ps.Match != opts.Match || ps.Overwrite != opts.Overwrite || ps.DryRun != opts.DryRun || ps.KeepTTL != opts.KeepTTL {
			return nil, fmt.Errorf("the cursor file was written by a run of %s → %s with other options (fields, --match, --overwrite, --keep-ttl or --dry-run)\n\tTry: run with the same options, or give another --cursor file", p.From, p.To)
		}
		return ps, nil
	}
	ps := &planState{From: p.From, To: p.To, Fields: p.Fields, Match: opts.Match, Overwrite: opts.Overwrite, DryRun: opts.DryRun, KeepTTL: opts.KeepTTL}
	s.Plans = append(s.Plans, ps)
	return ps, nil
}

// save writes s to path atomically.
func (s *stateFile) save(path string) error {
	s.SavedAt = time.Now().UTC()
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(path, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("write cursor file: %w", err)
	}
	return nil
}
