package report

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/human"
	"github.com/keyguard/keyguard/internal/jsonout"
)

// DriftReport is what changed between two audit reports: groups that
// appeared or went away, growth per group, and findings that are new.
type DriftReport struct {
	Old     DriftSide    `json:"old"`
	New     DriftSide    `json:"new"`
	Summary DriftSummary `json:"summary"`
	// NewGroups are groups of NEW absent from OLD: new templates in use and
	// new unregistered families.
	NewGroups  []GroupDrift `json:"new_groups"`
	GoneGroups []GroupDrift `json:"gone_groups"`
	// Changed are groups in both whose keys or memory changed, the largest
	// memory change first.
	Changed []GroupDrift `json:"changed"`
	// NewFindings are findings of NEW (rule and key) not in OLD.
	NewFindings []Finding `json:"new_findings"`
	// Resolved counts findings of OLD (rule and key) not in NEW.
	Resolved int64 `json:"resolved"`
	// NewFindingsCertain: OLD read every key (complete, not a sample),
	// so a finding it does not hold is new; false, it may hold on a key
	// OLD did not read. ResolvedCertain: the same of NEW, for the
	// findings it no longer holds.
	NewFindingsCertain bool `json:"new_findings_certain"`
	ResolvedCertain    bool `json:"resolved_certain"`
	// MemoryCompared is false when the two reports measure memory
	// differently (a live audit and an RDB file): groups are then
	// changed by their keys and keys without TTL alone.
	MemoryCompared bool     `json:"memory_compared"`
	Notes          []string `json:"notes,omitempty"`
}

// DriftSide identifies one of the two reports.
type DriftSide struct {
	Source    Source    `json:"source"`
	StartedAt time.Time `json:"started_at"`
	Complete  bool      `json:"complete"`
	// Covered is the part of its keyspace a report that is not complete
	// read (its coverage's share, 0 to 1), when it says.
	Covered  *float64 `json:"covered,omitempty"`
	Estimate bool     `json:"estimate,omitempty"`
	// Memory is the figure the report's bytes are: "MEMORY USAGE" of a
	// live audit, "RDB estimate" of a snapshot's.
	Memory string `json:"memory"`
	// NoRegistry: the report was made without a registry (its groups
	// are inferred families, every key unregistered).
	NoRegistry bool `json:"no_registry,omitempty"`
	// RegistryDigest names what the report's registry declared.
	RegistryDigest string `json:"registry_digest,omitempty"`
}

// DriftSummary compares the totals.
type DriftSummary struct {
	Keys         Delta `json:"keys"`
	Bytes        Delta `json:"bytes"`
	NoTTL        Delta `json:"no_ttl"`
	Unregistered Delta `json:"unregistered"`
	Findings     Delta `json:"findings"`
}

// Delta is a number in both reports.
type Delta struct {
	Old   int64 `json:"old"`
	New   int64 `json:"new"`
	Delta int64 `json:"delta"`
}

func delta(o, n int64) Delta { return Delta{o, n, n - o} }

// GroupDrift is one group's change.
type GroupDrift struct {
	Name  string `json:"name"`
	Kind  string `json:"kind"`
	Owner string `json:"owner,omitempty"`
	Keys  Delta  `json:"keys"`
	Bytes Delta  `json:"bytes"`
	NoTTL Delta  `json:"no_ttl"`
}

