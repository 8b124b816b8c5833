package dashboard

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestRuleLinks: the pages link each rule to its section of the docs under
// Config.DocsBase (serve --docs-url), and so does /api/report.json; with
// no base the links are relative to the repository.
func TestRuleLinks(t *testing.T) {
	for _, tt := range []struct {
		base, want string
	}{
		{"https://docs.example.org/keyguard/", `https://docs.example.org/keyguard/docs/rules.md#no-ttl`},
		{"", `docs/rules.md#no-ttl`},
	} {
		s, hs := newTestServer(t, Config{Auditor: &fixedAuditor{reps: []*Report{smallReport(time.Now())}}, DocsBase: tt.base})
		if err := s.AuditNow(context.Background()); err != nil {
			t.Fatal(err)
		}
		for _, path := range []string{"/", "/findings", "/template?name=order%3Aorder%3A%7BorderId%3Aint%7D%3Abase"} {
			code, body := get(t, hs, path)
			if code != 200 || !strings.Contains(body, `href="`+tt.want+`"`) {
				t.Errorf("base %q: %s (%d) has no link to %s", tt.base, path, code, tt.want)
			}
			if tt.base != "" && strings.Contains(body, `href="docs/rules.md`) {
				t.Errorf("base %q: %s links a rule relative to the repository", tt.base, path)
			}
		}
		_, js := get(t, hs, "/api/report.json")
		if tt.base != "" && !strings.Contains(js, `"`+tt.want+`"`) {
			t.Errorf("base %q: /api/report.json has no doc link %s", tt.base, tt.want)
		}
	}
}
