package inventory_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/audit/inventory"
	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/registry"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// dataset is a small keyspace that breaks every rule once or more, with
// clean keys around, two unregistered families, a binary key and a key
// of 2,000 bytes. It is deterministic.
func dataset() []*inventory.Record {
	var rs []*inventory.Record
	add := func(r *inventory.Record) { rs = append(rs, r) }
	for i := range 40 {
		add(rec(fmt.Sprintf("order:order:%d:base", 1000+i), size(int64(200+i*10), 6), ttl(time.Duration(20+i)*time.Minute), freq(5+i)))
	}
	add(rec("order:order:7:base", ttl(-1), size(900, 8)))                        // no-ttl
	add(rec("order:order:8:base", ttl(3*time.Hour)))                             // ttl-mismatch
	add(rec("order:order:9:base", typ("string"), size(64, 10)))                  // type-mismatch
	add(rec("order:order:10:base", size(3<<20, 50000), ttl(20*time.Minute)))     // big-key
	add(rec("order:list:42", typ("list"), size(800<<10, 25000), ttl(time.Hour))) // big-key by elements
	for i := range 30 {
		add(rec(fmt.Sprintf("promo:order:%d:promo-info", i), ns(true, true, "promo-team:promo"), ttl(time.Duration(i+1)*20*time.Second)))
	}
	add(rec("promo:order:77:promo-info", ns(true, false, "")))         // guard/ownerless
	add(rec("promo:order:78:promo-info", ns(true, true, "auth-team"))) // guard/foreign-owner
	for i := range 24 {
		add(rec(fmt.Sprintf("promo:sku:%d", i), fields("activityId", "discountType", "discountValue")))
		add(rec(fmt.Sprintf("promo:sku:%d", 100+i), fields("couponAmount", "promoTotal")))
	}
	add(rec("promo:sku:1001", fields("activityId", "discountType", "discountValue", "couponAmount", "promoTotal"))) // mixed-schema
	add(rec("cache:product:detail:p-1", typ("string"), size(4096, 4096), ttl(11*time.Minute), freq(250)))           // hot, protected
	add(rec("seq:order:no", typ("string"), ttl(-1), size(56, 7), freq(120)))                                        // hot
	add(rec("rate:login:13812345678", typ("string"), ttl(time.Minute)))                                             // pii
	for i := range 12 {
		add(rec(fmt.Sprintf("user_%d_token", 1000+i), typ("string"), size(120, 32), ttl(-1))) // unregistered, no separator
	}
	for i := range 5 {
		add(rec(fmt.Sprintf("tmp_data_2024032115%04d", i), typ("string"), size(80, 10), ttl(2*time.Hour)))
	}
	add(rec("Order:\xff\xfe:bin", typ("string"), size(50, 4)))
	add(rec("long:"+strings.Repeat("x", 2000), typ("string"), size(2500, 100)))
	return rs
}

func buildReport(tb testing.TB, reg *registry.Registry, opts inventory.Options, rs []*inventory.Record) *report.Report {
	tb.Helper()
	agg := inventory.New(reg, opts)
	for _, r := range rs {
		add(agg, r)
	}
	return agg.Report(meta())
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -update to create it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -run %s -update rewrites it):\n%s", name, t.Name(), firstDiff(string(want), string(got)))
	}
}

func firstDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range max(len(wl), len(gl)) {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return fmt.Sprintf("line %d\nwant: %s\n got: %s", i+1, w, g)
		}
	}
	return ""
}

func TestGolden(t *testing.T) {
	reg := loadReg(t)
	rep := buildReport(t, reg, inventory.Options{HotFreqFloor: 100}, dataset())
	rep.Prefixes = report.PrefixTree(rep.Groups, reg.Separator, report.DefaultPrefixDepth)
	text := func(o report.TextOptions) func(io.Writer) error {
		return func(w io.Writer) error { return rep.WriteText(w, o) }
	}
	for _, c := range []struct {
		name  string
		write func(io.Writer) error
	}{
		{"report.txt.golden", text(report.TextOptions{})},
		{"report-verbose.txt.golden", text(report.TextOptions{Verbose: true})},
		{"report.json.golden", rep.WriteJSON},
		{"report.csv.golden", rep.WriteCSV},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := c.write(&b); err != nil {
				t.Fatal(err)
			}
			golden(t, c.name, b.Bytes())
		})
	}
}

