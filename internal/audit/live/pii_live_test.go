package live

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/keyguard/keyguard/internal/audit/inventory"
	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/redistest"
	"github.com/keyguard/keyguard/registry"
)

// withCheck appends the digit that makes body pass check.
func withCheck(body string, check func(string) bool) string {
	for c := byte('0'); c <= '9'; c++ {
		if check(body + string(c)) {
			return body + string(c)
		}
	}
	return body + "X"
}

func luhnValid(s string) bool {
	sum := 0
	for i := range len(s) {
		d := int(s[len(s)-1-i] - '0')
		if i%2 == 1 {
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return sum%10 == 0
}

func residentID(body string) string {
	weights := []int{7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2}
	sum := 0
	for i, w := range weights {
		sum += int(body[i]-'0') * w
	}
	return body + string("10X98765432"[sum%11])
}

// Personal data planted in typed and free placeholders of a real
// server's keys is found, live and from its RDB, key by key; the order
// numbers, snowflake IDs and hex tokens beside it are not.
func TestPIIByEvidenceLiveAndRDB(t *testing.T) {
	reg, err := registry.Parse("pii.yaml", []byte(`version: 1
domains:
  user:  {owner: user-team}
  order: {owner: order-team}
  msg:   {owner: msg-team}
  sess:  {owner: auth-team}
  rate:  {owner: auth-team}
keys:
  - {key: "user:profile:{id:int}:base", type: string, ttl: 1h}
  - {key: "order:order:{orderId:int}:status", type: string, ttl: 1h}
  - {key: "msg:snow:{sid:int}", type: string, ttl: 1h}
  - {key: "sess:tok:{t:hex}", type: string, ttl: 1h}
  - {key: "rate:login:{who}", type: string, ttl: 1h}
`))
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(7, 11))
	digits := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('0' + r.IntN(10))
		}
		return string(b)
	}
	s := redistest.Start(t)
	c := s.Client(t)
	ctx := context.Background()
	p := c.Pipeline()
	want := map[string]bool{}
	put := func(k string, planted bool) {
		p.Set(ctx, k, "v", time.Hour)
		if planted {
			want[k] = true
		}
	}
	for i := range 3000 {
		put(fmt.Sprintf("user:profile:%d:base", i+1), false)
		put(fmt.Sprintf("order:order:%d:status", 13900000000+i), false)
		ts := uint64(1_700_000_000_000+i*997) - 1_288_834_974_657
		put(fmt.Sprintf("msg:snow:%d", ts<<22|uint64(i%1024)<<12), false)
		put(fmt.Sprintf("sess:tok:%016x", r.Uint64()), false)
		put(fmt.Sprintf("rate:login:name_%d", i), false)
	}
	for range 12 {
		put("user:profile:1"+string(byte('3'+r.IntN(7)))+digits(9)+":base", true)
	}
	for range 2 {
		put("user:profile:"+withCheck("4"+digits(14), luhnValid)+":base", true)
		put("user:profile:"+residentID(fmt.Sprintf("3201%02d19%02d0%d1%d%s", r.IntN(20), 50+r.IntN(40), 1+r.IntN(9), 1+r.IntN(2), digits(3)))+":base", true)
	}
	put("rate:login:li.lei@example.com", true)
	put("rate:login:+8613712345678", true)
	put("rate:login:"+"15"+digits(9), true)
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	live, err := Run(ctx, reg, standalone(s), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for name, rep := range map[string]*report.Report{"live": live.Report, "rdb": dumpReport(t, s, reg, inventory.Options{})} {
		var missed, extra []string
		got := map[string]bool{}
		for _, f := range rep.Findings {
			if f.Rule != "pii" {
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
			t.Errorf("%s: missed %d of %d: %v; false positives %d: %v", name, len(missed), len(want), missed, len(extra), extra[:min(len(extra), 8)])
		}
		if !slices.Contains(rep.Notes, "personal data: {id} of user:profile:{id:int}:base holds mobile numbers in 12 of 3,016 keys") {
			t.Errorf("%s: notes %q", name, rep.Notes)
		}
	}
}
