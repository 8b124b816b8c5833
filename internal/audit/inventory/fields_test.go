package inventory_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/keyguard/keyguard/internal/audit/inventory"
)

// walk feeds records the way a walker does: Classify for every key of a
// batch, then Add for each, with field names only for the keys whose
// class asks for them (value gives them, nil when the value holds none).
// batch 1 is key by key; the live walker classifies a whole SCAN batch
// first. It returns how many keys were asked.
func walk(agg *inventory.Aggregator, rs []*inventory.Record, batch int, value func(*inventory.Record) []string) int {
	asked := 0
	for lo := 0; lo < len(rs); lo += batch {
		b := rs[lo:min(lo+batch, len(rs))]
		cls := make([]inventory.Class, len(b))
		for i, r := range b {
			cls[i] = agg.Classify(r.Key)
			if cls[i].Fields && (r.Type == "hash" || r.Type == "string") {
				asked++
			} else {
				cls[i].Fields = false
			}
		}
		for i, r := range b {
			c := *r
			c.Fields = nil
			if cls[i].Fields {
				c.Fields = value(r)
			}
			agg.Add(&c, cls[i])
		}
	}
	return asked
}

// smallFamilies are n unregistered string keys in families of per keys
// each (famX:item:N, X in letters: digits would become a placeholder).
func smallFamilies(n, per int) []*inventory.Record {
	rs := make([]*inventory.Record, n)
	for i := range rs {
		f := i / per
		name := []byte("fam")
		for {
			name = append(name, byte('a'+f%26))
			if f /= 26; f == 0 {
				break
			}
		}
		rs[i] = rec(fmt.Sprintf("%s:item:%d", name, i), typ("string"))
	}
	return rs
}

func noFields(*inventory.Record) []string { return nil }

func keys(n int, format string, with ...func(*inventory.Record)) []*inventory.Record {
	rs := make([]*inventory.Record, n)
	for i := range rs {
		rs[i] = rec(fmt.Sprintf(format, i), with...)
	}
	return rs
}

// Values without field names (plain strings, counters, tokens) are asked
// for a few dozen times per template or family, not for every key: the
// audit of seed 000's legacy keyspace sent a GETRANGE for each of its
// unregistered strings.
func TestFieldsStopOnValuesWithoutFields(t *testing.T) {
	reg := loadReg(t)
	const n = 20000
	cases := []struct {
		name  string
		rs    []*inventory.Record
		batch int
		max   int
	}{
		{"unregistered strings, key by key", keys(n, "tmp_data_2024032115%06d", typ("string")), 1, 40},
		{"unregistered strings, SCAN batches", keys(n, "tmp_data_2024032115%06d", typ("string")), 1000, 1000 + 40},
		{"registered plain strings, key by key", keys(n, "rate:login:u%d", typ("string")), 1, 40},
		{"registered plain strings, SCAN batches", keys(n, "rate:login:u%d", typ("string")), 1000, 1000 + 40},
		// 5,000 families of 4 keys: every family is new, so the bound is
		// the budget shared by the families that hold no fields.
		{"many small families", smallFamilies(n, 4), 1, 2048 + 40},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			agg := inventory.New(reg, inventory.Options{})
			asked := walk(agg, c.rs, c.batch, noFields)
			t.Logf("asked for %d keys", asked)
			if asked > c.max {
				t.Errorf("asked for the fields of %d of %d keys whose values hold none; want at most %d", asked, n, c.max)
			}
		})
	}
}

