package scancode

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/sarif"
)

// rules are the two rules scan-code reports, in the order of ruleIndex.
var rules = []sarif.Rule{
	{
		ID: finding.RawKey, Name: "RawKey",
		ShortDescription: sarif.Text{Text: "Redis key built by hand instead of by the generated builder"},
		FullDescription:  &sarif.Text{Text: "A Redis call builds its key by concatenation or formatting. The key belongs to a registered template: build it with the function keyguard gen generates for that template, so its values are checked and its owner, type and TTL travel with it."},
		Help: sarif.Help{
			Text:     "Replace the hand-built key with the generated builder the message names (keyguard gen --lang go|java|python|ts writes it). If the key's end is built elsewhere, build the whole key with the builder where it is made.",
			Markdown: "Replace the hand-built key with the generated builder the message names, e.g. `keys.OrderBase(id).String()` in Go (`keyguard gen --lang go|java|python|ts` writes it). See [raw-key](" + finding.HelpURI("", finding.RawKey) + ").",
		},
		HelpURI: finding.HelpURI("", finding.RawKey), Default: &sarif.Configuration{Level: "warning"},
		Properties: map[string]any{"tags": []string{"redis", "keyguard", "maintainability"}, "precision": "high"},
	},
	{
		ID: finding.UnregisteredCode, Name: "UnregisteredCode",
		ShortDescription: sarif.Text{Text: "Redis key that matches no template of the registry"},
		FullDescription:  &sarif.Text{Text: "A Redis call uses a key that no template of keyguard.yaml can produce: nobody owns it, it has no declared type or TTL, and it may collide with another team's keys."},
		Help: sarif.Help{
			Text:     "Declare the template in keyguard.yaml (keyguard scan-code --suggest writes the entry to paste), or use a key of a registered template through the generated builder.",
			Markdown: "Declare the template in `keyguard.yaml` (`keyguard scan-code --suggest` writes the entry to paste), or use a key of a registered template through the generated builder. See [unregistered-code](" + finding.HelpURI("", finding.UnregisteredCode) + ").",
		},
		HelpURI: finding.HelpURI("", finding.UnregisteredCode), Default: &sarif.Configuration{Level: "error"},
		Properties: map[string]any{"tags": []string{"redis", "keyguard", "correctness"}, "precision": "high"},
	},
}

// WriteSARIF writes the report as SARIF 2.1.0 for code scanning: stable
// rule IDs with help, one result per finding with its location (paths as
// scanned, relative to where scan-code ran) and a fingerprint that does not
// move with the line.
func (r *Report) WriteSARIF(w io.Writer, version string) error {
	log := sarif.New(version)
	run := &log.Runs[0]
	run.Tool.Driver.Rules = rules
	run.AutomationDetails = &sarif.Automation{ID: "keyguard/scan-code/"}
	run.ColumnKind = "utf16CodeUnits"
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
		loc := sarif.At(f.File, f.Line, cols.utf16(f.File, f.Line, f.Column))
		run.Results = append(run.Results, sarif.Result{
			RuleID: f.Rule, RuleIndex: idx, Level: sarif.Level(f.Severity), Message: sarif.Text{Text: text},
			Locations:           []sarif.Location{loc},
			PartialFingerprints: map[string]string{"keyguardKey/v1": hex.EncodeToString(sum[:16])},
			Properties:          map[string]any{"template": f.Template, "language": f.Lang},
		})
	}
	// the files not analysed, and those skipped for their size, are the
	// invocation's notifications: code scanning shows the run incomplete
	inv := sarif.Invocation{ExecutionSuccessful: len(r.NotAnalysed) == 0}
	for _, list := range []struct {
		files []FileIssue
		level string
	}{{r.NotAnalysed, "error"}, {r.TooLarge, "warning"}} {
		for _, fi := range list.files {
			inv.Notifications = append(inv.Notifications, sarif.Notification{Level: list.level,
				Message: sarif.Text{Text: "not analysed: " + fi.Reason}, Locations: []sarif.Location{sarif.At(fi.File, 0, 0)}})
		}
	}
	run.Invocations = []sarif.Invocation{inv}
	return log.Write(w)
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
