package report

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/keyguard/keyguard/internal/topology"
)

// ClusterSlots is the number of hash slots of a Redis Cluster.
const ClusterSlots = 16384

// Coverage says which keys a report counted: the nodes and databases
// walked, the Cluster slots, and what was not covered and why. A report is
// complete only when NotCovered is empty.
type Coverage struct {
	Share      float64          `json:"share"` // part of the keyspace covered, 0 to 1: slots for a Cluster, keys at the start for a server
	Nodes      []CoverageNode   `json:"nodes"`
	Cluster    *ClusterCoverage `json:"cluster,omitempty"`
	NotCovered []Gap            `json:"not_covered,omitempty"`
}

// CoverageNode is one node walked.
type CoverageNode struct {
	Addr  string       `json:"addr"`
	Role  string       `json:"role"`             // master or replica; snapshot for an RDB file or a server's snapshot (audit --snapshot)
	RunID string       `json:"run_id,omitempty"` // when its walk began
	Slots string       `json:"slots,omitempty"`  // Cluster: the slot ranges counted on this node
	DBs   []CoverageDB `json:"dbs"`
	// An RDB file's: the replication ID of the server that wrote it (its
	// repl-id field: a master and its replicas share it), and the file's
	// CRC64 checksum, once read whole (hexadecimal).
	ReplID string `json:"repl_id,omitempty"`
	CRC64  string `json:"crc64,omitempty"`
}

// CoverageDB is one database of a node walked.
type CoverageDB struct {
	DB        int   `json:"db"`
	KeysStart int64 `json:"keys_start"` // INFO keyspace when the walk began; for an RDB file the keys it declares (-1: none)
	KeysEnd   int64 `json:"keys_end"`   // when it ended; -1 unknown (the walk stopped)
	Counted   int64 `json:"counted"`    // keys the walk listed and counted
	Complete  bool  `json:"complete"`   // walked to the end
	// Unreadable are keys listed that the ACL user may not read (NOPERM
	// on the key): in Counted, in no group, and not covered.
	Unreadable int64 `json:"unreadable,omitempty"`
}

// ClusterCoverage is what a report covers of a Cluster.
type ClusterCoverage struct {
	Masters int    `json:"masters"`           // masters serving slots when the run began
	Walked  int    `json:"walked"`            // masters whose slots this report counted
	Slots   int    `json:"slots"`             // slots counted, of 16384
	Counted string `json:"counted,omitempty"` // their ranges, when not all
}

// Gap is a part of the keyspace the report did not count: a node, one of
// its databases, or Cluster slots.
type Gap struct {
	Node   string `json:"node,omitempty"`
	DB     *int   `json:"db,omitempty"`
	Slots  string `json:"slots,omitempty"`
	Reason string `json:"reason"`
}

// Summary is the coverage in one line, as report headers show it:
// "3 of 3 masters, 16384 slots; 100% covered", or for one node of a
// Cluster "1 of 3 masters, slots 0-5460; add --cluster for all".
func (c *Coverage) Summary() string {
	if c == nil {
		return ""
	}
	var parts []string
	if cl := c.Cluster; cl != nil {
		p := fmt.Sprintf("%d of %d masters", cl.Walked, cl.Masters)
		if cl.Slots == ClusterSlots {
			p += ", all 16384 slots"
		} else if cl.Counted != "" {
			p += ", slots " + cl.Counted
		} else {
			p += fmt.Sprintf(", %d of 16384 slots", cl.Slots)
		}
		parts = append(parts, p)
	} else {
		var dbs []string
		for _, n := range c.Nodes {
			for _, d := range n.DBs {
				dbs = append(dbs, strconv.Itoa(d.DB))
			}
		}
		dbs = dedupeSorted(dbs)
		word := "database"
		if len(dbs) > 1 {
			word = "databases"
		}
		if len(dbs) > 0 {
			parts = append(parts, word+" "+strings.Join(dbs, ", "))
		}
	}
	parts = append(parts, fmt.Sprintf("%s covered", pctText(c.Share)))
	s := strings.Join(parts, "; ")
	if cl := c.Cluster; cl != nil && cl.Walked < cl.Masters && len(c.Nodes) == 1 {
		s += "; add --cluster for all"
	}
	return s
}

