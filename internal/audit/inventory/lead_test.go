package inventory_test

import (
	"fmt"
	"testing"

	"github.com/keyguard/keyguard/internal/audit/inventory"
	"github.com/keyguard/keyguard/registry"
)

// TestFieldCensusDoesNotDependOnTheWalkersLead feeds one keyspace the way
// keyguard rdb does, its decoder classifying keys (the hint) ahead of the
// aggregator by 0 to 5,000 keys and reading field names only where the
// hint said yes: the report, the censuses' counts included ("the fields
// its N values hold"), is the same whatever the lead. The keyspace has
// every way a family's census can close while keys are in flight: values
// that all hold names, none, names only after 40 without (the family gives
// up first), and more families than Options.MaxGroups, whose first values
// hold none and later ones do.
func TestFieldCensusDoesNotDependOnTheWalkersLead(t *testing.T) {
	reg := loadReg(t)
	var ks fieldKeyspace
	add := ks.add
	for i := range 3000 {
		add(rec(fmt.Sprintf("user:%d:profile", i)), "name", "age")
		add(rec(fmt.Sprintf("auth:session:u%d", i), typ("string")))
		if i < 40 {
			add(rec(fmt.Sprintf("legacy:blob:%d", i)))
		} else {
			add(rec(fmt.Sprintf("legacy:blob:%d", i)), "a", "b")
		}
		if i < 600 {
			f, j := i%60, i/60 // 60 families of 10 keys, one key of each in turn
			k := rec(fmt.Sprintf("fam%c%c:item:%d", 'a'+f/26, 'a'+f%26, j))
			if j < 5 {
				add(k)
			} else {
				add(k, "x", "y")
			}
		}
	}
	// The same with every value read (keyguard rdb's FieldsEveryValue),
	// and more families with names than get a census.
	for i := range 100 {
		for j := range 3 {
			k := rec(fmt.Sprintf("g%c%c:item:%d", 'a'+i/26, 'a'+i%26, j))
			add(k, "x")
		}
	}
	for _, every := range []bool{false, true} {
		leads(t, reg, &ks, inventory.Options{MaxGroups: 40, FieldsEveryValue: every})
		leads(t, reg, &ks, inventory.Options{MaxGroups: 1000, FieldsEveryValue: every})
	}
}

func leads(t *testing.T, reg *registry.Registry, ks *fieldKeyspace, opts inventory.Options) {
	rs := ks.rs
	run := func(lag int) []byte {
		agg := inventory.New(reg, opts)
		cls := inventory.NewClassifier(reg, agg.FieldHint())
		classes := make([]inventory.Class, len(rs))
		feed := func(i int) {
			r := ks.read(i, classes[i].Fields)
			agg.Add(&r, classes[i])
		}
		for i, r := range rs {
			classes[i] = cls.Classify(r.Key)
			if i >= lag {
				feed(i - lag)
			}
		}
		for i := max(len(rs)-lag, 0); i < len(rs); i++ {
			feed(i)
		}
		return visibleJSON(t, agg.Report(meta()))
	}
	want := run(0)
	for _, lag := range []int{1, 64, 600, 5000} {
		if got := run(lag); string(got) != string(want) {
			t.Errorf("%+v, the walker %d keys ahead: the report differs from one in step: %s", opts, lag, firstDiff(string(want), string(got)))
		}
	}
}

// fieldKeyspace is a keyspace of records and the field names their
// values hold, handed to aggregators as a walker would.
type fieldKeyspace struct {
	rs    []*inventory.Record
	names map[string][]string
}

func (k *fieldKeyspace) add(r *inventory.Record, fields ...string) {
	k.rs = append(k.rs, r)
	if len(fields) > 0 {
		if k.names == nil {
			k.names = map[string][]string{}
		}
		k.names[r.Key] = fields
	}
}

// read is record i as the walker hands it over: with the names its value
// holds when they were read (an empty list for none), without otherwise.
func (k *fieldKeyspace) read(i int, fields bool) inventory.Record {
	r := *k.rs[i]
	r.Fields = nil
	if fields {
		r.Fields = k.names[r.Key]
		if r.Fields == nil {
			r.Fields = []string{} // read, and none
		}
	}
	return r
}
