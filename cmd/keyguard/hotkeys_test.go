package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/hotkey"
	"github.com/keyguard/keyguard/internal/redistest"
	"github.com/keyguard/keyguard/registry"
)

// hotRegistry is the hotkey package's test registry: hot templates, a
// region template, lock templates and the hot-key records.
const hotRegistry = "../../hotkey/testdata/keyguard.yaml"

// reportAs makes a detector for service, observes keys (key → times) and
// flushes its report to c.
func reportAs(t *testing.T, c redis.UniversalClient, reg *registry.Registry, service string, keys map[string]int) {
	t.Helper()
	d, err := hotkey.NewDetector(reg, hotkey.DetectorOptions{Service: service})
	if err != nil {
		t.Fatal(err)
	}
	for k, n := range keys {
		for range n {
			d.Observe(k)
		}
	}
	if err := d.Flush(context.Background(), c); err != nil {
		t.Fatal(err)
	}
}

// TestHotkeysMergesServices: two services' SDK reports are merged per
// key, template and region; an unprotected hot key is a warning.
func TestHotkeysMergesServices(t *testing.T) {
	for _, cluster := range []bool{false, true} {
		name := "standalone"
		if cluster {
			name = "cluster"
		}
		t.Run(name, func(t *testing.T) {
			reg, err := registry.Load(hotRegistry)
			if err != nil {
				t.Fatal(err)
			}
			var c redis.UniversalClient
			args := []string{"hotkeys", "--registry", hotRegistry, "--min-rate", "1000"}
			if cluster {
				cl := redistest.StartCluster(t, 3)
				c = cl.Client(t)
				args = append(args, "--redis", cl.URL(), "--cluster")
			} else {
				srv := redistest.Start(t)
				c = srv.Client(t)
				args = append(args, "--redis", srv.URL())
			}
			reportAs(t, c, reg, "catalog-team", map[string]int{"cache:product:detail:P1": 3000, "goods:hot:area:110101:7": 1500, "config:global:banner": 200})
			reportAs(t, c, reg, "search-team", map[string]int{"cache:product:detail:P1": 2000, "goods:hot:area:310100:7": 1200, "config:global:banner": 1000})

			code, out, errOut := runCLI(t, "", args...)
			if code != 0 {
				t.Fatalf("exit %d\n%s%s", code, out, errOut)
			}
			for _, want := range []string{
				"SDK reports: 2 instances of catalog-team, search-team",
				"cache:product:detail:P1  (cache:product:detail:{productNo}, catalog-team, hot: {replicas 3, local_ttl 5s})",
				"region 110101: 1 key, 1 hot key",
				"region 310100: 1 key, 1 hot key",
				"warning hot-key config:global:banner",
				"OBJECT FREQ on",
				"maxmemory-policy is noeviction",
			} {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
			code, out, errOut = runCLI(t, "", append(args, "--fail-on", "warning", "--format", "json")...)
			if code != 1 {
				t.Fatalf("--fail-on warning: exit %d\n%s", code, errOut)
			}
			var doc struct {
				Keys []struct {
					Key       string   `json:"key"`
					Rate      float64  `json:"rate"`
					Services  []string `json:"services"`
					Instances int      `json:"instances"`
				} `json:"keys"`
				Templates []struct {
					Template string `json:"template"`
					Regions  []struct {
						Region string `json:"region"`
					} `json:"regions"`
				} `json:"templates"`
				Findings []struct {
					Rule     string `json:"rule"`
					Severity string `json:"severity"`
					Key      string `json:"key"`
				} `json:"findings"`
			}
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatal(err)
			}
			if len(doc.Keys) == 0 || doc.Keys[0].Key != "cache:product:detail:P1" || doc.Keys[0].Instances != 2 || len(doc.Keys[0].Services) != 2 {
				t.Errorf("json keys: %+v", doc.Keys)
			}
			hot := map[string]string{}
			for _, f := range doc.Findings {
				if f.Rule != "hot-key" {
					t.Errorf("rule %q", f.Rule)
				}
				hot[f.Key] = f.Severity
			}
			want := map[string]string{"cache:product:detail:P1": "info", "goods:hot:area:110101:7": "info", "goods:hot:area:310100:7": "info", "config:global:banner": "warning"}
			for k, s := range want {
				if hot[k] != s {
					t.Errorf("finding for %s: %q, want %q (all: %v)", k, hot[k], s, hot)
				}
			}
		})
	}
}

