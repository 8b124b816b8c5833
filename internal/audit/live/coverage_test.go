package live

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/keyguard/keyguard/internal/audit/inventory"
	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/human"
	"github.com/keyguard/keyguard/internal/plant"
	"github.com/keyguard/keyguard/internal/redistest"
)

// dbVisible is visible plus the database of every group and finding:
// what a live audit and the RDB audit of the same server agree on.
func dbVisible(tb testing.TB, r *report.Report) string {
	tb.Helper()
	var b strings.Builder
	b.WriteString(noBytes(visible(tb, r)))
	fmt.Fprintf(&b, "\ndatabases %v\n", r.Databases)
	var gs []string
	for _, g := range r.Groups {
		db := -1
		if g.DB != nil {
			db = *g.DB
		}
		gs = append(gs, fmt.Sprintf("db %d %s %s keys %d", db, g.Kind, g.Name, g.Keys))
	}
	slices.Sort(gs)
	b.WriteString(strings.Join(gs, "\n"))
	var fs []string
	for _, f := range r.Findings {
		db := -1
		if f.DB != nil {
			db = *f.DB
		}
		fs = append(fs, fmt.Sprintf("db %d %s %s", db, f.Rule, f.Key))
	}
	slices.Sort(fs)
	b.WriteString("\n" + strings.Join(fs, "\n"))
	return b.String()
}