// Lines are the coverage as the text and HTML headers list it: the
// summary, each node walked, then each part not covered.
func (c *Coverage) Lines() (nodes, gaps []string) {
	if c == nil {
		return nil, nil
	}
	for _, n := range c.Nodes {
		var dbs []string
		for _, d := range n.DBs {
			st := ""
			if !d.Complete {
				st = ", stopped"
			}
			if n.Role == "snapshot" { // an RDB file or a server's snapshot: the keys it declares (RESIZEDB)
				decl := "the snapshot declares no count"
				if d.KeysStart >= 0 {
					decl = "the snapshot declares " + fmtCount(d.KeysStart) + ", expired and empty keys included"
				}
				dbs = append(dbs, fmt.Sprintf("db %d %s counted (%s%s)", d.DB, fmtCount(d.Counted), decl, st))
				continue
			}
			start, end := "?", "?"
			if d.KeysStart >= 0 {
				start = fmtCount(d.KeysStart)
			}
			if d.KeysEnd >= 0 {
				end = fmtCount(d.KeysEnd)
			}
			if d.Unreadable > 0 {
				st += ", " + fmtCount(d.Unreadable) + " of them not readable by the ACL user"
			}
			dbs = append(dbs, fmt.Sprintf("db %d %s counted (INFO keyspace: %s at the start, %s at the end%s)", d.DB, fmtCount(d.Counted), start, end, st))
		}
		line := n.Addr + " " + n.Role
		if n.RunID != "" {
			line += ", run_id " + n.RunID[:min(len(n.RunID), 8)]
		}
		if n.Slots != "" {
			line += ", slots " + n.Slots
		}
		if len(dbs) > 0 {
			line += ": " + strings.Join(dbs, "; ")
		}
		nodes = append(nodes, line)
	}
	for _, g := range c.NotCovered {
		gaps = append(gaps, g.String())
	}
	return nodes, gaps
}

// String says what the gap is and why: "10.0.0.2:6379 db 1: restarted …".
func (g Gap) String() string {
	var what []string
	if g.Node != "" {
		what = append(what, g.Node)
	}
	if g.DB != nil {
		what = append(what, "db "+strconv.Itoa(*g.DB))
	}
	if g.Slots != "" {
		what = append(what, "slots "+g.Slots)
	}
	if len(what) == 0 {
		return g.Reason
	}
	return strings.Join(what, " ") + ": " + g.Reason
}

// JoinCoverage is the coverage of reports added together (merge, or a
// resumed audit and the partial report it continues): their nodes, a
// node's databases joined (counts added; complete when the later one
// is), their Cluster slots joined, and every gap that the others do not
// close. It returns nil when no report has coverage.
func JoinCoverage(parts ...*Coverage) *Coverage {
	var out *Coverage
	type nodeDB struct {
		addr string
		db   int
	}
	var slots []bool
	var masters, walked int
	for _, c := range parts {
		if c == nil {
			continue
		}
		if out == nil {
			out = &Coverage{}
		}
		for _, n := range c.Nodes {
			i := slices.IndexFunc(out.Nodes, func(m CoverageNode) bool { return m.Addr == n.Addr })
			if i < 0 {
				n.DBs = slices.Clone(n.DBs)
				out.Nodes = append(out.Nodes, n)
				continue
			}
			m := &out.Nodes[i]
			if n.RunID != "" {
				m.RunID = n.RunID
			}
			m.ReplID, m.CRC64 = cmp.Or(m.ReplID, n.ReplID), cmp.Or(m.CRC64, n.CRC64)
			m.Slots = JoinSlotRanges(m.Slots, n.Slots)
			for _, d := range n.DBs {
				j := slices.IndexFunc(m.DBs, func(e CoverageDB) bool { return e.DB == d.DB })
				if j < 0 {
					m.DBs = append(m.DBs, d)
					continue
				}
				e := &m.DBs[j]
				e.Counted += d.Counted
				e.Unreadable += d.Unreadable
				e.KeysEnd, e.Complete = d.KeysEnd, d.Complete
			}
		}
		if cl := c.Cluster; cl != nil {
			if slots == nil {
				slots = make([]bool, ClusterSlots)
			}
			masters = max(masters, cl.Masters)
			walked += cl.Walked
			for _, n := range c.Nodes {
				for _, s := range ParseSlotRanges(n.Slots) {
					slots[s] = true
				}
			}
		}
	}
	if out == nil {
		return nil
	}
	// A gap is closed when a part covers it: its node and database walked
	// to the end, or its slots counted.
	closed := map[nodeDB]bool{}
	for _, n := range out.Nodes {
		for _, d := range n.DBs {
			if d.Complete {
				closed[nodeDB{n.Addr, d.DB}] = true
			}
		}
	}
	for _, c := range parts {
		if c == nil {
			continue
		}
		for _, g := range c.NotCovered {
			if g.Slots != "" && slots != nil {
				var left []int
				for _, s := range ParseSlotRanges(g.Slots) {
					if !slots[s] {
						left = append(left, s)
					}
				}
				if len(left) == 0 {
					continue
				}
				g.Slots = SlotRanges(left)
			} else if g.Node != "" && g.Slots == "" {
				db := 0
				if g.DB != nil {
					db = *g.DB
				}
				if closed[nodeDB{g.Node, db}] {
					continue
				}
			}
			out.NotCovered = append(out.NotCovered, g)
		}
	}
	slices.SortFunc(out.Nodes, func(a, b CoverageNode) int { return strings.Compare(a.Addr, b.Addr) })
	if slots != nil {
		var got []int
		for s, ok := range slots {
			if ok {
				got = append(got, s)
			}
		}
		out.Cluster = &ClusterCoverage{Masters: masters, Walked: min(walked, masters), Slots: len(got)}
		if len(got) < ClusterSlots {
			out.Cluster.Counted = SlotRanges(got)
		}
	}
	out.Share = out.share()
	return out
}

