package registry

import (
	"fmt"
	"strings"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/keytmpl"
	"github.com/keyguard/keyguard/naming"
)

// Checker applies the name rules to concrete keys. It keeps scratch space,
// so use one per goroutine.
type Checker struct {
	reg   *Registry
	rules naming.Rules
	caps  []keytmpl.Capture
}

// NewChecker returns a Checker for r.
func (r *Registry) NewChecker() *Checker {
	return &Checker{reg: r, rules: r.Rules()}
}

// Result is the classification of one key.
type Result struct {
	Entry    *Entry // nil when unregistered
	Captures []keytmpl.Capture
	Inferred string // for unregistered keys: the template the key probably follows
}

// Check classifies key and reports the rules its name breaks. For a
// registered key, the template was linted already, so only what the values
// bring is checked: length, bytes that break keys, personal data. An
// unregistered key gets every naming rule. Captures in the result are
// valid until the next call.
func (c *Checker) Check(key string, emit func(finding.Finding)) Result {
	r := c.reg
	e := r.Lookup(key)
	if e == nil {
		return c.unregistered(key, emit)
	}
	c.caps, _ = e.Template.AppendMatch(c.caps[:0], key)
	add := func(rule string, sev finding.Severity, msg, hint string) {
		emit(finding.Finding{Rule: rule, Severity: sev, Key: key, Template: e.Key, Owner: e.Owner, Message: msg, Hint: hint})
	}
	c.rules.Length(key, add)
	for _, p := range e.Template.Placeholders() {
		v := c.value(p.Name)
		if p.Kind == keytmpl.Any {
			c.rules.Value(v, add)
		}
		if !e.PIIAllow && p.Kind != keytmpl.Hash && p.Kind != keytmpl.Enum {
			if what, ok := naming.FindPII(v); ok {
				add(finding.PII, finding.Warning, fmt.Sprintf("placeholder {%s} holds what looks like a %s", p.Name, what),
					fmt.Sprintf("if it is personal data, make it {%s:hash}; if reviewed, mark the template pii: allow", p.Name))
			}
		}
	}
	return Result{Entry: e, Captures: c.caps}
}

func (c *Checker) value(name string) string {
	for _, cp := range c.caps {
		if cp.Name == name {
			return cp.Value
		}
	}
	return ""
}

func (c *Checker) unregistered(key string, emit func(finding.Finding)) Result {
	r := c.reg
	inferred := naming.Infer(key, r.Separator)
	add := func(rule string, sev finding.Severity, msg, hint string) {
		emit(finding.Finding{Rule: rule, Severity: sev, Key: key, Template: inferred, Message: msg, Hint: hint})
	}
	add(finding.Unregistered, finding.Error, "matches no template of the registry",
		fmt.Sprintf("declare it: - key: %q with type, ttl and owner", inferred))
	start := 0
	if r.Env != "" {
		if !strings.HasPrefix(key, r.Env+string(r.Separator)) {
			add(finding.Domain, finding.Warning, fmt.Sprintf("does not start with the env prefix %q", r.Env+string(r.Separator)), "every key of this registry starts with its env")
		} else {
			start = len(r.Env) + 1
		}
	}
	first, _, _ := strings.Cut(key[start:], string(r.Separator))
	first = domainOf(first)
	if _, ok := r.domainIdx[first]; !ok && strings.IndexByte(key, r.Separator) >= 0 {
		add(finding.Domain, finding.Warning, fmt.Sprintf("first segment %s is not a declared domain", finding.Display(first)), "use a declared domain, or declare this one with its owner")
	}
	c.rules.Key(key, start, add)
	return Result{Inferred: inferred}
}
