package live

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/redistest"
)

// modelData writes keys of every template whose values the first probe
// reads, shaped to test the memory model: integers, embedded and raw
// strings, JSON, hashes of a few fields (with __ns__), hashes of 40 fields
// (their count and memory come in the count stage), hashes with a value
// too long for a listpack, and — one key in fifty of two templates —
// values Redis holds otherwise than SET and HSET store them: small hashes
// left a hashtable by a value once too long, and strings grown by APPEND.
// The other two templates hold none. It returns each key's template.
func modelData(t *testing.T, c *redis.Client, n int) map[string]string {
	t.Helper()
	ctx := context.Background()
	tmpl := map[string]string{}
	p := c.Pipeline()
	flush := func() {
		t.Helper()
		if _, err := p.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		odd := i%50 == 49
		k := fmt.Sprintf("order:order:%d:base", i)
		tmpl[k] = "order:order:{orderId:int}:base"
		fields := []any{"id", i, "state", "paid", "amount", i * 37 % 100000, "note", strings.Repeat("x", i%60)}
		switch {
		case i%25 == 3:
			for f := range 40 {
				fields = append(fields, fmt.Sprintf("line%d", f), f*i)
			}
		case i%25 == 7:
			fields = append(fields, "blob", strings.Repeat("b", 100)) // a hashtable
		}
		p.HSet(ctx, k, fields...)
		if odd {
			p.HSet(ctx, k, "note", strings.Repeat("y", 80)) // a hashtable from now on
			p.HSet(ctx, k, "note", "short")
		}
		p.Expire(ctx, k, 24*time.Hour)

		k = fmt.Sprintf("promo:order:%d:promo-info", i)
		tmpl[k] = "promo:order:{orderId:int}:promo-info"
		p.HSet(ctx, k, "__ns__", "promo", "code", fmt.Sprintf("C%d", i), "pct", i%90)
		p.Expire(ctx, k, 12*time.Hour)

		k = fmt.Sprintf("cache:product:detail:p%d", i)
		tmpl[k] = "cache:product:detail:{productNo}"
		v := fmt.Sprintf(`{"productNo":"p%d","title":"%s","price":%d}`, i, strings.Repeat("t", i%200), i)
		p.Set(ctx, k, v, 6*time.Hour)

		k = fmt.Sprintf("auth:code:a%d", i)
		tmpl[k] = "auth:code:{account}"
		switch i % 3 {
		case 0:
			p.Set(ctx, k, i*7919, 5*time.Minute) // an integer
		case 1:
			p.Set(ctx, k, fmt.Sprintf("code-%d", i), 5*time.Minute) // embedded
		default:
			if odd {
				p.Set(ctx, k, "c", 5*time.Minute)
				p.Append(ctx, k, strings.Repeat("c", 44+i%300)) // raw, with room to grow
			} else {
				p.Set(ctx, k, strings.Repeat("c", 45+i%300), 5*time.Minute) // raw
			}
		}
		if i%500 == 499 {
			flush()
		}
	}
	flush()
	return tmpl
}