// Finish sets Share from the nodes and the Cluster slots.
func (c *Coverage) Finish() {
	if c == nil {
		return
	}
	slices.SortFunc(c.Nodes, func(a, b CoverageNode) int { return strings.Compare(a.Addr, b.Addr) })
	for i := range c.Nodes {
		slices.SortFunc(c.Nodes[i].DBs, func(a, b CoverageDB) int { return cmp.Compare(a.DB, b.DB) })
	}
	c.Share = c.share()
}

func (c *Coverage) share() float64 {
	if cl := c.Cluster; cl != nil {
		// Of the slots counted, the keys the ACL user could read.
		var counted, unreadable int64
		for _, n := range c.Nodes {
			for _, d := range n.DBs {
				counted += d.Counted
				unreadable += d.Unreadable
			}
		}
		f := float64(cl.Slots) / ClusterSlots
		if unreadable > 0 && counted > 0 {
			f *= float64(counted-min(unreadable, counted)) / float64(counted)
		}
		return f
	}
	var all, got int64
	dbs := 0
	for _, n := range c.Nodes {
		for _, d := range n.DBs {
			dbs++
			all += max(d.KeysStart, d.Counted)
			switch {
			case d.Complete:
				got += max(d.KeysStart, d.Counted)
			case d.KeysStart >= 0:
				got += min(d.Counted, d.KeysStart)
			}
			got -= min(d.Unreadable, got)
			// A stopped database of an unknown size (its count was not
			// read, or the snapshot declared none) adds nothing covered.
		}
	}
	switch {
	case all > 0:
		return float64(got) / float64(all)
	case dbs > 0 && len(c.NotCovered) == 0:
		return 1
	}
	return 0
}

// pctText is a share as "100%", "99.9%" or "0%": never 100% unless whole.
func pctText(f float64) string {
	switch {
	case f >= 1:
		return "100%"
	case f <= 0:
		return "0%"
	}
	p := f * 100
	if p > 99.9 {
		return "99.9%"
	}
	return strconv.FormatFloat(p, 'f', 1, 64) + "%"
}

func dedupeSorted(ss []string) []string {
	slices.SortFunc(ss, func(a, b string) int {
		x, _ := strconv.Atoi(a)
		y, _ := strconv.Atoi(b)
		return cmp.Compare(x, y)
	})
	return slices.Compact(ss)
}

// SlotRanges writes slots as ranges: "0-99,200,300-301". The slots need
// not be sorted.
func SlotRanges(slots []int) string { return topology.Ranges(slots) }

