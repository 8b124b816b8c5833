package inventory

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/keyguard/keyguard/keytmpl"
	"github.com/keyguard/keyguard/naming"
	"github.com/keyguard/keyguard/registry"
	"github.com/keyguard/keyguard/report"
)

// suggest writes a registry entry for an inferred family, indented to go
// under keys: in keyguard.yaml. Everything a person must decide is marked
// FILL-IN; the snippet loads as is.
func (a *Aggregator) suggest(g *group) string {
	if g.binary {
		return ""
	}
	sep := string(a.reg.Separator)
	name := g.name
	if a.reg.Env != "" {
		name = strings.TrimPrefix(name, a.reg.Env+sep)
	}
	if _, err := keytmpl.Parse(name, a.reg.Separator); err != nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "  - key: %s\n", strconv.Quote(name))
	best, n := -1, int64(0)
	for t, c := range g.types[:typeModule] {
		if c > n {
			best, n = t, c
		}
	}
	if best >= 0 {
		fmt.Fprintf(&b, "    type: %s\n", report.TypeNames[best])
	}
	switch {
	case g.ttl.n > 0:
		fmt.Fprintf(&b, "    ttl: %s # longest remaining TTL seen: %s", registry.FormatTTL(niceTTL(g.ttl.max)), report.HumanDuration(g.ttl.max))
		if g.noTTL > 0 {
			fmt.Fprintf(&b, "; %d keys have none", g.noTTL)
		}
		b.WriteByte('\n')
	default:
		b.WriteString("    ttl: 1h # FILL-IN: none of these keys has a TTL; choose one, or write persistent: true instead\n")
	}
	if _, ok := a.reg.Domain(g.domain); !ok {
		b.WriteString("    owner: FILL-IN # the team that writes these keys\n")
	}
	desc := fmt.Sprintf("FILL-IN: inferred from %d keys", g.keys)
	if g.example != "" && len(g.example) <= 80 && !strings.ContainsAny(g.example, "\x00\n\r") {
		if _, pii := naming.FindPII(g.example); !pii {
			desc += ", e.g. " + g.example
		}
	}
	fmt.Fprintf(&b, "    desc: %s\n", strconv.Quote(desc))
	return b.String()
}

// niceTTL rounds an observed remaining TTL up to a round policy value.
func niceTTL(d time.Duration) time.Duration {
	for _, v := range []time.Duration{30 * time.Second, time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute,
		30 * time.Minute, time.Hour, 2 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour, 7 * 24 * time.Hour, 30 * 24 * time.Hour} {
		if d <= v {
			return v
		}
	}
	return d.Round(24 * time.Hour)
}
