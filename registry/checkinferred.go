package registry

import "github.com/keyguard/keyguard/finding"

// CheckInferred is CheckEntry for an unregistered key whose template the
// caller inferred already (Infer, on this or another Checker): the key is
// not inferred again.
func (c *Checker) CheckInferred(key, inferred string, emit func(finding.Finding)) Result {
	c.lastKey = append(c.lastKey[:0], key...)
	c.lastInferred = inferred
	return c.unregistered(key, emit)
}
