package report_test

import (
	"bytes"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/keyguard/keyguard/internal/audit/report"
)

// TestReadReportLimits: a report nested too deep or too large is refused
// as it streams in (a 200 KB bomb allocates little), with ErrReportLimit;
// a real report within the limits reads.
func TestReadReportLimits(t *testing.T) {
	for name, bomb := range map[string]string{
		"array":  `{"source":{"kind":"redis"},"groups":` + strings.Repeat("[", 200_000),
		"object": strings.Repeat(`{"a":`, 40_000),
		"mixed":  `{"findings":[` + strings.Repeat(`{"x":[`, 30_000),
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := report.ReadReport(strings.NewReader(bomb))
		runtime.ReadMemStats(&after)
		if !errors.Is(err, report.ErrReportLimit) || !strings.Contains(err.Error(), "nested deeper than 32 levels") {
			t.Errorf("%s: %v", name, err)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 50<<20 {
			t.Errorf("%s: %d bytes allocated to refuse it", name, alloc)
		}
	}
	r := bigReport()
	var b bytes.Buffer
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	n := int64(b.Len())
	if _, err := report.ReadReportLimited(bytes.NewReader(b.Bytes()), report.ReadLimits{MaxBytes: n}); err != nil {
		t.Errorf("at the size limit: %v", err)
	}
	_, err := report.ReadReportLimited(bytes.NewReader(b.Bytes()), report.ReadLimits{MaxBytes: n - 1})
	if !errors.Is(err, report.ErrReportLimit) || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("a byte over the size limit: %v", err)
	}
	// Brackets inside strings are text.
	if _, err := report.ReadReportLimited(strings.NewReader(`{"source":{"kind":"redis","target":"[[[[[[[[\"{{{{{{"}}`), report.ReadLimits{MaxDepth: 3}); err != nil {
		t.Errorf("brackets in a string: %v", err)
	}
}

// TestReadReportCounts: a report of millions of tiny entries (findings of
// "{}", a map of counts, notes, state groups) is refused at the first entry
// over the count limit, naming the list, in little memory; a real report,
// whose lists are each counted exactly, reads at its counts and is refused
// one entry below them.
func TestReadReportCounts(t *testing.T) {
	n := 3_000_000
	if testing.Short() {
		n = 1_200_000
	}
	head := `{"source":{"kind":"redis"},`
	for name, c := range map[string]struct{ bomb, want string }{
		"findings": {head + `"findings":[` + strings.Repeat(`{},`, n) + `{}]}`, "findings holds more than 1000000 entries"},
		"groups":   {head + `"groups":[` + strings.Repeat(`{"types":{}},`, n) + `{}]}`, "groups holds more than 1000000 entries"},
		"top_keys": {head + `"top_keys":[` + strings.Repeat(`{},`, n) + `{}]}`, "top_keys holds more than 1000000 entries"},
		"notes":    {head + `"notes":[` + strings.Repeat(`"",`, n) + `""]}`, "notes holds more than 1000000 entries"},
		"state":    {head + `"state":{"groups":[` + strings.Repeat(`{},`, n) + `{}]}}`, "state.groups holds more than 1000000 entries"},
		"map":      {head + `"summary":{"by_rule":{` + strings.Repeat(`"a":1,`, n) + `"b":1}}}`, "summary.by_rule holds more than 1000000 entries"},
		"types":    {head + `"groups":[{"types":{` + strings.Repeat(`"a":1,`, n) + `"b":1}}]}`, "groups[].types holds more than 1000000 entries"},
	} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := report.ReadReport(strings.NewReader(c.bomb))
		runtime.ReadMemStats(&after)
		if !errors.Is(err, report.ErrReportLimit) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "--max-findings") {
			t.Errorf("%s: %v", name, err)
		}
		// The decoder holds the prefix read so far (a few MB), never the
		// decoded entries (a Finding is over 200 bytes).
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
			t.Errorf("%s: %d bytes allocated to refuse it", name, alloc)
		}
	}
	// Many lists, each under the limit: the total refuses them.
	var b strings.Builder
	b.WriteString(head + `"groups":[`)
	for i := range 20 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"types":{` + strings.Repeat(`"a":1,`, 999) + `"b":1}}`)
	}
	b.WriteString(`]}`)
	_, err := report.ReadReportLimited(strings.NewReader(b.String()), report.ReadLimits{MaxTotalEntries: 15_000})
	if !errors.Is(err, report.ErrReportLimit) || !strings.Contains(err.Error(), "more than 15000 entries in all its lists and maps") {
		t.Errorf("total: %v", err)
	}
	// Counted exactly: source and groups, kind, 20 groups, their types, 20×1000.
	exact := 2 + 1 + 20 + 20 + 20_000
	if _, err := report.ReadReportLimited(strings.NewReader(b.String()), report.ReadLimits{MaxEntries: 1000, MaxTotalEntries: exact}); err != nil {
		t.Errorf("at the limits: %v", err)
	}
	if _, err := report.ReadReportLimited(strings.NewReader(b.String()), report.ReadLimits{MaxEntries: 1000, MaxTotalEntries: exact - 1}); !errors.Is(err, report.ErrReportLimit) {
		t.Errorf("one entry over the total: %v", err)
	}

	// A real report: its findings list is the longest, exactly len(Findings).
	r := bigReport()
	var buf bytes.Buffer
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	nf := len(r.Findings)
	got, err := report.ReadReportLimited(bytes.NewReader(buf.Bytes()), report.ReadLimits{MaxEntries: nf})
	if err != nil || len(got.Findings) != nf {
		t.Fatalf("at the entries limit %d: %v", nf, err)
	}
	_, err = report.ReadReportLimited(bytes.NewReader(buf.Bytes()), report.ReadLimits{MaxEntries: nf - 1})
	if !errors.Is(err, report.ErrReportLimit) || !strings.Contains(err.Error(), "findings holds more than") {
		t.Errorf("one finding over: %v", err)
	}
	// Brackets, commas and quotes inside strings count nothing.
	s := `{"source":{"kind":"redis","target":"a,b,[c,{d:\"e,f\"}]"},"notes":["x,y,z","[,,,]"]}`
	got, err = report.ReadReportLimited(strings.NewReader(s), report.ReadLimits{MaxEntries: 2, MaxTotalEntries: 2 + 2 + 2})
	if err != nil || len(got.Notes) != 2 {
		t.Errorf("commas in strings: %v %v", got, err)
	}
}