// Diff compares two reports. Groups are the same when kind and name are;
// findings when rule and key are.
func Diff(old, new *Report) *DriftReport {
	d := &DriftReport{
		Old: side(old), New: side(new),
		Summary: DriftSummary{
			Keys: delta(old.Summary.Keys, new.Summary.Keys), Bytes: delta(old.Summary.Bytes, new.Summary.Bytes),
			NoTTL: delta(old.Summary.NoTTL, new.Summary.NoTTL), Unregistered: delta(old.Summary.Unregistered, new.Summary.Unregistered),
			Findings: delta(old.Summary.Findings, new.Summary.Findings),
		},
		NewGroups: []GroupDrift{}, GoneGroups: []GroupDrift{}, Changed: []GroupDrift{}, NewFindings: []Finding{},
	}
	d.MemoryCompared = d.Old.Memory == d.New.Memory
	gkey := func(g *Group) string { return g.Kind + "\x00" + g.Name }
	oldG := make(map[string]*Group, len(old.Groups))
	for i := range old.Groups {
		oldG[gkey(&old.Groups[i])] = &old.Groups[i]
	}
	seen := make(map[string]bool, len(new.Groups))
	for i := range new.Groups {
		n := &new.Groups[i]
		k := gkey(n)
		seen[k] = true
		o := oldG[k]
		if o == nil {
			d.NewGroups = append(d.NewGroups, groupDrift(&Group{}, n))
			continue
		}
		if o.Keys != n.Keys || o.NoTTL != n.NoTTL || d.MemoryCompared && o.Bytes != n.Bytes {
			d.Changed = append(d.Changed, groupDrift(o, n))
		}
	}
	for i := range old.Groups {
		if o := &old.Groups[i]; !seen[gkey(o)] {
			g := groupDrift(o, &Group{})
			g.Owner = o.Owner
			d.GoneGroups = append(d.GoneGroups, g)
		}
	}
	byBytes := func(a, b GroupDrift) int {
		if !d.MemoryCompared {
			return cmp.Or(cmp.Compare(abs(b.Keys.Delta), abs(a.Keys.Delta)), strings.Compare(a.Name, b.Name))
		}
		return cmp.Or(cmp.Compare(abs(b.Bytes.Delta), abs(a.Bytes.Delta)), cmp.Compare(abs(b.Keys.Delta), abs(a.Keys.Delta)), strings.Compare(a.Name, b.Name))
	}
	slices.SortFunc(d.NewGroups, byBytes)
	slices.SortFunc(d.GoneGroups, byBytes)
	slices.SortFunc(d.Changed, byBytes)

	fkey := func(f *Finding) string { return f.Rule + "\x00" + f.Key }
	oldF := make(map[string]bool, len(old.Findings))
	for i := range old.Findings {
		oldF[fkey(&old.Findings[i])] = true
	}
	newF := make(map[string]bool, len(new.Findings))
	for i := range new.Findings {
		f := &new.Findings[i]
		newF[fkey(f)] = true
		if !oldF[fkey(f)] {
			d.NewFindings = append(d.NewFindings, *f)
		}
	}
	for k := range oldF {
		if !newF[k] {
			d.Resolved++
		}
	}
	d.NewFindingsCertain = old.Complete && !old.Estimate
	d.ResolvedCertain = new.Complete && !new.Estimate

	var partial []string
	for _, s := range []struct {
		name string
		side DriftSide
	}{{"old", d.Old}, {"new", d.New}} {
		if p := s.side.partial(); p != "" {
			partial = append(partial, "the "+s.name+" report is "+p)
		}
	}
	if len(partial) > 0 {
		d.Notes = append(d.Notes, strings.Join(partial, ", and ")+" (complete: false): keys, groups and findings may look new, gone or changed only because part of the keyspace was not read; compare complete reports (continue a partial audit with --resume)")
	}
	if old.Estimate || new.Estimate {
		d.Notes = append(d.Notes, "a report is extrapolated from a sample: small changes are noise")
	}
	if !d.MemoryCompared {
		d.Notes = append(d.Notes, fmt.Sprintf("memory is not compared: the old report's is %s, the new one's %s (they differ by allocator overhead); groups changed by their keys and keys without TTL only",
			d.Old.Memory, d.New.Memory))
	}
	if d.Old.NoRegistry != d.New.NoRegistry {
		which := "the old report was made without a registry and the new one with one"
		if d.New.NoRegistry {
			which = "the old report was made with a registry and the new one without"
		}
		d.Notes = append(d.Notes, which+": templates and inferred families are different groups, so groups look new or gone by that alone; compare reports made alike")
	}
	if o, n := d.Old.RegistryDigest, d.New.RegistryDigest; o != "" && n != "" && o != n {
		d.Notes = append(d.Notes, fmt.Sprintf("the registry declared otherwise when the new report was made (digest %s, then %s): a group or finding may be new or gone by the registry's change alone (a template added, a TTL changed), not the keys'", o, n))
	}
	if old.Source.Target != new.Source.Target || old.Source.Kind != new.Source.Kind {
		d.Notes = append(d.Notes, fmt.Sprintf("the reports come from different sources (%s %s, %s %s)", old.Source.Kind, show(old.Source.Target), new.Source.Kind, show(new.Source.Target)))
	}
	var capped []string
	for rule, n := range old.FindingsOmitted {
		if n > 0 {
			capped = append(capped, rule)
		}
	}
	for rule, n := range new.FindingsOmitted {
		if n > 0 && !slices.Contains(capped, rule) {
			capped = append(capped, rule)
		}
	}
	if len(capped) > 0 {
		slices.Sort(capped)
		d.Notes = append(d.Notes, fmt.Sprintf("finding lists were capped for %s: new and resolved findings of these rules are approximate (compare summary counts; raise --max-findings)", strings.Join(capped, ", ")))
	}
	return d
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

func side(r *Report) DriftSide {
	s := DriftSide{Source: r.Source, StartedAt: r.StartedAt, Complete: r.Complete, Estimate: r.Estimate, Memory: MemoryFigure(r.Source.Kind),
		NoRegistry: r.WithoutRegistry(), RegistryDigest: r.RegistryDigest}
	if !r.Complete && r.Coverage != nil {
		s.Covered = &r.Coverage.Share
	}
	return s
}

// partial says how much of its keyspace an incomplete side read: "" for
// a complete one.
func (s DriftSide) partial() string {
	switch {
	case s.Complete:
		return ""
	case s.Covered != nil:
		return fmt.Sprintf("partial: %s of its keyspace read", pctText(*s.Covered))
	}
	return "partial"
}

// readPart says what of its keyspace a side that did not read every key
// read: "partial: 40% of its keyspace read", "a sample".
func (s DriftSide) readPart() string {
	if p := s.partial(); p != "" {
		if s.Estimate {
			return p + ", a sample"
		}
		return p
	}
	return "a sample"
}

// MemoryFigure is what the bytes of a report of source kind measure.
func MemoryFigure(kind string) string {
	if kind == "rdb" {
		return "the RDB estimate"
	}
	return "MEMORY USAGE"
}

func groupDrift(o, n *Group) GroupDrift {
	g := GroupDrift{Name: n.Name, Kind: n.Kind, Owner: n.Owner,
		Keys: delta(o.Keys, n.Keys), Bytes: delta(o.Bytes, n.Bytes), NoTTL: delta(o.NoTTL, n.NoTTL)}
	if g.Name == "" {
		g.Name, g.Kind = o.Name, o.Kind
	}
	return g
}

// NewFindingsAtLeast returns the new findings at or above sev.
func (d *DriftReport) NewFindingsAtLeast(sev finding.Severity) []Finding {
	var out []Finding
	for _, f := range d.NewFindings {
		if f.Severity.AtLeast(sev) {
			out = append(out, f)
		}
	}
	return out
}

// WriteJSON writes the drift report as indented JSON.
func (d *DriftReport) WriteJSON(w io.Writer) error {
	enc := jsonout.NewEncoder(w)
	if err := enc.Encode(d); err != nil {
		return fmt.Errorf("write drift report: %w", err)
	}
	return nil
}

// Lengths of the text drift report's lists.
const (
	diffTextGroups   = 15
	diffTextFindings = 20
)

// WriteText writes the drift for a person: totals, new and gone groups,
// the largest changes, new findings.
func (d *DriftReport) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	at := func(s DriftSide) string {
		part := ""
		if p := s.partial(); p != "" {
			part = "; " + p
		}
		return fmt.Sprintf("%s %s at %s (memory: %s%s)", s.Source.Kind, show(s.Source.Target), s.StartedAt.Format("2006-01-02 15:04 MST"), s.Memory, part)
	}
	fmt.Fprintf(bw, "keyguard diff: %s → %s\n\n", at(d.Old), at(d.New))
	s := d.Summary
	unreg := ", unregistered " + countDelta(s.Unregistered)
	if d.Old.NoRegistry && d.New.NoRegistry {
		unreg = "" // every key, in both: no registry to be missing from
	}
	fmt.Fprintf(bw, "keys %s, memory %s, without TTL %s%s, findings %s\n",
		countDelta(s.Keys), bytesDelta(s.Bytes), countDelta(s.NoTTL), unreg, countDelta(s.Findings))
	list := func(title string, gs []GroupDrift, desc func(GroupDrift) string) {
		if len(gs) == 0 {
			return
		}
		fmt.Fprintf(bw, "\n%s (%d)\n", title, len(gs))
		tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', 0)
		for _, g := range gs[:min(len(gs), diffTextGroups)] {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", g.Kind, show(g.Name), desc(g))
		}
		tw.Flush()
		if len(gs) > diffTextGroups {
			fmt.Fprintf(bw, "  … %d more in --format json\n", len(gs)-diffTextGroups)
		}
	}
	list("new groups", d.NewGroups, func(g GroupDrift) string {
		return fmt.Sprintf("%s\t%s", human.Plural(g.Keys.New, "key"), fmtBytes(g.Bytes.New))
	})
	list("gone groups", d.GoneGroups, func(g GroupDrift) string {
		return fmt.Sprintf("%s\t%s", human.Plural(g.Keys.Old, "key"), fmtBytes(g.Bytes.Old))
	})
	title := "changed groups, largest memory change first"
	if !d.MemoryCompared {
		title = "changed groups (keys or keys without TTL), largest change first"
	}
	list(title, d.Changed, func(g GroupDrift) string {
		return fmt.Sprintf("keys %s\tmemory %s", countDelta(g.Keys), bytesDelta(g.Bytes))
	})
	if len(d.NewFindings) > 0 {
		if d.NewFindingsCertain {
			fmt.Fprintf(bw, "\nnew findings (%d): %s\n", len(d.NewFindings), byRule(d.NewFindings))
		} else {
			fmt.Fprintf(bw, "\nfindings the old report does not hold (%d): %s\n  the old report did not read every key (%s): these may have been there already\n",
				len(d.NewFindings), byRule(d.NewFindings), d.Old.readPart())
		}
		for _, f := range d.NewFindings[:min(len(d.NewFindings), diffTextFindings)] {
			fmt.Fprintf(bw, "  %s %s %s: %s\n", f.Severity, f.Rule, showKey(f.Key, f.KeyLen), f.Message)
		}
		if len(d.NewFindings) > diffTextFindings {
			fmt.Fprintf(bw, "  … %d more in --format json\n", len(d.NewFindings)-diffTextFindings)
		}
	} else {
		fmt.Fprintf(bw, "\nno new findings\n")
	}
	switch {
	case d.Resolved > 0 && d.ResolvedCertain:
		fmt.Fprintf(bw, "%s findings of the old report are gone\n", fmtCount(d.Resolved))
	case d.Resolved > 0:
		fmt.Fprintf(bw, "%s findings of the old report are not in the new one, which did not read every key (%s): not a sign they were fixed\n",
			fmtCount(d.Resolved), d.New.readPart())
	}
	for _, n := range d.Notes {
		fmt.Fprintf(bw, "note: %s\n", n)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write drift report: %w", err)
	}
	return nil
}

