package inventory_test

import (
	"fmt"
	"math/rand/v2"
	stdslices "slices"
	"strings"
	"testing"
	"time"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/audit/inventory"
	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/registry"
)

const piiRegistry = `version: 1
domains:
  user:  {owner: user-team}
  order: {owner: order-team}
  msg:   {owner: msg-team}
  sess:  {owner: auth-team}
  rate:  {owner: auth-team}
  kyc:   {owner: risk-team}
  tel:   {owner: risk-team}
keys:
  - {key: "user:profile:{id:int}:base", type: string, ttl: 1h}
  - {key: "order:order:{orderId:int}:status", type: string, ttl: 1h}
  - {key: "order:bill:{billNo:int}", type: string, ttl: 1h}
  - {key: "msg:snow:{sid:int}", type: string, ttl: 1h}
  - {key: "sess:tok:{t:hex}", type: string, ttl: 1h}
  - {key: "rate:login:{who}", type: string, ttl: 1h}
  - {key: "rate:order:{ref}", type: string, ttl: 1h}
  - {key: "kyc:doc:{no:int}", type: string, ttl: 1h, pii: allow}
  - {key: "tel:h:{phone:hash}", type: string, ttl: 1h}
`

// piiData makes planted personal data and look-alike identifiers.
type piiData struct{ r *rand.Rand }

func (d piiData) digits(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('0' + d.r.IntN(10))
	}
	return string(b)
}

func (d piiData) mobile() string {
	return "1" + string(byte('3'+d.r.IntN(7))) + d.digits(9)
}

func (d piiData) idCard() string {
	body := fmt.Sprintf("%06d%04d%02d%02d%03d", 110000+d.r.IntN(90000), 1950+d.r.IntN(60), 1+d.r.IntN(12), 1+d.r.IntN(28), d.r.IntN(1000))
	weights := []int{7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2}
	sum := 0
	for i, w := range weights {
		sum += int(body[i]-'0') * w
	}
	return body + string("10X98765432"[sum%11])
}

func (d piiData) card() string {
	body := []string{"4", "51", "62"}[d.r.IntN(3)]
	body += d.digits(15 - len(body))
	for c := byte('0'); c <= '9'; c++ {
		if luhnOK(body + string(c)) {
			return body + string(c)
		}
	}
	panic("no check digit")
}

