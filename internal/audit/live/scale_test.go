package live

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/audit/inventory"
	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/audit/snapshot"
	"github.com/keyguard/keyguard/internal/redistest"
)

// loadScale writes n keys the way a shared production Redis holds them:
// hashes of registered templates (a guarded one, a few without TTL or
// owner), JSON strings, three hundred families of unregistered keys
// without TTL, and sessions written in two field styles, a few mixed. It
// returns the number of keys written.
func loadScale(tb testing.TB, c redis.Cmdable, n int) int {
	tb.Helper()
	ctx := context.Background()
	p := c.Pipeline()
	flush := func() {
		if _, err := p.Exec(ctx); err != nil {
			tb.Fatal(err)
		}
	}
	for i := range n {
		switch i % 10 {
		case 0, 1, 2:
			k := fmt.Sprintf("order:order:%d:base", i)
			p.HSet(ctx, k, "orderId", i, "amount", i%997, "status", "paid")
			if i%100 != 0 {
				p.Expire(ctx, k, 24*time.Hour)
			}
		case 3:
			k := fmt.Sprintf("promo:order:%d:promo-info", i)
			if i%50 == 3 {
				p.HSet(ctx, k, "activityId", i, "discountValue", 5)
			} else {
				p.HSet(ctx, k, "__ns__", "promo-team", "activityId", i, "discountValue", 5)
			}
			p.Expire(ctx, k, 12*time.Hour)
		case 4, 5:
			p.Set(ctx, fmt.Sprintf("cache:product:detail:p%d", i), fmt.Sprintf(`{"name":"n%d","price":%d,"stock":3}`, i, i%500), 6*time.Hour)
		case 6, 7, 8:
			p.Set(ctx, fmt.Sprintf("legacy%d:item:%d", i%300, i), "x", 0)
		default:
			k := fmt.Sprintf("auth:session:u%d", i)
			switch {
			case i%1000 == 9:
				p.HSet(ctx, k, "token", "t", "uid", i, "cartId", i, "cartTotal", 3)
			case i/10%2 == 1:
				p.HSet(ctx, k, "token", "t", "uid", i)
			default:
				p.HSet(ctx, k, "cartId", i, "cartTotal", 3)
			}
			p.Expire(ctx, k, 12*time.Hour)
		}
		if p.Len() >= 4000 {
			flush()
		}
	}
	flush()
	return n
}

// visible is what two audits of the same data must agree on: the
// summary, every group's counts, and the set of findings (TTLs go down
// between runs, and the state's counters depend on batching).
func visible(tb testing.TB, r *report.Report) string {
	tb.Helper()
	var b strings.Builder
	s := r.Summary
	fmt.Fprintf(&b, "keys %d bytes %d no_ttl %d unregistered %d findings %d %+v %v\n", s.Keys, s.Bytes, s.NoTTL, s.Unregistered, s.Findings, s.BySeverity, s.ByRuleSeverity)
	var gs []string
	for _, g := range r.Groups {
		gs = append(gs, fmt.Sprintf("%s %s %s keys %d bytes %d no_ttl %d with_ttl %d types %v findings %d", g.Kind, g.Name, g.Owner, g.Keys, g.Bytes, g.NoTTL, g.WithTTL, g.Types, g.Findings))
	}
	slices.Sort(gs)
	b.WriteString(strings.Join(gs, "\n"))
	b.WriteString("\n")
	fs := found(r)
	b.WriteString(strings.Join(fs, "\n"))
	return b.String()
}

// viaJSON writes r and reads it back, as --resume and merge do.
func viaJSON(tb testing.TB, r *report.Report) *report.Report {
	tb.Helper()
	var b bytes.Buffer
	if err := r.WriteJSON(&b); err != nil {
		tb.Fatal(err)
	}
	back, err := report.ReadReport(&b)
	if err != nil {
		tb.Fatal(err)
	}
	return back
}

func firstDifference(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range max(len(al), len(bl)) {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("line %d:\n want %s\n  got %s", i+1, x, y)
		}
	}
	return ""
}

const scaleKeys = 200_000