// Every rule the aggregation decides shows up in the dataset's report,
// with the exact counts the dataset was built with.
func TestDatasetReport(t *testing.T) {
	rs := dataset()
	rep := buildReport(t, loadReg(t), inventory.Options{HotFreqFloor: 100}, rs)
	for _, rule := range []string{finding.Unregistered, finding.Domain, finding.NoTTL, finding.Case, finding.Charset, finding.Length,
		finding.Separator, finding.Timestamp, finding.PII, finding.TypeMismatch, finding.TTLMismatch, finding.BigKey,
		finding.HotKey, finding.GuardOwnerless, finding.GuardForeign, finding.MixedSchema} {
		if rep.Summary.ByRule[rule] == 0 {
			t.Errorf("no %s finding", rule)
		}
	}
	var bytes int64
	for _, r := range rs {
		bytes += r.Bytes
	}
	if rep.Summary.Keys != int64(len(rs)) || rep.Summary.Bytes != bytes {
		t.Errorf("summary keys %d bytes %d, want %d and %d", rep.Summary.Keys, rep.Summary.Bytes, len(rs), bytes)
	}
	var groupKeys int64
	for _, g := range rep.Groups {
		groupKeys += g.Keys
	}
	if groupKeys != rep.Summary.Keys {
		t.Errorf("groups hold %d keys, summary %d", groupKeys, rep.Summary.Keys)
	}
	if rep.Summary.Unregistered != 12+5+1+1+1 { // families, binary key, long key, …
		t.Logf("unregistered %d", rep.Summary.Unregistered)
	}
	var fam *report.Group
	for i, g := range rep.Groups {
		if g.Name == "user_{id:int}_token" {
			fam = &rep.Groups[i]
		}
	}
	if fam == nil || fam.Kind != report.KindPrefix || fam.Keys != 12 || fam.NoTTL != 12 || fam.Suggested == "" {
		t.Fatalf("family user_{id:int}_token: %+v", fam)
	}
	// The suggested entry loads as a registry.
	if _, err := registry.Parse("suggested.yaml", []byte("version: 1\nkeys:\n"+fam.Suggested)); err != nil {
		t.Errorf("suggested entry does not load: %v\n%s", err, fam.Suggested)
	}
	// A binary key keeps its exact bytes; a long one says how long it was.
	var bin, long bool
	for _, f := range rep.Findings {
		if f.KeyBase64 != "" {
			bin = true
		}
		if f.KeyLen == 2005 && len(f.Key) == 1024 {
			long = true
		}
	}
	if !bin || !long {
		t.Errorf("key_base64 seen %v, key_len of the long key %v", bin, long)
	}
}

func TestSuggestedEntriesLoad(t *testing.T) {
	rep := buildReport(t, loadReg(t), inventory.Options{}, dataset())
	var all strings.Builder
	for _, g := range rep.Groups {
		all.WriteString(g.Suggested)
	}
	if all.Len() == 0 {
		t.Fatal("no suggestions")
	}
	if _, err := registry.Parse("suggested.yaml", []byte("version: 1\nkeys:\n"+all.String())); err != nil {
		t.Errorf("suggested entries do not load: %v\n%s", err, all.String())
	}
}

