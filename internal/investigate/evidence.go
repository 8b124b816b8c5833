package investigate

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/human"
	"github.com/keyguard/keyguard/registry"
)

// ttlFindings reports keys whose writes gave different TTLs, and TTLs the
// template does not allow.
func (c *conclusion) ttlFindings() {
	for _, w := range c.ttls {
		if c.r.Watch != nil {
			c.r.Watch.Keys = append(c.r.Watch.Keys, w)
		}
		pol := policyText(w.Policies)
		switch {
		case w.Fluctuates():
			msg := fmt.Sprintf("the TTL of %s alternated between %d policies during the watch: %s (%s)",
				code(w.Key), len(w.Policies), pol, movesText(&w))
			c.say("%s", msg)
			c.add(finding.Finding{Rule: finding.TTLFluctuation, Severity: finding.Error, Key: w.Key, Message: msg,
				Hint: "writers with different TTL strategies share this key: --monitor shows which writer sets which TTL"})
		case w.Resets > 0 && len(w.Policies) == 1:
			c.add(finding.Finding{Rule: finding.TTLFluctuation, Severity: finding.Info, Key: w.Key,
				Message: fmt.Sprintf("rewritten %d times during the watch, each time with %s", w.Resets, pol)})
		}
		e := c.p.reg.Lookup(w.Key)
		if e == nil || w.Resets+w.Cleared == 0 {
			continue // no write during the watch: the first look judges the TTL
		}
		for _, p := range w.Policies {
			c.ttlAgainst(w.Key, e, p, "a write during the watch")
		}
	}
}

// ttlAgainst checks one TTL (seconds, -1 none) against the template.
func (c *conclusion) ttlAgainst(key string, e *registry.Entry, p int64, who string) {
	limit := e.MaxTTL()
	slack := max(time.Second, limit/100) + c.p.interval
	switch {
	case p == -1 && !e.Persistent && e.TTL > 0:
		c.add(finding.Finding{Rule: finding.NoTTL, Severity: finding.Error, Key: key,
			Message: fmt.Sprintf("%s left the key without a TTL, but the template's TTL is %s", who, registry.FormatTTL(e.TTL)),
			Hint:    "find the writer that drops the TTL (--monitor): SET without EX, or PERSIST"})
	case p > 0 && e.Persistent:
		c.add(finding.Finding{Rule: finding.TTLMismatch, Severity: finding.Warning, Key: key,
			Message: fmt.Sprintf("%s gave the key a TTL of %s, but the template is persistent: the key will vanish", who, secs(p))})
	case p > 0 && e.TTL > 0 && seconds(p) > limit+slack:
		c.add(finding.Finding{Rule: finding.TTLMismatch, Severity: finding.Error, Key: key,
			Message: fmt.Sprintf("%s gave the key a TTL of %s, over the template's %s: someone else set it", who, secs(p), registry.FormatTTL(limit)),
			Hint:    "--monitor shows which writer sets this TTL"})
	}
}

func policyText(ps []int64) string {
	var parts []string
	for _, p := range ps {
		if p < 0 {
			parts = append(parts, "no TTL")
		} else {
			parts = append(parts, "TTL "+secs(p))
		}
	}
	return joinAnd(parts)
}

func movesText(w *TTLWatch) string {
	var parts []string
	if w.Resets > 0 {
		parts = append(parts, fmt.Sprintf("set again %d times", w.Resets))
	}
	if w.Cleared > 0 {
		parts = append(parts, fmt.Sprintf("cleared %d times", w.Cleared))
	}
	if w.Gone > 0 {
		parts = append(parts, fmt.Sprintf("gone %d times", w.Gone))
	}
	return strings.Join(parts, ", ")
}

// keyFindings reports what each key's first look shows against the
// registry: unregistered, another type, no TTL, a TTL over the template's.
func (c *conclusion) keyFindings() {
	for _, k := range c.p.keys {
		if k.Type == "none" || k.Type == "" {
			continue
		}
		e := c.p.reg.Lookup(k.Key)
		if e == nil {
			if !c.r.NoRegistry { // without a registry no key is registered: nothing to report
				c.add(finding.Finding{Rule: finding.Unregistered, Severity: finding.Error, Key: k.Key,
					Message: fmt.Sprintf("not in the registry; it looks like %s", k.Inferred),
					Hint:    "register it for the team that owns it (the writers above), or delete it"})
			}
			continue
		}
		if e.Type != "" && k.Type != e.Type {
			c.add(finding.Finding{Rule: finding.TypeMismatch, Severity: finding.Error, Key: k.Key,
				Message: fmt.Sprintf("%s %s, but the template says %s", human.Article(k.Type), k.Type, e.Type),
				Hint:    "another writer stores its own format here: --monitor names it"})
		}
		switch {
		case k.TTLms == -1:
			c.ttlAgainst(k.Key, e, -1, "its last write")
		case k.TTLms > 0:
			c.ttlAgainst(k.Key, e, (k.TTLms+999)/1000, "its last write")
		}
	}
}

