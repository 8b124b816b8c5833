package inventory_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/audit/inventory"
	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/registry"
)

// TestPipelineListsDoNotDependOnTheAggregators sends one keyspace to a
// pipeline of 1, 2 and 4 aggregators, which share one top list and one
// hot list, in batches in a shuffled order: the top keys, the hot-key
// findings and the saved hot list are one aggregator's, byte for byte.
// Many keys share one size and one counter, and keys come two or three
// times, at one size with other TTLs, element counts and nodes (which of
// two such offers is kept must not depend on which aggregator saw it
// first), and larger and smaller.
func TestPipelineListsDoNotDependOnTheAggregators(t *testing.T) {
	reg := loadReg(t)
	rng := rand.New(rand.NewPCG(11, 12))
	keys := 6000
	if testing.Short() {
		keys = 3000
	}
	var recs []inventory.Record
	for i := range keys {
		var r *inventory.Record
		switch i % 3 {
		case 0:
			r = rec(fmt.Sprintf("order:order:%d:base", i))
		case 1:
			r = rec(fmt.Sprintf("cache:product:detail:p%d", i), typ("string"))
		default:
			r = rec(fmt.Sprintf("fam%d:item:%d", i%7, i), typ("string"))
		}
		r.Bytes, r.Elements, r.Freq, r.DB = 100+int64(rng.IntN(4))*50, int64(rng.IntN(3)), rng.IntN(6)*10, rng.IntN(2)
		recs = append(recs, *r)
		for range rng.IntN(3) {
			d := *r
			d.TTL = time.Duration(rng.IntN(3)) * time.Minute
			d.Elements = int64(rng.IntN(3))
			d.Node = []string{"127.0.0.1:6379", "127.0.0.1:6380"}[rng.IntN(2)]
			if rng.IntN(3) == 0 {
				d.Bytes += int64(rng.IntN(3)-1) * 50
				d.Freq = rng.IntN(6) * 10
			}
			recs = append(recs, d)
		}
	}
	rng.Shuffle(len(recs), func(i, j int) { recs[i], recs[j] = recs[j], recs[i] })
	opts := inventory.Options{TopKeys: 400, HotKeys: 150}
	one := inventory.New(reg, opts)
	for i := range recs {
		one.Add(&recs[i], one.Classify(recs[i].Key))
	}
	wantRep := one.Report(meta())
	want := topAndHotLists(t, wantRep)
	if len(wantRep.TopKeys) != opts.TopKeys || len(wantRep.State.Hot) != opts.HotKeys {
		t.Fatalf("%d top keys, %d hot: the lists are not full, the test tests less than it says", len(wantRep.TopKeys), len(wantRep.State.Hot))
	}
	// A resumed run merges the partial run's aggregator into the
	// pipeline's (live.Run): the shared list handed over takes it in as
	// the aggregator's own list would.
	carry := inventory.New(reg, opts)
	for i := range 300 {
		r := rec(fmt.Sprintf("order:order:c%d:base", i), size(250+int64(i%3)*50, 9), freq(50))
		r.Node = "127.0.0.1:6390"
		carry.Add(r, carry.Classify(r.Key))
	}
	oneCarry := inventory.New(reg, opts)
	for i := range recs {
		oneCarry.Add(&recs[i], oneCarry.Classify(recs[i].Key))
	}
	oneCarry.Merge(carry)
	wantCarry := topAndHotLists(t, oneCarry.Report(meta()))
	if wantCarry == want {
		t.Fatal("the carried keys change no list: the test tests less than it says")
	}
	for _, workers := range []int{1, 2, 4} {
		for try := range 3 {
			agg := shuffledPipeline(reg, opts, workers, recs, 40, rng)
			rep := agg.Report(meta())
			if got := topAndHotLists(t, rep); got != want {
				t.Errorf("%d aggregators (try %d): the lists differ from one aggregator's: %s", workers, try, firstDiff(want, got))
			}
			if w, g := string(visibleJSON(t, wantRep)), string(visibleJSON(t, rep)); w != g {
				t.Errorf("%d aggregators (try %d): the report differs from one aggregator's: %s", workers, try, firstDiff(w, g))
			}
			agg.Merge(carry)
			if got := topAndHotLists(t, agg.Report(meta())); got != wantCarry {
				t.Errorf("%d aggregators (try %d), a partial run merged: the lists differ from one aggregator's: %s", workers, try, firstDiff(wantCarry, got))
			}
		}
	}
}

// shuffledPipeline adds recs to a pipeline of workers aggregators in
// batches of size records, the batches in a random order, and returns
// the pipeline's merged aggregator.
func shuffledPipeline(reg *registry.Registry, opts inventory.Options, workers int, recs []inventory.Record, size int, rng *rand.Rand) *inventory.Aggregator {
	p := inventory.NewPipeline(reg, opts, workers)
	cls := p.Classifier()
	for _, b := range rng.Perm((len(recs) + size - 1) / size) {
		batch := append([]inventory.Record(nil), recs[b*size:min(len(recs), (b+1)*size)]...)
		classes := make([]inventory.Class, len(batch))
		for i := range batch {
			classes[i] = cls.Classify(batch[i].Key)
		}
		p.Add(batch, classes, nil)
	}
	return p.Close()
}

// topAndHotLists is what a report lists of its top and hot keys, as one
// string to compare: the top keys, the hot-key findings and the saved hot
// list.
func topAndHotLists(t *testing.T, rep *report.Report) string {
	t.Helper()
	var hot []report.Finding
	for _, f := range rep.Findings {
		if f.Rule == finding.HotKey {
			hot = append(hot, f)
		}
	}
	b, err := json.Marshal(struct {
		Top   []report.TopKey
		Hot   []report.Finding
		State []report.StateHot
	}{rep.TopKeys, hot, rep.State.Hot})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
