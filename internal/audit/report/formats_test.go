package report_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/audit/report"
)

// bigReport is a report of the size a real keyspace gives: 24,000
// findings over six rules (two severities for no-ttl), 1,200 groups in
// two databases, binary keys, a long key, a prefix tree.
func bigReport() *report.Report {
	r := &report.Report{
		Source: report.Source{Kind: "rdb", Target: "dump.rdb", Nodes: 1}, Registry: "keyguard.yaml",
		StartedAt: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), DurationMS: 3400, Complete: true,
		Databases: []int{0, 3},
	}
	for i := range 1200 {
		db := i % 2 * 3
		kind, name := report.KindTemplate, fmt.Sprintf("fam%d:item:{id:int}", i)
		if i%3 == 0 {
			kind, name = report.KindPrefix, fmt.Sprintf("legacy%d_{id:int}_x", i)
		}
		r.Groups = append(r.Groups, report.Group{Name: name, Kind: kind, DB: &db, Owner: "team", Keys: int64(1000 + i), Bytes: int64(90000 - i),
			Types: map[string]int64{"string": int64(1000 + i)}, TTLSeconds: report.TTLStats{Min: 1, P50: 60, Max: 3600}, WithTTL: 5})
	}
	rules := []string{finding.NoTTL, finding.Unregistered, finding.BigKey, finding.PII, finding.Timestamp, finding.MixedSchema}
	r.Summary.ByRule = map[string]int64{}
	r.Summary.ByRuleSeverity = map[string]report.SeverityCount{}
	for i := range 24000 {
		rule := rules[i%len(rules)]
		sev := finding.Error
		if rule == finding.NoTTL && i%4 == 0 || rule == finding.Timestamp {
			sev = finding.Warning
		}
		key := fmt.Sprintf("fam%d:item:%d", i%1200, i)
		if i%1000 == 7 {
			key = "bin:\x00\xff\r\n" + key
		}
		db := i % 2 * 3
		f := report.Finding{Finding: finding.Finding{Rule: rule, Severity: sev, Key: key, Template: "fam:item:{id:int}", Owner: "team",
			Message: "m <&> \"quoted\"", Hint: "=cmd|' /C calc'!A0"}, KeyBase64: report.KeyBase64(key), DB: &db, Bytes: int64(100 + i%97)}
		r.Findings = append(r.Findings, f)
		r.Summary.ByRule[rule]++
		c := r.Summary.ByRuleSeverity[rule]
		if sev == finding.Error {
			c.Error++
		} else {
			c.Warning++
		}
		r.Summary.ByRuleSeverity[rule] = c
	}
	r.Summary.Findings = 24000 + 5000
	r.FindingsOmitted = map[string]int64{finding.NoTTL: 5000}
	r.Summary.ByRule[finding.NoTTL] += 5000
	c := r.Summary.ByRuleSeverity[finding.NoTTL]
	c.Error += 5000
	r.Summary.ByRuleSeverity[finding.NoTTL] = c
	r.TopKeys = append(r.TopKeys, report.TopKey{Key: strings.Repeat("k", 1024), KeyLen: 1 << 20, Type: "string", Bytes: 1 << 21})
	r.Prefixes = report.PrefixTree(r.Groups, ':', 3)
	return r
}

// Every format on a report past every cap of the HTML and text views.
func TestFormatsAtRealisticSize(t *testing.T) {
	r := bigReport()
	if len(r.Findings) < 20000 || len(r.Groups) < 1000 {
		t.Fatal("the test report is too small")
	}
	t.Run("json", func(t *testing.T) {
		var b bytes.Buffer
		if err := r.WriteJSON(&b); err != nil {
			t.Fatal(err)
		}
		back, err := report.ReadReport(&b)
		if err != nil {
			t.Fatal(err)
		}
		if len(back.Findings) != len(r.Findings) || len(back.Groups) != len(r.Groups) || back.Findings[7].Key != r.Findings[7].Key || *back.Groups[1].DB != 3 {
			t.Errorf("round trip: %d findings, %d groups", len(back.Findings), len(back.Groups))
		}
	})
	t.Run("html", func(t *testing.T) {
		var b bytes.Buffer
		if err := r.WriteHTML(&b); err != nil {
			t.Fatal(err)
		}
		page := b.String()
		if !strings.HasSuffix(strings.TrimSpace(page), "</html>") {
			t.Error("the page is not whole")
		}
		for _, want := range []string{"more findings in the JSON report", "more groups in the JSON", "Memory by prefix", `href="docs/rules.md#no-ttl"`} {
			if !strings.Contains(page, want) {
				t.Errorf("the page lacks %q", want)
			}
		}
		// One severity per finding row and per rule row, as in JSON.
		if strings.Count(page, `<td class="sev-warning">warning</td><td><a href="docs/rules.md#no-ttl">`) == 0 ||
			strings.Count(page, `<td><a href="docs/rules.md#no-ttl">no-ttl</a></td><td class="sev-error">error</td>`) != 1 ||
			strings.Count(page, `<td><a href="docs/rules.md#no-ttl">no-ttl</a></td><td class="sev-warning">warning</td>`) != 1 {
			t.Error("no-ttl is not shown with both of its severities in the rule table and the findings")
		}
	})
	t.Run("text", func(t *testing.T) {
		var b bytes.Buffer
		if err := r.WriteText(&b, report.TextOptions{}); err != nil {
			t.Fatal(err)
		}
		text := b.String()
		if n := strings.Count(text, "\n"); n > 110 {
			t.Errorf("the default text report is %d lines: not one screen's worth", n)
		}
		for _, want := range []string{"more groups", "more prefixes", "error    no-ttl", "warning  no-ttl", "29,000"} {
			if !strings.Contains(text, want) {
				t.Errorf("text lacks %q", want)
			}
		}
		b.Reset()
		if err := r.WriteText(&b, report.TextOptions{Verbose: true}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), r.Groups[1199].Name) || strings.Contains(b.String(), "more groups") {
			t.Error("--verbose does not list every group")
		}
	})
	t.Run("csv", func(t *testing.T) {
		var b bytes.Buffer
		if err := r.WriteCSV(&b); err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(&b).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		header := rows[0]
		col := map[string]int{}
		for i, h := range header {
			col[h] = i
		}
		tables := map[string]int{}
		for _, row := range rows[1:] {
			if len(row) != len(header) {
				t.Fatalf("row of %d cells, header %d", len(row), len(header))
			}
			tables[row[col["table"]]]++
			if row[col["table"]] == "finding" && strings.HasPrefix(row[col["hint"]], "=") {
				t.Fatalf("a formula reaches the spreadsheet: %q", row[col["hint"]])
			}
		}
		if tables["group"] != len(r.Groups) || tables["finding"] != len(r.Findings) || tables["top_key"] != len(r.TopKeys) || tables["prefix"] != len(r.Prefixes) {
			t.Errorf("rows per table: %v", tables)
		}
		// A binary key as JSON writes it, with its exact bytes beside it.
		for _, row := range rows[1:] {
			if row[col["table"]] == "finding" && strings.HasPrefix(row[col["key_base64"]], "Ymlu") {
				var k string
				json.Unmarshal([]byte(`"bin:\u0000\ufffd"`), &k) // what JSON writes for bin:\x00\xff
				if !strings.HasPrefix(row[col["key"]], k) {
					t.Errorf("binary key cell %q", row[col["key"]])
				}
				return
			}
		}
		t.Error("no binary key in the CSV")
	})
}
