package live

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/audit/inventory"
	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/redistest"
	"github.com/keyguard/keyguard/registry"
)

// Personal data planted in unregistered keys of a real server is found,
// live and from its RDB, key by key, judged by the evidence of each
// inferred family; the counted-up and random order numbers, snowflake IDs
// and hex tokens beside it, which the rule of one key alone flags, are
// not.
func TestPIIUnregisteredLiveAndRDB(t *testing.T) {
	reg, err := registry.Parse("pii.yaml", []byte(`version: 1
domains:
  acct: {owner: user-team}
  shop: {owner: order-team}
  feed: {owner: feed-team}
  cart: {owner: order-team}
  login: {owner: auth-team}
  pay: {owner: pay-team}
  sess: {owner: auth-team}
keys:
  - {key: "acct:settings:{id:int}", type: string, ttl: 1h}
`))
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(17, 3))
	digits := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('0' + r.IntN(10))
		}
		return string(b)
	}
	mobile := func() string { return "1" + string(byte('3'+r.IntN(7))) + digits(9) }
	s := redistest.Start(t)
	c := s.Client(t)
	ctx := context.Background()
	p := c.Pipeline()
	want := map[string]bool{}
	var decoys int
	put := func(k string, planted bool) {
		p.Set(ctx, k, "v", time.Hour)
		if planted {
			want[k] = true
		}
	}
	for i := range 3000 {
		put(fmt.Sprintf("acct:profile:%d:base", i+1), false)
		put(fmt.Sprintf("shop:order:%d:status", 13900000000+i), false) // counted up, mobile-shaped
		put(fmt.Sprintf("shop:ref:1%s", digits(10)), false)            // random 11 digits
		put(fmt.Sprintf("shop:bill:%s", digits(10+i%10)), false)       // random, 10 to 19 digits
		ts := uint64(1_700_000_000_000+i*997) - 1_288_834_974_657
		put(fmt.Sprintf("feed:snow:%d", ts<<22|uint64(i%1024)<<12), false)
		put(fmt.Sprintf("cart:tok:%016x", r.Uint64()), false)
		decoys += 5
	}
	for range 12 {
		put("acct:profile:"+mobile()+":base", true)
	}
	for range 2 {
		put("pay:card:"+withCheck("4"+digits(14), luhnValid), true)
		put("acct:profile:"+residentID(fmt.Sprintf("3201%02d19%02d0%d1%d%s", r.IntN(20), 50+r.IntN(40), 1+r.IntN(9), 1+r.IntN(2), digits(3)))+":base", true)
	}
	put("sess:user:li.lei@example.com", true)
	put("login:tel:+8613712345678", true)
	put("login:u"+mobile(), true)
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	live, err := Run(ctx, reg, standalone(s), Options{})
	if err != nil {
		t.Fatal(err)
	}
	snap := dumpReport(t, s, reg, inventory.Options{})
	// The rule of one key alone flags decoys here: the data set tests
	// the evidence.
	chk := reg.NewChecker()
	flagged := 0
	for _, k := range []string{"shop:order:13900000001:status", "shop:order:13900000002:status"} {
		chk.Check(k, func(f finding.Finding) {
			if f.Rule == finding.PII {
				flagged++
			}
		})
	}
	if flagged != 2 {
		t.Fatalf("check flags %d of 2 counted-up order numbers", flagged)
	}
	for name, rep := range map[string]*report.Report{"live": live.Report, "rdb": snap} {
		var missed, extra []string
		got := map[string]bool{}
		for _, f := range rep.Findings {
			if f.Rule != finding.PII {
				continue
			}
			got[f.Key] = true
			if !want[f.Key] {
				extra = append(extra, f.Key+": "+f.Message)
			}
		}
		for k := range want {
			if !got[k] {
				missed = append(missed, k)
			}
		}
		slices.Sort(missed)
		slices.Sort(extra)
		if len(missed) > 0 || len(extra) > 0 {
			t.Errorf("%s: missed %d of %d: %v; false positives %d of %d decoys: %v", name, len(missed), len(want), missed, len(extra), decoys, extra[:min(len(extra), 8)])
		}
		if !slices.Contains(rep.Notes, "personal data: {num} of unregistered keys acct:profile:{num}:base holds mobile numbers in 12 of 3,014 keys") {
			t.Errorf("%s: notes %q", name, rep.Notes)
		}
	}
}
