package registry

import (
	"regexp"
	"testing"

	"github.com/keyguard/keyguard/finding"
)

// wrongArticle finds "a" before a vowel or an initialism read with a vowel
// ("a e-mail", "a ID", "a SDK") and "an" before a consonant.
var wrongArticle = regexp.MustCompile(`\b(a [aeiouAEIOU]|a [FHLMNRSX][A-Z]|an [b-df-hj-np-tv-z])`)

// TestPIIArticles: the personal-data findings of lint and check name what
// they found with the right article: "an e-mail address", "an ID number",
// "a phone number".
func TestPIIArticles(t *testing.T) {
	r, err := Parse("k.yaml", []byte(`version: 1
domains:
  user: {owner: user-team}
keys:
  - key: "user:mail:{email}"
    ttl: 1h
  - key: "user:card:{idCard}"
    ttl: 1h
  - key: "user:tel:{phone}"
    ttl: 1h
  - key: "user:note:{note}"
    ttl: 1h
`))
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, f := range r.Lint() {
		if f.Rule == finding.PII {
			msgs = append(msgs, f.Message)
		}
	}
	c := r.NewChecker()
	for _, k := range []string{"user:note:someone@example.com", "user:note:110101199003074514", "user:note:13800138000"} {
		c.Check(k, func(f finding.Finding) {
			if f.Rule == finding.PII {
				msgs = append(msgs, f.Message)
			}
		})
	}
	if len(msgs) != 6 {
		t.Fatalf("%d personal-data findings, want 6 (3 templates, 3 keys): %q", len(msgs), msgs)
	}
	for _, m := range msgs {
		if wrongArticle.MatchString(m) {
			t.Errorf("wrong article: %q", m)
		}
	}
}
