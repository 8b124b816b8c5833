package keycheck

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/cli"
	"github.com/keyguard/keyguard/internal/human"
	"github.com/keyguard/keyguard/internal/jsonout"
	"github.com/keyguard/keyguard/internal/sarif"
	"github.com/keyguard/keyguard/registry"
)

// LintOptions are what keyguard lint runs with: the registry, or the error
// that kept it from loading.
type LintOptions struct {
	Registry  *registry.Registry
	LoadErr   error
	File      string // --registry, for a registry that did not load
	Format    string // text, json or sarif
	Out       string
	Threshold finding.Severity
	Docs      string // --docs-url
	Version   string // keyguard's, for SARIF
}

// Lint writes the registry's findings, or, in JSON and SARIF, the
// problems that kept it from loading (a text run returns that error). It
// returns cli.ErrFindings when a finding reaches the threshold.
func Lint(e *cli.Env, o LintOptions) error {
	reg, loadErr := o.Registry, o.LoadErr
	if loadErr != nil && o.Format == "text" {
		return loadErr
	}
	res := lintResult{file: o.File, docs: o.Docs, loadErr: loadErr, version: o.Version}
	if loadErr == nil {
		res.file, res.templates, res.fds = reg.File, len(reg.Entries), reg.Lint()
	} else {
		// JSON and SARIF readers get a document either way: the load
		// errors are its findings. The exit code stays 2.
		res.fds = loadFindings(o.File, loadErr)
	}
	out, err := cli.OpenOutput(e, "--out", o.Out)
	if err != nil {
		return err
	}
	switch o.Format {
	case "json":
		err = res.writeJSON(out)
	case "sarif":
		err = res.writeSARIF(out)
	default:
		err = writeLintText(out, res.file, res.templates, res.fds)
	}
	if err := out.Finish(err); err != nil {
		return err
	}
	if loadErr != nil {
		return loadErr
	}
	return cli.Verdict(res.fds, o.Threshold)
}

// lintResult is what lint writes: the findings of a registry, or the
// problems that kept it from loading.
type lintResult struct {
	file      string
	templates int
	fds       []finding.Finding
	loadErr   error
	docs      string
	version   string
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

func plural(n int, word string) string { return human.Plural(n, word) }

func writeLintText(w io.Writer, file string, templates int, fds []finding.Finding) error {
	if err := finding.WriteText(w, fds); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%s: %s, %s\n", file, plural(templates, "template"), finding.Count(fds))
	return err
}

// DocFinding is a finding as JSON writes it: with the link to its rule.
type DocFinding struct {
	finding.Finding
	Doc string `json:"doc"`
}

// WithDocs links each finding to its rule under base, the published
// docs/ (--docs-url); "" links relative to the repository.
func WithDocs(fds []finding.Finding, base string) []DocFinding {
	out := make([]DocFinding, len(fds))
	for i, f := range fds {
		doc := finding.DocURL(f.Rule)
		if base != "" {
			doc = finding.HelpURI(base, f.Rule)
		}
		out[i] = DocFinding{f, doc}
	}
	return out
}

func (r *lintResult) writeJSON(w io.Writer) error {
	fds := WithDocs(r.fds, r.docs)
	return jsonout.Write(w, struct {
		Registry  string         `json:"registry"`
		Loaded    bool           `json:"loaded"`
		Templates int            `json:"templates"`
		Summary   finding.Counts `json:"summary"`
		Findings  []DocFinding   `json:"findings"`
	}{r.file, r.loadErr == nil, r.templates, finding.Count(r.fds), fds})
}

// writeSARIF writes SARIF 2.1.0, which code-scanning UIs show inline. A
// registry that does not load is a run that did not succeed, with the
// problems as its notifications and as results.
func (r *lintResult) writeSARIF(w io.Writer) error {
	log := sarif.New(r.version)
	run := &log.Runs[0]
	run.Invocations = []sarif.Invocation{{ExecutionSuccessful: r.loadErr == nil}}
	for i := range r.fds {
		f := &r.fds[i]
		idx := run.Rule(f.Rule, func() sarif.Rule { return sarif.RuleFor(r.docs, f.Rule) })
		msg, locs := sarif.Message(f), sarif.Locations(f)
		run.Results = append(run.Results, sarif.Result{RuleID: f.Rule, RuleIndex: idx, Level: sarif.Level(f.Severity), Message: msg, Locations: locs})
		if r.loadErr != nil {
			inv := &run.Invocations[0]
			inv.Notifications = append(inv.Notifications, sarif.Notification{Level: "error", Message: msg, Locations: locs})
		}
	}
	return log.Write(w)
}
