package inventory

import (
	"fmt"
	"slices"
	"strings"
)

// Mixed-schema detection (seed 000 §1.1 and §4.3 step 3): one writer
// stores {activityId, discountType, discountValue} in promo:sku:1001, a
// second writer stores {couponAmount, promoTotal} in the same key, and a
// key that both wrote holds the union of the two field sets.
//
// Per template a bottom-k sample of keys (the k smallest hashes of the
// key name, so the sample is random, bounded and the same whatever the
// arrival order) keeps each sampled key's normalized field names. At
// Report time the fields seen in two keys or more are clustered by
// co-occurrence: two fields belong
// to one style when they appear together in more than half the keys of
// the rarer of the two (2·both > min(df)). Optional fields join the style
// they come with; a second writer's fields stay apart as long as mixed keys
// are fewer than the pure keys of either style. A style is established
// when at least max(2, 5% of the sample) keys hold only its fields. A key
// whose fields fall in two or more established styles is reported.
//
// Limits: a field both writers write (say updatedAt) joins the two styles
// into one, and nothing is reported; when most keys are mixed, the union
// looks like the schema.

// sampler is the bounded field-name sample of one template.
type sampler struct {
	k     int
	items []fieldSample
	max   int // index of the item with the largest hash, the next to evict
}

type fieldSample struct {
	hash   uint64
	key    string
	db     int
	bytes  int64
	fields []string // normalized, sorted, unique, at most maxFieldsPerKey
}

