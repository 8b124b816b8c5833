package report

import (
	"slices"
	"strings"
	"testing"
)

func TestSlotRanges(t *testing.T) {
	for _, tt := range []struct {
		slots []int
		want  string
	}{
		{nil, ""},
		{[]int{5}, "5"},
		{[]int{3, 1, 2, 2, 7, 9, 8, 16383}, "1-3,7-9,16383"},
	} {
		got := SlotRanges(tt.slots)
		if got != tt.want {
			t.Errorf("SlotRanges(%v) = %q, want %q", tt.slots, got, tt.want)
		}
		back := ParseSlotRanges(got)
		want := slices.Compact(slices.Sorted(slices.Values(tt.slots)))
		if !slices.Equal(back, want) {
			t.Errorf("ParseSlotRanges(%q) = %v, want %v", got, back, want)
		}
	}
	for _, bad := range []string{"", "x", "5-3", "-1", "16384", "1,,2", "0-16384"} {
		if ValidSlotRanges(bad) {
			t.Errorf("ValidSlotRanges(%q) = true", bad)
		}
	}
}

// FuzzSlotRanges: any set of slots survives SlotRanges and
// ParseSlotRanges, and any valid list parses to a set SlotRanges writes
// back to the same set.
func FuzzSlotRanges(f *testing.F) {
	f.Add([]byte{0, 1, 2, 9}, "0-5460,5461")
	f.Add([]byte{255, 255}, "16383")
	f.Fuzz(func(t *testing.T, raw []byte, text string) {
		var slots []int
		for i := 0; i+1 < len(raw); i += 2 {
			slots = append(slots, (int(raw[i])<<8|int(raw[i+1]))%ClusterSlots)
		}
		want := slices.Compact(slices.Sorted(slices.Values(slots)))
		if got := ParseSlotRanges(SlotRanges(slots)); !slices.Equal(got, want) && len(want) > 0 {
			t.Fatalf("round trip of %v: %v", want, got)
		}
		if ValidSlotRanges(text) && len(text) < 64 {
			set := slices.Compact(slices.Sorted(slices.Values(ParseSlotRanges(text))))
			if got := ParseSlotRanges(SlotRanges(set)); !slices.Equal(got, set) {
				t.Fatalf("%q: %v then %v", text, set, got)
			}
		}
	})
}

// JoinCoverage: three shards of a Cluster, audited one by one, cover it
// whole; a resumed database adds its counts and closes its gap.
func TestJoinCoverage(t *testing.T) {
	shard := func(addr, slots string) *Coverage {
		return &Coverage{Nodes: []CoverageNode{{Addr: addr, Role: "master", Slots: slots, DBs: []CoverageDB{{Counted: 10, KeysStart: 10, KeysEnd: 10, Complete: true}}}},
			Cluster: &ClusterCoverage{Masters: 3, Walked: 1, Slots: len(ParseSlotRanges(slots))}}
	}
	a, b := shard("a:1", "0-5460"), shard("b:1", "5461-10922")
	part := JoinCoverage(a, b)
	if part.Cluster.Slots != 10923 || part.Share >= 1 || !strings.Contains(part.Summary(), "2 of 3 masters, slots 0-10922") {
		t.Errorf("two shards: %+v %q", part.Cluster, part.Summary())
	}
	whole := JoinCoverage(a, b, shard("c:1", "10923-16383"))
	if whole.Cluster.Slots != ClusterSlots || whole.Cluster.Walked != 3 || whole.Share != 1 || whole.Summary() != "3 of 3 masters, all 16384 slots; 100% covered" {
		t.Errorf("three shards: %+v %q", whole.Cluster, whole.Summary())
	}
	db := 1
	first := &Coverage{Nodes: []CoverageNode{{Addr: "s:1", DBs: []CoverageDB{{DB: 1, KeysStart: 100, Counted: 40, KeysEnd: -1}}}},
		NotCovered: []Gap{{Node: "s:1", DB: &db, Reason: "interrupted"}}}
	first.Finish()
	if first.Share != 0.4 {
		t.Errorf("share of a stopped database: %v", first.Share)
	}
	rest := &Coverage{Nodes: []CoverageNode{{Addr: "s:1", DBs: []CoverageDB{{DB: 1, KeysStart: 100, Counted: 60, KeysEnd: 100, Complete: true}}}}}
	j := JoinCoverage(first, rest)
	if d := j.Nodes[0].DBs[0]; d.Counted != 100 || !d.Complete || d.KeysStart != 100 || len(j.NotCovered) != 0 || j.Share != 1 {
		t.Errorf("resumed: %+v gaps %+v share %v", d, j.NotCovered, j.Share)
	}
}