// A server with keys in databases 0, 1 and 2: the live audit walks all
// three, its report equals the RDB report of the server's dump (keys,
// groups and findings with their database), its coverage lists each
// database with its key count, and --db limits the walk to one.
func TestEveryDatabaseIsWalked(t *testing.T) {
	reg := testRegistry(t)
	s := redistest.Start(t)
	ctx := context.Background()
	per := []int{600, 250, 40}
	if testing.Short() {
		per = []int{300, 120, 20}
	}
	want, total := plant.Databases(t, s.URL(), per)
	target := standalone(s)
	target.Conn.DB = AllDBs
	res, err := Run(ctx, reg, target, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	rep := res.Report
	if !res.Complete || rep.Summary.Keys != total {
		t.Fatalf("complete %v keys %d; want true %d (%v)", res.Complete, rep.Summary.Keys, total, res.Stopped)
	}
	if !slices.Equal(rep.Databases, []int{0, 1, 2}) {
		t.Errorf("databases %v; want [0 1 2]", rep.Databases)
	}
	cov := rep.Coverage
	if cov == nil || len(cov.Nodes) != 1 || len(cov.Nodes[0].DBs) != 3 || cov.Share != 1 || len(cov.NotCovered) != 0 {
		t.Fatalf("coverage %+v", cov)
	}
	for _, d := range cov.Nodes[0].DBs {
		if d.KeysStart != want[d.DB] || d.KeysEnd != want[d.DB] || d.Counted != want[d.DB] || !d.Complete {
			t.Errorf("db %d coverage %+v; want %d keys start, end and counted", d.DB, d, want[d.DB])
		}
	}
	if cov.Nodes[0].RunID == "" || rep.State == nil || rep.State.RunIDs[s.Addr] != cov.Nodes[0].RunID {
		t.Errorf("run_id %q, state %v", cov.Nodes[0].RunID, rep.State.RunIDs)
	}

	// The RDB audit of the same data.
	if got, want := dbVisible(t, rep), dbVisible(t, dumpReport(t, s, reg, inventory.Options{})); got != want {
		t.Errorf("the live report differs from the RDB report of its dump\n%s", firstDifference(want, got))
	}

	// --db 1 walks database 1 only.
	target.Conn.DB = 1
	one, err := Run(ctx, reg, target, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if one.Report.Summary.Keys != want[1] || len(one.Report.Coverage.Nodes[0].DBs) != 1 || one.Report.Coverage.Nodes[0].DBs[0].DB != 1 {
		t.Errorf("--db 1: %d keys, coverage %+v; want %d keys of db 1", one.Report.Summary.Keys, one.Report.Coverage, want[1])
	}
	if hasNote(one.Report, "held no key") {
		t.Errorf("--db 1: notes %q", one.Report.Notes)
	}

	// --db 7, which holds no key: a report of 0 keys, and a note that says
	// where the keys are.
	target.Conn.DB = 7
	none, err := Run(ctx, reg, target, Options{})
	if err != nil {
		t.Fatal(err)
	}
	where := fmt.Sprintf("database 7 of %s held no key when the walk began; its keys are in database 0 (%s), 1 (%s), 2 (%s)", s.Addr,
		human.Plural(int64(want[0]), "key"), human.Plural(int64(want[1]), "key"), human.Plural(int64(want[2]), "key"))
	if none.Report.Summary.Keys != 0 || !hasNote(none.Report, where) {
		t.Errorf("--db 7: %d keys, notes %q; want %q", none.Report.Summary.Keys, none.Report.Notes, where)
	}
}

// A server restarted mid-audit (from its RDB): SCAN's cursor does not
// hold across the restart, so the walk stops there, the report is
// incomplete and names the restart; resuming from it walks the server
// again from the start and counts every key once.
func TestServerRestartedMidAudit(t *testing.T) {
	reg := testRegistry(t)
	s := redistest.Start(t)
	ctx := context.Background()
	c := s.Client(t)
	n := plant.Clean(t, c, 1000)
	if err := c.Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	progress, reached := progressAt(int64(n) / 4)
	type outcome struct {
		res *Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := Run(ctx, reg, standalone(s), Options{Count: 20, Rate: 2000, Progress: progress, ProgressEvery: 10 * time.Millisecond})
		done <- outcome{res, err}
	}()
	select {
	case <-reached:
	case o := <-done:
		t.Fatalf("the audit ended before the restart: %+v %v", o.res, o.err)
	}
	s.Restart(t)
	o := <-done
	if o.err != nil {
		t.Fatal(o.err)
	}
	res := o.res
	if res.Complete || res.Report.Complete || len(res.Stopped) != 1 || !strings.Contains(res.Stopped[0].Reason, "restarted") {
		t.Fatalf("complete %v stopped %+v; want the restart named", res.Complete, res.Stopped)
	}
	cov := res.Report.Coverage
	if len(cov.NotCovered) != 1 || cov.NotCovered[0].Node != s.Addr || !strings.Contains(cov.NotCovered[0].Reason, "restarted") || cov.Share >= 1 {
		t.Errorf("coverage %+v; want the restarted node not covered", cov)
	}
	if res.Report.Summary.Keys >= int64(n) {
		t.Errorf("%d keys counted of %d, though the walk stopped at the restart", res.Report.Summary.Keys, n)
	}

	// --resume after the restart: the cursor belongs to the old life, so
	// the whole server is walked again, and nothing is counted twice.
	again, err := Run(ctx, reg, standalone(s), Options{Resume: viaJSON(t, res.Report)})
	if err != nil {
		t.Fatal(err)
	}
	if !again.Complete || again.Report.Summary.Keys != int64(n) {
		t.Errorf("resumed after the restart: complete %v, %d keys; want %d", again.Complete, again.Report.Summary.Keys, n)
	}
	if !hasNote(again.Report, "restarted since the partial report") {
		t.Errorf("no note that the server restarted since: %q", again.Report.Notes)
	}
}

// A restart between a run and its --resume (SHUTDOWN SAVE and start, the
// same data): the resume walks the server again from the start and
// says so; a resume without a restart carries the first run over.
func TestRestartBetweenRunAndResume(t *testing.T) {
	reg := testRegistry(t)
	s := redistest.Start(t)
	n := plant.Clean(t, s.Client(t), 1000)
	run := func() *report.Report {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		progress, reached := progressAt(int64(n) / 3)
		go func() {
			<-reached
			cancel()
		}()
		first, err := Run(ctx, reg, standalone(s), Options{Count: 20, Rate: 3000, Progress: progress, ProgressEvery: 10 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if first.Complete {
			t.Fatal("the first run was not interrupted")
		}
		return viaJSON(t, first.Report)
	}
	for _, restart := range []bool{false, true} {
		t.Run(fmt.Sprintf("restart=%v", restart), func(t *testing.T) {
			partial := run()
			if restart {
				if err := s.Client(t).Save(context.Background()).Err(); err != nil {
					t.Fatal(err)
				}
				s.Restart(t)
			}
			res, err := Run(context.Background(), reg, standalone(s), Options{Resume: partial})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Complete || res.Report.Summary.Keys != int64(n) {
				t.Errorf("complete %v keys %d; want %d", res.Complete, res.Report.Summary.Keys, n)
			}
			if got := hasNote(res.Report, "restarted since the partial report"); got != restart {
				t.Errorf("restart note %v, want %v: %q", got, restart, res.Report.Notes)
			}
			d := res.Report.Coverage.Nodes[0].DBs[0]
			if d.Counted != int64(n) || !d.Complete {
				t.Errorf("coverage of db 0 %+v; want %d counted over both runs", d, n)
			}
		})
	}
}

// An audit started while the server loads its dataset (just restarted,
// loading slowly: key-load-delay, answering clients between keys) waits
// for it to load: the key count it starts from, which the coverage and
// --sample work from, is the dataset's, not the keys loaded so far.
func TestAuditStartsWhileLoading(t *testing.T) {
	reg := testRegistry(t)
	s := redistest.Start(t, redistest.SlowLoading(300)...)
	ctx := context.Background()
	c := s.Client(t)
	n := plant.Clean(t, c, 4000)
	if err := c.Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	loaded := s.RestartWhileLoading(t)
	for _, sample := range []int64{0, 400} {
		res, err := Run(ctx, reg, standalone(s), Options{Sample: sample})
		if err != nil {
			t.Fatal(err)
		}
		d := res.Report.Coverage.Nodes[0].DBs[0]
		if !res.Complete || d.KeysStart != int64(n) || d.KeysEnd != int64(n) || d.Counted != int64(n) {
			t.Errorf("sample %d: complete %v, coverage %+v: want %d keys at the start, at the end and counted", sample, res.Complete, d, n)
		}
		if sample == 0 && res.Report.Summary.Keys != int64(n) {
			t.Errorf("%d keys audited, want %d", res.Report.Summary.Keys, n)
		}
	}
	<-loaded
}
