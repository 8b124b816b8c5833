package inventory_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/audit/inventory"
	"github.com/keyguard/keyguard/internal/audit/report"
)

// encoded is the report as encoding/json writes it with the settings of
// WriteJSON: what the streaming writer must reproduce byte for byte.
func encoded(t *testing.T, r *report.Report) []byte {
	t.Helper()
	c := *r
	if c.Groups == nil {
		c.Groups = []report.Group{}
	}
	if c.TopKeys == nil {
		c.TopKeys = []report.TopKey{}
	}
	if c.Findings == nil {
		c.Findings = []report.Finding{}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&c); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// full is a report with every field set, so that a field added to Report
// and forgotten by WriteJSON shows here.
func full(t *testing.T) *report.Report {
	rep := buildReport(t, loadReg(t), inventory.Options{HotFreqFloor: 100, Sampled: true, SampleRatio: 0.5}, dataset())
	rep.Stopped = []report.NodeStop{{Node: "127.0.0.1:7000", Reason: "node down <&>", Cursor: "1234", Keys: 9, DB: 3, Slots: "7-9", RunID: "ab"}}
	rep.FindingsOmitted = map[string]int64{"no-ttl": 3, "big-key": 1}
	rep.Findings[0].Message = "<b>&amp;</b> \u2028 \x00"
	rep.UnusedTemplates = []string{"a:{b}"}
	rep.ResumedFrom = "partial.json"
	rep.Databases = []int{0, 3}
	rep.Prefixes = []report.Prefix{{Prefix: "order", Depth: 1, Keys: 3, Bytes: 300, Groups: 1}}
	rep.MergedFrom = []string{"a.json", "b.json"}
	db := 3
	rep.Coverage = &report.Coverage{Share: 0.5, Nodes: []report.CoverageNode{{Addr: "127.0.0.1:7000", Role: "master", RunID: "ab<&>", Slots: "0-5460",
		DBs: []report.CoverageDB{{DB: 3, KeysStart: 10, KeysEnd: -1, Counted: 9}}}},
		Cluster:    &report.ClusterCoverage{Masters: 3, Walked: 1, Slots: 5461, Counted: "0-5460"},
		NotCovered: []report.Gap{{Node: "127.0.0.1:7000", DB: &db, Slots: "7-9", Reason: "node down <&>"}}}

	rep.NotChecked = report.NoRegistryChecks
	rep.DocsBase = "https://example.com/keyguard/"
	v := reflect.ValueOf(rep).Elem()
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Fatalf("the test report leaves Report.%s unset", v.Type().Field(i).Name)
		}
	}
	return rep
}

func TestWriteJSONAsEncoded(t *testing.T) {
	cases := map[string]*report.Report{
		"every field": full(t),
		"zero":        {},
		"empty lists": {Source: report.Source{Kind: "rdb"}, Groups: []report.Group{}, TopKeys: []report.TopKey{}, Findings: []report.Finding{},
			FindingsOmitted: map[string]int64{}, Notes: []string{}},
		"one of each": {Source: report.Source{Kind: "redis"}, StartedAt: time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("x", 3600)),
			Groups: []report.Group{{Name: "g", Types: map[string]int64{}}}, TopKeys: []report.TopKey{{Key: "k"}},
			Findings: []report.Finding{{Finding: finding.Finding{Rule: "r", Key: "\xff"}, KeyBase64: "/w=="}}},
	}
	for name, rep := range cases {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := rep.WriteJSON(&b); err != nil {
				t.Fatal(err)
			}
			if want := encoded(t, rep); !bytes.Equal(b.Bytes(), want) {
				t.Errorf("WriteJSON differs from encoding/json:\n%s", firstDiff(string(want), b.String()))
			}
		})
	}
}

type countWriter struct {
	n, max int
	fail   int // fail the write that passes this many bytes; 0 never
}

func (w *countWriter) Write(p []byte) (int, error) {
	if w.fail > 0 && w.n+len(p) > w.fail {
		return 0, errors.New("disk full")
	}
	w.n += len(p)
	w.max = max(w.max, len(p))
	return len(p), nil
}

// WriteJSON streams: some 60,000 findings (10 MB of JSON) pass through a
// small buffer instead of being encoded into one document first.
func TestWriteJSONStreams(t *testing.T) {
	agg := inventory.New(loadReg(t), inventory.Options{})
	for i := range 50_000 {
		add(agg, rec(fmt.Sprintf("order:order:%d:base", i), ttl(-1), size(int64(i), 1)))
		add(agg, rec(fmt.Sprintf("user_%d_token", i), typ("string"), size(int64(i), 1)))
	}
	rep := agg.Report(meta())
	if len(rep.Findings) < 30_000 {
		t.Fatalf("%d findings", len(rep.Findings))
	}
	var w countWriter
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	if err := rep.WriteJSON(&w); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&m1)
	alloc := m1.TotalAlloc - m0.TotalAlloc
	t.Logf("%d bytes written, %d allocated, largest write %d", w.n, alloc, w.max)
	if w.max > 64<<10 {
		t.Errorf("one write of %d bytes: the document was built in memory", w.max)
	}
	if alloc > uint64(w.n)/4 && !inventory.RaceEnabled {
		t.Errorf("WriteJSON allocated %d bytes for %d bytes of JSON", alloc, w.n)
	}

	// A failing writer stops it with the error.
	fw := countWriter{fail: w.n / 2}
	if err := rep.WriteJSON(&fw); err == nil || fw.n > w.n/2 {
		t.Errorf("write error: %v after %d bytes", err, fw.n)
	}
}
