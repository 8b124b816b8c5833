package hotkeys

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/redistest"
)

// plantDB writes n cold keys in database db of srv and reads each hot key
// reads times (lfu-log-factor 0: the counter is 5 + reads).
func plantDB(t *testing.T, srv *redistest.Server, db, n, reads int, hot ...string) {
	t.Helper()
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, DB: db})
	defer c.Close()
	p := c.Pipeline()
	for i := range n {
		p.Set(ctx, fmt.Sprintf("cache:item:%d", i), "x", 0)
	}
	for _, k := range hot {
		p.Set(ctx, k, "x", 0)
		for range reads {
			p.Get(ctx, k)
		}
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestWalkLFUEveryDatabase: with AllDBs the walk reads every database
// that holds keys (0 and 5; 3 between them is empty), each key listed
// with its database, a name held in two databases twice; the coverage
// lists both databases. Without it, the client's database alone.
func TestWalkLFUEveryDatabase(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t, deterministicLFU...)
	plantDB(t, srv, 0, 3000, 40, "hot:zero", "hot:both")
	plantDB(t, srv, 5, 2000, 60, "hot:five", "hot:both")
	res, err := WalkLFU(ctx, srv.Client(t), LFUOptions{AllDBs: true})
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(res.Keys)
	want := fmt.Sprint([]LFUKey{{"hot:both", 5, 65, srv.Addr}, {"hot:five", 5, 65, srv.Addr}, {"hot:both", 0, 45, srv.Addr}, {"hot:zero", 0, 45, srv.Addr}})
	if got != want {
		t.Fatalf("every database: keys %s, want %s", got, want)
	}
	if len(res.Nodes) != 1 || res.Nodes[0].Sampled != 3002+2002 || !res.Nodes[0].Whole {
		t.Fatalf("nodes %+v", res.Nodes)
	}
	if c := res.Coverage; c == nil || len(c.Nodes) != 1 || len(c.Nodes[0].DBs) != 2 || c.Nodes[0].DBs[0].DB != 0 || c.Nodes[0].DBs[1].DB != 5 || !c.Nodes[0].DBs[1].Complete {
		t.Fatalf("coverage %+v", c)
	}
	t.Logf("walked: %s", res.Coverage.Summary())
	// The report: four keys, each with its database; the text says which.
	r := BuildReport(testRegistry(t), nil, res, nil, ReportOptions{Target: srv.URL(), MinFreq: 40})
	var js, text bytes.Buffer
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back struct{ Keys []reportKey }
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	var seen []string
	for _, k := range back.Keys {
		if k.DB == nil {
			t.Fatalf("key %s without its database: %s", k.Key, js.String())
		}
		seen = append(seen, fmt.Sprintf("%s@%d=%d", k.Key, *k.DB, k.Freq))
	}
	if w := "hot:both@5=65 hot:five@5=65 hot:both@0=45 hot:zero@0=45"; strings.Join(seen, " ") != w {
		t.Fatalf("report keys %s, want %s", strings.Join(seen, " "), w)
	}
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"hot:five (db 5)", "hot:both (db 5)", "hot:both (db 0)", "hot-key hot:five: hot key (db 5): LFU counter 65", "walked: databases 0, 5; 100% covered"} {
		if !strings.Contains(text.String(), s) {
			t.Errorf("text lacks %q:\n%s", s, text.String())
		}
	}

	// The client's database alone: database 5, no key of 0.
	c5 := redis.NewClient(&redis.Options{Addr: srv.Addr, DB: 5})
	defer c5.Close()
	res, err = WalkLFU(ctx, c5, LFUOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(res.Keys), fmt.Sprint([]LFUKey{{"hot:both", 5, 65, srv.Addr}, {"hot:five", 5, 65, srv.Addr}}); got != want || res.Nodes[0].Sampled != 2002 {
		t.Fatalf("db 5 alone: keys %s (want %s), %d read", got, want, res.Nodes[0].Sampled)
	}
	if dbs := res.Coverage.Nodes[0].DBs; len(dbs) != 1 || dbs[0].DB != 5 {
		t.Fatalf("db 5 alone: coverage %+v", dbs)
	}
	// One database, 0: the report names none (as before, and as the audit's).
	res, err = WalkLFU(ctx, srv.Client(t), LFUOptions{})
	if err != nil {
		t.Fatal(err)
	}
	js.Reset()
	if err := BuildReport(testRegistry(t), nil, res, nil, ReportOptions{}).WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	back.Keys = nil
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Keys) != 2 || slices.ContainsFunc(back.Keys, func(k reportKey) bool { return k.DB != nil }) || res.Nodes[0].Sampled != 3002 {
		t.Fatalf("db 0 alone: %s", js.String())
	}
}

// reportKey is a key of a report's JSON.
type reportKey struct {
	Key  string
	DB   *int
	Freq int `json:"lfu_freq"`
}

// TestWalkLFUFullOfHotKeys: when every key kept is hot, keys as hot may
// have been left out, and the result says so; with room for them all, it
// does not.
func TestWalkLFUFullOfHotKeys(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t, deterministicLFU...)
	var hot []string
	for i := range 150 {
		hot = append(hot, fmt.Sprintf("hot:%d", i))
	}
	plantDB(t, srv, 0, 3000, 120, hot...) // counters 125
	for _, tt := range []struct {
		topK int
		note bool
	}{{100, true}, {150, true}, {151, false}, {1000, false}} {
		res, err := WalkLFU(ctx, srv.Client(t), LFUOptions{TopK: tt.topK, Hot: 100})
		if err != nil {
			t.Fatal(err)
		}
		noted := slices.ContainsFunc(res.Notes, func(n string) bool { return strings.Contains(n, "keys as hot beyond them may be left out") })
		if len(res.Keys) != min(tt.topK, 150) || noted != tt.note {
			t.Errorf("TopK %d: %d keys, notes %q; want %d keys, a note %v", tt.topK, len(res.Keys), res.Notes, min(tt.topK, 150), tt.note)
		}
	}
}