// keyHash is a fixed 64-bit hash of a key, so that samples and capped
// lists are reproducible across runs and aggregators: eight bytes at a
// time through a multiply and a shift (each step a bijection of the
// state), then murmur3's finalizer.
func keyHash(s string) uint64 {
	const m = 0x9e3779b97f4a7c15
	h := uint64(len(s)) * m
	for ; len(s) >= 8; s = s[8:] {
		v := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
			uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
		h = (h ^ v) * m
		h ^= h >> 29
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		v |= uint64(s[i]) << (8 * i)
	}
	h = (h ^ v) * m
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// admits reports whether a key with hash h would enter the sample.
func (s *sampler) admits(h uint64) bool {
	return s == nil || len(s.items) < s.k || h < s.items[s.max].hash
}

func (s *sampler) offer(x fieldSample) {
	for i := range s.items {
		if s.items[i].hash == x.hash && s.items[i].key == x.key && s.items[i].db == x.db {
			return // the same key twice
		}
	}
	if len(s.items) < s.k {
		s.items = append(s.items, x)
	} else if x.hash < s.items[s.max].hash {
		s.items[s.max] = x
	} else {
		return
	}
	s.max = 0
	for i := range s.items {
		if s.items[i].hash > s.items[s.max].hash {
			s.max = i
		}
	}
}

func (s *sampler) merge(o *sampler) {
	for _, x := range o.items {
		if s.admits(x.hash) {
			s.offer(x)
		}
	}
}

// normalizeFields copies the field names a walker gave into a sorted,
// unique, bounded list: the reserved __ns__ field is dropped, every run of
// letters and digits that holds a digit becomes '#' so that per-ID fields
// ("1001", "u1002", "a8f3e1") read as one name, and names are cut at
// maxFieldName bytes; at most maxFieldsPerKey names and maxFieldBytes
// bytes are kept.
func normalizeFields(in []string) []string {
	out := make([]string, 0, min(len(in), maxFieldsPerKey*2))
	var b strings.Builder
	for _, f := range in {
		if f == "" || f == "__ns__" {
			continue
		}
		if len(f) > maxFieldName {
			f = f[:maxFieldName]
		}
		b.Reset()
		for i := 0; i < len(f); {
			if !isAlnum(f[i]) {
				b.WriteByte(f[i])
				i++
				continue
			}
			j, digit := i, false
			for j < len(f) && isAlnum(f[j]) {
				digit = digit || (f[j] >= '0' && f[j] <= '9')
				j++
			}
			if digit {
				b.WriteByte('#')
			} else {
				b.WriteString(f[i:j])
			}
			i = j
		}
		out = append(out, b.String())
	}
	slices.Sort(out)
	out = slices.Compact(out)
	n, total := 0, 0
	for n < len(out) && n < maxFieldsPerKey && total+len(out[n]) <= maxFieldBytes {
		total += len(out[n])
		n++
	}
	return out[:n:n]
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// mixedKey is one finding of the analysis.
type mixedKey struct {
	key    string
	db     int
	bytes  int64
	styles [][]string // the key's fields in each style it touches
	pure   []int      // keys holding only that style
}

// analyze clusters the sample's fields into styles and returns the keys
// that mix two or more established styles, in key order.
func (s *sampler) analyze() []mixedKey {
	const minSample = 8
	n := len(s.items)
	if n < minSample {
		return nil
	}
	// Vocabulary with document frequencies.
	idx := map[string]int{}
	var df []int
	for _, it := range s.items {
		for _, f := range it.fields {
			i, ok := idx[f]
			if !ok {
				i = len(df)
				idx[f] = i
				df = append(df, 0)
			}
			df[i]++
		}
	}
	v := len(df)
	if v < 2 {
		return nil
	}
	// Fields seen once say nothing about styles: they take no part.
	co := make([]int32, v*v)
	ids := make([][]int, n)
	pos := make([][]int, n) // index of each id in the sample's fields
	for j, it := range s.items {
		for a, f := range it.fields {
			if i := idx[f]; df[i] >= 2 {
				ids[j] = append(ids[j], i)
				pos[j] = append(pos[j], a)
			}
		}
		for a, x := range ids[j] {
			for _, y := range ids[j][a+1:] {
				co[x*v+y]++
				co[y*v+x]++
			}
		}
	}
	// Union-find over links.
	parent := make([]int, v)
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	for x := 0; x < v; x++ {
		for y := x + 1; y < v; y++ {
			if c := int(co[x*v+y]); c > 0 && 2*c > min(df[x], df[y]) {
				parent[find(x)] = find(y)
			}
		}
	}
	// Pure support per style.
	pure := map[int]int{}
	for _, fs := range ids {
		if len(fs) == 0 {
			continue
		}
		r := find(fs[0])
		one := true
		for _, f := range fs[1:] {
			if find(f) != r {
				one = false
				break
			}
		}
		if one {
			pure[r]++
		}
	}
	minPure := max(2, (n*5+99)/100)
	var out []mixedKey
	for j, fs := range ids {
		var roots []int
		for _, f := range fs {
			if r := find(f); !slices.Contains(roots, r) {
				roots = append(roots, r)
			}
		}
		established := 0
		for _, r := range roots {
			if pure[r] >= minPure {
				established++
			}
		}
		if established < 2 {
			continue
		}
		m := mixedKey{key: s.items[j].key, db: s.items[j].db, bytes: s.items[j].bytes}
		for _, r := range roots {
			if pure[r] < minPure {
				continue
			}
			var names []string
			for a, f := range fs {
				if find(f) == r {
					names = append(names, s.items[j].fields[pos[j][a]])
				}
			}
			m.styles = append(m.styles, names)
			m.pure = append(m.pure, pure[r])
		}
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b mixedKey) int { return strings.Compare(a.key, b.key) })
	return out
}

func (m mixedKey) message() string {
	var parts, counts []string
	for i, st := range m.styles {
		names := st
		more := ""
		if len(names) > 6 {
			more = fmt.Sprintf(", …%d more", len(names)-6)
			names = names[:6]
		}
		parts = append(parts, "{"+strings.Join(names, ", ")+more+"}")
		counts = append(counts, fmt.Sprint(m.pure[i]))
	}
	return fmt.Sprintf("the value mixes %d field styles: %s; each style alone is in %s sampled keys of this template: two writers share this key",
		len(m.styles), strings.Join(parts, " and "), strings.Join(counts, " and "))
}

const mixedHint = "find the second writer (keyguard investigate --key KEY, or SDK writer records) and give each writer its own key"
