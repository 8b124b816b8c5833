package inventory_test

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	stdslices "slices"
	"strings"
	"testing"
	"time"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/audit/inventory"
	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/registry"
)

// piiFamilyData is a keyspace of unregistered keys (only the domains are
// declared) with personal data planted in them, and, beside it, numbers
// that look like personal data one key at a time: order numbers counted
// up from a mobile-shaped start, random 11-digit references (seven in ten
// look like a mobile number), 10- to 19-digit bills, snowflake IDs,
// 16-digit hex tokens that are all digits now and then. The planted keys
// are returned in want.
func piiFamilyData(seed uint64, n int) (keys []string, want map[string]bool) {
	d := piiData{rand.New(rand.NewPCG(seed, 29))}
	want = map[string]bool{}
	put := func(key string, planted bool) {
		keys = append(keys, key)
		if planted {
			want[key] = true
		}
	}
	for i := range n {
		put(fmt.Sprintf("acct:profile:%d:base", i+1), false)
		put(fmt.Sprintf("shop:order:%d:status", 13800000000+i), false) // counted up, mobile-shaped
		put(fmt.Sprintf("shop:bill:%s", d.digits(10+i%10)), false)     // random, 10 to 19 digits
		put(fmt.Sprintf("shop:ref:1%s", d.digits(10)), false)          // random 11 digits
		put(fmt.Sprintf("shop:ref%d", 13900000000+3*i), false)         // glued to a word, counted up
		put(fmt.Sprintf("feed:snow:%d", (uint64(1_700_000_000_000+i*997)-1_288_834_974_657)<<22|uint64(i%1024)<<12), false)
		put(fmt.Sprintf("cart:tok:%016x", d.r.Uint64()), false)
		put(fmt.Sprintf("login:name_%d", i), false)
	}
	for range 12 {
		put("acct:profile:"+d.mobile()+":base", true)
	}
	for range 3 {
		put("acct:profile:"+d.idCard()+":base", true)
		put("pay:card:"+d.card(), true)
		put("kyc:person:"+d.idCard(), true)
	}
	put("login:u"+d.mobile(), true) // a word, then the number
	put("login:tel:+14155552671", true)
	put("login:tel:+8613912345678", true)
	for i := range 3 {
		put(fmt.Sprintf("sess:user:u%d.x@example.com", i), true)
	}
	// Four order numbers counted up: two in each half of a split look
	// like two mobile numbers; the four together are a run.
	for i := range 4 {
		put(fmt.Sprintf("ship:parcel:%d", 15000000000+i), false)
	}
	return keys, want
}

const piiFamilyRegistry = `version: 1
domains:
  acct: {owner: user-team}
  shop: {owner: order-team}
  feed: {owner: feed-team}
  cart: {owner: order-team}
  login: {owner: auth-team}
  pay: {owner: pay-team}
  kyc: {owner: risk-team}
  sess: {owner: auth-team}
  ship: {owner: order-team}
keys:
  - {key: "acct:settings:{id:int}", type: string, ttl: 1h}
`

// piiKeys are the keys of rep's personal-data findings, with their messages.
func piiKeys(rep *report.Report) map[string]string {
	got := map[string]string{}
	for _, f := range rep.Findings {
		if f.Rule == finding.PII {
			got[f.Key] = f.Message
		}
	}
	return got
}

func checkPII(t *testing.T, name string, got map[string]string, want map[string]bool) {
	t.Helper()
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
		t.Errorf("%s: personal data missed (%d of %d): %v\nfalse positives (%d): %v", name, len(missed), len(want), missed, len(extra), extra[:min(len(extra), 10)])
	}
}

