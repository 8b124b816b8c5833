package live

import (
	"context"
	"fmt"
	"maps"
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
	out := map[string]int64{}
	for k, b := range memoryByKey(t, c, tmpl) {
		out[tmpl[k]] += b
	}
	return out
}

// memoryByKey is MEMORY USAGE SAMPLES 5 of every key.
func memoryByKey(t *testing.T, c *redis.Client, tmpl map[string]string) map[string]int64 {
	t.Helper()
	ctx := context.Background()
	keys := slices.Sorted(maps.Keys(tmpl))
	p := c.Pipeline()
	cmds := make([]*redis.IntCmd, len(keys))
	for i, k := range keys {
		cmds[i] = p.MemoryUsage(ctx, k, 5)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	out := make(map[string]int64, len(keys))
	for i, k := range keys {
		out[k] = cmds[i].Val()
	}
	return out
}

// modelledBytes is what the memory model gives for each key the first
// probe reads whole (a string under 4096 bytes, a hash of fewer than 32
// fields), from the value as the test reads it; -1 for other keys.
func modelledBytes(t *testing.T, c *redis.Client, tmpl map[string]string) map[string]int64 {
	t.Helper()
	ctx := context.Background()
	keys := slices.Sorted(maps.Keys(tmpl))
	p := c.Pipeline()
	cmds := make([]redis.Cmder, len(keys))
	for i, k := range keys {
		if strings.HasPrefix(k, "order:") || strings.HasPrefix(k, "promo:") {
			cmds[i] = p.HGetAll(ctx, k)
		} else {
			cmds[i] = p.Get(ctx, k)
		}
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	out := make(map[string]int64, len(keys))
	for i, k := range keys {
		switch cmd := cmds[i].(type) {
		case *redis.StringCmd:
			v := []byte(cmd.Val())
			out[k] = -1
			if len(v) < jsonPrefixBytes {
				out[k] = stringModel(len(k), v)
			}
		case *redis.MapStringStringCmd:
			hm := newHashModel()
			for f, v := range cmd.Val() {
				hm.add([]byte(f))
				hm.add([]byte(v))
			}
			n := len(cmd.Val())
			out[k] = -1
			if n < fieldProbeCount {
				out[k] = hm.mem(len(k), int64(n))
			}
		}
	}
	return out
}

// probeLog is what the server ran for each key of an audit, from its
// slow log (every command logged, in order): the keys of each template in
// the order the audit first probed them, the batch (SCAN reply) each
// came in, and whether MEMORY USAGE was sent for it, in its probe (same
// batch) or later in the count stage.
type probeLog struct {
	order    map[string][]string // template -> keys, in first-probe order
	batch    map[string]int      // key -> SCAN calls before its first probe
	memBatch map[string]int      // key -> SCAN calls before its MEMORY USAGE; absent: modelled
}

// logEveryCommand makes the server log every command in its slow log from
// now on, emptied.
func logEveryCommand(t *testing.T, c *redis.Client) {
	t.Helper()
	ctx := context.Background()
	for _, kv := range [][2]string{{"slowlog-max-len", "1000000"}, {"slowlog-log-slower-than", "0"}} {
		if err := c.ConfigSet(ctx, kv[0], kv[1]).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.SlowLogReset(ctx).Err(); err != nil {
		t.Fatal(err)
	}
}

func readProbeLog(t *testing.T, c *redis.Client, tmpl map[string]string) probeLog {
	t.Helper()
	ctx := context.Background()
	if err := c.ConfigSet(ctx, "slowlog-log-slower-than", "-1").Err(); err != nil {
		t.Fatal(err)
	}
	entries, err := c.SlowLogGet(ctx, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(entries, func(a, b redis.SlowLog) int { return int(a.ID - b.ID) })
	pl := probeLog{order: map[string][]string{}, batch: map[string]int{}, memBatch: map[string]int{}}
	scans := 0
	for _, e := range entries {
		if len(e.Args) < 2 {
			continue
		}
		switch cmd := strings.ToUpper(e.Args[0]); {
		case cmd == "SCAN":
			scans++
		case cmd == "MEMORY" && len(e.Args) > 2:
			if _, ok := tmpl[e.Args[2]]; ok {
				pl.memBatch[e.Args[2]] = scans
			}
		default:
			k := e.Args[1]
			if _, seen := pl.batch[k]; seen {
				continue
			}
			if tp, ok := tmpl[k]; ok {
				pl.batch[k] = scans
				pl.order[tp] = append(pl.order[tp], k)
			}
		}
	}
	if len(pl.batch) != len(tmpl) {
		t.Fatalf("the slow log shows %d keys probed of %d", len(pl.batch), len(tmpl))
	}
	return pl
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

// The memory the model gives is MEMORY USAGE's where the model holds,
// with MEMORY USAGE sent for far fewer keys, and the model's safeguards
// hold key by key: the audit's order of keys (SCAN's, which differs with
// every server) is read from the server's slow log, so what is checked
// does not depend on it. An ACL user that may not read values (no
// HRANDFIELD, GETRANGE) gets every key's MEMORY USAGE and the same groups
// and findings, value formats aside.
func TestModelledMemoryMatchesMemoryUsage(t *testing.T) {
	// Not fewer under -short, and batches of 100 keys (25 of each
	// template): the model is trusted, verified and found wrong in
	// different batches, and often in the same batch as keys it modelled.
	n := 3000
	reg := testRegistry(t)
	s := redistest.Start(t)
	c := s.Client(t)
	ctx := context.Background()
	tmpl := modelData(t, c, n)
	mem := memoryByKey(t, c, tmpl)
	want := memoryByTemplate(t, c, tmpl)
	est := modelledBytes(t, c, tmpl)

	if err := c.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	logEveryCommand(t, c)
	res, err := Run(ctx, reg, standalone(s), Options{Count: 100})
	if err != nil {
		t.Fatal(err)
	}
	calls := memoryCalls(t, c)
	pl := readProbeLog(t, c, tmpl)
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
		checkModelSafeguards(t, name, pl, mem, est, got[name], w)
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

// checkModelSafeguards checks, for the keys of one template in the order
// the audit probed them, what the model promises whatever that order:
// MEMORY USAGE until trustAfter keys agreed; never verifyEvery keys in a
// row left to the model (verifyDeep once deepTrust keys agreed); none left to it in or after the batch where a
// key first disagreed with it; and the template's bytes are exactly
// MEMORY USAGE where it was sent and the model's bytes elsewhere, so the
// only error is that of keys modelled before any disagreement was read.
func checkModelSafeguards(t *testing.T, name string, pl probeLog, mem, est map[string]int64, got, want int64) {
	t.Helper()
	keys := pl.order[name]
	bad := -1 // the batch where a key first disagreed
	var exact, slack int64
	modelled, wrong, run := 0, 0, 0
	for _, k := range keys {
		if mb, sent := pl.memBatch[k]; sent && mb == pl.batch[k] && est[k] >= 0 && est[k] != mem[k] {
			bad = pl.batch[k]
			break
		}
	}
	agreed, agreedBefore, cur := 0, 0, -1 // keys checked and agreeing: in all, before the batch
	for _, k := range keys {
		if pl.batch[k] != cur {
			cur, agreedBefore = pl.batch[k], agreed
		}
		mb, sent := pl.memBatch[k]
		if sent && mb == pl.batch[k] && est[k] >= 0 && est[k] == mem[k] {
			agreed++
		}
		if sent {
			exact += mem[k]
			run = 0
			continue
		}
		modelled++
		run++
		switch {
		case est[k] < 0:
			t.Errorf("%s: %s left to the model, whose first probe cannot read it whole", name, k)
		case agreedBefore < trustAfter:
			t.Errorf("%s: %s left to the model after %d keys agreed, not %d", name, k, agreedBefore, trustAfter)
		case run >= verifyEvery && agreedBefore < deepTrust, run >= verifyDeep:
			t.Errorf("%s: %d keys in a row up to %s left to the model, unverified (%d agreed before)", name, run, k, agreedBefore)
		case bad >= 0 && pl.batch[k] >= bad:
			t.Errorf("%s: %s (batch %d) left to the model after a key disagreed in batch %d", name, k, pl.batch[k], bad)
		}
		exact += est[k]
		if est[k] != mem[k] {
			wrong++
			slack += mem[k] - est[k]
		}
	}
	if got != exact {
		t.Errorf("%s: %d bytes; MEMORY USAGE where sent and the model elsewhere give %d", name, got, exact)
	}
	off := math.Abs(float64(got-want)) / float64(want)
	t.Logf("%s: %d keys, %d modelled, %d of them off by %d bytes before a disagreement was read; %d bytes, MEMORY USAGE says %d (%.2f%% off)",
		name, len(keys), modelled, wrong, slack, got, want, 100*off)
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

// deepData writes n JSON strings of each of two templates, as SET stores
// them, except that one key in oddEvery of the second is grown by APPEND
// (a raw string with room to grow: MEMORY USAGE above the model's).
func deepData(t *testing.T, c *redis.Client, n, oddEvery int) map[string]string {
	t.Helper()
	ctx := context.Background()
	tmpl := map[string]string{}
	p := c.Pipeline()
	for i := range n {
		k := fmt.Sprintf("cache:product:detail:p%d", i)
		tmpl[k] = "cache:product:detail:{productNo}"
		p.Set(ctx, k, fmt.Sprintf(`{"productNo":"p%d","title":"%s","price":%d}`, i, strings.Repeat("t", i%120), i), 6*time.Hour)
		k = fmt.Sprintf("auth:code:a%d", i)
		tmpl[k] = "auth:code:{account}"
		v := fmt.Sprintf(`{"code":"c%d","pad":"%s"}`, i, strings.Repeat("p", i%90))
		if i%oddEvery == oddEvery/2 {
			p.Set(ctx, k, v[:8], 5*time.Minute)
			p.Append(ctx, k, v[8:])
		} else {
			p.Set(ctx, k, v, 5*time.Minute)
		}
		if i%1000 == 999 {
			if _, err := p.Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	return tmpl
}

// Past deepTrust agreeing keys a template sends MEMORY USAGE for one key
// in verifyDeep, and the safeguards hold as before: a template whose keys
// all agree gets the longer interval, one with a key in 2,000 that Redis
// holds otherwise (found, depending on SCAN's order, before or after the
// interval grew) falls back to MEMORY USAGE for every later key, and both
// templates' bytes stay within 1% of MEMORY USAGE.
func TestModelDeepTrust(t *testing.T) {
	n := 12000 // deepTrust is reached after about 7,700 keys of a template
	reg := testRegistry(t)
	s := redistest.Start(t)
	c := s.Client(t)
	ctx := context.Background()
	tmpl := deepData(t, c, n, 2000)
	mem := memoryByKey(t, c, tmpl)
	want := memoryByTemplate(t, c, tmpl)
	est := modelledBytes(t, c, tmpl)

	logEveryCommand(t, c)
	res, err := Run(ctx, reg, standalone(s), Options{Count: 500})
	if err != nil {
		t.Fatal(err)
	}
	pl := readProbeLog(t, c, tmpl)
	if !res.Complete || res.Report.Summary.Keys != int64(len(tmpl)) {
		t.Fatalf("complete %v keys %d, want %d", res.Complete, res.Report.Summary.Keys, len(tmpl))
	}
	got := groupBytes(res.Report)
	for name, w := range want {
		checkModelSafeguards(t, name, pl, mem, est, got[name], w)
		if off := math.Abs(float64(got[name]-w)) / float64(w); off > 0.01 {
			t.Errorf("%s: %d bytes, MEMORY USAGE says %d (%.2f%% off)", name, got[name], w, 100*off)
		}
	}
	clean := "cache:product:detail:{productNo}"
	if got[clean] != want[clean] {
		t.Errorf("%s: %d bytes, MEMORY USAGE says %d, and the model is exact for every key", clean, got[clean], want[clean])
	}
	// deepTrust agreed after about trustAfter + (deepTrust-trustAfter) *
	// verifyEvery = 7,744 keys, and checks are read a batch or two after
	// their keys: from the 9,000th key of the clean template on, one in
	// verifyDeep sends MEMORY USAGE (about 94 of the last 3,000, where one
	// in verifyEvery would be 375).
	keys := pl.order[clean]
	calls, late := 0, 0
	for i, k := range keys {
		if _, sent := pl.memBatch[k]; sent {
			calls++
			if i >= 9000 {
				late++
			}
		}
	}
	if last := len(keys) - 9000; late > last/16 {
		t.Errorf("%s: MEMORY USAGE sent for %d of its last %d keys, want about one in %d", clean, late, last, verifyDeep)
	}
	t.Logf("%s: MEMORY USAGE for %d of %d keys, %d of the last %d", clean, calls, n, late, len(keys)-9000)
}

// The verification interval of a template: none left to the model before
// trustAfter keys agreed, one in verifyEvery verified, one in verifyDeep
// once deepTrust agreed, none left to it once one disagreed.
func TestMemTrustInterval(t *testing.T) {
	tp := &tmpl{}
	for i := range trustAfter {
		if skipMemory(tp, true) {
			t.Fatalf("key %d left to the model before trustAfter agreed", i)
		}
		check(tp, 100, 148)
	}
	if skipMemory(&tmpl{mem: tp.mem}, false) {
		t.Fatal("a key whose value was not read left to the model")
	}
	sent := func(keys int) int {
		n := 0
		for range keys {
			if !skipMemory(tp, true) {
				n++
				check(tp, 100, 148)
			}
		}
		return n
	}
	if n := sent(800); n != 800/verifyEvery {
		t.Errorf("after trust: %d of 800 keys verified, want %d", n, 800/verifyEvery)
	}
	for tp.mem.checked < deepTrust {
		sent(1)
	}
	if n := sent(3200); n != 3200/verifyDeep {
		t.Errorf("past deepTrust: %d of 3200 keys verified, want %d", n, 3200/verifyDeep)
	}
	check(tp, 100, 180) // one disagrees
	for i := range 100 {
		if skipMemory(tp, true) {
			t.Fatalf("key %d after a disagreement left to the model", i)
		}
	}
	if _, ok := modelBytes(tp, 100); ok {
		t.Error("the model still gives bytes after a disagreement")
	}
}

// letters names family i with letters alone (digits would be a
// placeholder's value, folding the families into one).
func letters(i int) string {
	b := []byte("fam")
	for ; ; i /= 26 {
		b = append(b, byte('a'+i%26))
		if i < 26 {
			return string(b)
		}
	}
}

// A legacy keyspace of many small families (a dozen keys each, never
// trustAfter of them): the model is trusted by the prior, over the keys of
// all of them, so most keys send no MEMORY USAGE, and every group's bytes
// are still what MEMORY USAGE says. A family of strings grown by APPEND
// (its first key is always checked) is measured key by key, and stops
// the prior for the families after it.
func TestSmallFamiliesModelled(t *testing.T) {
	fams, per := 1200, 12
	if testing.Short() {
		fams = 400
	}
	reg := testRegistry(t)
	s := redistest.Start(t)
	c := s.Client(t)
	ctx := context.Background()
	chk := reg.NewChecker()
	fill := func(from, to int, appended bool) map[string]string {
		fam := map[string]string{}
		p := c.Pipeline()
		for f := from; f < to; f++ {
			for j := range per {
				k := fmt.Sprintf("%s:obj:%d", letters(f), j)
				fam[k] = chk.Infer(k)
				switch {
				case appended:
					p.Set(ctx, k, "a", 0)
					p.Append(ctx, k, strings.Repeat("p", 30+j)) // raw, with room to grow
				case j%3 == 0:
					p.Set(ctx, k, f*7919+j, 0) // an integer
				case j%3 == 1:
					p.Set(ctx, k, fmt.Sprintf("v-%d-%d", f, j), 0) // embedded
				default:
					p.Set(ctx, k, strings.Repeat("r", 45+(f+j)%200), 0) // raw
				}
			}
		}
		if _, err := p.Exec(ctx); err != nil {
			t.Fatal(err)
		}
		return fam
	}
	audit := func(fam map[string]string) {
		t.Helper()
		bytes := memoryByTemplate(t, c, fam) // before the audit's command counts
		checkFamilies(t, auditFamilies(t, s, c, fam), nil, bytes)
	}
	fam := fill(0, fams, false)
	audit(fam)
	mem := commandCalls(t, c, "memory|usage")
	t.Logf("MEMORY USAGE sent %d times for %d keys", mem, len(fam))
	if mem*2 > int64(len(fam)) {
		t.Errorf("MEMORY USAGE sent %d times for %d keys of %d families: the small families were not modelled", mem, len(fam), fams)
	}
	if mem < int64(fams) {
		t.Errorf("MEMORY USAGE sent %d times: fewer than one per family (%d)", mem, fams)
	}

	// One family in ten of strings grown by APPEND.
	for k, v := range fill(fams, fams+fams/10, true) {
		fam[k] = v
	}
	audit(fam)
}