// memoryByTemplate is MEMORY USAGE SAMPLES 5 (the audit's default) of
// every key, summed by template.
func memoryByTemplate(t *testing.T, c *redis.Client, tmpl map[string]string) map[string]int64 {
	t.Helper()
	ctx := context.Background()
	keys := make([]string, 0, len(tmpl))
	for k := range tmpl {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	p := c.Pipeline()
	cmds := make([]*redis.IntCmd, len(keys))
	for i, k := range keys {
		cmds[i] = p.MemoryUsage(ctx, k, 5)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for i, k := range keys {
		out[tmpl[k]] += cmds[i].Val()
	}
	return out
}

func memoryCalls(t *testing.T, c *redis.Client) int64 {
	t.Helper()
	s, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(s, "\n") {
		if rest, ok := strings.CutPrefix(line, "cmdstat_memory|usage:calls="); ok {
			var n int64
			fmt.Sscan(strings.SplitN(rest, ",", 2)[0], &n)
			return n
		}
	}
	return 0
}

func groupBytes(rep *report.Report) map[string]int64 {
	out := map[string]int64{}
	for _, g := range rep.Groups {
		out[g.Name] = g.Bytes
	}
	return out
}

// The memory the model gives is MEMORY USAGE's, within 1% per template,
// with MEMORY USAGE sent for far fewer keys; an ACL user that
// may not read values (no HRANDFIELD, GETRANGE) gets every key's MEMORY
// USAGE and the same groups and findings, value formats aside.
func TestModelledMemoryMatchesMemoryUsage(t *testing.T) {
	// Not fewer under -short: before a disagreement is found, about
	// verifyEvery odd keys may be modelled, and with fewer keys those
	// alone come near 1% of a template.
	n := 3000
	reg := testRegistry(t)
	s := redistest.Start(t)
	c := s.Client(t)
	ctx := context.Background()
	tmpl := modelData(t, c, n)
	want := memoryByTemplate(t, c, tmpl)

	if err := c.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	res, err := Run(ctx, reg, standalone(s), Options{})
	if err != nil {
		t.Fatal(err)
	}
	calls := memoryCalls(t, c)
	if !res.Complete || res.Report.Summary.Keys != int64(len(tmpl)) {
		t.Fatalf("complete %v keys %d, want %d", res.Complete, res.Report.Summary.Keys, len(tmpl))
	}
	// Every key of the two templates with odd values once the model
	// disagrees, about one in eight of the others.
	if calls*4 > int64(len(tmpl))*3 {
		t.Errorf("MEMORY USAGE sent %d times for %d keys: the model was not used", calls, len(tmpl))
	}
	got := groupBytes(res.Report)
	for name, w := range want {
		if off := math.Abs(float64(got[name]-w)) / float64(w); off > 0.01 {
			t.Errorf("%s: %d bytes, MEMORY USAGE says %d (%.2f%% off)", name, got[name], w, 100*off)
		}
	}

	// Without the value probes: the element counts and MEMORY USAGE.
	setUser(t, c, "no-values", []string{"on", ">pw", "~*", "+@all", "-hrandfield", "-getrange"})
	if err := c.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	tg := standalone(s)
	tg.Conn.Username, tg.Conn.Password = "no-values", "pw"
	counted, err := Run(ctx, reg, tg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if calls := memoryCalls(t, c); calls < int64(len(tmpl)) {
		t.Errorf("without value probes MEMORY USAGE was sent %d times for %d keys", calls, len(tmpl))
	}
	if g := groupBytes(counted.Report); !equalMaps(g, want) {
		t.Errorf("without value probes: bytes by group %v, MEMORY USAGE says %v", g, want)
	}
	a, b := res.Report, counted.Report
	if len(a.Groups) != len(b.Groups) {
		t.Fatalf("%d groups, %d without value probes", len(a.Groups), len(b.Groups))
	}
	for i := range a.Groups {
		ga, gb := a.Groups[i], b.Groups[i]
		if ga.Name != gb.Name || ga.Keys != gb.Keys || !equalMaps(ga.Types, gb.Types) {
			t.Errorf("group %s: %d keys %v; without value probes %s: %d keys %v", ga.Name, ga.Keys, ga.Types, gb.Name, gb.Keys, gb.Types)
		}
	}
	if fa, fb := nonValueFindings(a), nonValueFindings(b); !slices.Equal(fa, fb) {
		t.Errorf("findings differ:\n with values %v\n without     %v", fa, fb)
	}
}

func equalMaps[K comparable, V comparable](a, b map[K]V) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// nonValueFindings are the findings of rules that read no value format.
func nonValueFindings(rep *report.Report) []string {
	var out []string
	for _, f := range rep.Findings {
		if strings.Contains(f.Rule, "schema") {
			continue
		}
		out = append(out, f.Rule+" "+f.Key)
	}
	slices.Sort(out)
	return out
}
