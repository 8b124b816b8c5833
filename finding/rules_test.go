package finding

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestAnchor(t *testing.T) {
	for rule, want := range map[string]string{
		"overlap":             "overlap",
		"naming/case":         "namingcase",
		"naming/leading-id":   "namingleading-id",
		"guard/foreign-owner": "guardforeign-owner",
		"Fill In":             "fill-in",
	} {
		if got := Anchor(rule); got != want {
			t.Errorf("Anchor(%q) = %q, want %q", rule, got, want)
		}
	}
	if got := DocURL(Case); got != "docs/rules.md#namingcase" {
		t.Errorf("DocURL = %q", got)
	}
	if got := HelpURI("https://example.com/kg/", Case); got != "https://example.com/kg/docs/rules.md#namingcase" {
		t.Errorf("HelpURI = %q", got)
	}
	if got := HelpURI("", NoTTL); got != DefaultDocsBase+"docs/rules.md#no-ttl" {
		t.Errorf("HelpURI default = %q", got)
	}
}

// ruleConstants reads the string constants of finding.go: every rule ID
// the package declares.
func ruleConstants(t *testing.T) map[string]bool {
	f, err := parser.ParseFile(token.NewFileSet(), "finding.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if vs, ok := n.(*ast.ValueSpec); ok {
			for _, v := range vs.Values {
				if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					s, _ := strconv.Unquote(lit.Value)
					out[s] = true
				}
			}
		}
		return true
	})
	return out
}

// TestRulesDocumented: every rule ID declared here is in Rules(), has a
// summary, and has its section in docs/rules.md under its anchor, with
// what it means, why it matters, how to fix and an example; and the page
// documents no rule that does not exist.
func TestRulesDocumented(t *testing.T) {
	consts := ruleConstants(t)
	listed := map[string]bool{}
	anchors := map[string]string{}
	for _, r := range Rules() {
		listed[r] = true
		if !consts[r] {
			t.Errorf("Rules() lists %q, which is no constant of finding.go", r)
		}
		if Summary(r) == "" {
			t.Errorf("rule %s has no summary", r)
		}
		if prev, dup := anchors[Anchor(r)]; dup {
			t.Errorf("rules %s and %s share the anchor %s", prev, r, Anchor(r))
		}
		anchors[Anchor(r)] = r
	}
	for c := range consts {
		if !listed[c] {
			t.Errorf("constant %q is missing from Rules()", c)
		}
	}
	b, err := os.ReadFile("../docs/rules.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	sections := regexp.MustCompile(`(?m)^<a id="([^"]+)"></a>\n## `+"`([^`]+)`"+`: `).FindAllStringSubmatchIndex(doc, -1)
	seen := map[string]bool{}
	for i, m := range sections {
		id, rule := doc[m[2]:m[3]], doc[m[4]:m[5]]
		end := len(doc)
		if i+1 < len(sections) {
			end = sections[i+1][0]
		}
		body := doc[m[0]:end]
		if id != Anchor(rule) || !listed[rule] {
			t.Errorf("section %q has id %q; want a rule ID and its anchor %q", rule, id, Anchor(rule))
		}
		seen[rule] = true
		for _, part := range []string{"**Severity:**", "**What it means.**", "**Why it matters.**", "**How to fix.**", "**Example.**"} {
			if !strings.Contains(body, part) {
				t.Errorf("section %s lacks %s", rule, part)
			}
		}
		if !strings.Contains(doc, "[`"+rule+"`](#"+id+")") {
			t.Errorf("the rule table does not link to %s", rule)
		}
	}
	for _, r := range Rules() {
		if !seen[r] {
			t.Errorf("docs/rules.md has no section for %s", r)
		}
	}
	if n := strings.Count(doc, "<a id="); n != len(sections) {
		t.Errorf("%d anchors, %d rule sections", n, len(sections))
	}
}
