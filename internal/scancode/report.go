package scancode

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/human"
	"github.com/keyguard/keyguard/internal/jsonout"
	"github.com/keyguard/keyguard/internal/keyshape"
)

// Report is a scan's result as scan-code writes it.
type Report struct {
	Registry string                `json:"registry"`
	Files    map[keyshape.Lang]int `json:"files"`
	Skipped  int                   `json:"skipped"`
	Summary  Summary               `json:"summary"`
	// Baselined counts the findings the baseline accepted (left out of
	// Findings).
	Baselined int       `json:"baselined,omitempty"`
	Findings  []Finding `json:"findings"`
	// NotAnalysed are the files the scan could not analyse, with why;
	// TooLarge those left out for their size. Both always listed.
	NotAnalysed []FileIssue `json:"not_analysed"`
	TooLarge    []FileIssue `json:"too_large"`
}

// Summary counts findings by severity.
type Summary struct {
	Error   int `json:"error"`
	Warning int `json:"warning"`
	Info    int `json:"info"`
}

// NewReport is the report of a result.
func NewReport(registryFile string, res *Result) *Report {
	r := &Report{Registry: registryFile, Files: res.Files, Skipped: res.Skipped, Findings: res.Findings,
		NotAnalysed: res.NotAnalysed, TooLarge: res.TooLarge}
	if r.Findings == nil {
		r.Findings = []Finding{}
	}
	if r.NotAnalysed == nil {
		r.NotAnalysed = []FileIssue{}
	}
	if r.TooLarge == nil {
		r.TooLarge = []FileIssue{}
	}
	r.count()
	return r
}

func (r *Report) count() {
	r.Summary = Summary{}
	for _, f := range r.Findings {
		switch f.Severity {
		case finding.Error:
			r.Summary.Error++
		case finding.Warning:
			r.Summary.Warning++
		default:
			r.Summary.Info++
		}
	}
}

// Worst is the highest severity among the findings, and false when there
// are none.
func (r *Report) Worst() (finding.Severity, bool) {
	if len(r.Findings) == 0 {
		return finding.Info, false
	}
	w := finding.Info
	for _, f := range r.Findings {
		w = max(w, f.Severity)
	}
	return w, true
}

// WriteJSON writes the report as one JSON document.
func (r *Report) WriteJSON(w io.Writer) error {
	return jsonout.Write(w, r)
}

// WriteText writes one line per finding, with its hint, and a summary.
func (r *Report) WriteText(w io.Writer) error {
	for _, f := range r.Findings {
		fmt.Fprintf(w, "%s: %s %s: %s\n", f.Where(), f.Severity, f.Rule, f.Message)
		if f.Hint != "" {
			fmt.Fprintf(w, "\tTry: %s\n", f.Hint)
		}
	}
	for _, fi := range r.NotAnalysed {
		fmt.Fprintf(w, "%s: not analysed: %s\n", fi.File, fi.Reason)
	}
	for _, fi := range r.TooLarge {
		fmt.Fprintf(w, "%s: skipped: %s\n", fi.File, fi.Reason)
	}
	var langs []string
	total := 0
	for _, l := range slices.Sorted(maps.Keys(r.Files)) {
		langs = append(langs, fmt.Sprintf("%s %d", l, r.Files[l]))
		total += r.Files[l]
	}
	files := fmt.Sprintf("%d files", total)
	if len(langs) > 0 {
		files += " (" + strings.Join(langs, ", ") + ")"
	}
	line := fmt.Sprintf("%s: %s, %s", r.Registry, files, r.Summary)
	if r.Baselined > 0 {
		line += fmt.Sprintf("; %d accepted by the baseline", r.Baselined)
	}
	if n := len(r.NotAnalysed); n > 0 {
		line += fmt.Sprintf("; %s NOT ANALYSED", plural(n, "file"))
	}
	if n := len(r.TooLarge); n > 0 {
		line += fmt.Sprintf("; %s too large, skipped", plural(n, "file"))
	}
	_, err := fmt.Fprintln(w, line)
	return err
}

func (s Summary) String() string {
	if s.Error+s.Warning+s.Info == 0 {
		return "no findings"
	}
	return fmt.Sprintf("%s, %s, %d info", plural(s.Error, "error"), plural(s.Warning, "warning"), s.Info)
}

func plural(n int, word string) string { return human.Plural(n, word) }
