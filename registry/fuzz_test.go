package registry

import (
	"os"
	"testing"

	"github.com/keyguard/keyguard/finding"
)

func FuzzParse(f *testing.F) {
	for _, p := range []string{"testdata/spec.yaml", "testdata/seed000.yaml"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("version: 1\nkeys:\n  - key: &a \"x:{y}\"\n    ttl: *a\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Parse("f.yaml", data)
		if err != nil {
			return
		}
		r.Lint()
		c := r.NewChecker()
		for _, e := range r.Entries {
			ex := e.Template.Example()
			if r.Lookup(ex) == nil {
				t.Fatalf("example %q of %q matches nothing", ex, e.Key)
			}
			c.Check(ex, func(finding.Finding) {})
		}
	})
}
