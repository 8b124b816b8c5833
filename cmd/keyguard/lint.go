package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/keyguard/keyguard/finding"
)

func runLint(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "lint", "lint [--registry FILE] [--format text|json|sarif] [--fail-on SEVERITY]",
		"  keyguard lint\n  keyguard lint --registry conf/keyguard.yaml --format json --out lint.json\n  keyguard lint --fail-on warning   # strict CI gate")
	fs.registryFlag(e)
	fs.outputFlags("text", "json", "sarif")
	fs.failOnFlag()
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("lint takes no arguments; got %q", pos[0])
	}
	reg, err := fs.loadRegistry()
	if err != nil {
		return err
	}
	fds := reg.Lint()
	out, err := fs.openOutput(e)
	if err != nil {
		return err
	}
	switch fs.opts.format {
	case "json":
		err = writeLintJSON(out, reg.File, len(reg.Entries), fds)
	case "sarif":
		err = writeSARIF(out, fds)
	default:
		err = writeLintText(out, reg.File, len(reg.Entries), fds)
	}
	if cerr := out.close(err == nil); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return verdict(fds, fs.threshold())
}

// verdict is errFindings when a finding reaches the threshold.
func verdict(fds []finding.Finding, threshold finding.Severity) error {
	for _, f := range fds {
		if f.Severity.AtLeast(threshold) {
			return errFindings
		}
	}
	return nil
}

type severityCount struct {
	Error   int `json:"error"`
	Warning int `json:"warning"`
	Info    int `json:"info"`
}

func countSeverities(fds []finding.Finding) severityCount {
	var c severityCount
	for _, f := range fds {
		switch f.Severity {
		case finding.Error:
			c.Error++
		case finding.Warning:
			c.Warning++
		default:
			c.Info++
		}
	}
	return c
}

func (c severityCount) String() string {
	if c.Error+c.Warning+c.Info == 0 {
		return "no findings"
	}
	return fmt.Sprintf("%s, %s, %s", plural(c.Error, "error"), plural(c.Warning, "warning"), plural(c.Info, "info"))
}

func plural(n int, word string) string {
	if n == 1 || word == "info" {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func writeLintText(w io.Writer, file string, templates int, fds []finding.Finding) error {
	for _, f := range fds {
		where := f.Where()
		if where != "" {
			where += ": "
		}
		fmt.Fprintf(w, "%s%s %s: %s\n", where, f.Severity, f.Rule, f.Message)
		if f.Hint != "" {
			fmt.Fprintf(w, "\tTry: %s\n", f.Hint)
		}
	}
	_, err := fmt.Fprintf(w, "%s: %d templates, %s\n", file, templates, countSeverities(fds))
	return err
}

func writeLintJSON(w io.Writer, file string, templates int, fds []finding.Finding) error {
	if fds == nil {
		fds = []finding.Finding{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(struct {
		Registry  string            `json:"registry"`
		Templates int               `json:"templates"`
		Summary   severityCount     `json:"summary"`
		Findings  []finding.Finding `json:"findings"`
	}{file, templates, countSeverities(fds), fds})
}

// writeSARIF writes SARIF 2.1.0, which code-scanning UIs show inline.
func writeSARIF(w io.Writer, fds []finding.Finding) error {
	type region struct {
		StartLine   int `json:"startLine"`
		StartColumn int `json:"startColumn,omitempty"`
	}
	type location struct {
		PhysicalLocation struct {
			ArtifactLocation struct {
				URI string `json:"uri"`
			} `json:"artifactLocation"`
			Region *region `json:"region,omitempty"`
		} `json:"physicalLocation"`
	}
	type result struct {
		RuleID  string `json:"ruleId"`
		Level   string `json:"level"`
		Message struct {
			Text string `json:"text"`
		} `json:"message"`
		Locations []location `json:"locations,omitempty"`
	}
	type rule struct {
		ID string `json:"id"`
	}
	var results []result
	var rules []rule
	seen := map[string]bool{}
	for _, f := range fds {
		r := result{RuleID: f.Rule, Level: map[finding.Severity]string{finding.Error: "error", finding.Warning: "warning", finding.Info: "note"}[f.Severity]}
		r.Message.Text = f.Message
		if f.Hint != "" {
			r.Message.Text += " Try: " + f.Hint
		}
		if f.File != "" {
			var l location
			l.PhysicalLocation.ArtifactLocation.URI = f.File
			if f.Line > 0 {
				l.PhysicalLocation.Region = &region{f.Line, f.Column}
			}
			r.Locations = []location{l}
		}
		results = append(results, r)
		if !seen[f.Rule] {
			seen[f.Rule] = true
			rules = append(rules, rule{f.Rule})
		}
	}
	if results == nil {
		results = []result{}
	}
	doc := map[string]any{
		"$schema": "https://json.schemastore.org/sarif-2.1.0.json",
		"version": "2.1.0",
		"runs": []any{map[string]any{
			"tool":    map[string]any{"driver": map[string]any{"name": "keyguard", "informationUri": "https://github.com/keyguard/keyguard", "rules": rules}},
			"results": results,
		}},
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}
