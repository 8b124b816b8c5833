package scancode

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/keyguard/keyguard/finding"
)

func fixtureReport(t *testing.T) *Report {
	t.Helper()
	res, err := Scan(context.Background(), []string{"testdata/src"}, Options{Registry: testRegistry(t)})
	if err != nil {
		t.Fatal(err)
	}
	return NewReport("keyguard.yaml", res)
}

// A baseline written from today's JSON report accepts every finding of
// today, by rule, file and template: moved lines stay accepted, a second
// use of a template in a file does not.
func TestBaseline(t *testing.T) {
	rep := fixtureReport(t)
	var buf bytes.Buffer
	if err := rep.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	b, err := ReadBaseline(bytes.NewReader(buf.Bytes()), "baseline.json")
	if err != nil {
		t.Fatal(err)
	}
	total := len(rep.Findings)
	again := fixtureReport(t)
	for i := range again.Findings {
		again.Findings[i].Line += 10 // the code moved
	}
	extra := again.Findings[0]
	again.Findings = append(again.Findings, extra)
	b.Apply(again)
	if again.Baselined != total || len(again.Findings) != 1 || again.Findings[0].Template != extra.Template {
		t.Errorf("baselined %d of %d, left %+v", again.Baselined, total, again.Findings)
	}
	if again.Summary.Error+again.Summary.Warning != 1 {
		t.Errorf("summary %+v", again.Summary)
	}
	for _, bad := range []string{`{"findings": null}`, `{"groups": []}`, `[]`} {
		if _, err := ReadBaseline(strings.NewReader(bad), "b.json"); err == nil || !strings.Contains(err.Error(), "Try:") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

func TestReportText(t *testing.T) {
	rep := fixtureReport(t)
	var buf bytes.Buffer
	if err := rep.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"testdata/src/java/OrderService.java:32:48: warning raw-key: key \"order:order:{orderId:int}:base\" is built by hand",
		"\tTry: build it with the generated builder: Keys.orderOrderBase(orderId).key()\n",
		"keyguard.yaml: 73 files (java 23, python 17, ts 33), 172 errors, 31 warnings, 0 info\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text report lacks %q:\n%s", want, out)
		}
	}
	if w, ok := rep.Worst(); !ok || w != finding.Error {
		t.Errorf("worst %v %v", w, ok)
	}
}

// TestSuggestOneEntryPerShape: templates that differ only in their
// placeholders' names or kinds (the code names the value in one place,
// not in another; one call shows an integer, another a value of any
// type) are one entry, named where the code names most, of the kind every
// place agrees on; two would declare the same keys twice (lint: overlap).
func TestSuggestOneEntryPerShape(t *testing.T) {
	f := func(tmpl, file string) Finding {
		return Finding{Finding: finding.Finding{Rule: finding.UnregisteredCode, Template: tmpl, File: file, Line: 1, Column: 1}, Command: "get"}
	}
	ss := Suggest(testRegistry(t), []Finding{
		f("arq:job:{}", "a.py"), f("arq:job:{job_id}", "b.py"), f("arq:job:{}", "c.py"),
		f("arq:job:{n:int}", "d.py"),
		f("arq:run:{n:int}", "e.py"), f("arq:run:{id:int}", "f.py"),
	})
	if len(ss) != 2 || ss[0].Key != "arq:job:{job_id}" || len(ss[0].Places) != 4 || ss[1].Key != "arq:run:{n:int}" || len(ss[1].Places) != 2 {
		t.Fatalf("suggestions %+v", ss)
	}
}

func TestSuggest(t *testing.T) {
	reg := testRegistry(t)
	fs := []Finding{
		{Finding: finding.Finding{Rule: finding.UnregisteredCode, Template: "cart:{}:{v:int}:{id}:{id}", File: "a.go", Line: 3, Column: 2}, Command: "hset"},
		{Finding: finding.Finding{Rule: finding.UnregisteredCode, Template: "cart:{}:{v:int}:{id}:{id}", File: "b.py", Line: 9, Column: 1}, Command: "hgetall"},
		{Finding: finding.Finding{Rule: finding.UnregisteredCode, Template: "user:{uid}:avatar", File: "c.ts", Line: 1, Column: 1}, Command: "set"},
		{Finding: finding.Finding{Rule: finding.UnregisteredCode, Template: "user:{uid}:avatar", File: "d.ts", Line: 1, Column: 1}, Command: "lpush"},
		{Finding: finding.Finding{Rule: finding.RawKey, Template: "user:{uid}:info", File: "e.ts", Line: 1, Column: 1}},
	}
	ss := Suggest(reg, fs)
	if len(ss) != 2 || ss[0].Key != "cart:{p1}:{p2:int}:{id}:{id2}" || ss[0].Domain != "cart" || len(ss[0].Types) != 1 || ss[0].Types[0] != "hash" {
		t.Fatalf("suggestions %+v", ss)
	}
	if ss[1].Domain != "" || len(ss[1].Types) != 2 {
		t.Errorf("user:{uid}:avatar: %+v", ss[1])
	}
	var buf bytes.Buffer
	if err := WriteSuggestions(&buf, ss); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"  - key: \"cart:{p1}:{p2:int}:{id}:{id2}\"\n    type: hash\n",
		"# owner: \"cart\" is not a declared domain",
		"# type: the calls disagree (list, string): two writers may share this key",
		"desc: \"found in code: a.go:3:2, b.py:9:1\"",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("suggestions lack %q:\n%s", want, out)
		}
	}
	// A template that is not UTF-8 has no YAML form: it is named in a
	// comment, and the entries after it are still written.
	buf.Reset()
	bin := Suggestion{Key: "bin:\xff:{id}", Places: []string{"x.go:1:1"}}
	if err := WriteSuggestions(&buf, append([]Suggestion{bin}, ss...)); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); !strings.Contains(got, `  # "bin:\xff:{id}" is not UTF-8 text`) || !strings.HasSuffix(got, out[strings.Index(out, "  - key:"):]) {
		t.Errorf("with a template that is not UTF-8:\n%s", got)
	}
	// What --suggest writes loads as registry entries once given a TTL.
	var yaml strings.Builder
	yaml.WriteString("version: 1\ndomains:\n  cart: {owner: cart-team}\n  user: {owner: user-team}\nkeys:\n")
	for _, line := range strings.Split(out, "\n") {
		yaml.WriteString(line + "\n")
		if strings.HasPrefix(line, "    # ttl:") {
			yaml.WriteString("    ttl: 1h\n")
		}
	}
	if _, err := parseRegistry(yaml.String()); err != nil {
		t.Errorf("suggested entries do not load: %v\n%s", err, yaml.String())
	}
}
