package scancode

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// Baseline is the findings a previous scan accepted: a large codebase
// adopts scan-code by accepting today's findings and failing only on new
// ones. A finding is matched by rule, file and key template, not by line,
// so code moving inside a file keeps its findings accepted; a file with two
// findings of one template accepts two.
type Baseline struct {
	counts map[string]int
}

func fingerprint(f Finding) string { return f.Rule + "\x00" + f.File + "\x00" + f.Template }

// ReadBaseline reads a scan-code JSON report (--format json) as a baseline.
func ReadBaseline(r io.Reader, name string) (*Baseline, error) {
	var doc struct {
		Findings *[]Finding `json:"findings"`
	}
	if err := json.NewDecoder(r).Decode(&doc); err != nil {
		return nil, fmt.Errorf("baseline %s: %w\n\tTry: write it with keyguard scan-code --format json --out %s", name, err, name)
	}
	if doc.Findings == nil {
		return nil, fmt.Errorf("baseline %s: not a scan-code JSON report (no findings list)\n\tTry: keyguard scan-code --format json --out %s", name, name)
	}
	b := &Baseline{counts: map[string]int{}}
	for _, f := range *doc.Findings {
		b.counts[fingerprint(f)]++
	}
	return b, nil
}

// ReadBaselineFile reads a baseline from a file.
func ReadBaselineFile(path string) (*Baseline, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("baseline: %w\n\tTry: write one with keyguard scan-code --format json --out %s", err, path)
	}
	defer f.Close()
	return ReadBaseline(f, path)
}

// Apply leaves out of the report the findings the baseline accepts and
// counts them in Baselined.
func (b *Baseline) Apply(r *Report) {
	left := map[string]int{}
	for k, n := range b.counts {
		left[k] = n
	}
	kept := r.Findings[:0:0]
	for _, f := range r.Findings {
		if k := fingerprint(f); left[k] > 0 {
			left[k]--
			r.Baselined++
			continue
		}
		kept = append(kept, f)
	}
	r.Findings = kept
	r.count()
}
