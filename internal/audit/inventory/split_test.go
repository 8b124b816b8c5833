package inventory_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/keyguard/keyguard/internal/audit/inventory"
	"github.com/keyguard/keyguard/internal/audit/report"
)

// TestReportDoesNotDependOnTheSplit feeds one keyspace to 1, 2, 3 and 5
// aggregators, its keys shuffled and dealt to them at random or in runs,
// merged in any order, as keyguard rdb does when it runs more than one
// aggregator: the report is the same byte for byte, the field censuses'
// counts included. The keyspace has a template and families whose values
// mostly hold no field names (one in seven does), none, all, and names
// only after their first 40 values, and more families whose values hold
// names than get a census.
func TestReportDoesNotDependOnTheSplit(t *testing.T) {
	reg := loadReg(t)
	var ks fieldKeyspace
	add := ks.add
	n := 1400
	if testing.Short() {
		n = 700
	}
	for i := range n {
		if i%7 == 0 {
			add(rec(fmt.Sprintf("promo:sku:%d", i)), "price", "stock")
			add(rec(fmt.Sprintf("legacy:blob:%d", i), typ("string")), "a", "b")
		} else {
			add(rec(fmt.Sprintf("promo:sku:%d", i)))
			add(rec(fmt.Sprintf("legacy:blob:%d", i), typ("string")))
		}
		add(rec(fmt.Sprintf("user:%d:profile", i)), "name", "age", []string{"city", "zip", "mail"}[i%3])
		add(rec(fmt.Sprintf("plain:tok:%d", i), typ("string")))
		if i < 2*maxCensuses { // more families with names than get a census, 5 keys each
			fam := fmt.Sprintf("f%c%c:item:", 'a'+i/26, 'a'+i%26)
			add(rec(fam+strconv.Itoa(i)), "x", "y")
			for j := range 4 {
				add(rec(fam+strconv.Itoa(n+j)), "x", []string{"y", "z"}[j%2])
			}
		}
		if i < 40 {
			add(rec(fmt.Sprintf("late:item:%d", i)))
		} else {
			add(rec(fmt.Sprintf("late:item:%d", i)), "x", "y")
		}
	}
	opts := inventory.Options{FieldsEveryValue: true}
	// run deals the keyspace, in the order of perm, to k aggregators (at random, or
	// in k runs) and merges them in a random order.
	run := func(k int, rnd *rand.Rand, runs bool) (*report.Report, []byte) {
		aggs := make([]*inventory.Aggregator, k)
		for i := range aggs {
			aggs[i] = inventory.New(reg, opts)
		}
		perm := rnd.Perm(len(ks.rs))
		for j, p := range perm {
			agg := aggs[rnd.IntN(k)]
			if runs {
				agg = aggs[j*k/len(perm)]
			}
			cl := agg.Classify(ks.rs[p].Key)
			r := ks.read(p, cl.Fields)
			agg.Add(&r, cl)
		}
		order := rnd.Perm(k)
		into := aggs[order[0]]
		for _, i := range order[1:] {
			into.Merge(aggs[i])
		}
		rep := into.Report(meta())
		return rep, visibleJSON(t, rep)
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	wantRep, want := run(1, rnd, false)
	for _, w := range []string{"legacy:blob", "fea:item"} {
		if !bytes.Contains(want, []byte(w)) {
			t.Fatalf("no %q in the report", w)
		}
	}
	wantState := stateJSON(t, wantRep)
	for _, k := range []int{1, 2, 3, 5} {
		for try := range 4 {
			rep, got := run(k, rnd, try%2 == 1)
			if string(got) != string(want) {
				t.Errorf("%d aggregators (try %d): the report differs from one aggregator's: %s", k, try, firstDiff(string(want), string(got)))
			}
			if s := stateJSON(t, rep); s != wantState {
				t.Errorf("%d aggregators (try %d): the state differs from one aggregator's: %s", k, try, firstDiff(wantState, s))
			}
		}
	}
}

const maxCensuses = 64 // maxFamilyCensuses

func stateJSON(t *testing.T, rep *report.Report) string {
	t.Helper()
	b, err := json.MarshalIndent(rep.State, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