// TestHotkeysLFUAndMonitor: under an LFU policy the hot key shows its
// counter; --monitor samples the traffic and prints its cost; --monitor
// is refused without a positive duration.
func TestHotkeysLFUAndMonitor(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t, "maxmemory-policy allkeys-lfu")
	c := srv.Client(t)
	c.Set(ctx, "config:global:banner", "x", 0)
	c.Set(ctx, "config:global:cold", "x", 0)
	for range 3000 {
		c.Get(ctx, "config:global:banner")
	}
	base := []string{"hotkeys", "--registry", hotRegistry, "--redis", srv.URL(), "--min-freq", "20"}
	code, out, errOut := runCLI(t, "", base...)
	if code != 0 || !strings.Contains(out, "OBJECT FREQ on "+srv.Addr+" (allkeys-lfu): 2 keys read (every key)") || !strings.Contains(out, "warning hot-key config:global:banner: hot key: LFU counter") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}

	for _, bad := range []string{"0", "-1s", "11m"} {
		if code, _, errOut := runCLI(t, "", append(base, "--monitor", bad)...); code != 2 || !strings.Contains(errOut, "--monitor") {
			t.Errorf("--monitor %s: exit %d %s", bad, code, errOut)
		}
	}

	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
				c.Get(ctx, "cache:product:detail:P42")
			}
		}
	}()
	code, out, errOut = runCLI(t, "", append(base, "--no-lfu", "--monitor", "1s", "--min-rate", "50")...)
	close(stop)
	<-done
	if code != 0 {
		t.Fatalf("monitor: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"MONITOR for 1s:", "cost on " + srv.Addr + ":", "ops/s before", "info hot-key cache:product:detail:P42: hot key:", "ops/s in the MONITOR sample"} {
		if !strings.Contains(out, want) {
			t.Errorf("monitor output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "MONITOR on 1 master for 1s") {
		t.Errorf("stderr: %q", errOut)
	}
}

// TestHotkeysSnapshot: --snapshot reads the counters from the server's
// snapshot and says so; the flags that pace or skip the OBJECT FREQ walk
// are refused beside it.
func TestHotkeysSnapshot(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t, "maxmemory-policy allkeys-lfu", "repl-diskless-sync-delay 0")
	c := srv.Client(t)
	c.Set(ctx, "config:global:banner", "x", 0)
	c.Set(ctx, "config:global:cold", "x", 0)
	for range 3000 {
		c.Get(ctx, "config:global:banner")
	}
	base := []string{"hotkeys", "--registry", hotRegistry, "--redis", srv.URL(), "--min-freq", "20", "--snapshot"}
	code, out, errOut := runCLI(t, "", base...)
	if code != 0 || !strings.Contains(out, "LFU counters from the snapshot of "+srv.Addr+" (allkeys-lfu): 2 keys read (every key)") || !strings.Contains(out, "warning hot-key config:global:banner: hot key: LFU counter") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "", append(base, "--format", "json")...)
	var rep struct {
		LFU struct{ From string } `json:"lfu"`
	}
	if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil || rep.LFU.From != "snapshot" {
		t.Fatalf("json: exit %d, %v, from %q\n%s", code, err, rep.LFU.From, errOut)
	}
	for _, extra := range [][]string{{"--no-lfu"}, {"--sample", "10"}, {"--rate", "100"}} {
		if code, _, errOut := runCLI(t, "", append(base, extra...)...); code != 2 || !strings.Contains(errOut, "--snapshot") {
			t.Errorf("--snapshot %v: exit %d %s", extra, code, errOut)
		}
	}
}

