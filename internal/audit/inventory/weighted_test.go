package inventory_test

import (
	"math"
	"testing"
	"time"

	"github.com/keyguard/keyguard/internal/audit/inventory"
)

// TestWeightedSample: in a weighted sample each record counts for its
// weight (the keys it stands for) in every count, nothing is scaled again
// at the end, the memory margin is 1.96·sqrt(Σ (w²-w)·b²), and the
// weighting survives a report's state (merge, resume).
func TestWeightedSample(t *testing.T) {
	reg := loadReg(t)
	agg := inventory.New(reg, inventory.Options{Sampled: true, SampleRatio: 0.1, Weighted: true})
	type r struct {
		key    string
		w, b   int64
		expire time.Duration
	}
	recs := []r{{"cache:item:1", 1, 4 << 20, -1}, {"cache:item:2", 10, 100, time.Hour}, {"cache:item:3", 25, 300, -1}}
	var keys, bytes int64
	var v float64
	for _, x := range recs {
		rc := rec(x.key, typ("string"), size(x.b, 1), ttl(x.expire))
		rc.Weight = x.w
		add(agg, rc)
		keys += x.w
		bytes += x.w * x.b
		v += float64(x.w*x.w-x.w) * float64(x.b) * float64(x.b)
	}
	rep := agg.Report(meta())
	if rep.Summary.Keys != keys || rep.Summary.Bytes != bytes || rep.Summary.NoTTL != 26 {
		t.Errorf("keys %d bytes %d no-ttl %d, want %d %d 26", rep.Summary.Keys, rep.Summary.Bytes, rep.Summary.NoTTL, keys, bytes)
	}
	if rep.Sample == nil || !rep.Sample.Stratified || rep.Sample.KeysSeen != 3 {
		t.Fatalf("sample %+v", rep.Sample)
	}
	if want := int64(math.Ceil(1.96 * math.Sqrt(v))); rep.Sample.BytesMargin != want {
		t.Errorf("margin %d, want %d", rep.Sample.BytesMargin, want)
	}
	if g := rep.Groups[0]; g.Keys != keys || g.WithTTL != 10 || g.Types["string"] != keys {
		t.Errorf("group %+v", g)
	}
	back, err := inventory.FromReport(reg, rep)
	if err != nil {
		t.Fatal(err)
	}
	again := back.Report(meta())
	if again.Summary.Keys != keys || again.Summary.Bytes != bytes || again.Groups[0].WithTTL != 10 {
		t.Errorf("from its state: keys %d bytes %d with-ttl %d", again.Summary.Keys, again.Summary.Bytes, again.Groups[0].WithTTL)
	}
}
