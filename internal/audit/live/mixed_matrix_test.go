package live

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/keyguard/keyguard/internal/audit/inventory"
	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/redistest"
	"github.com/keyguard/keyguard/registry"
)

// matrixOther is a second owner's template whose fields land in some
// promo values, at one rate.
type matrixOther struct {
	tmpl, prefix string
	fields       []string
	count        func(size int) int // promo values holding its fields
}

func atLeastOne(size, pct int) int { return max(1, size*pct/100) }

var matrixOthers = []matrixOther{
	{"order:coupon:{id:int}", "order:coupon:", []string{"couponAmount", "promoTotal"}, func(int) int { return 1 }},
	{"user:profile:{id:int}", "user:profile:", []string{"nick", "avatar"}, func(s int) int { return atLeastOne(s, 1) }},
	{"pay:bill:{id:int}", "pay:bill:", []string{"payChannel", "paidAt"}, func(s int) int { return atLeastOne(s, 5) }},
	{"cart:box:{id:int}", "cart:box:", []string{"cartItems", "cartTotal"}, func(s int) int { return atLeastOne(s, 30) }},
}

// The promo templates' own optional fields, at the same rates.
var matrixOptional = [][]string{{"remark"}, {"endTime"}, {"limitPerUser", "memberOnly"}, {"tag"}}

// TestMixedSchemaMatrix plants, in promo templates of 20, 500, 5,000 and
// 200,000 values, a second owner's fields in one key, 1%, 5% and 30% of
// the values, and the template's own optional fields at the same rates.
// Live and from an RDB, every planted conflict is a mixed-schema finding
// naming the other template, and nothing else is one.
func TestMixedSchemaMatrix(t *testing.T) {
	sizes := map[string]int{"promo:s20:": 20, "promo:s500:": 500, "promo:s5k:": 5_000, "promo:s200k:": 200_000}
	reg, err := registry.Load("testdata/mixed_matrix.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := redistest.Start(t)
	c := s.Client(t)
	ctx := context.Background()
	p := c.Pipeline()
	flush := func(force bool) {
		if p.Len() >= 5000 || force && p.Len() > 0 {
			if _, err := p.Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The other owners' own keys: their fields in every value, beside a
	// field every writer writes.
	for _, o := range matrixOthers {
		for i := range 40 {
			args := []any{"updatedAt", i}
			for _, f := range o.fields {
				args = append(args, f, i)
			}
			p.HSet(ctx, fmt.Sprint(o.prefix, i), args...)
		}
	}
	want := map[string]string{}     // key → the template its mixed-schema finding must name
	wantCount := map[string]int64{} // promo prefix → conflicts planted
	var total int64
	for prefix, size := range sizes {
		next, last := 0, size-1
		conflict := map[int]int{} // value index → matrixOthers index
		optional := map[int]int{} // value index → matrixOptional index
		for j, o := range matrixOthers {
			for range o.count(size) {
				conflict[next] = j
				next++
			}
			for range o.count(size) {
				optional[last] = j
				last--
			}
		}
		if next > last+1 {
			t.Fatalf("%s: %d conflicts and %d optional values overlap in %d values", prefix, next, size-1-last, size)
		}
		wantCount[prefix] = int64(next)
		total += int64(next)
		for i := range size {
			k := fmt.Sprint(prefix, i)
			args := []any{"activityId", i, "discountType", 1, "discountValue", 50, "updatedAt", i}
			if j, ok := conflict[i]; ok {
				for _, f := range matrixOthers[j].fields {
					args = append(args, f, 1)
				}
				want[k] = matrixOthers[j].tmpl
			}
			if j, ok := optional[i]; ok {
				for _, f := range matrixOptional[j] {
					args = append(args, f, 1)
				}
			}
			p.HSet(ctx, k, args...)
			flush(false)
		}
	}
	flush(true)

	// Every finding listed: the budget of keys kept is the only cap left.
	inv := inventory.Options{MaxFindings: 1_000_000}
	live, err := Run(ctx, reg, standalone(s), Options{Inventory: inv})
	if err != nil {
		t.Fatal(err)
	}
	for name, rep := range map[string]*report.Report{"live": live.Report, "rdb": dumpReport(t, s, reg, inv)} {
		checkMatrix(t, name, rep, want, wantCount, total)
	}
}

func checkMatrix(t *testing.T, name string, rep *report.Report, want map[string]string, wantCount map[string]int64, total int64) {
	t.Helper()
	if got := rep.Summary.ByRule["mixed-schema"]; got != total {
		t.Errorf("%s: %d mixed-schema findings, want the %d planted", name, got, total)
	}
	if n := rep.Summary.ByRule["schema"]; n != 0 {
		t.Errorf("%s: %d schema findings on templates that declare no fields", name, n)
	}
	listed := map[string]int64{}
	bad := 0
	for _, f := range rep.Findings {
		if f.Rule != "mixed-schema" {
			continue
		}
		tmpl, ok := want[f.Key]
		switch {
		case !ok:
			t.Errorf("%s: false positive on %s: %s", name, f.Key, f.Message)
			bad++
		case !strings.Contains(f.Message, "writes in "+tmpl+" "):
			t.Errorf("%s: %s names the wrong template (want %s): %s", name, f.Key, tmpl, f.Message)
			bad++
		}
		for prefix := range wantCount {
			if strings.HasPrefix(f.Key, prefix) {
				listed[prefix]++
			}
		}
		if bad > 10 {
			t.Fatalf("%s: more than 10 wrong findings", name)
		}
	}
	// Conflicts in sets of up to 1,000 values are listed key by key; the
	// 30% sets of the largest templates are counted only.
	for prefix, n := range wantCount {
		if listed[prefix] == 0 || listed[prefix] > n {
			t.Errorf("%s: %s: %d mixed-schema findings listed, want 1..%d", name, prefix, listed[prefix], n)
		}
	}
	for _, small := range []string{"promo:s20:", "promo:s500:"} {
		if listed[small] != wantCount[small] {
			t.Errorf("%s: %s: %d of the %d conflicts listed", name, small, listed[small], wantCount[small])
		}
	}
}
