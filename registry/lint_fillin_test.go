package registry

import (
	"fmt"
	"strings"
	"testing"

	"github.com/keyguard/keyguard/finding"
)

func lintOf(t *testing.T, src string) []finding.Finding {
	t.Helper()
	r, err := Parse("k.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return r.Lint()
}

func findingsText(fds []finding.Finding) string {
	var b strings.Builder
	for _, f := range fds {
		fmt.Fprintf(&b, "%d:%d %s %s: %s (%s)\n", f.Line, f.Column, f.Severity, f.Rule, f.Message, f.Hint)
	}
	return b.String()
}

// TestLintDuplicateTemplate: the same keys declared twice with two types
// is an error even within one owner; a plain duplicate stays a warning.
func TestLintDuplicateTemplate(t *testing.T) {
	for _, tt := range []struct {
		name, keys string
		sev        finding.Severity
		want       string
	}{
		{"other type", `
  - {key: "order:{id:int}:base", type: hash, ttl: 1h}
  - {key: "order:{orderId:int}:base", type: string, ttl: 1h}`, finding.Error, "as a hash where this entry says string"},
		{"same type", `
  - {key: "order:{id:int}:base", type: hash, ttl: 1h}
  - {key: "order:{id:int}:base", type: hash, ttl: 1h}`, finding.Warning, "a duplicate entry"},
		{"other type, other owner", `
  - {key: "order:{id:int}:base", type: hash, ttl: 1h}
  - {key: "order:{id:int}:base", type: zset, ttl: 1h, owner: promo}`, finding.Error, "a key has one type"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fds := lintOf(t, "version: 1\ndomains: {order: {owner: o}}\nkeys:"+tt.keys+"\n")
			if len(fds) != 1 || fds[0].Rule != finding.Overlap || fds[0].Severity != tt.sev || !strings.Contains(fds[0].Message, tt.want) || fds[0].Line != 5 {
				t.Fatalf("want one %s overlap on line 5 saying %q, got\n%s", tt.sev, tt.want, findingsText(fds))
			}
		})
	}
}

// TestLintFillIn: what keyguard init and an audit's suggested entries
// leave marked FILL-IN fails lint, each saying what to write, at the line
// and column of the value.
func TestLintFillIn(t *testing.T) {
	fds := lintOf(t, `version: 1
domains:
  order: {owner: order-team}
  legacy: {owner: FILL-IN, desc: "FILL-IN: what this domain holds"}
keys:
  - key: "order:{id:int}:base"
    type: hash
    ttl: 1h
    owner: FILL-IN # the team that writes these keys
    desc: "FILL-IN: inferred from 120 keys"
  - key: "legacy:{id:int}"
    ttl: 1h
    writers: [a, FILL-IN]
  - key: "order:{id:int}:items"
    ttl: 1h
`)
	// Each finding points at the value to replace, not at the entry's key.
	want := `4:19 error owner: domain legacy: owner is still FILL-IN (name the team that owns the keys of this domain: owner: TEAM; it gets the ACL user and the alerts)
4:34 error fill-in: domain legacy: desc is still FILL-IN (describe the domain in a few words, or remove desc)
9:12 error owner: owner is still FILL-IN (name the team that writes these keys: owner: TEAM, or remove owner: to take the domain's owner)
10:11 error fill-in: desc is still FILL-IN (say what these keys hold, or remove desc)
13:18 error fill-in: writers still holds FILL-IN (list the services by name, or remove writers)
`
	if got := findingsText(fds); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

// TestFieldPos: a block entry's fields, list items and a field not given.
func TestFieldPos(t *testing.T) {
	r, err := Parse("k.yaml", []byte(`version: 1
domains:
  order:
    owner: FILL-IN
keys:
  - key: "order:{id:int}"
    ttl: 1h
    readers:
      - a
      - FILL-IN
`))
	if err != nil {
		t.Fatal(err)
	}
	e := r.Entries[0]
	for _, tt := range []struct {
		name string
		want Pos
	}{
		{"key", Pos{"k.yaml", 6, 10}},
		{"ttl", Pos{"k.yaml", 7, 10}},
		{"readers[1]", Pos{"k.yaml", 10, 9}},
		{"desc", e.Pos}, // not given: the entry's key
	} {
		if got := e.FieldPos(tt.name); got != tt.want {
			t.Errorf("FieldPos(%q) = %+v, want %+v", tt.name, got, tt.want)
		}
	}
	d, _ := r.Domain("order")
	if got := d.FieldPos("owner"); got != (Pos{"k.yaml", 4, 12}) {
		t.Errorf("domain FieldPos(owner) = %+v, want 4:12", got)
	}
	var lines []int
	for _, f := range r.Lint() {
		if f.Rule == finding.FillIn || f.Rule == finding.Owner {
			lines = append(lines, f.Line)
		}
	}
	if fmt.Sprint(lines) != "[4 10]" {
		t.Errorf("FILL-IN findings on lines %v, want [4 10]", lines)
	}
}
