// Package namehash is the case-insensitive hash shared by the command table
// generator and the runtime lookup in rediscmd. Both sides must agree on it,
// so it lives in one place.
//
//	h := namehash.Add(namehash.Seed, "CLIENT")
//	h = namehash.Add(namehash.Add(h, "|"), "setname")
//	slot := h & (tableSize - 1)
//
// It imports no package of this module.
package namehash

// Seed is the initial value (the FNV-1a 32-bit offset basis).
const Seed uint32 = 2166136261

const prime32 = 16777619

// Add folds s into h, ASCII letters lower-cased, the way Redis compares
// command names (strcasecmp in the C locale).
func Add(h uint32, s string) uint32 {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		h ^= uint32(c)
		h *= prime32
	}
	return h
}

// Sum is Add(Seed, s).
func Sum(s string) uint32 { return Add(Seed, s) }
