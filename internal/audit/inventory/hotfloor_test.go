package inventory

import (
	"cmp"
	"strconv"
	"strings"
	"testing"

	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/registry"
)

// TestHotListHoldsOnlyKeysAtTheFloor: keys with LFU counters 0 to 99 and
// a list of 50 (floor 32): the findings are the keys from 50 up, and the
// list (saved in the state for merges) holds no key below the floor even
// when the list has room, through one aggregator and a pipeline of two.
func TestHotListHoldsOnlyKeysAtTheFloor(t *testing.T) {
	reg, err := registry.Load("testdata/keyguard.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		hot, findings int
	}{{50, 50}, {200, 100 - DefaultHotFreqFloor}} {
		for _, workers := range []int{1, 2} {
			p := NewPipeline(reg, Options{HotKeys: tc.hot}, workers)
			recs := make([]Record, 0, 100)
			for i := range 100 {
				recs = append(recs, Record{Key: "f:item:" + strconv.Itoa(i), Node: "n", Type: "string", Bytes: 64, Elements: 1, TTL: -1, Freq: i})
			}
			p.AddRead(recs, nil, nil)
			a := p.Close()
			rep := a.Report(report.Meta{})
			n := 0
			for _, f := range rep.Findings {
				if f.Rule == "hot-key" {
					n++
				}
			}
			keys, _ := a.hot.list()
			low := 0
			for i := range keys {
				if keys[i].score < DefaultHotFreqFloor {
					low++
				}
			}
			if n != tc.findings || low > 0 || len(keys) != tc.findings {
				t.Errorf("--hot %d, %d aggregators: %d hot-key findings (want %d), %d keys kept, %d of them below the floor", tc.hot, workers, n, tc.findings, len(keys), low)
			}
		}
	}
}

// TestStateHotOrder: the state's hot-key candidates come by counter
// (highest first), then name, then database, whatever the names share:
// a long common prefix, bytes 0 and 0xff, names that end where others
// go on, one name in two databases.
func TestStateHotOrder(t *testing.T) {
	reg, err := registry.Load("testdata/keyguard.yaml")
	if err != nil {
		t.Fatal(err)
	}
	a := New(reg, Options{HotKeys: 5000})
	var recs []Record
	for i := range 3000 {
		name := "f:item:shared-prefix-of-every-key:" + strconv.Itoa(i%700)
		switch i % 5 {
		case 1:
			name += "\x00"
		case 2:
			name += "\xff\x00z"
		case 3:
			name = name[:len(name)-1]
		}
		recs = append(recs, Record{Key: name, DB: i % 3, Node: "n", Type: "string", Bytes: 64, Elements: 1, TTL: -1, Freq: DefaultHotFreqFloor + i%4})
	}
	for i := range recs {
		a.Add(&recs[i], a.Classify(recs[i].Key))
	}
	st := a.Report(report.Meta{}).State
	if len(st.Hot) < 1000 {
		t.Fatalf("%d hot-key candidates saved", len(st.Hot))
	}
	for i := 1; i < len(st.Hot); i++ {
		p, q := &st.Hot[i-1], &st.Hot[i]
		if c := cmp.Or(cmp.Compare(q.Freq, p.Freq), strings.Compare(string(p.Key), string(q.Key)), cmp.Compare(p.DB, q.DB)); c > 0 {
			t.Fatalf("candidate %d (%d, %q, db %d) before %d (%d, %q, db %d)", i-1, p.Freq, p.Key, p.DB, i, q.Freq, q.Key, q.DB)
		}
	}
}