// A template or family whose values do hold field names is read in full
// (every value is counted in its census), and the report is the same
// whether the walker asks key by key or batch by batch.
func TestFieldsKeepSampling(t *testing.T) {
	reg := loadReg(t)
	const n = 20000
	var rs []*inventory.Record
	for i := range n {
		rs = append(rs, rec(fmt.Sprintf("promo:cart:%d", i), typ("string")))            // unregistered JSON strings
		rs = append(rs, rec(fmt.Sprintf("promo:sku:%d", i)))                            // a registered hash template
		rs = append(rs, rec(fmt.Sprintf("cache:product:detail:p%d", i), typ("string"))) // registered JSON strings
	}
	value := func(r *inventory.Record) []string { // two writer styles, some keys mixed
		switch r.Key[len(r.Key)-1] % 4 {
		case 0:
			return []string{"items", "total", "couponId", "discount"}
		case 1, 3:
			return []string{"items", "total"}
		}
		return []string{"couponId", "discount"}
	}
	var reports [][]byte
	for _, batch := range []int{1, 1000} {
		agg := inventory.New(reg, inventory.Options{})
		asked := walk(agg, rs, batch, value)
		t.Logf("batch %d: asked for %d keys", batch, asked)
		if asked != len(rs) {
			t.Errorf("batch %d: asked for %d keys of %d", batch, asked, len(rs))
		}
		reports = append(reports, visibleJSON(t, agg.Report(meta())))
	}
	if !bytes.Equal(reports[0], reports[1]) {
		t.Errorf("the sample depends on how the walker batches its asks:\n%s", firstDiff(string(reports[0]), string(reports[1])))
	}
}

// Classify infers the template of an unregistered key, and Add does not
// infer it a second time: classifying costs no allocation once the family
// is known to hold no field names.
func TestClassifyDoesNotInferTwice(t *testing.T) {
	reg := loadReg(t)
	agg := inventory.New(reg, inventory.Options{})
	rs := keys(4000, "legacy_cart_%d_items", typ("string"))
	walk(agg, rs[:1000], 1, noFields) // the family is found to hold no fields
	i := 1000
	cls := make([]inventory.Class, len(rs))
	for j, r := range rs {
		cls[j] = agg.Classify(r.Key)
	}
	alone := testing.AllocsPerRun(1000, func() {
		agg.Add(rs[i%len(rs)], cls[i%len(rs)])
		i++
	})
	both := testing.AllocsPerRun(1000, func() {
		r := rs[i%len(rs)]
		cl := agg.Classify(r.Key)
		if cl.Fields {
			t.Fatal("asked again")
		}
		agg.Add(r, cl)
		i++
	})
	if both > alone+0.5 {
		t.Errorf("Classify+Add allocates %.1f times per key, Add alone %.1f", both, alone)
	}
}

// TestSkipFields: with SkipFields no key is asked for its field names,
// field names that come anyway are not counted, and the report says the
// value-format rules were not checked.
func TestSkipFields(t *testing.T) {
	reg := loadReg(t)
	promo := []string{"activityId", "discountType", "discountValue"}
	order := []string{"couponAmount", "promoTotal"}
	var rs []*inventory.Record
	for i := range 400 {
		fs := promo
		switch {
		case i%100 == 7:
			fs = append(append([]string(nil), promo...), order...)
		case i >= 300:
			fs = order
		}
		rs = append(rs, rec(fmt.Sprintf("promo:sku:%d", i), fields(fs...)))
	}
	value := func(r *inventory.Record) []string { return r.Fields }
	for _, skip := range []bool{false, true} {
		agg := inventory.New(reg, inventory.Options{SkipFields: skip})
		hinted := inventory.NewClassifier(reg, agg.FieldHint())
		asked := walk(agg, rs[:200], 50, value)
		for _, r := range rs[200:] {
			if skip && hinted.Classify(r.Key).Fields {
				t.Fatalf("SkipFields: the hint asks for the fields of %s", r.Key)
			}
			add(agg, r) // the fields come with the record, asked or not
		}
		rep := agg.Report(meta())
		mixed := rep.Summary.ByRule["mixed-schema"]
		noted := bytes.Contains([]byte(fmt.Sprint(rep.Notes)), []byte("value formats were not read"))
		switch {
		case skip && (asked != 0 || mixed != 0 || !noted):
			t.Errorf("SkipFields: %d keys asked, %d mixed-schema findings, noted %v; want 0, 0, true", asked, mixed, noted)
		case !skip && (asked == 0 || mixed == 0 || noted):
			t.Errorf("default: %d keys asked, %d mixed-schema findings, noted %v; want some, some, false", asked, mixed, noted)
		}
	}
}
