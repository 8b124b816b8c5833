package scancode

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/keyguard/keyguard/internal/keyshape"
)

func sarifSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open("testdata/sarif/sarif-2.1.0-rtm.5.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("sarif.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("sarif.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The SARIF output of a scan with findings in every language, and of one
// without findings, is valid SARIF 2.1.0, and carries what code scanning
// needs: rule help, a location and a fingerprint per result.
func TestSARIFValid(t *testing.T) {
	schema := sarifSchema(t)
	bad, _ := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(`{"version":"2.1.0","runs":[{"tool":{"driver":{}},"results":[]}]}`)))
	if schema.Validate(bad) == nil {
		t.Fatal("the schema accepts a run whose tool has no name: it checks nothing")
	}
	reg := testRegistry(t)
	res, err := Scan(context.Background(), []string{"testdata/src", filepath.Join(goTestModule(t, "../../analyzer/testdata"), "store")}, Options{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	empty := &Result{Files: map[keyshape.Lang]int{}}
	partial := &Result{Files: map[keyshape.Lang]int{}, NotAnalysed: []FileIssue{{File: "a.go", Lang: keyshape.Go, Reason: "does not load"}},
		TooLarge: []FileIssue{{File: "b.js", Reason: "too large"}}}
	for name, r := range map[string]*Result{"findings": res, "empty": empty, "partial": partial} {
		var buf bytes.Buffer
		if err := NewReport("keyguard.yaml", r).WriteSARIF(&buf, "v1.2.3"); err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		if err := schema.Validate(doc); err != nil {
			t.Errorf("%s: SARIF does not validate: %v", name, err)
		}
		var log struct {
			Runs []struct {
				Tool struct {
					Driver struct {
						Rules []struct {
							ID      string `json:"id"`
							HelpURI string `json:"helpUri"`
							Help    struct{ Text string }
						}
					}
				}
				Invocations []struct {
					ExecutionSuccessful        bool
					ToolExecutionNotifications []struct {
						Level     string
						Locations []struct {
							PhysicalLocation struct{ ArtifactLocation struct{ URI string } }
						}
					}
				}
				Results []struct {
					RuleID              string            `json:"ruleId"`
					RuleIndex           int               `json:"ruleIndex"`
					PartialFingerprints map[string]string `json:"partialFingerprints"`
					Locations           []struct {
						PhysicalLocation struct {
							ArtifactLocation struct{ URI string }
							Region           struct{ StartLine, StartColumn int }
						}
					}
				}
			}
		}
		if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
			t.Fatal(err)
		}
		rules := log.Runs[0].Tool.Driver.Rules
		if len(rules) != 2 || rules[0].ID != "raw-key" || rules[1].ID != "unregistered-code" || rules[0].Help.Text == "" || rules[1].HelpURI == "" {
			t.Errorf("%s: rules %+v", name, rules)
		}
		inv := log.Runs[0].Invocations
		if len(inv) != 1 || inv[0].ExecutionSuccessful != (len(r.NotAnalysed) == 0) || len(inv[0].ToolExecutionNotifications) != len(r.NotAnalysed)+len(r.TooLarge) {
			t.Errorf("%s: invocations %+v", name, inv)
		} else if name == "partial" && (inv[0].ToolExecutionNotifications[0].Level != "error" || inv[0].ToolExecutionNotifications[0].Locations[0].PhysicalLocation.ArtifactLocation.URI != "a.go") {
			t.Errorf("partial: notifications %+v", inv[0].ToolExecutionNotifications)
		}
		if got := len(log.Runs[0].Results); got != len(r.Findings) {
			t.Errorf("%s: %d results for %d findings", name, got, len(r.Findings))
		}
		fps := map[string]bool{}
		for _, x := range log.Runs[0].Results {
			if rules[x.RuleIndex].ID != x.RuleID || len(x.Locations) != 1 || x.Locations[0].PhysicalLocation.Region.StartLine < 1 {
				t.Errorf("%s: result %+v", name, x)
			}
			fp := x.PartialFingerprints["keyguardKey/v1"]
			if fp == "" || fps[fp] {
				t.Errorf("%s: fingerprint %q missing or repeated", name, fp)
			}
			fps[fp] = true
		}
	}
}

// A result's column counts UTF-16 code units, as SARIF's columnKind says.
func TestSARIFColumnsUTF16(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/a.py"
	if err := os.WriteFile(path, []byte("import redis\nr = redis.Redis()\nx = '日本'; r.get('tmp:x')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Scan(context.Background(), []string{path}, Options{Registry: testRegistry(t)})
	if err != nil || len(res.Findings) != 1 {
		t.Fatalf("%v %+v", err, res)
	}
	if res.Findings[0].Column != 21 { // bytes: 5 + 2×3 + 9, then 1-based
		t.Errorf("byte column %d", res.Findings[0].Column)
	}
	if got := (columns{}).utf16(path, 3, 21); got != 17 {
		t.Errorf("UTF-16 column %d, want 17", got)
	}
}
