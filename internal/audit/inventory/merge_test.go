package inventory_test

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/keyguard/keyguard/internal/audit/inventory"
)

func mergeDataset() []*inventory.Record {
	rs := dataset()
	for i := range 3000 {
		k := fmt.Sprintf("order:order:%d:base", 5000+i)
		r := rec(k, size(int64(100+i%977), 5), ttl(time.Duration(1+i%3500)*time.Second), freq(i%200))
		if i%97 == 0 {
			r.TTL = -1
		}
		rs = append(rs, r)
		rs = append(rs, rec(fmt.Sprintf("fam%c%c:item:%d", 'a'+i%26, 'a'+i/26%26, i), typ("string"), size(int64(i%300), 1), ttl(-1)))
	}
	for i := range 200 {
		rs = append(rs, rec(fmt.Sprintf("promo:sku:%d", 9000+i), fields("activityId", "discountValue")))
		rs = append(rs, rec(fmt.Sprintf("promo:sku:%d", 19000+i), fields("couponAmount", "promoTotal")))
	}
	for i := range 40 {
		rs = append(rs, rec(fmt.Sprintf("promo:sku:%d", 77000+i), fields("activityId", "discountValue", "couponAmount", "promoTotal")))
	}
	return rs
}

// Records split over three aggregators (as per-node walkers would),
// merged, give the report one aggregator gives.
func TestMergeEquivalence(t *testing.T) {
	reg := loadReg(t)
	opts := inventory.Options{MaxFindings: 50, TopKeys: 10, HotKeys: 5, HotFreqFloor: 100}
	rs := mergeDataset()
	want := buildReport(t, reg, opts, rs)

	parts := []*inventory.Aggregator{inventory.New(reg, opts), inventory.New(reg, opts), inventory.New(reg, opts)}
	for i := range rs {
		r := rs[len(rs)-1-i] // another order, too
		add(parts[(i*7)%3], r)
	}
	parts[1].Merge(parts[2])
	parts[0].Merge(parts[1])
	got := parts[0].Report(meta())

	if w, g := visibleJSON(t, want), visibleJSON(t, got); !bytes.Equal(w, g) {
		t.Fatalf("merged report differs:\n%s", firstDiff(string(w), string(g)))
	}
	if want.Summary.ByRule["mixed-schema"] == 0 || want.FindingsOmitted["no-ttl"] == 0 {
		t.Errorf("the dataset should exercise capping and sampling: %v %v", want.Summary.ByRule, want.FindingsOmitted)
	}
}

func TestMergeDifferentRegistryPanics(t *testing.T) {
	a := inventory.New(loadReg(t), inventory.Options{})
	other, err := registryFrom("version: 1\nkeys:\n  - {key: \"x:{id}\", type: string, ttl: 1m, owner: t}\n")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if recover() == nil {
			t.Error("no panic")
		}
	}()
	a.Merge(inventory.New(other, inventory.Options{}))
}

// Report does not change the aggregator: a walker can write a partial
// report (Ctrl-C, --timeout) and go on.
func TestReportTwice(t *testing.T) {
	agg := inventory.New(loadReg(t), inventory.Options{HotFreqFloor: 100})
	rs := dataset()
	for _, r := range rs[:len(rs)/2] {
		add(agg, r)
	}
	var a, b bytes.Buffer
	agg.Report(meta()).WriteJSON(&a)
	agg.Report(meta()).WriteJSON(&b)
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatalf("second report differs:\n%s", firstDiff(a.String(), b.String()))
	}
	for _, r := range rs[len(rs)/2:] {
		add(agg, r)
	}
	var c, want bytes.Buffer
	agg.Report(meta()).WriteJSON(&c)
	buildReport(t, loadReg(t), inventory.Options{HotFreqFloor: 100}, rs).WriteJSON(&want)
	if !bytes.Equal(c.Bytes(), want.Bytes()) {
		t.Fatalf("report after more records differs:\n%s", firstDiff(want.String(), c.String()))
	}
}