// Personal data in unregistered keys is judged as in a template's
// placeholder, with the evidence of the key's family: every planted
// datum is found, the look-alike numbers beside them are not (the rule of
// one key alone flags the counted-up and the random ones).
func TestPIIUnregisteredByEvidence(t *testing.T) {
	reg, err := registry.Parse("pii.yaml", []byte(piiFamilyRegistry))
	if err != nil {
		t.Fatal(err)
	}
	keys, want := piiFamilyData(23, 3000)
	agg := inventory.New(reg, inventory.Options{})
	for _, k := range keys {
		add(agg, rec(k, typ("string")))
	}
	rep := agg.Report(meta())
	got := piiKeys(rep)
	checkPII(t, "one audit", got, want)
	if n := rep.Summary.ByRuleSeverity[finding.PII].Error; n != int64(len(want)) {
		t.Errorf("pii errors %d, want %d", n, len(want))
	}
	for _, note := range []string{
		"personal data: {num} of unregistered keys acct:profile:{num}:base holds mobile numbers in 12 of 3,015 keys",
		"personal data: {num} of unregistered keys acct:profile:{num}:base holds resident ID numbers in 3 of 3,015 keys",
		"personal data: {email} of unregistered keys sess:user:{email:hash} holds e-mail addresses in 3 of 3 keys",
		"personal data: {num} of unregistered keys pay:card:{num} holds card numbers in 3 of 3 keys",
		"personal data: {num} of unregistered keys login:tel:{num} holds international phone numbers in 2 of 2 keys",
	} {
		if !stdslices.Contains(rep.Notes, note) {
			t.Errorf("no note %q in %q", note, rep.Notes)
		}
	}
	for k, m := range got {
		if regexp.MustCompile(`[0-9]{8}`).MatchString(m) {
			t.Errorf("the message repeats the datum in clear: %s", m)
		}
		if f := findingOf(rep, k); f.Template == "" || strings.ContainsAny(f.Template, "0123456789@") && !strings.Contains(f.Template, "{") {
			t.Errorf("%s: template %q", k, f.Template)
		}
	}
	// The rule of one key alone, as check applies it, flags the decoys.
	chk := reg.NewChecker()
	var flagged int
	for _, k := range keys {
		chk.Check(k, func(f finding.Finding) {
			if f.Rule == finding.PII && !want[k] {
				flagged++
			}
		})
	}
	if flagged < 1000 {
		t.Errorf("check flags %d decoys: the data set does not test the evidence", flagged)
	}
}

func findingOf(rep *report.Report, key string) report.Finding {
	for _, f := range rep.Findings {
		if f.Key == key && f.Rule == finding.PII {
			return f
		}
	}
	return report.Finding{}
}

// A data set audited in two halves, the reports written and read back,
// then merged, has the personal-data findings and notes of one audit of
// the whole: the evidence travels in the state. The four counted-up
// parcel numbers look like two mobile numbers in each half; merged they
// are a run again. Resume (FromReport, then more keys) judges the same.
func TestPIIMergeEqualsWhole(t *testing.T) {
	reg, err := registry.Parse("pii.yaml", []byte(piiFamilyRegistry+`  - {key: "user:profile:{id:int}:base", type: string, ttl: 1h}
  - {key: "order:order:{orderId:int}:status", type: string, ttl: 1h}
  - {key: "ship:box:{no:int}", type: string, ttl: 1h}
`))
	if err != nil {
		t.Fatal(err)
	}
	keys, want := piiFamilyData(5, 2000)
	d := piiData{rand.New(rand.NewPCG(9, 9))}
	for i := range 2000 {
		keys = append(keys, fmt.Sprintf("user:profile:%d:base", i+1), fmt.Sprintf("order:order:%d:status", 13700000000+i))
	}
	for range 6 {
		k := "user:profile:" + d.mobile() + ":base"
		keys, want[k] = append(keys, k), true
	}
	for i := range 4 {
		keys = append(keys, fmt.Sprintf("ship:box:%d", 18600000000+i*2)) // a run, split in two
	}
	whole := inventory.New(reg, inventory.Options{})
	halves := [2]*inventory.Aggregator{inventory.New(reg, inventory.Options{}), inventory.New(reg, inventory.Options{})}
	for i, k := range keys {
		add(whole, rec(k, typ("string")))
		add(halves[i%2], rec(k, typ("string")))
	}
	wrep := whole.Report(meta())
	checkPII(t, "whole", piiKeys(wrep), want)
	var reps []*report.Report
	for i, h := range halves {
		m := meta()
		m.StartedAt = m.StartedAt.Add(time.Duration(i) * time.Hour)
		rep := reread(t, h.Report(m))
		alone := piiKeys(rep)
		if !hasPrefixKey(alone, "ship:parcel:") || !hasPrefixKey(alone, "ship:box:") {
			t.Errorf("half %d alone does not flag the split runs: the test does not test the merge", i)
		}
		reps = append(reps, rep)
	}
	merged, err := inventory.MergeReports(reg, reps, []string{"a.json", "b.json"})
	if err != nil {
		t.Fatal(err)
	}
	checkPII(t, "merged", piiKeys(merged), want)
	if w, m := piiNotes(wrep), piiNotes(merged); !stdslices.Equal(w, m) {
		t.Errorf("notes of the whole %q\nof the merge %q", w, m)
	}
	if w, m := wrep.Summary.ByRuleSeverity[finding.PII], merged.Summary.ByRuleSeverity[finding.PII]; w != m {
		t.Errorf("pii counts: whole %+v, merged %+v", w, m)
	}

	// Resume: the first half's report carried on, the second half added.
	carry, err := inventory.FromReport(reg, reps[0])
	if err != nil {
		t.Fatal(err)
	}
	rest := inventory.New(reg, inventory.Options{})
	for i, k := range keys {
		if i%2 == 1 {
			add(rest, rec(k, typ("string")))
		}
	}
	rest.Merge(carry)
	resumed := rest.Report(meta())
	checkPII(t, "resumed", piiKeys(resumed), want)
	if w, m := piiNotes(wrep), piiNotes(resumed); !stdslices.Equal(w, m) {
		t.Errorf("notes of the whole %q\nof the resumed audit %q", w, m)
	}
}

