package inventory_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/keyguard/keyguard/internal/audit/inventory"
	"github.com/keyguard/keyguard/internal/audit/report"
)

// TestUniqueKeys: with Options.UniqueKeys (a walk that offers each key
// once, as one RDB file does) the top and hot lists skip looking for a
// key offered twice. A walk of unique keys gives the same lists with and
// without the promise, through pipelines of 1, 2 and 4 aggregators, whose
// shared lists take it from the options; an aggregator that merges
// another's keys (a resumed walk's carried report) no longer holds it,
// and lists a key both saw once.
func TestUniqueKeys(t *testing.T) {
	reg := loadReg(t)
	rng := rand.New(rand.NewPCG(21, 22))
	keys := 6000
	if testing.Short() {
		keys = 3000
	}
	recs := make([]inventory.Record, keys)
	for i := range recs {
		r := rec(fmt.Sprintf("order:order:%d:base", i))
		// Few sizes and counters: most keys tie with the threshold.
		r.Bytes, r.Freq, r.DB = 100+int64(rng.IntN(4))*50, rng.IntN(6)*10, rng.IntN(2)
		recs[i] = *r
	}
	opts := inventory.Options{TopKeys: 400, HotKeys: 150}
	lists := func(rep *report.Report) string {
		seen := map[string]bool{}
		for _, k := range rep.TopKeys {
			id := fmt.Sprintf("%q in database 0", k.Key)
			if k.DB != nil {
				id = fmt.Sprintf("%q in database %d", k.Key, *k.DB)
			}
			if seen[id] {
				t.Errorf("top key %s listed twice", id)
			}
			seen[id] = true
		}
		return topAndHotLists(t, rep)
	}
	add := func(a *inventory.Aggregator, recs []inventory.Record) {
		for i := range recs {
			a.Add(&recs[i], a.Classify(recs[i].Key))
		}
	}
	one := inventory.New(reg, opts)
	add(one, recs)
	wantRep := one.Report(meta())
	want := lists(wantRep)
	if len(wantRep.TopKeys) != opts.TopKeys || len(wantRep.State.Hot) != opts.HotKeys {
		t.Fatalf("%d top keys, %d hot: the lists are not full, the test tests less than it says", len(wantRep.TopKeys), len(wantRep.State.Hot))
	}
	uopts := opts
	uopts.UniqueKeys = true
	for _, workers := range []int{1, 2, 4} {
		p := inventory.NewPipeline(reg, uopts, workers)
		if top, hot := inventory.ListsUnique(p); !top || !hot {
			t.Errorf("%d aggregators: the lists took the promise of unique keys: top %v, hot %v", workers, top, hot)
		}
		cls := p.Classifier()
		const size = 40
		for b := 0; b < len(recs); b += size {
			batch := append([]inventory.Record(nil), recs[b:min(len(recs), b+size)]...)
			classes := make([]inventory.Class, len(batch))
			for i := range batch {
				classes[i] = cls.Classify(batch[i].Key)
			}
			p.Add(batch, classes, nil)
		}
		if got := lists(p.Close().Report(meta())); got != want {
			t.Errorf("%d aggregators with unique keys: the lists differ from one aggregator's without: %s", workers, firstDiff(want, got))
		}
	}

	// The carried keys are keys of the walk, some larger, some smaller:
	// merged into an aggregator that had the promise, each is listed
	// once, at its best offer.
	carried := make([]inventory.Record, 0, keys/2)
	for i := 0; i < keys; i += 2 {
		r := recs[i]
		r.Bytes += int64(rng.IntN(3)-1) * 50
		r.Freq = min(r.Freq+(rng.IntN(3)-1)*10, 255)
		carried = append(carried, r)
	}
	carry := inventory.New(reg, opts)
	add(carry, carried)
	ref := inventory.New(reg, opts)
	add(ref, recs)
	ref.Merge(carry)
	wantCarry := lists(ref.Report(meta()))
	if wantCarry == want {
		t.Fatal("the carried keys change no list: the test tests less than it says")
	}
	u := inventory.New(reg, uopts)
	add(u, recs)
	u.Merge(carry)
	if got := lists(u.Report(meta())); got != wantCarry {
		t.Errorf("unique keys, a partial run merged: the lists differ from one aggregator's without the promise: %s", firstDiff(wantCarry, got))
	}
}
