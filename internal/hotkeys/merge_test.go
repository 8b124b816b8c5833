package hotkeys

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/hotkey"
	"github.com/keyguard/keyguard/internal/redistest"
	"github.com/keyguard/keyguard/registry"
	"github.com/redis/go-redis/v9"
)

// TestWalkLFU: under an LFU policy the walk reads every key's counter
// and lists the most read key first, and only keys with evidence (keys
// read a few times are not listed); --sample is opt-in; without an LFU
// policy the node is skipped with the reason; on a Cluster every master
// is walked.
func TestWalkLFU(t *testing.T) {
	ctx := context.Background()
	const n = 50_000
	_, rdb := lfuServer(t, n, func(i int) string { return fmt.Sprintf("config:global:k%d", i) }, time.Hour)
	p := rdb.Pipeline()
	// The hot key is read 20,000 times; 50 keys are read twice (counter 6 or 7).
	for range 20 {
		for range 1000 {
			p.Get(ctx, "config:global:k31337")
		}
		if _, err := p.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 50 {
		p.Get(ctx, fmt.Sprintf("config:global:k%d", i*101))
		p.Get(ctx, fmt.Sprintf("config:global:k%d", i*101))
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := WalkLFU(ctx, rdb, LFUOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Nodes) != 1 || res.Nodes[0].Policy != "allkeys-lfu" || res.Nodes[0].Sampled != n || !res.Nodes[0].Whole || res.Nodes[0].Skipped != "" {
		t.Fatalf("nodes %+v", res.Nodes)
	}
	if len(res.Keys) != 1 || res.Keys[0].Key != "config:global:k31337" || res.Keys[0].Freq < 2*LFUEvidence {
		t.Fatalf("keys %+v: want the hot key alone", res.Keys)
	}
	// A lower floor lists the keys read twice too, after the hot key.
	res, err = WalkLFU(ctx, rdb, LFUOptions{Floor: 6, TopK: 100, Rate: 1_000_000, Count: 97})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Keys) < 40 || res.Keys[0].Key != "config:global:k31337" || res.Nodes[0].Sampled != n {
		t.Fatalf("floor 6: %d keys listed, first %+v, %d read", len(res.Keys), res.Keys[0], res.Nodes[0].Sampled)
	}
	res, err = WalkLFU(ctx, rdb, LFUOptions{Sample: 1500})
	if err != nil {
		t.Fatal(err)
	}
	if res.Nodes[0].Sampled != 1500 || res.Nodes[0].Whole {
		t.Fatalf("--sample 1500: %+v", res.Nodes[0])
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := WalkLFU(cancelled, rdb, LFUOptions{}); err == nil {
		t.Fatal("a cancelled walk gave no error")
	}
	// Interrupted mid-way (slowed to 5,000 keys a second, stopped once
	// the server has answered some OBJECT FREQ): the node says it
	// stopped, and what was read is returned.
	freqCalls := func() int64 {
		s := rdb.Info(ctx, "commandstats").Val()
		i := strings.Index(s, "cmdstat_object|freq:calls=")
		if i < 0 {
			return 0
		}
		var calls int64
		fmt.Sscanf(s[i+len("cmdstat_object|freq:calls="):], "%d", &calls)
		return calls
	}
	before := freqCalls()
	midway, stop := context.WithCancel(ctx)
	go func() {
		for freqCalls() == before {
			time.Sleep(10 * time.Millisecond)
		}
		stop()
	}()
	res, err = WalkLFU(midway, rdb, LFUOptions{Rate: 5000, Floor: 1, TopK: 100_000})
	// (The server may have answered counters the client had not read yet:
	// what it did read is listed, every key at floor 1.)
	if err == nil || res == nil || res.Nodes[0].Stopped == "" || res.Nodes[0].Whole || res.Nodes[0].Sampled >= n || len(res.Keys) != min(res.Nodes[0].Sampled, 100_000) {
		t.Fatalf("interrupted walk: err %v, nodes %+v, %d keys", err, res.Nodes, len(res.Keys))
	}

	plain := redistest.Start(t)
	res, err = WalkLFU(ctx, plain.Client(t), LFUOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Nodes[0].Skipped, "maxmemory-policy is noeviction") || len(res.Keys) != 0 {
		t.Fatalf("no LFU policy: %+v", res.Nodes)
	}

	cl := redistest.StartCluster(t, 3, "maxmemory-policy volatile-lfu")
	cc := cl.Client(t)
	for i := range 600 {
		cc.Set(ctx, fmt.Sprintf("config:global:c%d", i), "x", time.Hour)
	}
	for range 500 {
		cc.Get(ctx, "config:global:c42")
	}
	res, err = WalkLFU(ctx, cc, LFUOptions{})
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, n := range res.Nodes {
		total += n.Sampled
		if !n.Whole {
			t.Errorf("cluster: %s not walked whole", n.Addr)
		}
	}
	if len(res.Nodes) != 3 || total != 600 || len(res.Keys) != 1 || res.Keys[0].Key != "config:global:c42" {
		t.Fatalf("cluster: %+v, keys %+v", res.Nodes, res.Keys)
	}
}

// TestBuildReport merges SDK reports of two services, a MONITOR sample
// and LFU counters per key, template and region, with findings.
func TestBuildReport(t *testing.T) {
	reg := testRegistry(t)
	reps := []hotkey.InstanceReport{
		{ID: "a", Service: "catalog-team", Keys: []hotkey.KeyRate{{Key: "cache:product:detail:P1", Rate: 3000}, {Key: "goods:hot:area:110101:1", Rate: 800}, {Key: "config:global:banner", Rate: 2500}}},
		{ID: "b", Service: "catalog-team", Keys: []hotkey.KeyRate{{Key: "cache:product:detail:P1", Rate: 2000}, {Key: "goods:hot:area:110101:2", Rate: 900}}},
		{ID: "c", Service: "search-team", Keys: []hotkey.KeyRate{{Key: hotkey.ReplicaKey("cache:product:detail:P1", 1, 3), Rate: 100}, {Key: "goods:hot:area:310100:1", Rate: 50}, {Key: "tmp_data_x", Rate: 1500}}},
	}
	mon := &MonitorResult{Duration: time.Second, Keys: []MonitorKey{{Key: "config:global:banner", Rate: 2400}, {Key: "goods:hot:area:110101:1", Rate: 300}}}
	lfu := &LFUResult{Keys: []LFUKey{{Key: "config:global:banner", Freq: 180, Node: "n1"}, {Key: "config:global:cold", Freq: 3, Node: "n2"}}}
	r := BuildReport(reg, reps, lfu, mon, ReportOptions{Target: "redis://x", Window: 10 * time.Minute})

	byKey := map[string]KeyHeat{}
	for _, k := range r.Keys {
		byKey[k.Key] = k
	}
	p1 := byKey["cache:product:detail:P1"]
	if p1.Rate != 5100 || p1.Instances != 3 || strings.Join(p1.Services, ",") != "catalog-team,search-team" || p1.Hot == nil || !p1.IsHot {
		t.Errorf("P1 (its copy merged): %+v", p1)
	}
	if b := byKey["config:global:banner"]; b.MonitorRate != 2400 || b.Freq != 180 || b.Hot != nil || !b.IsHot {
		t.Errorf("banner: %+v", b)
	}
	if c := byKey["config:global:cold"]; c.IsHot || c.Freq != 3 {
		t.Errorf("cold: %+v", c)
	}
	if r.Keys[0].Key != "cache:product:detail:P1" || r.SDK.Instances != 3 || len(r.SDK.Services) != 2 {
		t.Errorf("order or sources: %+v %+v", r.Keys[0], r.SDK)
	}
	var goods *TemplateHeat
	for i := range r.Templates {
		if r.Templates[i].Template == "goods:hot:area:{area:region}:{sku:int}" {
			goods = &r.Templates[i]
		}
	}
	if goods == nil || goods.Keys != 3 || goods.Rate != 1750 || len(goods.Regions) != 2 ||
		goods.Regions[0].Region != "110101" || goods.Regions[0].Rate != 1700 || goods.Regions[0].Keys != 2 || goods.Regions[1].Region != "310100" {
		t.Errorf("per region: %+v", goods)
	}
	sev := map[string]finding.Severity{}
	for _, f := range r.Findings {
		if f.Rule != finding.HotKey {
			t.Errorf("rule %s", f.Rule)
		}
		sev[f.Key] = f.Severity
	}
	want := map[string]finding.Severity{
		"cache:product:detail:P1": finding.Info,    // protected
		"config:global:banner":    finding.Warning, // no hot:
		"tmp_data_x":              finding.Warning, // unregistered
	}
	if fmt.Sprint(sev) != fmt.Sprint(want) {
		t.Errorf("findings %v, want %v", sev, want)
	}

	var text, js bytes.Buffer
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"3 instances of catalog-team, search-team", "region 110101: 2 keys", "warning hot-key config:global:banner", "3 hot keys: 2 without hot: protection, 1 protected"} {
		if !strings.Contains(text.String(), s) {
			t.Errorf("text lacks %q:\n%s", s, text.String())
		}
	}
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"target", "keys", "templates", "findings", "sdk", "monitor", "lfu"} {
		if _, ok := back[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
}

// TestBuildReportFamilies: keys matching no template are grouped by the
// family inferred from their names, as the audit groups them; each
// finding names its family and the entry to declare. Without a
// registry the report says so and never calls a key unregistered.
func TestBuildReportFamilies(t *testing.T) {
	lfu := &LFUResult{Keys: []LFUKey{
		{Key: "tmp_data_20240321_17", Freq: 200, Node: "n1"},
		{Key: "tmp_data_20240321_18", Freq: 150, Node: "n1"},
		{Key: "legacy:cart:1001", Freq: 120, Node: "n1"},
		{Key: "config:global:banner", Freq: 110, Node: "n1"},
	}}
	empty, err := registry.Parse("", []byte("version: 1\nkeys: []\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		reg      *registry.Registry
		noReg    bool
		families int
	}{
		{"registry", testRegistry(t), false, 2}, // config:global:banner is registered
		{"none", empty, true, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := BuildReport(tc.reg, nil, lfu, nil, ReportOptions{Target: "redis://x", NoRegistry: tc.noReg})
			fams := map[string]TemplateHeat{}
			for _, th := range r.Templates {
				if th.Family != "" {
					if th.Template != hotkey.TemplateUnregistered {
						t.Errorf("family %q under template %q", th.Family, th.Template)
					}
					fams[th.Family] = th
				}
			}
			if len(fams) != tc.families {
				t.Errorf("families %v, want %d", fams, tc.families)
			}
			if th := fams["tmp_data_{date:date}_{id:int}"]; th.Keys != 2 || th.HotKeys != 2 || th.MaxFreq != 200 {
				t.Errorf("tmp_data family: %+v (families %v)", th, fams)
			}
			for _, f := range r.Findings {
				if f.Key == "legacy:cart:1001" && (f.Template != "legacy:cart:{id:int}" || !strings.Contains(f.Hint, `- key: "legacy:cart:{id:int}" with hot:`)) {
					t.Errorf("finding of an unregistered key: %+v", f)
				}
			}
			var text bytes.Buffer
			if err := r.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			out := text.String()
			if tc.noReg {
				for _, want := range []string{"registry: none", "Per family:", "family legacy:cart:{id:int}  1 key", "no registry, so no hot: protection is declared"} {
					if !strings.Contains(out, want) {
						t.Errorf("text lacks %q:\n%s", want, out)
					}
				}
				if strings.Contains(out, "unregistered") || strings.Contains(out, "matches no template") || !r.NoRegistry {
					t.Errorf("a report without a registry calls keys unregistered:\n%s", out)
				}
			} else if !strings.Contains(out, "unregistered, family legacy:cart:{id:int}") || !strings.Contains(out, "Per template:") {
				t.Errorf("text:\n%s", out)
			}
		})
	}
}

// TestBuildReportBlind: with no source able to see heat (no SDK report,
// every node's LFU counters skipped, no MONITOR sample) the text says so
// and what to try; a node whose counters were read, cold as it is, is a
// source.
func TestBuildReportBlind(t *testing.T) {
	for _, tc := range []struct {
		lfu   *LFUResult
		blind bool
	}{
		{&LFUResult{Nodes: []LFUNode{{Addr: "n1", Skipped: "maxmemory-policy is noeviction"}}}, true},
		{nil, true}, // --no-lfu
		{&LFUResult{Nodes: []LFUNode{{Addr: "n1", Policy: "allkeys-lfu", Sampled: 10, Whole: true}}}, false},
	} {
		var text bytes.Buffer
		if err := BuildReport(testRegistry(t), nil, tc.lfu, nil, ReportOptions{Target: "redis://x"}).WriteText(&text); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(text.String(), "Nothing here could see heat") && strings.Contains(text.String(), "Try: --monitor 10s"); got != tc.blind {
			t.Errorf("lfu %+v: blind %v, want %v:\n%s", tc.lfu, got, tc.blind, text.String())
		}
		// Counters read, none listed: said as such, not "nothing sampled".
		read := "none of the 10 keys whose LFU counters were read had a counter of 5 or more"
		if tc.lfu != nil {
			tc.lfu.Floor = 5
		}
		text.Reset()
		if err := BuildReport(testRegistry(t), nil, tc.lfu, nil, ReportOptions{Target: "redis://x"}).WriteText(&text); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(text.String(), read); got == tc.blind || strings.Contains(text.String(), "No key was reported or sampled") != tc.blind {
			t.Errorf("lfu %+v: the text says %v that counters were read:\n%s", tc.lfu, got, text.String())
		}
	}
}

// TestWalkLFURestart: a server restarted during the OBJECT FREQ walk is
// walked again from its first key (every key read once, complete), and
// the result and the text report say so, and that its counters started
// again: before, the report said only "every key, 100% covered".
func TestWalkLFURestart(t *testing.T) {
	ctx := context.Background()
	const n = 20_000
	srv, rdb := lfuServer(t, n, func(i int) string { return fmt.Sprintf("legacy:cart:%d", i) }, 0)
	if err := rdb.Save(ctx).Err(); err != nil { // the restart loads them again
		t.Fatal(err)
	}
	type outcome struct {
		res *LFUResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		// About 4 s a walk: the restart lands in it.
		res, err := WalkLFU(ctx, rdb, LFUOptions{Rate: n / 4, Count: 50})
		done <- outcome{res, err}
	}()
	time.Sleep(time.Second)
	srv.Restart(t)
	o := <-done
	if o.err != nil {
		t.Fatal(o.err)
	}
	if nd := o.res.Nodes[0]; nd.Sampled != n || !nd.Whole || o.res.Coverage.Share != 1 || len(o.res.Coverage.NotCovered) != 0 {
		t.Fatalf("after a restart: node %+v, coverage %+v", nd, o.res.Coverage)
	}
	notes := strings.Join(o.res.Notes, "\n")
	if !strings.Contains(notes, "restarted during the walk") || !strings.Contains(notes, "starts its LFU counters again") {
		t.Errorf("no note of the restart: %q", o.res.Notes)
	}
	var text bytes.Buffer
	if err := BuildReport(testRegistry(t), nil, o.res, nil, ReportOptions{Target: srv.URL()}).WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "    note: "+srv.Addr+" restarted during the walk") {
		t.Errorf("text:\n%s", text.String())
	}
}

// TestWalkLFUWithoutConfig: a server that renames CONFIG away (as managed
// services and hardened configurations do) still has its LFU counters read:
// the policy comes from INFO memory. Before, the node was skipped ("CONFIG
// GET maxmemory-policy refused").
func TestWalkLFUWithoutConfig(t *testing.T) {
	ctx := context.Background()
	for _, policy := range []string{"allkeys-lfu", "allkeys-lru"} {
		srv := redistest.Start(t, "maxmemory-policy "+policy, `rename-command CONFIG ""`)
		rdb := srv.Client(t)
		if err := rdb.ConfigGet(ctx, "maxmemory-policy").Err(); err == nil {
			t.Fatal("CONFIG still answers")
		}
		p := rdb.Pipeline()
		for i := range 2000 {
			p.Set(ctx, fmt.Sprintf("config:global:k%d", i), "x", 0)
		}
		for range 5000 {
			p.Get(ctx, "config:global:k7")
		}
		if _, err := p.Exec(ctx); err != nil {
			t.Fatal(err)
		}
		res, err := WalkLFU(ctx, rdb, LFUOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Nodes) != 1 || res.Nodes[0].Policy != policy {
			t.Fatalf("%s: nodes %+v", policy, res.Nodes)
		}
		nd := res.Nodes[0]
		if policy == "allkeys-lfu" {
			if nd.Skipped != "" || nd.Sampled != 2000 || len(res.Keys) != 1 || res.Keys[0].Key != "config:global:k7" {
				t.Fatalf("%s: node %+v, keys %+v: want every key read and the hot one found", policy, nd, res.Keys)
			}
		} else if !strings.Contains(nd.Skipped, "maxmemory-policy is allkeys-lru") || len(res.Keys) != 0 {
			t.Fatalf("%s: node %+v, keys %+v: want the node skipped for its policy", policy, nd, res.Keys)
		}
	}
}

// lfuServer starts a server under allkeys-lfu holding n string keys
// name(i), each with ttl (0: none).
func lfuServer(t *testing.T, n int, name func(i int) string, ttl time.Duration) (*redistest.Server, *redis.Client) {
	t.Helper()
	ctx := context.Background()
	srv := redistest.Start(t, "maxmemory-policy allkeys-lfu")
	rdb := srv.Client(t)
	p := rdb.Pipeline()
	for i := range n {
		p.Set(ctx, name(i), "x", ttl)
		if p.Len() == 5000 || i == n-1 {
			if _, err := p.Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	return srv, rdb
}

// TestWalkLFUKeysTheUserMayNotRead: a user whose key patterns let it read
// part of the keyspace reads the counters it may, says how many keys it
// could not read, and does not call the walk whole; it stopped at the
// first such key before ("OBJECT FREQ on …: NOPERM"), with nothing read.
func TestWalkLFUKeysTheUserMayNotRead(t *testing.T) {
	ctx := context.Background()
	srv, admin := lfuServer(t, 3000, func(i int) string {
		if i%3 == 0 {
			return fmt.Sprintf("order:o:%d", i)
		}
		return fmt.Sprintf("auth:s:%d", i)
	}, 0)
	for range 5000 {
		admin.Get(ctx, "order:o:30")
	}
	if err := admin.Do(ctx, "ACL", "SETUSER", "team-order", "on", ">pw", "%R~order:*", "+@all").Err(); err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: "team-order", Password: "pw"})
	defer c.Close()
	res, err := WalkLFU(ctx, c, LFUOptions{})
	if err == nil || !strings.Contains(err.Error(), "2,000 keys not readable by this ACL user") {
		t.Errorf("err %v: want the walk incomplete for 2,000 keys", err)
	}
	if res == nil || len(res.Nodes) != 1 {
		t.Fatalf("result %+v", res)
	}
	if n := res.Nodes[0]; n.Sampled != 1000 || n.Unreadable != 2000 || n.Whole || n.Stopped != "" {
		t.Errorf("node %+v: want 1,000 read, 2,000 unreadable, not whole, not stopped", n)
	}
	if len(res.Keys) != 1 || res.Keys[0].Key != "order:o:30" {
		t.Errorf("keys %+v: want order:o:30", res.Keys)
	}
	if s := res.Coverage.Share; s < 0.33 || s > 0.34 {
		t.Errorf("share %v, want 1/3", s)
	}
	res, err = WalkLFU(ctx, c, LFUOptions{Match: "order:*"})
	if err != nil || res.Nodes[0].Unreadable != 0 || !res.Nodes[0].Whole || res.Nodes[0].Sampled != 1000 {
		t.Errorf("--match order:*: %v, %+v", err, res.Nodes)
	}
}

// TestHotFinderAsFormatted: the findings hotFinder writes are the ones
// the texts formatted one by one give (formattedHotFinding), for every
// mix of evidence, database, registry state and hot policy, with one
// hotFinder across all of them (its buffer and hints reused).
func TestHotFinderAsFormatted(t *testing.T) {
	db3 := 3
	var hf hotFinder
	n := 0
	for _, rate := range []float64{0, 5.25, 2500, 1234567} {
		for _, mon := range []float64{0, 1500} {
			for _, freq := range []int{-1, 50, 180} {
				for _, db := range []*int{nil, &db3} {
					for _, tmpl := range []string{hotkey.TemplateUnregistered, "order:{id}"} {
						for _, hot := range []*HotPolicy{nil, {}, {Replicas: 4, LocalTTL: "5s"}} {
							for _, noReg := range []bool{false, true} {
								for _, fam := range []string{"order:{id}:base", "auth:\"x\"", ""} {
									k := &KeyHeat{Key: "k:" + fam, Template: tmpl, Family: fam, Owner: "team", Rate: rate, Instances: 2,
										Services: []string{"api", "web"}, MonitorRate: mon, Freq: freq, Node: "10.0.0.1:6379", DB: db, Hot: hot}
									if rate == 0 {
										k.Instances, k.Services = 0, nil
									}
									opts := ReportOptions{MinRate: 1000, MinFreq: 100, NoRegistry: noReg}
									got, want := hf.finding(k, opts), formattedHotFinding(k, opts)
									if got != want {
										t.Fatalf("%+v:\n got %+v\nwant %+v", k, got, want)
									}
									n++
								}
							}
						}
					}
				}
			}
		}
	}
	if n < 1000 {
		t.Fatalf("only %d cases", n)
	}
}

// formattedHotFinding is a hot key's finding with its texts formatted one
// by one, as hotFinder wrote them before it kept a buffer.
func formattedHotFinding(k *KeyHeat, opts ReportOptions) finding.Finding {
	var ev []string
	if k.Rate >= opts.MinRate {
		ev = append(ev, fmt.Sprintf("%s ops/s in the SDK reports of %s (%s)", fmtRate(k.Rate), plural(k.Instances, "instance"), strings.Join(k.Services, ", ")))
	}
	if k.MonitorRate >= opts.MinRate {
		ev = append(ev, fmt.Sprintf("%s ops/s in the MONITOR sample", fmtRate(k.MonitorRate)))
	}
	if k.Freq >= opts.MinFreq {
		ev = append(ev, fmt.Sprintf("LFU counter %d on %s", k.Freq, k.Node))
	}
	f := finding.Finding{Rule: finding.HotKey, Key: k.Key, Owner: k.Owner, Message: "hot key" + dbText(k.DB) + ": " + strings.Join(ev, "; ")}
	switch {
	case k.Template == hotkey.TemplateUnregistered && opts.NoRegistry:
		f.Template = k.Family
		f.Severity = finding.Warning
		f.Message += "; no registry, so no hot: protection is declared"
		f.Hint = fmt.Sprintf("declare its family in a registry (keyguard init writes one): - key: %q with hot: {replicas: N, local_ttl: 5s} (docs/hotkeys.md)", k.Family)
	case k.Template == hotkey.TemplateUnregistered:
		f.Template = k.Family
		f.Severity = finding.Warning
		f.Message += "; the key matches no template"
		f.Hint = fmt.Sprintf("declare it: - key: %q with hot: {replicas: N, local_ttl: 5s} (docs/hotkeys.md)", k.Family)
	case k.Hot == nil:
		f.Template = k.Template
		f.Severity = finding.Warning
		f.Message += "; the template declares no hot: protection"
		f.Hint = "add hot: {replicas: N, local_ttl: 5s} to the template and read it through the hotkey SDK (docs/hotkeys.md)"
	default:
		f.Template = k.Template
		f.Severity = finding.Info
		f.Message += fmt.Sprintf("; protected by hot: %s", k.Hot)
	}
	return f
}
