package scancode

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/keyguard/keyguard/finding"
)

type sarifRule struct {
	ID               string         `json:"id"`
	Name             string         `json:"name"`
	ShortDescription sarifText      `json:"shortDescription"`
	FullDescription  sarifText      `json:"fullDescription"`
	Help             sarifHelp      `json:"help"`
	HelpURI          string         `json:"helpUri"`
	Default          sarifLevel     `json:"defaultConfiguration"`
	Properties       map[string]any `json:"properties"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifHelp struct {
	Text     string `json:"text"`
	Markdown string `json:"markdown"`
}

type sarifLevel struct {
	Level string `json:"level"`
}

// rules are the two rules scan-code reports, in the order of ruleIndex.
var rules = []sarifRule{
	{
		ID: finding.RawKey, Name: "RawKey",
		ShortDescription: sarifText{"Redis key built by hand instead of by the generated builder"},
		FullDescription:  sarifText{"A Redis call builds its key by concatenation or formatting. The key belongs to a registered template: build it with the function keyguard gen generates for that template, so its values are checked and its owner, type and TTL travel with it."},
		Help: sarifHelp{
			Text:     "Replace the hand-built key with the generated builder the message names (keyguard gen --lang go|java|python|ts writes it). If the key's end is built elsewhere, build the whole key with the builder where it is made.",
			Markdown: "Replace the hand-built key with the generated builder the message names, e.g. `keys.OrderBase(id).String()` in Go (`keyguard gen --lang go|java|python|ts` writes it). See [raw-key](" + finding.HelpURI("", finding.RawKey) + ").",
		},
		HelpURI: finding.HelpURI("", finding.RawKey), Default: sarifLevel{"warning"},
		Properties: map[string]any{"tags": []string{"redis", "keyguard", "maintainability"}, "precision": "high"},
	},
	{
		ID: finding.UnregisteredCode, Name: "UnregisteredCode",
		ShortDescription: sarifText{"Redis key that matches no template of the registry"},
		FullDescription:  sarifText{"A Redis call uses a key that no template of keyguard.yaml can produce: nobody owns it, it has no declared type or TTL, and it may collide with another team's keys."},
		Help: sarifHelp{
			Text:     "Declare the template in keyguard.yaml (keyguard scan-code --suggest writes the entry to paste), or use a key of a registered template through the generated builder.",
			Markdown: "Declare the template in `keyguard.yaml` (`keyguard scan-code --suggest` writes the entry to paste), or use a key of a registered template through the generated builder. See [unregistered-code](" + finding.HelpURI("", finding.UnregisteredCode) + ").",
		},
		HelpURI: finding.HelpURI("", finding.UnregisteredCode), Default: sarifLevel{"error"},
		Properties: map[string]any{"tags": []string{"redis", "keyguard", "correctness"}, "precision": "high"},
	},
}

// WriteSARIF writes the report as SARIF 2.1.0 for code scanning: stable
// rule IDs with help, one result per finding with its location (paths as
// scanned, relative to where scan-code ran) and a fingerprint that does not
// move with the line.
func (r *Report) WriteSARIF(w io.Writer, version string) error {
	results := []map[string]any{}
	seen := map[string]int{}
	cols := columns{}
	for _, f := range r.Findings {
		idx := 0
		if f.Rule == finding.UnregisteredCode {
			idx = 1
		}
		fp := fingerprint(f)
		seen[fp]++
		sum := sha256.Sum256([]byte(fp + "\x00" + strconv.Itoa(seen[fp])))
		text := f.Message
		if f.Hint != "" {
			text += ". Try: " + f.Hint
		}
		results = append(results, map[string]any{
			"ruleId":    f.Rule,
			"ruleIndex": idx,
			"level":     level(f.Severity),
			"message":   sarifText{text},
			"locations": []any{map[string]any{"physicalLocation": map[string]any{
				"artifactLocation": map[string]any{"uri": f.File},
				"region":           map[string]any{"startLine": f.Line, "startColumn": cols.utf16(f.File, f.Line, f.Column)},
			}}},
			"partialFingerprints": map[string]string{"keyguardKey/v1": hex.EncodeToString(sum[:16])},
			"properties":          map[string]any{"template": f.Template, "language": f.Lang},
		})
	}
	driver := map[string]any{"name": "keyguard", "informationUri": "https://github.com/keyguard/keyguard", "rules": rules}
	if version != "" {
		driver["version"] = version
	}
	// the files not analysed, and those skipped for their size, are the
	// invocation's notifications: code scanning shows the run incomplete
	notes := []any{}
	for _, list := range []struct {
		files []FileIssue
		level string
	}{{r.NotAnalysed, "error"}, {r.TooLarge, "warning"}} {
		for _, fi := range list.files {
			notes = append(notes, map[string]any{
				"level":     list.level,
				"message":   sarifText{"not analysed: " + fi.Reason},
				"locations": []any{map[string]any{"physicalLocation": map[string]any{"artifactLocation": map[string]any{"uri": fi.File}}}},
			})
		}
	}
	doc := map[string]any{
		"$schema": "https://json.schemastore.org/sarif-2.1.0.json",
		"version": "2.1.0",
		"runs": []any{map[string]any{
			"tool":              map[string]any{"driver": driver},
			"automationDetails": map[string]any{"id": "keyguard/scan-code/"},
			"columnKind":        "utf16CodeUnits",
			"invocations": []any{map[string]any{
				"executionSuccessful":        len(r.NotAnalysed) == 0,
				"toolExecutionNotifications": notes,
			}},
			"results": results,
		}},
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(doc)
}

func level(s finding.Severity) string {
	switch s {
	case finding.Error:
		return "error"
	case finding.Warning:
		return "warning"
	}
	return "note"
}

// columns turns byte columns into the UTF-16 columns SARIF counts in,
// reading each file once; a file it cannot read keeps its byte columns.
type columns map[string][]string

func (c columns) utf16(file string, line, col int) int {
	lines, ok := c[file]
	if !ok {
		data, _ := os.ReadFile(file)
		lines = strings.Split(string(data), "\n")
		c[file] = lines
	}
	if line < 1 || line > len(lines) || col-1 > len(lines[line-1]) {
		return col
	}
	return len(utf16.Encode([]rune(lines[line-1][:col-1]))) + 1
}
