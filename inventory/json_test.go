package inventory_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/inventory"
)

// encoded is the report as encoding/json writes it with the settings of
// WriteJSON: what the streaming writer must reproduce byte for byte.
func encoded(t *testing.T, r *inventory.Report) []byte {
	t.Helper()
	c := *r
	if c.Groups == nil {
		c.Groups = []inventory.Group{}
	}
	if c.TopKeys == nil {
		c.TopKeys = []inventory.TopKey{}
	}
	if c.Findings == nil {
		c.Findings = []inventory.Finding{}
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
func full(t *testing.T) *inventory.Report {
	rep := buildReport(t, loadReg(t), inventory.Options{HotFreqFloor: 100, Sampled: true, SampleRatio: 0.5}, dataset())
	rep.Stopped = []inventory.NodeStop{{Node: "127.0.0.1:7000", Reason: "node down <&>", Cursor: "1234", Keys: 9}}
	rep.FindingsOmitted = map[string]int64{"no-ttl": 3, "big-key": 1}
	rep.Findings[0].Message = "<b>&amp;</b> \u2028 \x00"
	rep.UnusedTemplates = []string{"a:{b}"}
	v := reflect.ValueOf(rep).Elem()
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Fatalf("the test report leaves Report.%s unset", v.Type().Field(i).Name)
		}
	}
	return rep
}

func TestWriteJSONAsEncoded(t *testing.T) {
	cases := map[string]*inventory.Report{
		"every field": full(t),
		"zero":        {},
		"empty lists": {Source: inventory.Source{Kind: "rdb"}, Groups: []inventory.Group{}, TopKeys: []inventory.TopKey{}, Findings: []inventory.Finding{},
			FindingsOmitted: map[string]int64{}, Notes: []string{}},
		"one of each": {Source: inventory.Source{Kind: "redis"}, StartedAt: time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("x", 3600)),
			Groups: []inventory.Group{{Name: "g", Types: map[string]int64{}}}, TopKeys: []inventory.TopKey{{Key: "k"}},
			Findings: []inventory.Finding{{Finding: finding.Finding{Rule: "r", Key: "\xff"}, KeyBase64: "/w=="}}},
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
		agg.Add(rec(fmt.Sprintf("order:order:%d:base", i), ttl(-1), size(int64(i), 1)))
		agg.Add(rec(fmt.Sprintf("user_%d_token", i), typ("string"), size(int64(i), 1)))
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

// encodedFinding is f as an element of the findings array, the way
// encoding/json writes it with WriteJSON's settings.
func encodedFinding(t testing.TB, f *inventory.Finding) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("    ", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(f); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func findingCases() []inventory.Finding {
	return []inventory.Finding{
		{Finding: finding.Finding{Rule: "no-ttl", Severity: finding.Warning, Message: "m"}},
		{Finding: finding.Finding{Rule: "pii", Severity: finding.Error, Key: "user:13800138000", Template: "user:{id}", Owner: "team-a",
			Message: "looks like a phone", Hint: "hash it", File: "keyguard.yaml", Line: 12, Column: 5}, KeyLen: 2048},
		{Finding: finding.Finding{Rule: "naming/charset", Severity: finding.Severity(7), Key: "k\xff\x00\x1f\"\\\b\f\n\r\t\u2028\u2029<&>é漢", Message: "\x7f\u2027",
			Line: -3}, KeyBase64: "a2V5"},
		{Finding: finding.Finding{Rule: "", Severity: finding.Info, Key: "\xed\xa0\x80 \xf4\x90\x80\x80 \xc0\xaf", Message: ""}},
	}
}

func TestAppendFindingAsEncoded(t *testing.T) {
	for i, f := range findingCases() {
		want := encodedFinding(t, &f)
		if got := string(inventory.AppendFindingJSON(nil, &f)); got != want {
			t.Errorf("case %d:\n got %q\nwant %q", i, got, want)
		}
	}
}

// TestFindingEncoderCache: the encoder that keeps the last strings'
// encodings gives every finding of a sequence its own bytes, whether its
// strings repeat the last finding's, equal them in another copy, are
// empty or differ.
func TestFindingEncoderCache(t *testing.T) {
	cases := findingCases()
	var seq []inventory.Finding
	for _, i := range []int{0, 1, 1, 2, 1, 3, 0, 0, 2, 1} {
		seq = append(seq, cases[i])
	}
	copied := cases[1]
	copied.Message = strings.Clone(copied.Message)
	copied.Hint = strings.Clone(copied.Hint) + "!"
	seq = append(seq, copied, cases[1], copied)
	for i, got := range inventory.AppendFindingsJSON(seq) {
		if want := encodedFinding(t, &seq[i]); got != want {
			t.Errorf("finding %d:\n got %q\nwant %q", i, got, want)
		}
	}
}

func FuzzAppendFindingAsEncoded(f *testing.F) {
	for _, c := range findingCases() {
		f.Add(c.Rule, c.Key, c.Template, c.Message, c.Hint, c.File, c.Line, c.KeyLen, uint8(c.Severity))
	}
	f.Fuzz(func(t *testing.T, rule, key, tmpl, msg, hint, file string, line, keyLen int, sev uint8) {
		c := inventory.Finding{Finding: finding.Finding{Rule: rule, Severity: finding.Severity(sev), Key: key, Template: tmpl, Owner: hint,
			Message: msg, Hint: hint, File: file, Line: line, Column: keyLen / 3}, KeyBase64: tmpl, KeyLen: keyLen}
		if got, want := string(inventory.AppendFindingJSON(nil, &c)), encodedFinding(t, &c); got != want {
			t.Errorf("\n got %q\nwant %q", got, want)
		}
	})
}
