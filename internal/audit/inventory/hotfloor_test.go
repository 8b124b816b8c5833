package inventory

import (
	"strconv"
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