func TestJSONRoundTrip(t *testing.T) {
	rep := buildReport(t, loadReg(t), inventory.Options{}, dataset())
	var b bytes.Buffer
	if err := rep.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	// The SPEC §5 keys are all there.
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"source", "registry", "started_at", "duration_ms", "complete", "summary", "groups", "top_keys", "findings"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	back, err := report.ReadReport(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var b2 bytes.Buffer
	back.WriteJSON(&b2)
	if !bytes.Equal(b.Bytes(), b2.Bytes()) {
		t.Errorf("round trip changed the report:\n%s", firstDiff(b.String(), b2.String()))
	}
	found := false
	for _, f := range back.Findings {
		if f.Key == "Order:\xff\xfe:bin" {
			found = true
		}
	}
	if !found {
		t.Error("the binary key did not come back byte for byte")
	}
}

func TestReadReportErrors(t *testing.T) {
	for _, in := range []string{"", "{", `{"registry":"x","templates":3}`, `[1,2]`, `{"source":{"kind":"redis"},"findings":[{"rule":"x","key_base64":"!!"}]}`} {
		if _, err := report.ReadReport(strings.NewReader(in)); err == nil {
			t.Errorf("ReadReport(%q) gave no error", in)
		}
	}
}

func TestHTML(t *testing.T) {
	rs := dataset()
	rs = append(rs, rec("evil:<script>alert(1)</script>", typ("string")), rec("http://example.com/x", typ("string")))
	rep := buildReport(t, loadReg(t), inventory.Options{}, rs)
	var b bytes.Buffer
	if err := rep.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{"<!DOCTYPE html>", "<svg", "memory treemap", "TTL histogram", "mixed-schema", "promo:sku:1001"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, "<script>") {
		t.Error("a key name got into the page unescaped")
	}
	// No external resource: nothing is loaded from the network. Key names
	// may say http://, so look at attributes, where loads happen.
	dec := xml.NewDecoder(strings.NewReader(page))
	dec.Strict = false
	dec.AutoClose = xml.HTMLAutoClose
	dec.Entity = xml.HTMLEntity
	depth, elements := 0, 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("page does not parse: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			depth++
			elements++
			for _, a := range tok.Attr {
				v := strings.ToLower(a.Value)
				if strings.Contains(v, "http:") || strings.Contains(v, "https:") || strings.Contains(v, "//") && (a.Name.Local == "src" || a.Name.Local == "href") {
					t.Errorf("<%s %s=%q> refers to the network", tok.Name.Local, a.Name.Local, a.Value)
				}
			}
			if n := tok.Name.Local; n == "script" || n == "link" || n == "img" || n == "iframe" {
				t.Errorf("page has a <%s> element", n)
			}
		case xml.EndElement:
			depth--
		}
	}
	if depth != 0 || elements < 100 {
		t.Errorf("unbalanced or empty page: depth %d after %d elements", depth, elements)
	}
	page = strings.ReplaceAll(page, `<a href="docs/rules.md#`, "") // links to the rule docs load nothing
	for _, load := range []string{"src=", "href=", "url(", "@import"} {
		if strings.Contains(page, load) {
			t.Errorf("page has %q: it may load something", load)
		}
	}
}

func TestSampled(t *testing.T) {
	reg := loadReg(t)
	agg := inventory.New(reg, inventory.Options{Sampled: true, SampleRatio: 0.1})
	for i := range 50 {
		add(agg, rec(fmt.Sprintf("order:order:%d:base", i), size(100, 3)))
	}
	rep := agg.Report(meta())
	if !rep.Estimate || rep.Sample == nil || rep.Sample.KeysSeen != 50 || rep.Summary.Keys != 500 || rep.Summary.Bytes != 50000 {
		t.Fatalf("sampled report: estimate %v sample %+v summary %+v", rep.Estimate, rep.Sample, rep.Summary)
	}
	if rep.Groups[0].Keys != 500 || rep.Groups[0].Types["hash"] != 500 {
		t.Errorf("group not extrapolated: %+v", rep.Groups[0])
	}
	var b bytes.Buffer
	rep.WriteText(&b, report.TextOptions{})
	if !strings.Contains(b.String(), "~500 keys") {
		t.Errorf("text does not mark estimates:\n%s", b.String())
	}
}

func TestIncomplete(t *testing.T) {
	agg := inventory.New(loadReg(t), inventory.Options{})
	add(agg, rec("order:order:1:base"))
	m := meta()
	m.Stopped = []report.NodeStop{{Node: "127.0.0.1:7001", Reason: "connection refused", Cursor: "1234", Keys: 5000}}
	rep := agg.Report(m)
	if rep.Complete || len(rep.Stopped) != 1 {
		t.Fatalf("complete %v stopped %v", rep.Complete, rep.Stopped)
	}
	var b bytes.Buffer
	rep.WriteText(&b, report.TextOptions{})
	if !strings.Contains(b.String(), "INCOMPLETE") || !strings.Contains(b.String(), "at cursor 1234") {
		t.Errorf("text:\n%s", b.String())
	}
}

