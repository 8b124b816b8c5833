package inventory_test

import (
	"fmt"
	"testing"

	"github.com/keyguard/keyguard/internal/audit/inventory"
)

// TestFieldHintNeverSaysNoToAnAsk walks hash and JSON-string keys of
// registered templates (and some unregistered ones) the way keyguard rdb
// does: the walker consults the hint, the aggregator decides. Every key
// the aggregator asks for must have been a yes of the hint, including a
// hint read before the aggregator caught up (lag); and once the samples
// are full the hint must say no to most keys, or it saves nothing.
func TestFieldHintNeverSaysNoToAnAsk(t *testing.T) {
	reg := loadReg(t)
	for _, lag := range []int{0, 1, 64} {
		agg := inventory.New(reg, inventory.Options{})
		cls := inventory.NewClassifier(reg, agg.FieldHint())
		var rs []*inventory.Record
		for i := range 6000 {
			switch i % 4 {
			case 0:
				rs = append(rs, rec(fmt.Sprintf("order:order:%d:base", i), typ("hash")))
			case 1:
				rs = append(rs, rec(fmt.Sprintf("cache:product:detail:p%d", i), typ("string")))
			case 2:
				rs = append(rs, rec(fmt.Sprintf("promo:order:%d:promo-info", i), typ("hash"))) // guarded
			default:
				rs = append(rs, rec(fmt.Sprintf("legacy_cart_%d_items", i), typ("hash")))
			}
		}
		said := make([]bool, len(rs))
		yes, no := 0, 0
		add := func(i int) {
			r := rs[i]
			cl := agg.Classify(r.Key)
			if cl.Fields {
				if !said[i] {
					t.Fatalf("lag %d: asked for %q after the hint said no", lag, r.Key)
				}
				r.Fields = []string{"a", "b", "c" + string(rune('a'+i%26)) + string(rune('a'+i/26%5))} // more field sets than a census keeps
			}
			agg.Add(r, cl)
		}
		for i, r := range rs {
			said[i] = cls.Classify(r.Key).Fields
			if i >= 2000 && i%4 < 3 {
				if said[i] {
					yes++
				} else {
					no++
				}
			}
			if i >= lag {
				add(i - lag)
			}
		}
		for i := len(rs) - lag; i < len(rs); i++ {
			add(i)
		}
		if no < 10*yes {
			t.Errorf("lag %d: once the censuses gave up, the hint said yes %d times and no %d times", lag, yes, no)
		}
	}
}
