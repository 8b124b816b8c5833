package scancode

import (
	"bufio"
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
	// NoRegistry: no registry was given or found. Every finding would be
	// about a registry, so there are none: Keys lists the key templates
	// found in code, Unfollowed counts the keys built where the scan
	// cannot follow them.
	NoRegistry bool      `json:"no_registry,omitempty"`
	Keys       []CodeKey `json:"keys,omitempty"`
	Unfollowed int       `json:"unfollowed,omitempty"`
}

// CodeKey is a key template found in code, in a scan without a registry.
type CodeKey struct {
	Key    string   `json:"key"`             // the template, every placeholder named
	Types  []string `json:"types,omitempty"` // the Redis types its calls imply
	Places []string `json:"places"`          // file:line:column of each use
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

// WithoutRegistry turns the report of a scan against the empty stand-in
// registry of a run without one into the list of the key templates found
// in code (ss, Suggest of its findings): the findings, which all say a
// key is not in the registry or not built by its builder, become Keys
// and Unfollowed.
func (r *Report) WithoutRegistry(ss []Suggestion) {
	r.NoRegistry, r.Registry = true, ""
	for _, s := range ss {
		r.Keys = append(r.Keys, CodeKey{Key: s.Key, Types: s.Types, Places: s.Places})
	}
	for _, f := range r.Findings {
		if f.Rule != finding.UnregisteredCode {
			r.Unfollowed++
		}
	}
	r.Findings = []Finding{}
	r.count()
}

// WriteText writes one line per finding, with its hint, and a summary.
func (r *Report) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w) // a line or two a finding: thousands on a large project
	if err := r.writeText(bw); err != nil {
		return err
	}
	return bw.Flush()
}

func (r *Report) writeText(w io.Writer) error {
	if r.NoRegistry {
		r.writeKeys(w)
	}
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
	files := plural(total, "file")
	if len(langs) > 0 {
		files += " (" + strings.Join(langs, ", ") + ")"
	}
	line := fmt.Sprintf("%s: %s, %s", r.Registry, files, r.Summary)
	if r.NoRegistry {
		line = fmt.Sprintf("no registry: %s, %s in code", files, plural(len(r.Keys), "key template"))
	}
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

// writeKeys lists the key templates of a scan without a registry, and
// what to run next.
func (r *Report) writeKeys(w io.Writer) {
	fmt.Fprintf(w, "No registry (none given, no keyguard.yaml here): the key templates found in code, checked against nothing.\n")
	for _, k := range r.Keys {
		typ := strings.Join(k.Types, "|")
		if typ == "" {
			typ = "?"
		}
		fmt.Fprintf(w, "  %s  %s  %s\n", finding.Display(k.Key), typ, firstPlaces(k.Places))
	}
	if r.Unfollowed > 0 {
		fmt.Fprintf(w, "  and %s built where the scan cannot follow them (a parameter, a field): with a registry, each is a finding at its place\n", plural(r.Unfollowed, "key"))
	}
	fmt.Fprintf(w, "next: keyguard scan-code --suggest --out keyguard.yaml writes a registry of these templates to review (docs/scan-code.md)\n")
}