// captureNotes says how each capture ended and what it cost, and what
// the keyspace notifications showed.
func (c *conclusion) captureNotes() {
	if c.r.Capture != nil {
		writes := 0
		for _, a := range c.acts {
			writes += len(a.Writers)
		}
		lost := false
		for _, s := range c.p.lost {
			lost = lost || s.Step == "capture"
		}
		switch {
		case writes == 0 && lost:
			c.say("no client was seen writing these keys in the part of the capture that was observed: no conclusion about the rest")
		case writes == 0:
			c.say("no client wrote these keys during the capture")
		}
		for i := range c.r.Capture.Nodes {
			c.nodeNotes(&c.r.Capture.Nodes[i])
		}
	}
	if c.p.notify != nil {
		for _, ke := range c.p.notify.Keys {
			c.notifyNote(&ke)
		}
	}
}

func (c *conclusion) nodeNotes(nc *NodeCapture) {
	d := registry.FormatTTL(time.Duration(nc.Duration).Round(100 * time.Millisecond))
	switch nc.Stopped {
	case StopLines:
		c.say("the capture on %s stopped at its line cap (%d lines) after %s: raise --max-lines or narrow the target", nc.Addr, nc.Lines, d)
	case StopBytes:
		c.say("the capture on %s stopped at its byte cap (%d bytes) after %s: raise --max-bytes or narrow the target", nc.Addr, nc.Bytes, d)
	case StopServer:
		reason := ""
		if nc.Reason != "" {
			reason = " (" + nc.Reason + ")"
		}
		c.say("the server closed the MONITOR connection on %s after %s%s: the evidence is what was captured until then", nc.Addr, d, reason)
	case StopCancelled:
		c.say("the capture on %s was interrupted after %s: the evidence is what was captured until then", nc.Addr, d)
	}
	cost := &nc.Cost
	cpu := ""
	if cost.CPUBefore > 0 && cost.CPUDuring > 0 {
		cpu = fmt.Sprintf("; its CPU per command went from %.1f to %.1f µs, so a saturated server would lose %.0f%% of its throughput",
			cost.CPUBefore, cost.CPUDuring, max(cost.CPUPercent, 0))
	}
	switch {
	case cost.Measured && cost.Percent >= 0:
		c.say("MONITOR cost on %s: throughput fell by %.0f%% during the capture (%.0f → %.0f commands/s)%s", nc.Addr, cost.Percent, cost.Before, cost.During, cpu)
	case cost.Measured:
		c.say("MONITOR cost on %s: throughput did not fall (%.0f → %.0f commands/s: the load itself changed)%s", nc.Addr, cost.Before, cost.During, cpu)
	case cost.Note != "":
		c.say("MONITOR cost on %s: %s", nc.Addr, cost.Note)
	}
	if nc.Orphaned > 0 {
		c.say("%d script commands on %s came without their caller (MONITOR on Redis 7.0.0–7.0.5 does not show FCALL)", nc.Orphaned, nc.Addr)
	}
}

// eventFamily is the value type a keyspace event writes, "" for generic
// events (del, expire…).
func eventFamily(event string) string {
	switch event {
	case "set", "setrange", "incrby", "incrbyfloat", "append":
		return "string"
	case "hset", "hincrby", "hincrbyfloat", "hdel":
		return "hash"
	case "lpush", "rpush", "lset", "linsert", "lrem", "ltrim":
		return "list"
	case "sadd", "srem":
		return "set"
	case "zadd", "zincr", "zrem":
		return "zset"
	case "xadd":
		return "stream"
	}
	return ""
}

func (c *conclusion) notifyNote(ke *KeyEvents) {
	fams := map[string]bool{}
	for ev := range ke.Counts {
		if f := eventFamily(ev); f != "" {
			fams[f] = true
		}
	}
	msg := fmt.Sprintf("keyspace notifications for %s (timing, no client identity): %s; in order: %s",
		code(ke.Key), strings.ToLower(commandSummary(ke.Counts, 6)), strings.Join(ke.Sequence, " "))
	if len(fams) > 1 {
		var as []string
		for _, f := range slices.Sorted(maps.Keys(fams)) {
			as = append(as, "a "+f)
		}
		msg += fmt.Sprintf("; it was written as %s in turn: two write paths (--monitor names them)", joinAnd(as))
	}
	c.say("%s", msg)
}
