package inventory

import (
	"fmt"
	"strings"
	"time"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/human"
	"github.com/keyguard/keyguard/registry"
)

// check applies the rules that need more than the key name.
func (a *Aggregator) check(r *Record, e *registry.Entry, g *group) {
	pol := a.reg.Policy
	tmpl, owner := g.name, g.owner
	add := a.add
	if r.TTL == -1 {
		switch {
		case e == nil:
			if pol.RequireTTL {
				add(finding.NoTTL, finding.Warning, tmpl, owner, "no TTL on an unregistered key: it lives until someone deletes it",
					"register the family with a ttl, or set one when writing (SET key value EX seconds)")
			}
		case e.Persistent:
		case e.TTL > 0:
			if g.noTTLMsg == "" { // formatted once per template: legacy keyspaces lack TTLs by the million
				g.noTTLMsg = fmt.Sprintf("no TTL, but the template's TTL is %s: it was written without EXPIRE (around the generated builder or SDK)", human.Duration(e.TTL))
			}
			add(finding.NoTTL, finding.Error, tmpl, owner, g.noTTLMsg,
				"find the writer (keyguard investigate --key KEY), then EXPIRE the key or delete it")
		case pol.RequireTTL:
			add(finding.NoTTL, finding.Error, tmpl, owner, "no TTL, and the template declares none",
				"add ttl: to the template (or persistent: true when it must never expire)")
		}
	}
	if e != nil {
		if r.TTL > 0 {
			switch limit := e.MaxTTL(); {
			case e.Persistent:
				a.addTTL(finding.Warning, tmpl, owner, r.TTL, ", but the template is persistent: the key will vanish",
					"find who set the expiry (keyguard investigate --key KEY) and PERSIST the key")
			case e.TTL > 0 && r.TTL > limit+time.Second+limit/100:
				if g.ttlOverTail == "" {
					g.ttlOverTail = ", over the template's " + ttlPolicy(e) + ": someone else set this TTL"
				}
				a.addTTL(finding.Error, tmpl, owner, r.TTL, g.ttlOverTail, "find the other writer (keyguard investigate --key KEY)")
			}
		}
		if r.Type != "" && e.Type != "" && r.Type != e.Type {
			add(finding.TypeMismatch, finding.Error, tmpl, owner,
				a.message(finding.TypeMismatch, r.Type, e.Type, typeMismatchMsg),
				"find the other writer (keyguard investigate --key KEY) and give it its own key")
		}
		if e.Guard && r.NSProbed && (r.Type == "hash" || r.Type == "") {
			switch {
			case !r.HasNS:
				add(finding.GuardOwnerless, finding.Error, tmpl, owner,
					"a guarded hash without the __ns__ owner field: it was written around the guard",
					"write it through the guard SDK; the next guarded write adopts it")
			case !nsMayWrite(e, r.NS):
				add(finding.GuardForeign, finding.Error, tmpl, owner,
					a.message(finding.GuardForeign, r.NS, e.Owner, foreignOwnerMsg),
					"if this service should write here, add it to writers:; otherwise it is a conflict: keyguard investigate --key KEY")
			}
		}
	}
	// A string's element count is STRLEN, its length in bytes: only the
	// byte limit applies to strings.
	bigBytes := pol.BigKeyBytes > 0 && r.Bytes > pol.BigKeyBytes
	bigElems := pol.BigKeyElements > 0 && r.Elements > pol.BigKeyElements && r.Type != "string"
	if bigBytes || bigElems {
		var what string
		switch {
		case bigBytes && bigElems:
			what = fmt.Sprintf("%s and %d elements, over the policy's %s / %d", human.Bytes(r.Bytes), r.Elements, human.Bytes(pol.BigKeyBytes), pol.BigKeyElements)
		case bigBytes:
			what = fmt.Sprintf("%s, over the policy's %s", human.Bytes(r.Bytes), human.Bytes(pol.BigKeyBytes))
		default:
			what = fmt.Sprintf("%d elements, over the policy's %d", r.Elements, pol.BigKeyElements)
		}
		hint := "split it by a sub-key (shard into N keys), or delete it with UNLINK"
		if r.Type == "string" {
			hint = "compress the value or split it over several keys; delete it with UNLINK"
		}
		add(finding.BigKey, finding.Warning, tmpl, owner, what+": slow to read, delete or migrate, and it pins one Cluster slot", hint)
	}
}

