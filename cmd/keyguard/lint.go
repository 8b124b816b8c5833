package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/registry"
)

func runLint(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "lint", "lint [--registry FILE] [--format text|json|sarif] [--fail-on SEVERITY] [--out FILE]",
		"  keyguard lint\n  keyguard lint --registry conf/keyguard.yaml --format json --out lint.json\n  keyguard lint --fail-on warning   # strict CI gate\n"+
			"  keyguard lint --format sarif -o keyguard.sarif   # code scanning; a file that does not load is a failed run in it")
	fs.registryFlag(e)
	fs.outputFlags("text", "json", "sarif")
	fs.failOnFlag()
	docs := fs.String("docs-url", finding.DefaultDocsBase, "`URL` under which docs/ is published, for the rule links of JSON and SARIF (\"\": links relative to the repository)")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("lint takes no arguments; got %q", pos[0])
	}
	reg, loadErr := fs.loadRegistry()
	if loadErr != nil && fs.opts.format == "text" {
		return loadErr
	}
	res := lintResult{file: fs.opts.registry, docs: *docs, loadErr: loadErr}
	if loadErr == nil {
		res.file, res.templates, res.fds = reg.File, len(reg.Entries), reg.Lint()
	} else {
		// JSON and SARIF readers get a document either way: the load
		// errors are its findings. The exit code stays 2.
		res.fds = loadFindings(fs.opts.registry, loadErr)
	}
	out, err := fs.openOutput(e)
	if err != nil {
		return err
	}
	switch fs.opts.format {
	case "json":
		err = res.writeJSON(out)
	case "sarif":
		err = res.writeSARIF(out)
	default:
		err = writeLintText(out, res.file, res.templates, res.fds)
	}
	if err := out.finish(err); err != nil {
		return err
	}
	if loadErr != nil {
		return loadErr
	}
	return verdict(res.fds, fs.threshold())
}

// lintResult is what lint writes: the findings of a registry, or the
// problems that kept it from loading.
type lintResult struct {
	file      string
	templates int
	fds       []finding.Finding
	loadErr   error
	docs      string
}