// ParseSlotRanges reads what SlotRanges writes; parts that are not slot
// ranges are skipped (ValidSlotRanges says whether there are any).
func ParseSlotRanges(s string) []int {
	var out []int
	for _, p := range strings.Split(s, ",") {
		lo, hi, ok := slotRange(p)
		if !ok {
			continue
		}
		for x := lo; x <= hi; x++ {
			out = append(out, x)
		}
	}
	return out
}

// ValidSlotRanges reports whether s is a list of slot ranges as
// SlotRanges writes it.
func ValidSlotRanges(s string) bool {
	if s == "" {
		return false
	}
	for _, p := range strings.Split(s, ",") {
		if _, _, ok := slotRange(p); !ok {
			return false
		}
	}
	return true
}

// SlotRangeOf reads one slot range, "5" or "0-5460".
func SlotRangeOf(p string) (lo, hi int, ok bool) { return slotRange(p) }

func slotRange(p string) (lo, hi int, ok bool) {
	a, b, isRange := strings.Cut(strings.TrimSpace(p), "-")
	lo, err := strconv.Atoi(a)
	if err != nil {
		return 0, 0, false
	}
	hi = lo
	if isRange {
		if hi, err = strconv.Atoi(b); err != nil {
			return 0, 0, false
		}
	}
	if lo < 0 || hi < lo || hi >= ClusterSlots {
		return 0, 0, false
	}
	return lo, hi, true
}

// JoinSlotRanges joins two lists of slot ranges.
func JoinSlotRanges(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return SlotRanges(append(ParseSlotRanges(a), ParseSlotRanges(b)...))
}

// NodeLines are the nodes of Lines.
func (c *Coverage) NodeLines() []string {
	n, _ := c.Lines()
	return n
}

// Overlap finds two of parts that counted the same keys: a node of one
// server process (one address and run_id in both) whose database both
// walked, or whose Cluster slots both counted, keys in each. Added up,
// those keys would be counted twice. It returns the two parts' indexes
// and what they share ("database 0 of 10.0.0.1:6379 (run_id 3f2a…)").
// RDB files (no run_id) are compared by what the file says: two files of
// one name may be two servers' dumps, but one replication ID is one
// server's data (a master's and its replica's snapshots, or one server's
// at two times), and one checksum one file.
func Overlap(parts []*Coverage) (i, j int, what string, ok bool) {
	type seen struct {
		part int
		node *CoverageNode
	}
	byProc := map[string][]seen{}
	for p, c := range parts {
		if c == nil {
			continue
		}
		for k := range c.Nodes {
			n := &c.Nodes[k]
			for _, id := range []struct{ of, key, proc string }{
				{n.RunID, "run\x00" + n.Addr + "\x00" + n.RunID, n.Addr + " (run_id " + shortID(n.RunID) + ")"},
				{n.ReplID, "repl\x00" + n.ReplID, "the snapshots of one server (replication ID " + shortID(n.ReplID) + ")"},
				{n.CRC64, "crc\x00" + n.CRC64, "one snapshot (CRC64 " + n.CRC64 + ")"},
			} {
				if id.of == "" {
					continue
				}
				for _, s := range byProc[id.key] {
					if s.part == p {
						continue
					}
					if what := sharedWalk(s.node, n, id.proc); what != "" {
						return s.part, p, what, true
					}
				}
				byProc[id.key] = append(byProc[id.key], seen{p, n})
			}
		}
	}
	return 0, 0, "", false
}

// sharedWalk says what two walks of one server process (or two
// snapshots of one server's data), proc, both counted: Cluster slots
// (when both name theirs), else a database; "" nothing.
func sharedWalk(a, b *CoverageNode, proc string) string {
	if a.Slots != "" && b.Slots != "" {
		in := map[int]bool{}
		for _, s := range ParseSlotRanges(a.Slots) {
			in[s] = true
		}
		var both []int
		for _, s := range ParseSlotRanges(b.Slots) {
			if in[s] {
				both = append(both, s)
			}
		}
		if len(both) == 0 {
			return ""
		}
		return "Cluster slots " + SlotRanges(both) + " of " + proc
	}
	for _, d := range a.DBs {
		for _, e := range b.DBs {
			if d.DB == e.DB && d.Counted > 0 && e.Counted > 0 {
				return "database " + strconv.Itoa(d.DB) + " of " + proc
			}
		}
	}
	return ""
}

// shortID is a run_id's first 8 characters, as the text report shows it.
func shortID(id string) string { return id[:min(len(id), 8)] }
