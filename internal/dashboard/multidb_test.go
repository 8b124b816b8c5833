package dashboard

import (
	"testing"
	"time"
)

// A template with keys in two databases is one row whose counts add up.
func TestTemplateAcrossDatabases(t *testing.T) {
	rep := smallReport(time.Now())
	g := rep.Groups[0]
	zero, one := 0, 1
	g.DB = &zero
	g.TTLSeconds.Min, g.TTLSeconds.Max = 5, 3600
	h := g
	h.DB = &one
	h.Keys, h.Bytes, h.NoTTL, h.WithTTL, h.Findings = 20, 1000, 1, 19, 1
	h.Types = map[string]int64{"hash": 19, "string": 1}
	h.TTLSeconds.Min, h.TTLSeconds.Max = 1, 99999
	rep.Groups = append(rep.Groups[:1:1], append([]reportGroup{h}, rep.Groups[1:]...)...)
	rep.Groups[0] = g
	snap := snapshotOf(rep, nil)
	i, ok := snap.byName[g.Name]
	if !ok {
		t.Fatalf("no row for %s", g.Name)
	}
	row := snap.Templates[i]
	if row.Keys != g.Keys+20 || row.Bytes != g.Bytes+1000 || row.NoTTL != g.NoTTL+1 || row.WithTTL != g.WithTTL+19 || row.Findings != g.Findings+1 {
		t.Errorf("row %+v; want the two databases' groups added", row.Totals)
	}
	if row.TTLMin != 1 || row.TTLMax != 99999 || len(row.Types) != 2 || row.Types[0].Keys != g.Types["hash"]+19 {
		t.Errorf("ttl %d..%d types %v", row.TTLMin, row.TTLMax, row.Types)
	}
}
