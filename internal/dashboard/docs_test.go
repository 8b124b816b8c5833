package dashboard

import (
	"context"
	"regexp"
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

// TestMemoryNotMeasured: a report none of whose keys' memory could be read
// (a server without MEMORY USAGE) shows "not measured" and dashes in the
// pages, never "0 B"; the same report with memory shows its figures.
func TestMemoryNotMeasured(t *testing.T) {
	zero := regexp.MustCompile(`(^|[^0-9.,])0 B\b`)
	for _, measured := range []bool{false, true} {
		rep := smallReport(time.Now())
		if !measured {
			rep.Summary.Bytes, rep.Summary.BytesUnknown = 0, rep.Summary.Keys
			for i := range rep.Groups {
				rep.Groups[i].Bytes = 0
				for j := range rep.Groups[i].TTLHistogram {
					rep.Groups[i].TTLHistogram[j].Bytes = 0
				}
			}
			for i := range rep.TopKeys {
				rep.TopKeys[i].Bytes = 0
			}
			for i := range rep.TTLHistogram {
				rep.TTLHistogram[i].Bytes = 0
			}
		}
		s, hs := newTestServer(t, Config{Auditor: &fixedAuditor{reps: []*Report{rep}}})
		if err := s.AuditNow(context.Background()); err != nil {
			t.Fatal(err)
		}
		for _, path := range []string{"/", "/templates", "/unregistered", "/template?name=order%3Aorder%3A%7BorderId%3Aint%7D%3Abase"} {
			code, body := get(t, hs, path)
			if code != 200 {
				t.Fatalf("%s: %d", path, code)
			}
			switch {
			case !measured && zero.MatchString(body):
				i := zero.FindStringIndex(body)
				t.Errorf("%s shows %q for memory not measured", path, body[max(0, i[0]-300):i[1]])
			case !measured && (path == "/" || strings.HasPrefix(path, "/template?")) && !strings.Contains(body, "not measured"):
				t.Errorf("%s does not say memory was not measured", path)
			case measured && strings.Contains(body, "not measured"):
				t.Errorf("%s says not measured of a report with memory", path)
			}
		}
	}
}