func hasPrefixKey(m map[string]string, prefix string) bool {
	for k := range m {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}

func piiNotes(rep *report.Report) []string {
	var out []string
	for _, n := range rep.Notes {
		if strings.HasPrefix(n, "personal data") {
			out = append(out, n)
		}
	}
	stdslices.Sort(out)
	return out
}

// A key of a family past the cap of groups (counted in "(other)") is
// still judged with its family's evidence, and its finding names the
// family's form, not "(other)".
func TestPIIUnregisteredPastGroupCap(t *testing.T) {
	reg, err := registry.Parse("pii.yaml", []byte(piiFamilyRegistry))
	if err != nil {
		t.Fatal(err)
	}
	d := piiData{rand.New(rand.NewPCG(1, 2))}
	agg := inventory.New(reg, inventory.Options{MaxGroups: 1})
	add(agg, rec("shop:first:1", typ("string"))) // takes the one group
	want := map[string]bool{}
	for i := range 50 {
		add(agg, rec(fmt.Sprintf("shop:order:%d:status", 13800000000+i), typ("string")))
	}
	for range 3 {
		k := "acct:profile:" + d.mobile() + ":base"
		want[k] = true
		add(agg, rec(k, typ("string")))
	}
	rep := agg.Report(meta())
	checkPII(t, "past the cap", piiKeys(rep), want)
	for k := range want {
		if f := findingOf(rep, k); f.Template != "acct:profile:{num}:base" {
			t.Errorf("%s: template %q", k, f.Template)
		}
	}
}

// Through a Classifier, which hands the inferred values to Add with the
// class, the report is the one of the aggregator's own classification,
// which infers each key again.
func TestPIIUnregisteredThroughClassifier(t *testing.T) {
	reg, err := registry.Parse("pii.yaml", []byte(piiFamilyRegistry))
	if err != nil {
		t.Fatal(err)
	}
	keys, _ := piiFamilyData(23, 3000)
	own := inventory.New(reg, inventory.Options{})
	via := inventory.New(reg, inventory.Options{})
	cls := inventory.NewClassifier(reg, via.FieldHint())
	for _, k := range keys {
		add(own, rec(k, typ("string")))
		via.Add(rec(k, typ("string")), cls.Classify(k))
	}
	a, b := own.Report(meta()), via.Report(meta())
	if ja, jb := visibleJSON(t, a), visibleJSON(t, b); string(ja) != string(jb) {
		t.Errorf("reports differ:\n%s\n%s", ja, jb)
	}
	if len(piiKeys(b)) == 0 {
		t.Error("no personal data found: the test tests nothing")
	}
}
