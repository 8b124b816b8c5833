package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/keyguard/keyguard/finding"
)

// sarifDoc is the part of a SARIF log the tests read.
type sarifDoc struct {
	Version string `json:"version"`
	Runs    []struct {
		Tool struct {
			Driver struct {
				Name  string `json:"name"`
				Rules []struct {
					ID               string `json:"id"`
					HelpURI          string `json:"helpUri"`
					ShortDescription struct {
						Text string `json:"text"`
					} `json:"shortDescription"`
					Help struct {
						Text string `json:"text"`
					} `json:"help"`
				} `json:"rules"`
			} `json:"driver"`
		} `json:"tool"`
		Invocations []struct {
			ExecutionSuccessful *bool `json:"executionSuccessful"`
			Notifications       []struct {
				Level   string `json:"level"`
				Message struct {
					Text string `json:"text"`
				} `json:"message"`
			} `json:"toolExecutionNotifications"`
		} `json:"invocations"`
		Results []struct {
			RuleID    string `json:"ruleId"`
			RuleIndex int    `json:"ruleIndex"`
			Level     string `json:"level"`
			Locations []struct {
				PhysicalLocation struct {
					ArtifactLocation struct {
						URI string `json:"uri"`
					} `json:"artifactLocation"`
					Region struct {
						StartLine   int `json:"startLine"`
						StartColumn int `json:"startColumn"`
					} `json:"region"`
				} `json:"physicalLocation"`
			} `json:"locations"`
		} `json:"results"`
	} `json:"runs"`
}

func readSARIF(t *testing.T, out string) sarifDoc {
	t.Helper()
	var doc sarifDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if doc.Version != "2.1.0" || len(doc.Runs) != 1 || len(doc.Runs[0].Invocations) != 1 || doc.Runs[0].Invocations[0].ExecutionSuccessful == nil {
		t.Fatalf("not one SARIF 2.1.0 run with an invocation:\n%s", out)
	}
	return doc
}

