package sarif

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/keyguard/keyguard/finding"
)

func TestRunRulesOnceAndRoundTrip(t *testing.T) {
	log := New("v1.2.3")
	run := &log.Runs[0]
	fds := []finding.Finding{
		{Rule: finding.Overlap, Severity: finding.Error, Message: "a and b overlap", Hint: "make them disjoint", File: "keyguard.yaml", Line: 3, Column: 5},
		{Rule: finding.NoTTL, Severity: finding.Warning, Message: "no ttl"},
		{Rule: finding.Overlap, Severity: finding.Info, Message: "c and d"},
	}
	for i := range fds {
		f := &fds[i]
		idx := run.Rule(f.Rule, func() Rule { return RuleFor("", f.Rule) })
		run.Results = append(run.Results, Result{RuleID: f.Rule, RuleIndex: idx, Level: Level(f.Severity), Message: Message(f), Locations: Locations(f)})
	}
	if n := len(run.Tool.Driver.Rules); n != 2 {
		t.Fatalf("%d rules, want 2 (one per rule ID)", n)
	}
	var buf bytes.Buffer
	if err := log.Write(&buf); err != nil {
		t.Fatal(err)
	}
	var back Log
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	rs := back.Runs[0].Results
	if back.Version != "2.1.0" || back.Runs[0].Tool.Driver.Version != "v1.2.3" || len(rs) != 3 {
		t.Fatalf("round trip: %s", buf.String())
	}
	for i, r := range rs {
		if got := back.Runs[0].Tool.Driver.Rules[r.RuleIndex].ID; got != r.RuleID {
			t.Errorf("result %d points at rule %s, is %s", i, got, r.RuleID)
		}
	}
	if rs[0].Level != "error" || rs[1].Level != "warning" || rs[2].Level != "note" {
		t.Errorf("levels %s %s %s", rs[0].Level, rs[1].Level, rs[2].Level)
	}
	if rs[0].Message.Text != "a and b overlap Try: make them disjoint" || rs[0].Locations[0].PhysicalLocation.Region.StartLine != 3 || rs[1].Locations != nil {
		t.Errorf("message or locations: %+v", rs[:2])
	}
}
