package keytmpl

import (
	"strings"

	"github.com/keyguard/keyguard/internal/glob"
)

// Glob returns the Redis glob (SCAN MATCH, ACL key pattern) of t: placeholders become "*"
// (adjacent ones merge), literal text is escaped.
func (t *Template) Glob() string {
	var b strings.Builder
	sep := string(t.Separator())
	for i, seg := range t.Segments() {
		if i > 0 {
			b.WriteString(glob.Escape(sep))
		}
		for _, p := range seg.Parts {
			if p.IsPlaceholder() {
				if !strings.HasSuffix(b.String(), "*") || strings.HasSuffix(b.String(), `\*`) {
					b.WriteByte('*')
				}
				continue
			}
			b.WriteString(glob.Escape(p.Lit))
		}
	}
	return b.String()
}