func TestFindingsCapped(t *testing.T) {
	agg := inventory.New(loadReg(t), inventory.Options{MaxFindings: 5})
	for i := range 50 {
		add(agg, rec(fmt.Sprintf("order:order:%d:base", i), ttl(-1), size(int64(i), 1)))
	}
	rep := agg.Report(meta())
	var listed []string
	for _, f := range rep.Findings {
		if f.Rule == finding.NoTTL {
			listed = append(listed, f.Key)
		}
	}
	want := []string{"order:order:49:base", "order:order:48:base", "order:order:47:base", "order:order:46:base", "order:order:45:base"}
	if fmt.Sprint(listed) != fmt.Sprint(want) {
		t.Errorf("kept %v, want the five largest %v", listed, want)
	}
	if rep.Summary.ByRule[finding.NoTTL] != 50 || rep.FindingsOmitted[finding.NoTTL] != 45 || rep.Summary.Findings != 50 {
		t.Errorf("by_rule %v omitted %v findings %d", rep.Summary.ByRule, rep.FindingsOmitted, rep.Summary.Findings)
	}
}

// add adds r as a walker that feeds agg alone does: classified by agg.
func add(agg *inventory.Aggregator, r *inventory.Record) { agg.Add(r, agg.Classify(r.Key)) }

// visibleJSON is the JSON of rep without its state: what two runs that
// saw the same keys must agree on (the state's counters of asked keys
// depend on how the keys were batched).
func visibleJSON(t testing.TB, rep *report.Report) []byte {
	t.Helper()
	c := *rep
	c.State = nil
	var b bytes.Buffer
	if err := c.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// Each group carries its keys by TTL class; the groups' buckets add up
// to the report's histogram, and they survive a report's state (resume
// and merge start from it).
func TestGroupTTLHistogram(t *testing.T) {
	reg := loadReg(t)
	agg := inventory.New(reg, inventory.Options{})
	for i := range 300 {
		d := []time.Duration{30 * time.Second, 2 * time.Hour, 3 * 24 * time.Hour, -1}[i%4]
		add(agg, rec(fmt.Sprintf("promo:sku:%d", i), ttl(d), size(int64(100+i%4), 3)))
		add(agg, rec(fmt.Sprintf("legacy_%d_token", i), typ("string"), ttl(-1), size(10, 0)))
	}
	rep := agg.Report(meta())
	total := map[string]int64{}
	found := false
	for _, g := range rep.Groups {
		var keys int64
		for _, b := range g.TTLHistogram {
			keys += b.Keys
			total[b.Label] += b.Keys
			if b.Keys == 0 {
				t.Errorf("%s: empty bucket %q listed", g.Name, b.Label)
			}
		}
		if keys != g.Keys {
			t.Errorf("%s: histogram holds %d keys, the group %d", g.Name, keys, g.Keys)
		}
		if g.Name == "promo:sku:{skuId:int}" {
			found = true
			want := `[{< 1m 75 7500} {1h-4h 75 7575} {1d-7d 75 7650} {no TTL 75 7725}]`
			if got := fmt.Sprint(g.TTLHistogram); got != want {
				t.Errorf("promo:sku: %s, want %s", got, want)
			}
		}
	}
	if !found {
		t.Fatal("no group promo:sku:{skuId:int}")
	}
	for _, b := range rep.TTLHistogram {
		if total[b.Label] != b.Keys {
			t.Errorf("%q: groups hold %d keys, the report %d", b.Label, total[b.Label], b.Keys)
		}
	}
	again, err := inventory.FromReport(reg, rep)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := visibleJSON(t, rep), visibleJSON(t, again.Report(meta())); !bytes.Equal(a, b) {
		t.Error("the report rebuilt from its state differs")
	}
}