// TestAuditAndHotkeysAgreeUnderLFU: on a server under allkeys-lfu with
// the default lfu-log-factor, one key read 30,000 times among 20,000 is
// a hot-key finding of the audit and the first key of hotkeys with its
// defaults (every key read, only counters with evidence listed), with the
// same counter give or take the one step the audit's own reads may add.
func TestAuditAndHotkeysAgreeUnderLFU(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t, "maxmemory-policy allkeys-lfu")
	c := srv.Client(t)
	p := c.Pipeline()
	for i := range 20_000 {
		p.Set(ctx, fmt.Sprintf("config:global:k%d", i), "x", 0)
		if p.Len() == 2000 {
			if _, err := p.Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	p.Set(ctx, "config:global:banner", "x", 0)
	for range 30 {
		for range 1000 {
			p.Get(ctx, "config:global:banner")
		}
		if _, err := p.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	auditOut := filepath.Join(dir, "audit.json")
	if code, _, errOut := runCLI(t, "", "audit", "--registry", hotRegistry, "--redis", srv.URL(), "--format", "json", "--out", auditOut, "--fail-on", "never"); code != exitClean {
		t.Fatalf("audit: exit %d %s", code, errOut)
	}
	var audit struct {
		Findings []struct{ Rule, Key, Message string }
	}
	raw, err := os.ReadFile(auditOut)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &audit); err != nil {
		t.Fatal(err)
	}
	auditFreq := -1
	for _, f := range audit.Findings {
		if f.Rule == "hot-key" {
			if f.Key != "config:global:banner" || auditFreq >= 0 {
				t.Fatalf("audit hot-key findings: %+v", audit.Findings)
			}
			fmt.Sscanf(f.Message, "LFU counter %d", &auditFreq)
		}
	}
	if auditFreq < 32 {
		t.Fatalf("audit: no hot-key finding for config:global:banner with its counter: %+v", audit.Findings)
	}
	code, out, errOut := runCLI(t, "", "hotkeys", "--registry", hotRegistry, "--redis", srv.URL(), "--format", "json", "--fail-on", "never")
	if code != exitClean {
		t.Fatalf("hotkeys: exit %d %s", code, errOut)
	}
	var hot struct {
		Keys []struct {
			Key  string
			Freq int `json:"lfu_freq"`
		}
		LFU struct{ Nodes []struct{ Sampled int } }
	}
	if err := json.Unmarshal([]byte(out), &hot); err != nil {
		t.Fatal(err)
	}
	if len(hot.Keys) != 1 || hot.Keys[0].Key != "config:global:banner" || len(hot.LFU.Nodes) != 1 || hot.LFU.Nodes[0].Sampled != 20_001 {
		t.Fatalf("hotkeys: %s", out)
	}
	if d := hot.Keys[0].Freq - auditFreq; d < -1 || d > 1 {
		t.Errorf("counters: audit %d, hotkeys %d", auditFreq, hot.Keys[0].Freq)
	}
}

// TestHotkeysEveryDatabase: as the audit, hotkeys walks every database
// that holds keys when the URL names none (0 and 5 here, 3 between them
// empty), each key with its database, the same name in two databases
// twice; a URL with /5, or --db 5, walks database 5 alone.
func TestHotkeysEveryDatabase(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t, "maxmemory-policy allkeys-lfu", "lfu-log-factor 0", "lfu-decay-time 0")
	for db, reads := range map[int]int{0: 150, 5: 200} {
		c := redis.NewClient(&redis.Options{Addr: srv.Addr, DB: db})
		p := c.Pipeline()
		for i := range 1000 {
			p.Set(ctx, fmt.Sprintf("config:global:k%d", i), "x", 0)
		}
		for _, k := range []string{"config:global:banner", fmt.Sprintf("config:global:only%d", db)} {
			p.Set(ctx, k, "x", 0)
			for range reads {
				p.Get(ctx, k)
			}
		}
		if _, err := p.Exec(ctx); err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	type report struct {
		Keys []struct {
			Key  string
			DB   *int
			Freq int `json:"lfu_freq"`
		}
		Findings []struct{ Key, Message string }
		LFU      struct {
			Nodes    []struct{ Sampled int }
			Coverage struct {
				Nodes []struct{ DBs []struct{ DB int } }
			}
		}
	}
	hot := func(args ...string) (string, []int) {
		t.Helper()
		code, out, errOut := runCLI(t, "", append([]string{"hotkeys", "--registry", hotRegistry, "--format", "json", "--fail-on", "never"}, args...)...)
		if code != exitClean {
			t.Fatalf("hotkeys %q: exit %d %s", args, code, errOut)
		}
		var r report
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, k := range r.Keys {
			db := "-"
			if k.DB != nil {
				db = fmt.Sprint(*k.DB)
			}
			keys = append(keys, fmt.Sprintf("%s@%s=%d", k.Key, db, k.Freq))
		}
		var dbs []int
		for _, n := range r.LFU.Coverage.Nodes {
			for _, d := range n.DBs {
				dbs = append(dbs, d.DB)
			}
		}
		if len(r.Findings) != len(r.Keys) {
			t.Errorf("hotkeys %q: %d findings for %d hot keys", args, len(r.Findings), len(r.Keys))
		}
		return strings.Join(keys, " "), dbs
	}
	keys, dbs := hot("--redis", srv.URL())
	if want := "config:global:banner@5=205 config:global:only5@5=205 config:global:banner@0=155 config:global:only0@0=155"; keys != want || fmt.Sprint(dbs) != "[0 5]" {
		t.Fatalf("every database: keys %s, want %s; coverage %v", keys, want, dbs)
	}
	for _, args := range [][]string{{"--redis", srv.URL() + "/5"}, {"--redis", srv.URL(), "--db", "5"}} {
		keys, dbs := hot(args...)
		if want := "config:global:banner@5=205 config:global:only5@5=205"; keys != want || fmt.Sprint(dbs) != "[5]" {
			t.Fatalf("%q: keys %s, want %s; coverage %v", args, keys, want, dbs)
		}
	}
	// The text names the database of each key.
	code, out, errOut := runCLI(t, "", "hotkeys", "--registry", hotRegistry, "--redis", srv.URL(), "--fail-on", "never")
	if code != exitClean {
		t.Fatalf("hotkeys text: exit %d %s", code, errOut)
	}
	for _, s := range []string{"config:global:only5 (db 5)", "config:global:banner (db 0)", "walked: databases 0, 5"} {
		if !strings.Contains(out, s) {
			t.Errorf("text lacks %q:\n%s", s, out)
		}
	}
}

// TestHotkeysWithoutRegistry: as the audit, hotkeys runs without a
// registry (none given, no keyguard.yaml here): the hot key is listed
// under its inferred family, and the report says there is no registry.
// A --registry that does not exist is still an error.
func TestHotkeysWithoutRegistry(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t, "maxmemory-policy allkeys-lfu")
	c := srv.Client(t)
	for i := range 200 {
		c.Set(ctx, fmt.Sprintf("legacy:cart:%d", 1000+i), "x", 0)
	}
	for range 3000 {
		c.Get(ctx, "legacy:cart:1042")
	}
	t.Chdir(t.TempDir())
	code, out, errOut := runCLI(t, "", "hotkeys", "--redis", srv.URL(), "--min-freq", "20")
	if code != 0 {
		t.Fatalf("hotkeys without a registry: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"registry: none", "200 keys read (every key)", "legacy:cart:1042  (family legacy:cart:{id:int})",
		"warning hot-key legacy:cart:1042: hot key: LFU counter", `- key: "legacy:cart:{id:int}" with hot:`} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	code, out, errOut = runCLI(t, "", "hotkeys", "--redis", srv.URL(), "--min-freq", "20", "--format", "json", "--fail-on", "never")
	var rep struct {
		NoRegistry bool `json:"no_registry"`
		Keys       []struct {
			Key, Template, Family string
		} `json:"keys"`
	}
	if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil {
		t.Fatalf("json: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	if !rep.NoRegistry || len(rep.Keys) == 0 || rep.Keys[0].Key != "legacy:cart:1042" || rep.Keys[0].Family != "legacy:cart:{id:int}" {
		t.Errorf("json: %+v", rep)
	}
	if code, _, errOut := runCLI(t, "", "hotkeys", "--redis", srv.URL(), "--registry", "missing.yaml"); code != 2 || !strings.Contains(errOut, "missing.yaml") {
		t.Errorf("a missing --registry: exit %d %s", code, errOut)
	}
}

// TestHotkeysEveryHotKeyAFinding: 300 hot keys (more than the 64 a
// service's detector keeps) each get a finding, whatever --top lists
// (10 here, or 1,000: every key read, cold ones too), live and from the
// snapshot. The counters were once kept for 64 keys only: 64 findings,
// and --top 1000 listed 64 keys, without a word.
func TestHotkeysEveryHotKeyAFinding(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t, "maxmemory-policy allkeys-lfu", "lfu-log-factor 0", "lfu-decay-time 0", "repl-diskless-sync-delay 0")
	c := srv.Client(t)
	p := c.Pipeline()
	for i := range 2000 {
		p.Set(ctx, fmt.Sprintf("config:global:cold%d", i), "x", 0)
		if i < 900 { // counters 5 + 20: listed, not hot
			for range 20 {
				p.Get(ctx, fmt.Sprintf("config:global:cold%d", i))
			}
		}
	}
	for i := range 300 {
		k := fmt.Sprintf("config:global:hot%d", i)
		p.Set(ctx, k, "x", 0)
		for range 100 + i%50 {
			p.Get(ctx, k)
		}
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"--top", "10"}, {"--top", "1000"}, {"--top", "10", "--snapshot"}} {
		code, out, errOut := runCLI(t, "", append([]string{"hotkeys", "--registry", hotRegistry, "--redis", srv.URL(), "--format", "json", "--fail-on", "never"}, args...)...)
		var rep struct {
			Keys     []struct{ Key string }
			Findings []struct{ Key string }
		}
		if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil {
			t.Fatalf("%v: exit %d, %v\n%s", args, code, err, errOut)
		}
		hot := 0
		for _, f := range rep.Findings {
			if strings.HasPrefix(f.Key, "config:global:hot") {
				hot++
			}
		}
		want := 10
		if args[1] == "1000" {
			want = 1000
		}
		if hot != 300 || len(rep.Findings) != 300 || len(rep.Keys) != want {
			t.Errorf("%v: %d findings (%d of the hot keys), %d keys listed; want 300 findings, %d keys", args, len(rep.Findings), hot, len(rep.Keys), want)
		}
	}
}

