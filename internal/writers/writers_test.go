package writers

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/redishook"
	"github.com/keyguard/keyguard/registry"
)

// A writer the registry does not allow is an error, allowed writers
// sharing a template info, and no records at all a warning: the verdict
// follows the threshold, and text and JSON say the same.
func TestJudgedAndPrinted(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	owned := &registry.Entry{Key: "promo:sku:{id}", Owner: "promo-team"}
	shared := &registry.Entry{Key: "order:{id}", Owner: "order-team", Writers: []string{"billing"}}
	w := &writers{target: "redis://127.0.0.1:6379", window: 24 * time.Hour, now: now, indexed: 2, tws: []redishook.TemplateWriters{
		{ID: "a", Template: owned.Key, Entry: owned, Writers: []redishook.Writer{
			{Service: "promo-team", LastWrite: now.Add(-time.Hour), Allowed: true},
			{Service: "order-team", LastWrite: now.Add(-2 * time.Minute), Allowed: false}}},
		{ID: "b", Template: shared.Key, Entry: shared, Writers: []redishook.Writer{
			{Service: "order-team", LastWrite: now.Add(-time.Minute), Allowed: true},
			{Service: "billing", LastWrite: now.Add(-time.Minute), Allowed: true}}},
	}}
	if !w.failed(finding.Error) || !w.failed(finding.Info) {
		t.Error("a writer not allowed does not fail at error")
	}
	var text bytes.Buffer
	if err := w.writeText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"promo:sku:{id}  (owner promo-team)  VIOLATION", "NOT ALLOWED", "order:{id}  (owner order-team, writers billing)  shared",
		"2 templates written in the last 1d: 1 with a writer the registry does not allow, 1 shared by allowed writers"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	var js bytes.Buffer
	if err := w.writeJSON(&js); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Violations int
		Window     string
		Templates  []struct{ Severity string }
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Violations != 1 || doc.Window != "1d" || len(doc.Templates) != 2 || doc.Templates[0].Severity != "error" || doc.Templates[1].Severity != "info" {
		t.Errorf("JSON: %s", js.String())
	}

	// Only allowed writers sharing: info, below the default threshold.
	w.tws = w.tws[1:]
	if w.failed(finding.Error) || !w.failed(finding.Info) {
		t.Error("shared by allowed writers: wrong verdict")
	}
	// No records at all: a warning that says how to record.
	w.tws, w.indexed = nil, 0
	if warns := w.warnings(); len(warns) != 1 || !strings.Contains(warns[0], "no writer records at all") || !w.failed(finding.Warning) || w.failed(finding.Error) {
		t.Errorf("no records: %v", warns)
	}
}
