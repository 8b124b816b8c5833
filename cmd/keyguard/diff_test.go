package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const diffOld = `{"source":{"kind":"redis","target":"redis://127.0.0.1:6379","nodes":1},"registry":"keyguard.yaml",
"started_at":"2026-11-28T12:00:00Z","duration_ms":10,"complete":true,
"summary":{"keys":10,"bytes":1000,"no_ttl":1,"unregistered":0,"findings":1},
"groups":[{"name":"order:order:{orderId:int}:base","kind":"template","owner":"order-team","keys":10,"bytes":1000,"no_ttl":1,"types":{"hash":10},"ttl_seconds":{"min":1,"p50":2,"max":3}}],
"top_keys":[],
"findings":[{"rule":"no-ttl","severity":"error","key":"order:order:1:base","template":"order:order:{orderId:int}:base","owner":"order-team","message":"no TTL"}]}`

const diffNew = `{"source":{"kind":"redis","target":"redis://127.0.0.1:6379","nodes":1},"registry":"keyguard.yaml",
"started_at":"2026-11-29T12:00:00Z","duration_ms":10,"complete":true,
"summary":{"keys":15,"bytes":1600,"no_ttl":1,"unregistered":3,"findings":%d},
"groups":[{"name":"order:order:{orderId:int}:base","kind":"template","owner":"order-team","keys":12,"bytes":1300,"no_ttl":1,"types":{"hash":12},"ttl_seconds":{"min":1,"p50":2,"max":3}},
{"name":"user_{id:int}_token","kind":"prefix","owner":"","keys":3,"bytes":300,"no_ttl":0,"types":{"string":3},"ttl_seconds":{"min":1,"p50":2,"max":3}}],
"top_keys":[],
"findings":[{"rule":"no-ttl","severity":"error","key":"order:order:1:base","template":"order:order:{orderId:int}:base","owner":"order-team","message":"no TTL"}
NEW]}`

func writeReports(t *testing.T, newFindings string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	old, cur := filepath.Join(dir, "old.json"), filepath.Join(dir, "new.json")
	os.WriteFile(old, []byte(diffOld), 0o644)
	body := strings.Replace(diffNew, "%d", "2", 1)
	body = strings.Replace(body, "NEW", newFindings, 1)
	os.WriteFile(cur, []byte(body), 0o644)
	return old, cur
}

func TestDiffCommand(t *testing.T) {
	warn := `,{"rule":"naming/separator","severity":"warning","key":"user_1_token","template":"user_{id:int}_token","message":"no separator"}`
	errf := `,{"rule":"unregistered","severity":"error","key":"user_1_token","template":"user_{id:int}_token","message":"matches no template"}`
	for _, tt := range []struct {
		name     string
		findings string
		args     []string
		code     int
		want     []string
	}{
		{"new error fails", errf, nil, 1, []string{"new groups (1)", "user_{id:int}_token", "keys 10 → 12 (+2)", "error unregistered 1"}},
		{"new warning passes by default", warn, nil, 0, []string{"warning naming/separator 1"}},
		{"new warning fails on warning", warn, []string{"--fail-on", "warning"}, 1, nil},
		{"new error with fail-on never", errf, []string{"--fail-on", "never"}, 0, nil},
		{"json", errf, []string{"--format", "json"}, 1, []string{`"new_groups": [`, `"rule": "unregistered"`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			old, cur := writeReports(t, tt.findings)
			code, out, errs := runCLI(t, "", append(append([]string{"diff"}, tt.args...), old, cur)...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tt.code, out, errs)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

func TestDiffCommandErrors(t *testing.T) {
	old, cur := writeReports(t, "")
	body, _ := os.ReadFile(cur)
	for _, tt := range []struct {
		name  string
		stdin string
		args  []string
		code  int
		want  string
	}{
		{"one argument", "", []string{"diff", old}, 2, "give two audit reports"},
		{"missing file", "", []string{"diff", old, "/nonexistent/new.json"}, 2, "no such file"},
		{"not a report", `{"registry":"x","templates":3}`, []string{"diff", old, "-"}, 2, "not a keyguard audit"},
		{"both stdin", "", []string{"diff", "-", "-"}, 2, "only one"},
		{"stdin", string(body), []string{"diff", old, "-"}, 0, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := runCLI(t, tt.stdin, tt.args...)
			if code != tt.code || !strings.Contains(errs, tt.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q\n%s", code, errs, tt.code, tt.want, out)
			}
		})
	}
}