// An audit interrupted at several points and resumed from its partial
// report gives the report of one uninterrupted audit: every key once,
// the same groups and findings. Standalone and on a 3-master Cluster.
func TestResumeEqualsOneAudit(t *testing.T) {
	reg := testRegistry(t)
	for _, topo := range []string{"standalone", "cluster"} {
		t.Run(topo, func(t *testing.T) {
			var tgt Target
			if topo == "standalone" {
				s := redistest.Start(t)
				loadScale(t, s.Client(t), scaleKeys)
				tgt = standalone(s)
			} else {
				c := redistest.StartCluster(t, 3)
				loadScale(t, c.Client(t), scaleKeys)
				tgt = clusterTarget(c)
			}
			whole, err := Run(context.Background(), reg, tgt, Options{})
			if err != nil {
				t.Fatal(err)
			}
			want := visible(t, whole.Report)
			if whole.Report.Summary.Keys != scaleKeys || whole.Report.Summary.ByRule["mixed-schema"] == 0 || whole.Report.Summary.ByRule["guard/ownerless"] == 0 {
				t.Fatalf("the reference audit: %d keys, %v", whole.Report.Summary.Keys, whole.Report.Summary.ByRule)
			}
			fracs := []float64{0.1, 0.5, 0.9}
			if topo == "cluster" && testing.Short() {
				fracs = []float64{0.5} // -short: one point on the Cluster, every point standalone
			}
			for _, frac := range fracs {
				ctx, cancel := context.WithCancel(context.Background())
				progress, reached := progressAt(int64(frac * scaleKeys))
				go func() {
					<-reached
					cancel()
				}()
				part, err := Run(ctx, reg, tgt, Options{Progress: progress, ProgressEvery: time.Millisecond})
				cancel()
				if err != nil {
					t.Fatal(err)
				}
				if part.Complete {
					t.Logf("at %.0f%%: the audit finished before the interrupt", frac*100)
					continue
				}
				rest, err := Run(context.Background(), reg, tgt, Options{Resume: viaJSON(t, part.Report)})
				if err != nil {
					t.Fatal(err)
				}
				if !rest.Complete {
					t.Fatalf("at %.0f%%: the resumed audit stopped: %+v", frac*100, rest.Stopped)
				}
				if got := visible(t, rest.Report); got != want {
					t.Errorf("interrupted at %.0f%% (%d keys), resumed: the report differs from one audit\n%s", frac*100, part.Report.Summary.Keys, firstDifference(want, got))
				}
			}
		})
	}
}

// The reports of the three masters, audited one by one and merged, are
// the Cluster's report; and the RDB snapshots of the masters give the
// same groups and findings as the live audit.
func TestMergeAndSnapshotEqualClusterAudit(t *testing.T) {
	reg := testRegistry(t)
	c := redistest.StartCluster(t, 3)
	n := loadScale(t, c.Client(t), scaleKeys/4)
	whole, err := Run(context.Background(), reg, clusterTarget(c), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := visible(t, whole.Report)
	var parts []*report.Report
	var names []string
	for _, s := range c.Nodes {
		res, err := Run(context.Background(), reg, standalone(s), Options{})
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, viaJSON(t, res.Report))
		names = append(names, s.Addr+".json")
	}
	merged, err := inventory.MergeReports(reg, parts, names)
	if err != nil {
		t.Fatal(err)
	}
	// Each part says it is one master of three; joined they cover the
	// Cluster.
	var covs []*report.Coverage
	for i, p := range parts {
		sum := p.Coverage.Summary()
		if !strings.Contains(sum, "1 of 3 masters, slots ") || !strings.Contains(sum, "add --cluster for all") || !p.Complete {
			t.Errorf("node %s audited alone: complete %v, coverage %q", c.Nodes[i].Addr, p.Complete, sum)
		}
		covs = append(covs, p.Coverage)
	}
	if j := report.JoinCoverage(covs...); j.Cluster == nil || j.Cluster.Slots != report.ClusterSlots || j.Cluster.Walked != 3 || j.Share != 1 || len(j.NotCovered) != 0 {
		t.Errorf("joined coverage of the masters' reports: %+v %+v", j, j.Cluster)
	}
	if cl := whole.Report.Coverage.Cluster; cl == nil || cl.Slots != report.ClusterSlots || cl.Masters != 3 || cl.Walked != 3 {
		t.Errorf("the Cluster audit's coverage: %+v", cl)
	}
	if merged.Summary.Keys != int64(n) {
		t.Errorf("merged report: %d keys, want %d", merged.Summary.Keys, n)
	}
	if got := visible(t, merged); got != want {
		t.Errorf("merge of the masters' reports differs from the Cluster audit\n%s", firstDifference(want, got))
	}
	if _, err := inventory.MergeReports(reg, []*report.Report{parts[0], parts[0]}, []string{"a", "b"}); err == nil {
		t.Error("merging a report with itself: no error")
	}

	// Snapshots: the memory estimate is a model, so bytes are left out;
	// every count and finding must agree.
	var files []string
	ctx := context.Background()
	for _, s := range c.Nodes {
		if err := s.Client(t).Save(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		files = append(files, filepath.Join(s.Dir, "dump.rdb"))
	}
	ins, err := snapshot.Open(files, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer snapshot.Close(ins)
	snap, err := snapshot.Run(ctx, reg, ins, snapshot.Options{DB: -1})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := noBytes(visible(t, snap.Report)), noBytes(want); got != want {
		t.Errorf("the snapshots' report differs from the live audit\n%s", firstDifference(want, got))
	}
}

// noBytes drops the byte counts of visible's lines.
func noBytes(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		f := strings.Fields(l)
		for i := 0; i+1 < len(f); i++ {
			if f[i] == "bytes" {
				f[i+1] = "_"
			}
		}
		out = append(out, strings.Join(f, " "))
	}
	return strings.Join(out, "\n")
}