// TestLintSARIFClean: no findings is an empty rules array, not null.
func TestLintSARIFClean(t *testing.T) {
	code, out, _ := runCLI(t, "", "lint", "--registry", "testdata/clean.yaml", "--format", "sarif")
	if code != 0 || !strings.Contains(out, `"rules": []`) || !strings.Contains(out, `"results": []`) {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if doc := readSARIF(t, out); !*doc.Runs[0].Invocations[0].ExecutionSuccessful {
		t.Fatal("a clean run is not successful")
	}
}

// TestLintSARIFRules: every rule of a result is in the driver's rules,
// with its summary and a link to its section of docs/rules.md.
func TestLintSARIFRules(t *testing.T) {
	code, out, _ := runCLI(t, "", "lint", "--registry", "testdata/demo.yaml", "--format", "sarif", "--docs-url", "https://docs.example.com/keyguard/")
	doc := readSARIF(t, out)
	run := doc.Runs[0]
	if code != 1 || len(run.Results) == 0 {
		t.Fatalf("exit %d, %d results", code, len(run.Results))
	}
	for _, r := range run.Results {
		rule := run.Tool.Driver.Rules[r.RuleIndex]
		if rule.ID != r.RuleID {
			t.Errorf("result %s points at rule %s", r.RuleID, rule.ID)
		}
	}
	for _, rule := range run.Tool.Driver.Rules {
		want := "https://docs.example.com/keyguard/docs/rules.md#" + finding.Anchor(rule.ID)
		if rule.HelpURI != want || rule.ShortDescription.Text == "" || !strings.Contains(rule.Help.Text, want) {
			t.Errorf("rule %s: helpUri %q, short %q, help %q; want %s", rule.ID, rule.HelpURI, rule.ShortDescription.Text, rule.Help.Text, want)
		}
	}
}

// TestLintLoadErrorDocuments: a registry that does not load still gives
// JSON and SARIF readers a document, with every problem at its place,
// and the exit code 2.
func TestLintLoadErrorDocuments(t *testing.T) {
	code, out, errOut := runCLI(t, "", "lint", "--registry", "testdata/broken.yaml", "--format", "json")
	var doc struct {
		Registry string `json:"registry"`
		Loaded   bool   `json:"loaded"`
		Findings []struct {
			finding.Finding
			Doc string `json:"doc"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 2 || doc.Loaded || len(doc.Findings) != 3 || !strings.Contains(errOut, "broken.yaml:3:17") {
		t.Fatalf("json: exit %d, %v\n%s\nstderr %s", code, err, out, errOut)
	}
	for i, want := range [][2]int{{3, 17}, {4, 10}, {5, 5}} {
		f := doc.Findings[i]
		if f.Rule != finding.Load || f.Severity != finding.Error || f.File != "testdata/broken.yaml" || f.Line != want[0] || f.Column != want[1] || f.Message == "" || f.Doc != finding.DefaultDocsBase+"docs/rules.md#load" {
			t.Errorf("finding %d: %+v", i, f)
		}
	}

	code, out, _ = runCLI(t, "", "lint", "--registry", "testdata/broken.yaml", "--format", "sarif")
	s := readSARIF(t, out)
	run := s.Runs[0]
	if code != 2 || *run.Invocations[0].ExecutionSuccessful || len(run.Invocations[0].Notifications) != 3 || len(run.Results) != 3 {
		t.Fatalf("sarif: exit %d\n%s", code, out)
	}
	if r := run.Results[1]; r.RuleID != "load" || r.Level != "error" || r.Locations[0].PhysicalLocation.Region.StartLine != 4 ||
		r.Locations[0].PhysicalLocation.ArtifactLocation.URI != "testdata/broken.yaml" {
		t.Errorf("sarif result: %+v", r)
	}

	// A missing file is one problem, without a line; --out gets the whole document.
	path := filepath.Join(t.TempDir(), "lint.sarif")
	code, _, _ = runCLI(t, "", "lint", "--registry", "testdata/nope.yaml", "--format", "sarif", "--out", path)
	b, err := os.ReadFile(path)
	if err != nil || code != 2 {
		t.Fatalf("--out: exit %d, %v", code, err)
	}
	if s := readSARIF(t, string(b)); *s.Runs[0].Invocations[0].ExecutionSuccessful || len(s.Runs[0].Results) != 1 {
		t.Fatalf("missing file:\n%s", b)
	}
	// Text stays what it was: the problems on stderr, nothing on stdout.
	if code, out, errOut := runCLI(t, "", "lint", "--registry", "testdata/broken.yaml"); code != 2 || out != "" || !strings.Contains(errOut, "(3 problems)") {
		t.Fatalf("text: exit %d\n%s%s", code, out, errOut)
	}
}

// TestLintJSONDocLinks: every finding of lint's JSON links to its rule.
func TestLintJSONDocLinks(t *testing.T) {
	for _, tc := range []struct{ flag, base string }{
		{"", finding.DefaultDocsBase}, // absolute by default: a report read outside the repository
		{"--docs-url=https://docs.example.com/kg", "https://docs.example.com/kg/"},
		{"--docs-url=", ""},
	} {
		args := []string{"lint", "--registry", "testdata/demo.yaml", "--format", "json"}
		if tc.flag != "" {
			args = append(args, tc.flag)
		}
		_, out, _ := runCLI(t, "", args...)
		var doc struct {
			Loaded   bool `json:"loaded"`
			Findings []struct {
				Rule string `json:"rule"`
				Doc  string `json:"doc"`
			} `json:"findings"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil || !doc.Loaded || len(doc.Findings) == 0 {
			t.Fatalf("%v\n%s", err, out)
		}
		for _, f := range doc.Findings {
			if f.Doc != tc.base+finding.DocURL(f.Rule) || !strings.Contains(f.Doc, "docs/rules.md#") {
				t.Errorf("%s %s: doc %q", tc.flag, f.Rule, f.Doc)
			}
		}
	}
}
