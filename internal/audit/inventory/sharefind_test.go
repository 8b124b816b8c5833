package inventory_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/keyguard/keyguard/internal/audit/inventory"
)

// TestPipelineFindingsDoNotDependOnTheAggregators: a pipeline's
// aggregators share one findings list per rule, cut at MaxFindings; the
// findings listed and their counts are one aggregator's, byte for byte,
// whatever the number of aggregators and the order of the batches, also
// with a partial run's aggregator merged in afterwards. Many keys share
// a size, so that the lists are cut among equals.
func TestPipelineFindingsDoNotDependOnTheAggregators(t *testing.T) {
	reg := loadReg(t)
	rng := rand.New(rand.NewPCG(21, 22))
	var recs []inventory.Record
	for i := range 4000 {
		var r *inventory.Record
		switch i % 4 {
		case 0:
			r = rec(fmt.Sprintf("order:order:%d:base", i)) // no TTL
		case 1:
			r = rec(fmt.Sprintf("legacy%d:item:%d", i%11, i), typ("string")) // unregistered, domain
		case 2:
			r = rec(fmt.Sprintf("Bad_Key-%d", i), typ("string")) // naming
		default:
			r = rec(fmt.Sprintf("cache:product:detail:p%d", i), typ("string"))
		}
		r.Bytes, r.DB = 100+int64(rng.IntN(5))*25, rng.IntN(2)
		if i%5 == 0 {
			r.TTL = time.Duration(1+rng.IntN(100)) * time.Minute
		}
		recs = append(recs, *r)
	}
	rng.Shuffle(len(recs), func(i, j int) { recs[i], recs[j] = recs[j], recs[i] })
	opts := inventory.Options{MaxFindings: 60, TopKeys: 20, HotKeys: 10}
	findings := func(a *inventory.Aggregator) string {
		rep := a.Report(meta())
		b, err := json.Marshal(struct {
			F any
			O any
			S any
		}{rep.Findings, rep.FindingsOmitted, rep.Summary.ByRuleSeverity})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	one := inventory.New(reg, opts)
	for i := range recs {
		one.Add(&recs[i], one.Classify(recs[i].Key))
	}
	oneRep := one.Report(meta())
	want := findings(one)
	cut := 0
	for _, n := range oneRep.FindingsOmitted {
		if n > 0 {
			cut++
		}
	}
	if cut < 3 {
		t.Fatalf("%d rules cut at %d findings: the test tests less than it says (%v)", cut, opts.MaxFindings, oneRep.Summary.ByRule)
	}
	carry := inventory.New(reg, opts)
	for i := range 200 {
		r := rec(fmt.Sprintf("legacy%d:item:c%d", i%3, i), typ("string"), size(150+int64(i%2)*25, 0))
		carry.Add(r, carry.Classify(r.Key))
	}
	oneCarry := inventory.New(reg, opts)
	for i := range recs {
		oneCarry.Add(&recs[i], oneCarry.Classify(recs[i].Key))
	}
	oneCarry.Merge(carry)
	wantCarry := findings(oneCarry)
	if wantCarry == want {
		t.Fatal("the carried keys change no finding: the test tests less than it says")
	}
	for _, workers := range []int{1, 2, 4} {
		for try := range 3 {
			agg := shuffledPipeline(reg, opts, workers, recs, 32, rng)
			if got := findings(agg); got != want {
				t.Errorf("%d aggregators (try %d): the findings differ from one aggregator's: %s", workers, try, firstDiff(want, got))
			}
			agg.Merge(carry)
			if got := findings(agg); got != wantCarry {
				t.Errorf("%d aggregators (try %d), a partial run merged: the findings differ from one aggregator's: %s", workers, try, firstDiff(wantCarry, got))
			}
		}
	}
}
