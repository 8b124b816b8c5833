package snapshot

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/keyguard/keyguard/internal/redistest"
	"github.com/keyguard/keyguard/registry"
)

// TestFilesOfTheSameKeys: several files are read as the nodes of one
// Cluster, their keys added up, so files that hold the same keys are
// refused before anything is read: one file under two names, a copy of
// it (plain or compressed), a master's snapshot beside its replica's. The
// dumps of a Cluster's masters, each with a replica (so each file carries
// its master's replication ID), and two copies of an empty snapshot are
// read.
func TestFilesOfTheSameKeys(t *testing.T) {
	c := redistest.StartClusterWithReplicas(t, 3, 1)
	ctx := context.Background()
	cc := c.Client(t)
	for i := range 600 {
		if err := cc.Set(ctx, fmt.Sprintf("order:order:%d:base", i), "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	var masters []string
	for i, m := range c.Nodes {
		want := m.Client(t).DBSize(ctx).Val()
		if want == 0 {
			t.Fatalf("master %d holds no key", i)
		}
		masters = append(masters, writeFile(t, dir, fmt.Sprintf("m%d.rdb", i), m.Saved(t)))
	}
	// The replica of master 0, once it holds every key of it.
	rep := c.Replicas[0]
	want := c.Nodes[0].Client(t).DBSize(ctx).Val()
	rep.WaitInfo(t, "keyspace", func(info string) bool { return strings.Contains(info, fmt.Sprintf("keys=%d,", want)) })
	replica := writeFile(t, dir, "r0.rdb", rep.Saved(t))
	data, err := os.ReadFile(masters[0])
	if err != nil {
		t.Fatal(err)
	}
	cp := writeFile(t, dir, "m0-copy.rdb", data)
	gz := gzipFile(t, dir, "r0.rdb.gz", func() []byte { b, _ := os.ReadFile(replica); return b }())
	link := filepath.Join(dir, "m0-link.rdb")
	if err := os.Symlink(masters[0], link); err != nil {
		t.Fatal(err)
	}
	alone := redistest.Start(t) // no replica: its snapshot names no replication ID
	empty := alone.Saved(t)
	empty1, empty2 := writeFile(t, dir, "e1.rdb", empty), writeFile(t, dir, "e2.rdb", empty)
	if err := alone.Client(t).Set(ctx, "order:order:1:base", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	one := alone.Saved(t)
	one1, one2 := writeFile(t, dir, "s1.rdb", one), writeFile(t, dir, "s2.rdb", one)

	for _, tc := range []struct {
		names []string
		want  string // "" read
	}{
		{masters, ""},
		{[]string{empty1, empty2}, ""},
		{[]string{masters[0], link}, "are the same file"},
		{[]string{masters[0], dir + "/./m0.rdb"}, "are the same file"},
		{[]string{masters[1], masters[0], cp}, "m0-copy.rdb is a copy of " + masters[0]},
		{[]string{one1, one2}, "s2.rdb is a copy of " + one1},
		{[]string{masters[0], masters[1], masters[2], replica}, "snapshots of one server's data"},
		{[]string{gz, masters[1], masters[0]}, "snapshots of one server's data"},
		// Every repeat is named at once: two here.
		{[]string{masters[0], masters[1], cp, masters[2], replica}, "2 files hold the keys of another file named, which would be counted twice:\n\t" +
			cp + " is a copy of " + masters[0] + " (the same size and CRC64 checksum)\n\t" + masters[0] + " and " + replica + " are snapshots of one server's data"},
	} {
		ins, err := Open(tc.names, nil)
		Close(ins)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v", tc.names, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: error %v, want %q", tc.names, err, tc.want)
		}
	}
	// Read, the masters' files count each key once.
	reg, err := registry.Parse("r.yaml", []byte("version: 1\nkeys: []\n"))
	if err != nil {
		t.Fatal(err)
	}
	if rep := auditFiles(t, reg, masters...); rep.Summary.Keys != 600 {
		t.Errorf("the masters' files: %d keys, want 600", rep.Summary.Keys)
	}
}
