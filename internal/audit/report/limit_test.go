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