func luhnOK(s string) bool {
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

// Personal data planted in typed and free placeholders is found key by
// key, with one note per placeholder and kind; order numbers (counted up,
// 11 to 19 digits, or random), snowflake IDs of 18 and 19 digits and hex
// tokens beside them are not; pii: allow and {x:hash} are silent.
func TestPIIByEvidence(t *testing.T) {
	reg, err := registry.Parse("pii.yaml", []byte(piiRegistry))
	if err != nil {
		t.Fatal(err)
	}
	d := piiData{rand.New(rand.NewPCG(23, 5))}
	agg := inventory.New(reg, inventory.Options{})
	want := map[string]bool{}
	put := func(key string, planted bool) {
		add(agg, rec(key, typ("string")))
		if planted {
			want[key] = true
		}
	}
	for i := range 10_000 {
		put(fmt.Sprintf("user:profile:%d:base", i+1), false)
	}
	for range 12 {
		put("user:profile:"+d.mobile()+":base", true)
	}
	for range 3 {
		put("user:profile:"+d.idCard()+":base", true)
		put("user:profile:"+d.card()+":base", true)
	}
	for i := range 5_000 {
		put(fmt.Sprintf("order:order:%d:status", 13800000000+i), false)      // mobile-shaped, counted up
		put(fmt.Sprintf("order:order:%d:status", 20231201000000+i*7), false) // 14 digits
		put(fmt.Sprintf("order:bill:%s", d.digits(10+i%10)), false)          // 10 to 19 random digits
		ts := uint64(1_700_000_000_000+i*1000) - 1_288_834_974_657
		put(fmt.Sprintf("msg:snow:%d", ts<<22|uint64(i%1024)<<12|uint64(i%4096)), false) // 19 digits
		put(fmt.Sprintf("msg:snow:%d", uint64(300_000_000_000_000_000)+uint64(i)*7919), false)
		put(fmt.Sprintf("sess:tok:%016x", d.r.Uint64()), false)
		put(fmt.Sprintf("sess:tok:%011x", d.r.Uint64()>>20), false)
		put(fmt.Sprintf("rate:order:1%s", d.digits(10)), false) // 11-digit order numbers, random
		put(fmt.Sprintf("rate:login:user_%d", i), false)
	}
	for range 5 {
		put("rate:login:"+d.mobile(), true)
		put("kyc:doc:"+d.idCard()[:17]+"1", false) // not a valid ID, and pii: allow anyway
		put("kyc:doc:"+d.mobile(), false)
		put("tel:h:"+fmt.Sprintf("%016x", d.r.Uint64()), false)
	}
	for i := range 3 {
		put(fmt.Sprintf("rate:login:u%d.x@example.com", i), true)
	}
	put("rate:login:+14155552671", true)
	put("rate:login:+8613912345678", true)
	rep := agg.Report(meta())
	got := map[string]string{}
	for _, f := range rep.Findings {
		if f.Rule == finding.PII {
			got[f.Key] = f.Message
		}
	}
	var missed, extra []string
	for k := range want {
		if _, ok := got[k]; !ok {
			missed = append(missed, k)
		}
	}
	for k, m := range got {
		if !want[k] {
			extra = append(extra, k+": "+m)
		}
	}
	stdslices.Sort(missed)
	stdslices.Sort(extra)
	if len(missed) > 0 || len(extra) > 0 {
		t.Errorf("personal data missed (%d of %d): %v\nfalse positives (%d): %v", len(missed), len(want), missed, len(extra), extra[:min(len(extra), 10)])
	}
	if n := rep.Summary.ByRule[finding.PII]; n != int64(len(want)) {
		t.Errorf("by_rule pii %d, want %d", n, len(want))
	}
	for _, note := range []string{
		"personal data: {id} of user:profile:{id:int}:base holds mobile numbers in 12 of 10,018 keys",
		"personal data: {id} of user:profile:{id:int}:base holds resident ID numbers in 3 of 10,018 keys",
		"personal data: {id} of user:profile:{id:int}:base holds card numbers in 3 of 10,018 keys",
		"personal data: {who} of rate:login:{who} holds e-mail addresses in 3 of 5,010 keys",
	} {
		if !stdslices.Contains(rep.Notes, note) {
			t.Errorf("no note %q in %q", note, rep.Notes)
		}
	}
	for k, m := range got {
		if strings.Contains(m, k[strings.LastIndexByte(k, ':')+1:]) && !strings.Contains(k, "@") {
			t.Errorf("the message repeats the datum in clear: %s", m)
			break
		}
	}
}

// Past the keys a placeholder keeps, which keys get a finding must not
// depend on the order they arrive in (the parts of a file, a Cluster's
// nodes) nor on a merge: the smallest are kept.
func TestPIIKeptKeysDoNotDependOnOrder(t *testing.T) {
	reg, err := registry.Parse("pii.yaml", []byte(piiRegistry))
	if err != nil {
		t.Fatal(err)
	}
	d := piiData{rand.New(rand.NewPCG(3, 4))}
	seen := map[string]bool{}
	var keys []string
	for len(keys) < 2500 {
		k := "user:profile:" + d.mobile() + ":base"
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	run := func(order []string) map[string]string {
		agg := inventory.New(reg, inventory.Options{})
		for _, k := range order {
			add(agg, rec(k, typ("string")))
		}
		return piiKeys(agg.Report(meta()))
	}
	sorted := stdslices.Sorted(stdslices.Values(keys))
	want := map[string]bool{}
	for _, k := range sorted[:1000] {
		want[k] = true
	}
	checkPII(t, "as written", run(keys), want)
	reversed := stdslices.Clone(keys)
	stdslices.Reverse(reversed)
	checkPII(t, "reversed", run(reversed), want)
	rd := rand.New(rand.NewPCG(5, 6))
	shuffled := stdslices.Clone(keys)
	rd.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	checkPII(t, "shuffled", run(shuffled), want)

	halves := [2]*inventory.Aggregator{inventory.New(reg, inventory.Options{}), inventory.New(reg, inventory.Options{})}
	for i, k := range shuffled {
		add(halves[i%2], rec(k, typ("string")))
	}
	var reps []*report.Report
	for i, h := range halves {
		m := meta()
		m.StartedAt = m.StartedAt.Add(time.Duration(i) * time.Hour)
		reps = append(reps, reread(t, h.Report(m)))
	}
	merged, err := inventory.MergeReports(reg, reps, []string{"a.json", "b.json"})
	if err != nil {
		t.Fatal(err)
	}
	checkPII(t, "merged", piiKeys(merged), want)
}
