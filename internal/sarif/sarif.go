// Package sarif is the one SARIF 2.1.0 writer of keyguard (lint and
// scan-code): the part of the format that code-scanning UIs read, typed,
// with findings turned into results the same way for every command.
//
//	log := sarif.New("keyguard", version)
//	run := &log.Runs[0]
//	run.AddResult(f, sarif.Rule{ID: f.Rule, ...}, locations)
//	err := log.Write(w)
//
// It imports only finding and internal/jsonout; the SDK must not import it.
package sarif

import (
	"io"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/jsonout"
)

// Schema and Version are the SARIF version written.
const (
	Schema  = "https://json.schemastore.org/sarif-2.1.0.json"
	Version = "2.1.0"
	infoURI = "https://github.com/keyguard/keyguard"
)

type (
	// Log is a SARIF file: one run per tool invocation.
	Log struct {
		Schema  string `json:"$schema"`
		Version string `json:"version"`
		Runs    []Run  `json:"runs"`
	}
	// Run is one invocation's results.
	Run struct {
		Tool              Tool           `json:"tool"`
		AutomationDetails *Automation    `json:"automationDetails,omitempty"`
		ColumnKind        string         `json:"columnKind,omitempty"`
		Invocations       []Invocation   `json:"invocations,omitempty"`
		Results           []Result       `json:"results"`
		index             map[string]int // rule ID → index in Tool.Driver.Rules
	}
	Tool struct {
		Driver Driver `json:"driver"`
	}
	Driver struct {
		Name           string `json:"name"`
		Version        string `json:"version,omitempty"`
		InformationURI string `json:"informationUri"`
		Rules          []Rule `json:"rules"`
	}
	Automation struct {
		ID string `json:"id"`
	}
	// Rule describes a rule ID once; results point at it by index.
	Rule struct {
		ID               string         `json:"id"`
		Name             string         `json:"name,omitempty"`
		ShortDescription Text           `json:"shortDescription"`
		FullDescription  *Text          `json:"fullDescription,omitempty"`
		Help             Help           `json:"help"`
		HelpURI          string         `json:"helpUri"`
		Default          *Configuration `json:"defaultConfiguration,omitempty"`
		Properties       map[string]any `json:"properties,omitempty"`
	}
	Text struct {
		Text string `json:"text"`
	}
	Help struct {
		Text     string `json:"text"`
		Markdown string `json:"markdown,omitempty"`
	}
	Configuration struct {
		Level string `json:"level"`
	}
	// Invocation says whether the run succeeded and why not.
	Invocation struct {
		ExecutionSuccessful bool           `json:"executionSuccessful"`
		Notifications       []Notification `json:"toolExecutionNotifications,omitempty"`
	}
	Notification struct {
		Level     string     `json:"level"`
		Message   Text       `json:"message"`
		Locations []Location `json:"locations,omitempty"`
	}
	Result struct {
		RuleID              string            `json:"ruleId"`
		RuleIndex           int               `json:"ruleIndex"`
		Level               string            `json:"level"`
		Message             Text              `json:"message"`
		Locations           []Location        `json:"locations,omitempty"`
		PartialFingerprints map[string]string `json:"partialFingerprints,omitempty"`
		Properties          map[string]any    `json:"properties,omitempty"`
	}
	Location struct {
		PhysicalLocation PhysicalLocation `json:"physicalLocation"`
	}
	PhysicalLocation struct {
		ArtifactLocation ArtifactLocation `json:"artifactLocation"`
		Region           *Region          `json:"region,omitempty"`
	}
	ArtifactLocation struct {
		URI string `json:"uri"`
	}
	Region struct {
		StartLine   int `json:"startLine"`
		StartColumn int `json:"startColumn,omitempty"`
	}
)

// New is a log with one run of keyguard (version may be empty).
func New(version string) *Log {
	run := Run{Results: []Result{}}
	run.Tool.Driver = Driver{Name: "keyguard", Version: version, InformationURI: infoURI, Rules: []Rule{}}
	return &Log{Schema: Schema, Version: Version, Runs: []Run{run}}
}

// Level is the SARIF level of a severity: error, warning or note.
func Level(s finding.Severity) string {
	switch s {
	case finding.Error:
		return "error"
	case finding.Warning:
		return "warning"
	}
	return "note"
}

// RuleFor is the rule of a finding's ID as keyguard documents it: its
// summary, and its section of docs/rules.md under docsBase ("" for the
// repository's own docs).
func RuleFor(docsBase, id string) Rule {
	help := finding.HelpURI(docsBase, id)
	sum := finding.Summary(id)
	return Rule{ID: id, ShortDescription: Text{sum}, HelpURI: help,
		Help: Help{Text: sum + ". What it means, why it matters and how to fix it: " + help}}
}

// Rule returns the index of the rule with id, adding it with mk when the
// run has none yet.
func (r *Run) Rule(id string, mk func() Rule) int {
	if r.index == nil {
		r.index = map[string]int{}
		for i, ru := range r.Tool.Driver.Rules {
			r.index[ru.ID] = i
		}
	}
	if i, ok := r.index[id]; ok {
		return i
	}
	i := len(r.Tool.Driver.Rules)
	r.Tool.Driver.Rules = append(r.Tool.Driver.Rules, mk())
	r.index[id] = i
	return i
}

// Locations is where a finding is: its file, line and column, or none.
func Locations(f *finding.Finding) []Location {
	if f.File == "" {
		return nil
	}
	return []Location{At(f.File, f.Line, f.Column)}
}

// At is a location in a file; line 0 leaves the region out.
func At(file string, line, col int) Location {
	var l Location
	l.PhysicalLocation.ArtifactLocation.URI = file
	if line > 0 {
		l.PhysicalLocation.Region = &Region{StartLine: line, StartColumn: col}
	}
	return l
}

// Message is a finding's message with its hint.
func Message(f *finding.Finding) Text {
	if f.Hint == "" {
		return Text{f.Message}
	}
	return Text{f.Message + " Try: " + f.Hint}
}

// Write writes the log as indented JSON.
func (l *Log) Write(w io.Writer) error {
	return jsonout.Write(w, l)
}
