package snapshot

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/keyguard/keyguard/internal/audit/inventory"
	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/redistest"
	"github.com/keyguard/keyguard/registry"
)

// TestSomeNodesOfACluster: the dumps of a Cluster's masters carry no slot
// map (Redis 7.0), so a run given two of three said nothing of the third.
// Now the keys' slots, sampled, show the run of slots no file holds a key
// of, and a note names the slots the files cover; given every master's
// file, a standalone server's, or too few keys to tell, no note.
func TestSomeNodesOfACluster(t *testing.T) {
	c := redistest.StartCluster(t, 3)
	ctx := context.Background()
	cc := c.Client(t)
	const keys = 12000
	p := cc.Pipeline()
	for i := range keys {
		p.Set(ctx, fmt.Sprintf("order:order:%d:base", i), "v", 0)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var files []string
	for i, m := range c.Nodes {
		files = append(files, writeFile(t, dir, fmt.Sprintf("m%d.rdb", i), m.Saved(t)))
	}
	s := redistest.Start(t)
	sp := s.Client(t).Pipeline()
	for i := range keys {
		sp.Set(ctx, fmt.Sprintf("order:order:%d:base", i), "v", 0)
	}
	if _, err := sp.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	alone := writeFile(t, dir, "standalone.rdb", s.Saved(t))
	few := redistest.StartCluster(t, 3)
	if err := few.Client(t).Set(ctx, "order:order:1:base", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	var fewFiles []string
	for i, m := range few.Nodes {
		fewFiles = append(fewFiles, writeFile(t, dir, fmt.Sprintf("few%d.rdb", i), m.Saved(t)))
	}
	reg, err := registry.Parse("r.yaml", []byte("version: 1\nkeys: []\n"))
	if err != nil {
		t.Fatal(err)
	}
	// The cluster helper gives master 0 the first third of the slots,
	// master 2 the last.
	for _, tc := range []struct {
		name  string
		files []string
		want  string
	}{
		{"two masters of three", files[:2], `the keys of these files lie in Cluster slots 0-109\d\d only \(\d+,\d+ keys sampled, none in the other 5,4\d\d slots\): if they are a Redis Cluster's nodes`},
		{"one master", files[2:], `the keys of this file lie in Cluster slots 109\d\d-16383 only \(.*\): if it is one of a Redis Cluster's nodes`},
		{"every master", files, ""},
		{"a standalone server", []string{alone}, ""},
		{"one key", fewFiles[:1], ""},
	} {
		notes := strings.Join(auditFiles(t, reg, tc.files...).Notes, "\n")
		switch {
		case tc.want == "" && strings.Contains(notes, "Cluster slots"):
			t.Errorf("%s: %s", tc.name, notes)
		case tc.want != "" && !regexp.MustCompile(tc.want).MatchString(notes):
			t.Errorf("%s: notes %q, want %q", tc.name, notes, tc.want)
		}
	}

	// Merged, the masters' reports read one by one say it again of the
	// slots they cover together: nothing when every master is there.
	var reps []*report.Report
	for _, f := range files {
		reps = append(reps, auditFiles(t, reg, f))
	}
	for _, tc := range []struct {
		name string
		reps []*report.Report
		want string
	}{
		{"two masters of three, merged", reps[:2], `the keys of these files lie in Cluster slots 0-109\d\d only: if they are a Redis Cluster's nodes`},
		{"every master, merged", reps, ""},
	} {
		m, err := inventory.MergeReports(reg, tc.reps, []string{"a.json", "b.json", "c.json"}[:len(tc.reps)])
		if err != nil {
			t.Fatal(err)
		}
		notes := strings.Join(m.Notes, "\n")
		switch {
		case strings.Count(notes, "Cluster slots") > 1, tc.want == "" && strings.Contains(notes, "Cluster slots"):
			t.Errorf("%s: %s", tc.name, notes)
		case tc.want != "" && !regexp.MustCompile(tc.want).MatchString(notes):
			t.Errorf("%s: notes %q, want %q", tc.name, notes, tc.want)
		}
	}
}
