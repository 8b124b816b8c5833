package hotkeys

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/keyguard/keyguard/hotkey"
	"strings"
	"testing"
	"time"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/redistest"
)

// TestSampleLFU: under an LFU policy the most read key has the highest
// counter; without one the node is skipped with the reason; on a Cluster
// every master is sampled.
func TestSampleLFU(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t, "maxmemory-policy allkeys-lfu")
	rdb := srv.Client(t)
	for i := range 200 {
		rdb.Set(ctx, fmt.Sprintf("config:global:k%d", i), "x", time.Hour)
	}
	for range 2000 {
		rdb.Get(ctx, "config:global:k7")
	}
	res, err := SampleLFU(ctx, rdb, LFUOptions{Sample: 150, TopK: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Nodes) != 1 || res.Nodes[0].Policy != "allkeys-lfu" || res.Nodes[0].Sampled != 150 || res.Nodes[0].Skipped != "" {
		t.Fatalf("nodes %+v", res.Nodes)
	}
	if len(res.Keys) != 5 {
		t.Fatalf("keys %+v", res.Keys)
	}
	// k7 is found when the sample includes it; the full walk always does.
	res, err = SampleLFU(ctx, rdb, LFUOptions{Sample: 1000, Rate: 5000})
	if err != nil {
		t.Fatal(err)
	}
	if res.Keys[0].Key != "config:global:k7" || res.Keys[0].Freq <= res.Keys[1].Freq || res.Nodes[0].Sampled != 200 {
		t.Fatalf("top %+v of %d sampled", res.Keys[:2], res.Nodes[0].Sampled)
	}

	plain := redistest.Start(t)
	res, err = SampleLFU(ctx, plain.Client(t), LFUOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Nodes[0].Skipped, "maxmemory-policy is noeviction") || len(res.Keys) != 0 {
		t.Fatalf("no LFU policy: %+v", res.Nodes)
	}

	cl := redistest.StartCluster(t, 3, "maxmemory-policy volatile-lfu")
	cc := cl.Client(t)
	for i := range 60 {
		cc.Set(ctx, fmt.Sprintf("config:global:c%d", i), "x", time.Hour)
	}
	res, err = SampleLFU(ctx, cc, LFUOptions{})
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, n := range res.Nodes {
		total += n.Sampled
	}
	if len(res.Nodes) != 3 || total != 60 {
		t.Fatalf("cluster: %+v", res.Nodes)
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
	mon := &MonitorResult{Duration: time.Second, Keys: []hotkey.KeyRate{{Key: "config:global:banner", Rate: 2400}, {Key: "goods:hot:area:110101:1", Rate: 300}}}
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