// TestHotkeysSnapshotMasterDown: with a Cluster master down (unreachable,
// then marked failed, the Cluster then refusing every key), hotkeys
// --snapshot writes a partial report of the other masters' hot keys,
// says which slots it did not read and, once the services' reports can
// no longer be read, that they were not, and exits 2; before, it stopped
// with no report.
func TestHotkeysSnapshotMasterDown(t *testing.T) {
	ctx := context.Background()
	cl := redistest.StartCluster(t, 3, "maxmemory-policy allkeys-lfu", "lfu-log-factor 0", "repl-diskless-sync-delay 0", "cluster-node-timeout 60000")
	cc := cl.Client(t)
	down := cl.Nodes[2]
	var onUp []string // hot keys the masters left up hold
	for i := range 30 {
		k := "config:global:k" + strconv.Itoa(i)
		cc.Set(ctx, k, "x", 0)
		for range 150 {
			cc.Get(ctx, k)
		}
		if n, err := down.Client(t).Exists(ctx, k).Result(); err != nil || n == 0 {
			onUp = append(onUp, k) // MOVED: another master's
		}
	}
	if len(onUp) == 0 || len(onUp) == 30 {
		t.Fatalf("%d of 30 hot keys on the masters up: the test does not spread them", len(onUp))
	}
	down.Stop()
	reg, err := filepath.Abs(hotRegistry)
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	run := func(why string, more ...string) string {
		t.Helper()
		code, _, errOut := runCLI(t, "", append([]string{"hotkeys", "--registry", reg, "--redis", cl.URL(), "--cluster", "--min-freq", "100", "--format", "json", "--out", "hk.json", "--fail-on", "never"}, more...)...)
		if code != exitError || !strings.Contains(errOut, "; partial report in hk.json") {
			t.Fatalf("%s: exit %d %q", why, code, errOut)
		}
		data, err := os.ReadFile("hk.json")
		if err != nil {
			t.Fatalf("%s: no partial report: %v (%q)", why, err, errOut)
		}
		var rep struct {
			SDK struct{ Unread string } `json:"sdk"`
			LFU struct {
				Coverage struct {
					NotCovered []struct{ Node, Slots, Reason string } `json:"not_covered"`
				} `json:"coverage"`
			} `json:"lfu"`
			Keys []struct{ Key string } `json:"keys"`
		}
		if err := json.Unmarshal(data, &rep); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, k := range rep.Keys {
			got = append(got, k.Key)
		}
		slices.Sort(got)
		slices.Sort(onUp)
		gaps := rep.LFU.Coverage.NotCovered
		if !slices.Equal(got, onUp) || len(gaps) != 1 || gaps[0].Node != down.Addr || gaps[0].Slots == "" || !strings.Contains(gaps[0].Reason, why) {
			t.Fatalf("%s: hot keys %v, want %v; not covered %+v; stderr %q", why, got, onUp, gaps, errOut)
		}
		os.Remove("hk.json")
		return rep.SDK.Unread
	}
	run("unreachable at the start", "--snapshot")
	run("connection refused") // the OBJECT FREQ walk too
	// Once the others agree it failed, the Cluster refuses every key
	// (cluster-require-full-coverage): the services' reports too.
	cl.Down(t, 2)
	if unread := run("is failed", "--snapshot"); !strings.Contains(unread, "CLUSTERDOWN") {
		t.Errorf("sdk.unread %q; want the Cluster's refusal", unread)
	}
}
