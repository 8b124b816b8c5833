package inventory_test

import (
	"fmt"
	"testing"

	"github.com/keyguard/keyguard/internal/audit/inventory"
)

// TestFamilyGroupsFoundAgain counts the keys of eight unregistered
// families whose inferred names are all as long, in two databases and
// interleaved, through Classify and Add (the aggregator finds a family's
// group again by the address of its interned name): every group counts
// exactly its own keys, with the families classified both by Classify
// and by a Classifier (names not interned by the aggregator).
func TestFamilyGroupsFoundAgain(t *testing.T) {
	reg := loadReg(t)
	fams := []string{"alpha", "bravo", "delta", "gamma", "kappa", "omega", "sigma", "theta"}
	for _, own := range []bool{true, false} {
		a := inventory.New(reg, inventory.Options{})
		c := inventory.NewClassifier(reg)
		want := map[string]int64{}
		for i := range 5000 {
			f := fams[(i*i+i/3)%len(fams)]
			db := i / 7 % 2
			key := fmt.Sprintf("%s:item:%d", f, i)
			r := rec(key, func(r *inventory.Record) { r.DB = db })
			cl := c.Classify(key)
			if own {
				cl = a.Classify(key)
			}
			a.Add(r, cl)
			want[fmt.Sprintf("%s:item:{id:int} db %d", f, db)]++
		}
		got := map[string]int64{}
		for _, g := range a.Report(meta()).Groups {
			db := 0
			if g.DB != nil {
				db = *g.DB
			}
			got[fmt.Sprintf("%s db %d", g.Name, db)] += g.Keys
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("classified by the aggregator %v: groups\n%v\nwant\n%v", own, got, want)
		}
	}
}