// loadFindings turns a load error into findings of rule load, one per
// problem, each with its file, line and column.
func loadFindings(file string, err error) []finding.Finding {
	var list registry.ErrorList
	if errors.As(err, &list) {
		out := make([]finding.Finding, 0, len(list))
		for _, pe := range list {
			f := pe.Pos.File
			if f == "" {
				f = file
			}
			out = append(out, finding.Finding{Rule: finding.Load, Severity: finding.Error, Message: pe.Msg, Hint: pe.Hint,
				File: f, Line: pe.Pos.Line, Column: pe.Pos.Col})
		}
		return out
	}
	msg, hint, _ := strings.Cut(err.Error(), "\n\tTry: ")
	return []finding.Finding{{Rule: finding.Load, Severity: finding.Error, Message: msg, Hint: hint, File: file}}
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

// plural is report.Plural for an int; "info" is its own plural.
func plural(n int, word string) string {
	if word == "info" {
		return fmt.Sprintf("%d %s", n, word)
	}
	return report.Plural(int64(n), word)
}

func writeLintText(w io.Writer, file string, templates int, fds []finding.Finding) error {
	if err := finding.WriteText(w, fds); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%s: %s, %s\n", file, plural(templates, "template"), finding.Count(fds))
	return err
}

// docFinding is a finding as JSON writes it: with the link to its rule.
type docFinding struct {
	finding.Finding
	Doc string `json:"doc"`
}

// withDocs links each finding to its rule under base, the published
// docs/ (--docs-url); "" links relative to the repository.
func withDocs(fds []finding.Finding, base string) []docFinding {
	out := make([]docFinding, len(fds))
	for i, f := range fds {
		doc := finding.DocURL(f.Rule)
		if base != "" {
			doc = finding.HelpURI(base, f.Rule)
		}
		out[i] = docFinding{f, doc}
	}
	return out
}

func (r *lintResult) writeJSON(w io.Writer) error {
	fds := withDocs(r.fds, r.docs)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(struct {
		Registry  string         `json:"registry"`
		Loaded    bool           `json:"loaded"`
		Templates int            `json:"templates"`
		Summary   finding.Counts `json:"summary"`
		Findings  []docFinding   `json:"findings"`
	}{r.file, r.loadErr == nil, r.templates, finding.Count(r.fds), fds})
}

// SARIF 2.1.0, the part code-scanning UIs read.
type (
	sarifLog struct {
		Schema  string     `json:"$schema"`
		Version string     `json:"version"`
		Runs    []sarifRun `json:"runs"`
	}
	sarifRun struct {
		Tool        sarifTool         `json:"tool"`
		Invocations []sarifInvocation `json:"invocations"`
		Results     []sarifResult     `json:"results"`
	}
	sarifTool struct {
		Driver struct {
			Name           string      `json:"name"`
			Version        string      `json:"version,omitempty"`
			InformationURI string      `json:"informationUri"`
			Rules          []sarifRule `json:"rules"`
		} `json:"driver"`
	}
	sarifRule struct {
		ID               string    `json:"id"`
		ShortDescription sarifText `json:"shortDescription"`
		HelpURI          string    `json:"helpUri"`
		Help             sarifText `json:"help"`
	}
	sarifText struct {
		Text string `json:"text"`
	}
	sarifInvocation struct {
		ExecutionSuccessful bool                `json:"executionSuccessful"`
		Notifications       []sarifNotification `json:"toolExecutionNotifications,omitempty"`
	}
	sarifNotification struct {
		Level     string          `json:"level"`
		Message   sarifText       `json:"message"`
		Locations []sarifLocation `json:"locations,omitempty"`
	}
	sarifResult struct {
		RuleID    string          `json:"ruleId"`
		RuleIndex int             `json:"ruleIndex"`
		Level     string          `json:"level"`
		Message   sarifText       `json:"message"`
		Locations []sarifLocation `json:"locations,omitempty"`
	}
	sarifLocation struct {
		PhysicalLocation struct {
			ArtifactLocation struct {
				URI string `json:"uri"`
			} `json:"artifactLocation"`
			Region *sarifRegion `json:"region,omitempty"`
		} `json:"physicalLocation"`
	}
	sarifRegion struct {
		StartLine   int `json:"startLine"`
		StartColumn int `json:"startColumn,omitempty"`
	}
)

func sarifLevel(s finding.Severity) string {
	switch s {
	case finding.Error:
		return "error"
	case finding.Warning:
		return "warning"
	}
	return "note"
}

func sarifLocations(f *finding.Finding) []sarifLocation {
	if f.File == "" {
		return nil
	}
	var l sarifLocation
	l.PhysicalLocation.ArtifactLocation.URI = f.File
	if f.Line > 0 {
		l.PhysicalLocation.Region = &sarifRegion{f.Line, f.Column}
	}
	return []sarifLocation{l}
}

// writeSARIF writes SARIF 2.1.0, which code-scanning UIs show inline. A
// registry that does not load is a run that did not succeed, with the
// problems as its notifications and as results.
func (r *lintResult) writeSARIF(w io.Writer) error {
	run := sarifRun{Invocations: []sarifInvocation{{ExecutionSuccessful: r.loadErr == nil}}, Results: []sarifResult{}}
	run.Tool.Driver.Name = "keyguard"
	run.Tool.Driver.InformationURI = "https://github.com/keyguard/keyguard"
	run.Tool.Driver.Version = moduleVersion()
	run.Tool.Driver.Rules = []sarifRule{}
	index := map[string]int{}
	for i := range r.fds {
		f := &r.fds[i]
		idx, ok := index[f.Rule]
		if !ok {
			idx = len(run.Tool.Driver.Rules)
			index[f.Rule] = idx
			help := finding.HelpURI(r.docs, f.Rule)
			run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, sarifRule{ID: f.Rule, ShortDescription: sarifText{finding.Summary(f.Rule)},
				HelpURI: help, Help: sarifText{finding.Summary(f.Rule) + ". What it means, why it matters and how to fix it: " + help}})
		}
		text := f.Message
		if f.Hint != "" {
			text += " Try: " + f.Hint
		}
		run.Results = append(run.Results, sarifResult{RuleID: f.Rule, RuleIndex: idx, Level: sarifLevel(f.Severity), Message: sarifText{text}, Locations: sarifLocations(f)})
		if r.loadErr != nil {
			inv := &run.Invocations[0]
			inv.Notifications = append(inv.Notifications, sarifNotification{Level: "error", Message: sarifText{text}, Locations: sarifLocations(f)})
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(sarifLog{Schema: "https://json.schemastore.org/sarif-2.1.0.json", Version: "2.1.0", Runs: []sarifRun{run}})
}