func countDelta(d Delta) string {
	return fmt.Sprintf("%s → %s (%s)", fmtCount(d.Old), fmtCount(d.New), signed(d.Delta, fmtCount))
}

func bytesDelta(d Delta) string {
	return fmt.Sprintf("%s → %s (%s)", fmtBytes(d.Old), fmtBytes(d.New), signed(d.Delta, fmtBytes))
}

func signed(n int64, f func(int64) string) string {
	if n > 0 {
		return "+" + f(n)
	}
	if n == 0 {
		return "±0"
	}
	return f(n)
}

// byRule counts findings per rule: "error unregistered 20, error type-mismatch 1".
func byRule(fs []Finding) string {
	type row struct {
		sev  finding.Severity
		rule string
		n    int
	}
	var rows []row
	for _, f := range fs {
		i := slices.IndexFunc(rows, func(r row) bool { return r.rule == f.Rule })
		if i < 0 {
			i = len(rows)
			rows = append(rows, row{sev: f.Severity, rule: f.Rule})
		}
		rows[i].sev = max(rows[i].sev, f.Severity)
		rows[i].n++
	}
	slices.SortFunc(rows, func(a, b row) int {
		return cmp.Or(cmp.Compare(b.sev, a.sev), cmp.Compare(RuleRank(a.rule), RuleRank(b.rule)), strings.Compare(a.rule, b.rule))
	})
	var parts []string
	for _, r := range rows {
		parts = append(parts, fmt.Sprintf("%s %s %d", r.sev, r.rule, r.n))
	}
	return strings.Join(parts, ", ")
}
