package registry

import "github.com/keyguard/keyguard/finding"

// CheckInferred is CheckEntry for an unregistered key whose template the
// caller inferred already (Infer, on this or another Checker): the key is
// not inferred again.
func (c *Checker) CheckInferred(key, inferred string, emit func(finding.Finding)) Result {
	return c.CheckInferredTexts(key, inferred, nil, emit)
}

// FamilyTexts are the texts the findings of an inferred template's keys
// carry: its hint, and the domain message of a first segment. A caller
// that keeps them with the family it found a key in (an audit, where a
// keyspace of thousands of families looked each up in two caches per
// key) hands them to CheckInferredTexts, which fills them in.
type FamilyTexts struct {
	hint          string
	first, domain string // a first segment and its domain message, "" when declared
	firstSet      bool
}

// Set reports whether t holds the family's hint.
func (t *FamilyTexts) Set() bool { return t.hint != "" }

// CheckInferredTexts is CheckInferred with the texts of inferred's
// family kept by the caller in t (nil: none), which it fills in.
func (c *Checker) CheckInferredTexts(key, inferred string, t *FamilyTexts, emit func(finding.Finding)) Result {
	c.lastKey = append(c.lastKey[:0], key...)
	c.lastInferred = inferred
	c.texts = t
	res := c.unregistered(key, emit)
	c.texts = nil
	return res
}