// checkForm reports a string value of another form than the JSON object
// its template declares fields of (a number, text, Java serialization…):
// another writer stores its own format in the key, and readers that
// parse the object fail on it (the Go SDK's hook refuses such a write).
func (a *Aggregator) checkForm(r *Record, e *registry.Entry, g *group) {
	form := r.Form.String()
	a.add(finding.ValueFormat, finding.Error, g.name, g.owner,
		a.message(finding.ValueFormat, form, strings.Join(e.Fields, ", "), foreignFormMsg),
		"find the writer (keyguard investigate --key KEY) and give it its own key; if the template's values are not JSON objects, remove fields: from it")
}

func foreignFormMsg(form, fields string) string {
	return fmt.Sprintf("holds %s, not the JSON object the template declares (fields %s): another writer stores its own format in this key", form, fields)
}

// ttlArg is the TTL of a ttl-mismatch finding in whole seconds (1 to
// maxTTLArg; 0 none), and the text of its message after the TTL.
type ttlArg struct {
	sec  uint32
	tail string
}

// maxTTLArg is the longest TTL an entry of a findings list holds (24
// bits of seconds, 194 days); a longer one is written into the message.
const maxTTLArg = 1<<24 - 1

// ttlPrefix is the text of a ttl-mismatch message before the TTL.
const ttlPrefix = "expires in "

// addTTL adds the record's ttl-mismatch finding, whose message is
// ttlPrefix, the key's TTL, then tail. The TTL differs from key to key,
// so a message holding it is a text of its own for each (of thousands
// or millions, in a keyspace whose TTLs another writer set): formatting
// it, and keeping each as its own text in the findings list, was an
// eighth of an RDB audit's CPU where most keys broke the rule, for a
// list that shows 10,000 of them. The list keeps the TTL in the entry
// (ttlArg) and the shared text apart; the message is written when the
// report is.
func (a *Aggregator) addTTL(sev finding.Severity, tmpl, owner string, ttl time.Duration, tail, hint string) {
	if s := ttl.Round(time.Second) / time.Second; ttl >= time.Second && s <= maxTTLArg {
		a.ttlArg = ttlArg{uint32(s), tail}
		a.add(finding.TTLMismatch, sev, tmpl, owner, ttlPrefix, hint)
		return
	}
	a.add(finding.TTLMismatch, sev, tmpl, owner, ttlPrefix+human.Duration(ttl)+tail, hint)
}

// ttlMessage is the message of a listed finding: its text, or with a TTL
// (ttlArg.sec) the text before it, the TTL and tail.
func ttlMessage(msg string, sec uint32, tail string) string {
	if sec == 0 {
		return msg
	}
	return clipText(msg + human.Duration(time.Duration(sec)*time.Second) + tail)
}

func (a *Aggregator) add(rule string, sev finding.Severity, tmpl, owner, msg, hint string) {
	a.pending = append(a.pending, finding.Finding{Rule: rule, Severity: sev, Key: a.rec.Key, Template: tmpl, Owner: owner, Message: msg, Hint: hint})
}

// nsMayWrite reports whether a guard namespace belongs to the owner or a
// writer of e: the namespace is the service's name, or "name:anything"
// (the guard's "order-service:order" style).
func nsMayWrite(e *registry.Entry, ns string) bool {
	if e.MayWrite(ns) {
		return true
	}
	if i := strings.IndexByte(ns, ':'); i > 0 {
		return e.MayWrite(ns[:i])
	}
	return false
}

func ttlPolicy(e *registry.Entry) string {
	if e.TTLJitter > 0 {
		return human.Duration(e.TTL) + "+" + human.Duration(e.TTLJitter)
	}
	return human.Duration(e.TTL)
}

// msgKey is what a cached finding message depends on.
type msgKey struct{ rule, x, y string }

// Bounds of the message cache.
const (
	maxCachedMsgs = 1024
	maxCachedArg  = 128
)

// message returns format(x, y), formatted once per (rule, x, y) while the
// cache has room: the same foreign owner or wrong type repeats over many
// keys. x and y may be slices of a walker's buffer: the cache keeps
// copies.
func (a *Aggregator) message(rule, x, y string, format func(x, y string) string) string {
	if m, ok := a.msgs[msgKey{rule, x, y}]; ok {
		return m
	}
	m := format(x, y)
	if len(x) <= maxCachedArg && len(y) <= maxCachedArg && len(a.msgs) < maxCachedMsgs {
		if a.msgs == nil {
			a.msgs = map[msgKey]string{}
		}
		a.msgs[msgKey{rule, strings.Clone(x), strings.Clone(y)}] = m
	}
	return m
}

func typeMismatchMsg(got, declared string) string {
	return fmt.Sprintf("is a %s, the template declares %s: another writer stores a different structure here", finding.Display(got), declared)
}

func foreignOwnerMsg(ns, owner string) string {
	return fmt.Sprintf("__ns__ is %s, which is neither the owner %s nor a declared writer", finding.Display(ns), finding.Display(owner))
}