// A stopped database whose size was never read (-1: the server never
// finished loading) adds nothing covered; it took one key off before.
func TestShareStoppedUnknownSize(t *testing.T) {
	c := &Coverage{Nodes: []CoverageNode{{Addr: "s:1", DBs: []CoverageDB{
		{DB: 0, KeysStart: 100, Counted: 100, KeysEnd: 100, Complete: true},
		{DB: 1, KeysStart: -1, Counted: 100, KeysEnd: -1},
	}}}}
	c.Finish()
	if c.Share != 0.5 {
		t.Errorf("share %v, want 0.5: the stopped database of unknown size is not known covered", c.Share)
	}
	nodes, _ := c.Lines()
	if want := "db 1 100 counted (INFO keyspace: ? at the start, ? at the end, stopped)"; !strings.Contains(strings.Join(nodes, "\n"), want) {
		t.Errorf("lines %q: want %q", nodes, want)
	}
}

// TestOverlap: two parts overlap when one server process (address and
// run_id) had a database, or Cluster slots, counted in both; other
// databases, other slots, other processes at one address (a restart, or
// another host's 127.0.0.1:6379), an empty database and RDB files (no
// run_id) do not.
func TestOverlap(t *testing.T) {
	node := func(addr, id, slots string, dbs ...CoverageDB) CoverageNode {
		return CoverageNode{Addr: addr, Role: "master", RunID: id, Slots: slots, DBs: dbs}
	}
	file := func(name, repl, crc string, dbs ...CoverageDB) CoverageNode {
		return CoverageNode{Addr: name, Role: "snapshot", ReplID: repl, CRC64: crc, DBs: dbs}
	}
	db := func(n int, counted int64) CoverageDB { return CoverageDB{DB: n, Counted: counted, Complete: true} }
	cov := func(ns ...CoverageNode) *Coverage { return &Coverage{Nodes: ns} }
	cases := []struct {
		name  string
		parts []*Coverage
		i, j  int
		what  string
	}{
		{"one database twice", []*Coverage{cov(node("h:1", "aaaaaaaaaaaa", "", db(0, 5))), nil, cov(node("h:1", "aaaaaaaaaaaa", "", db(0, 3)))}, 0, 2, "database 0 of h:1 (run_id aaaaaaaa)"},
		{"two databases", []*Coverage{cov(node("h:1", "a", "", db(0, 5))), cov(node("h:1", "a", "", db(2, 3)))}, 0, 0, ""},
		{"a restart between", []*Coverage{cov(node("h:1", "a", "", db(0, 5))), cov(node("h:1", "b", "", db(0, 5)))}, 0, 0, ""},
		{"an empty database", []*Coverage{cov(node("h:1", "a", "", db(0, 0))), cov(node("h:1", "a", "", db(0, 5)))}, 0, 0, ""},
		{"RDB files of one name", []*Coverage{cov(node("dump.rdb", "", "", db(0, 5))), cov(node("dump.rdb", "", "", db(0, 5)))}, 0, 0, ""},
		{"disjoint slots", []*Coverage{cov(node("h:1", "a", "0-99", db(0, 5))), cov(node("h:1", "a", "100-199", db(0, 5)))}, 0, 0, ""},
		{"shared slots", []*Coverage{cov(node("h:2", "b", "", db(0, 1)), node("h:1", "a", "0-99", db(0, 5))), cov(node("h:1", "a", "50-60,90-120", db(0, 5)))}, 0, 1, "Cluster slots 50-60,90-99 of h:1 (run_id a)"},
		{"one part's own nodes", []*Coverage{cov(node("h:1", "a", "", db(0, 5)), node("h:1", "a", "", db(0, 5)))}, 0, 0, ""},
		{"a master's and its replica's files", []*Coverage{cov(file("m.rdb", "r1234567890", "c1", db(0, 5))), cov(file("r.rdb", "r1234567890", "c2", db(0, 5)))}, 0, 1, "database 0 of the snapshots of one server (replication ID r1234567)"},
		{"one file twice, no replication ID", []*Coverage{cov(file("a/dump.rdb", "", "c1", db(0, 5))), cov(file("b/dump.rdb", "", "c1", db(0, 5)))}, 0, 1, "database 0 of one snapshot (CRC64 c1)"},
		{"two masters' files", []*Coverage{cov(file("dump.rdb", "r1", "c1", db(0, 5))), cov(file("dump.rdb", "r2", "c2", db(0, 5)))}, 0, 0, ""},
		{"two databases of one file", []*Coverage{cov(file("dump.rdb", "r1", "c1", db(0, 5))), cov(file("dump.rdb", "r1", "c1", db(1, 5)))}, 0, 0, ""},
		{"a walk and a file", []*Coverage{cov(node("h:1", "r1", "", db(0, 5))), cov(file("dump.rdb", "r1", "", db(0, 5)))}, 0, 0, ""},
	}
	for _, c := range cases {
		i, j, what, ok := Overlap(c.parts)
		if ok != (c.what != "") || what != c.what || ok && (i != c.i || j != c.j) {
			t.Errorf("%s: %d %d %q %v, want %d %d %q", c.name, i, j, what, ok, c.i, c.j, c.what)
		}
	}
}
