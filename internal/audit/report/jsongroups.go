package report

import (
	"slices"
	"strconv"

	"github.com/keyguard/keyguard/internal/jsonout"
)

// The groups, the prefixes and the state's groups are one element per
// template or family: a keyspace of thousands of families makes them
// tens of thousands of elements, which encoding/json took ~100 ms of a
// report to reflect on and re-indent. These append the same bytes
// directly (held to encoding/json's output by TestAppendGroupsAsEncoded
// and the fuzz targets beside it), with WriteJSON's settings: two-space
// indent, no HTML escaping but in Str.

// Indentation of a field of an element of a report's array (findings,
// top keys, groups, prefixes) and of a field of an element of the
// state's arrays (hot-key candidates, groups).
const (
	fieldIndent1 = "\n      "
	fieldIndent2 = "\n        "
)

// appendKey starts the field name of an object whose fields are at
// indent (the first field when first is set).
func appendKey(b []byte, indent, name string, first bool) []byte {
	if !first {
		b = append(b, ',')
	}
	b = append(b, indent...)
	b = append(b, '"')
	b = append(b, name...)
	return append(b, '"', ':', ' ')
}

func appendIntKey(b []byte, indent, name string, v int64) []byte {
	return strconv.AppendInt(appendKey(b, indent, name, false), v, 10)
}

// appendInts appends s as encoding/json writes an []int64 (or an array
// of them) whose field is at indent: nil is null, empty is [].
func appendInts(b []byte, indent string, s []int64) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	if len(s) == 0 {
		return append(b, '[', ']')
	}
	b = append(b, '[')
	for i, v := range s {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, indent...)
		b = append(b, "  "...)
		b = strconv.AppendInt(b, v, 10)
	}
	b = append(b, indent...)
	return append(b, ']')
}

// appendGroup appends g as encoding/json writes an element of the
// report's groups array (its first line unindented, the closing brace at
// four spaces).
func appendGroup(b []byte, g *Group) []byte {
	const in = fieldIndent1
	b = jsonout.AppendString(appendKey(append(b, '{'), in, "name", true), g.Name)
	b = jsonout.AppendString(appendKey(b, in, "kind", false), g.Kind)
	if g.DB != nil {
		b = appendIntKey(b, in, "db", int64(*g.DB))
	}
	b = jsonout.AppendString(appendKey(b, in, "owner", false), g.Owner)
	b = appendIntKey(b, in, "keys", g.Keys)
	b = appendIntKey(b, in, "bytes", g.Bytes)
	b = appendIntKey(b, in, "no_ttl", g.NoTTL)
	b = appendKey(b, in, "types", false)
	switch {
	case g.Types == nil:
		b = append(b, "null"...)
	case len(g.Types) == 0:
		b = append(b, '{', '}')
	default:
		names := make([]string, 0, len(g.Types))
		for t := range g.Types {
			names = append(names, t)
		}
		slices.Sort(names)
		b = append(b, '{')
		for i, t := range names {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, in+"  "...)
			b = jsonout.AppendString(b, t)
			b = strconv.AppendInt(append(b, ':', ' '), g.Types[t], 10)
		}
		b = append(b, in+"}"...)
	}
	b = appendKey(b, in, "ttl_seconds", false)
	b = strconv.AppendInt(appendKey(append(b, '{'), in+"  ", "min", true), g.TTLSeconds.Min, 10)
	b = appendIntKey(b, in+"  ", "p50", g.TTLSeconds.P50)
	b = appendIntKey(b, in+"  ", "max", g.TTLSeconds.Max)
	b = append(b, in+"}"...)
	if g.Domain != "" {
		b = jsonout.AppendString(appendKey(b, in, "domain", false), g.Domain)
	}
	b = appendIntKey(b, in, "with_ttl", g.WithTTL)
	b = appendIntKey(b, in, "findings", g.Findings)
	if g.Example != "" {
		b = jsonout.AppendString(appendKey(b, in, "example", false), g.Example)
	}
	if g.Suggested != "" {
		b = jsonout.AppendString(appendKey(b, in, "suggested", false), g.Suggested)
	}
	if len(g.TTLHistogram) > 0 {
		b = append(appendKey(b, in, "ttl_histogram", false), '[')
		for i := range g.TTLHistogram {
			t := &g.TTLHistogram[i]
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, in+"  {"...)
			b = jsonout.AppendString(appendKey(b, in+"    ", "label", true), t.Label)
			b = appendIntKey(b, in+"    ", "keys", t.Keys)
			b = appendIntKey(b, in+"    ", "bytes", t.Bytes)
			b = append(b, in+"  }"...)
		}
		b = append(b, in+"]"...)
	}
	return append(b, "\n    }"...)
}

// appendPrefix appends p as encoding/json writes an element of the
// report's prefixes array.
func appendPrefix(b []byte, p *Prefix) []byte {
	const in = fieldIndent1
	b = jsonout.AppendString(appendKey(append(b, '{'), in, "prefix", true), p.Prefix)
	b = appendIntKey(b, in, "depth", int64(p.Depth))
	b = appendIntKey(b, in, "keys", p.Keys)
	b = appendIntKey(b, in, "bytes", p.Bytes)
	b = appendIntKey(b, in, "no_ttl", p.NoTTL)
	b = appendIntKey(b, in, "groups", int64(p.Groups))
	return append(b, "\n    }"...)
}

// appendStateGroup appends g as encoding/json writes an element of the
// state's groups array (its first line unindented, the closing brace at
// six spaces).
func appendStateGroup(b []byte, g *StateGroup) []byte {
	const in = fieldIndent2
	b = jsonout.AppendString(appendKey(append(b, '{'), in, "kind", true), g.Kind)
	b = appendStr(appendKey(b, in, "name", false), g.Name, 4)
	if g.DB != 0 {
		b = appendIntKey(b, in, "db", int64(g.DB))
	}
	b = appendIntKey(b, in, "keys", g.Keys)
	b = appendIntKey(b, in, "bytes", g.Bytes)
	b = appendIntKey(b, in, "no_ttl", g.NoTTL)
	b = appendIntKey(b, in, "findings", g.Findings)
	b = appendInts(appendKey(b, in, "types", false), in, g.Types)
	b = appendKey(b, in, "ttl", false)
	b = strconv.AppendInt(appendKey(append(b, '{'), in+"  ", "n", true), g.TTL.N, 10)
	if g.TTL.MinMS != 0 {
		b = appendIntKey(b, in+"  ", "min_ms", g.TTL.MinMS)
	}
	if g.TTL.MaxMS != 0 {
		b = appendIntKey(b, in+"  ", "max_ms", g.TTL.MaxMS)
	}
	if len(g.TTL.Buckets) > 0 {
		b = append(appendKey(b, in+"  ", "buckets", false), '[')
		for i := range g.TTL.Buckets {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, in+"    "...)
			b = appendInts(b, in+"    ", g.TTL.Buckets[i][:])
		}
		b = append(b, in+"  ]"...)
	}
	b = append(b, in+"}"...)
	if g.WithTTL != 0 {
		b = appendIntKey(b, in, "with_ttl", g.WithTTL)
	}
	if g.Example != "" {
		b = appendStr(appendKey(b, in, "example", false), g.Example, 4)
	}
	if g.First != "" {
		b = appendStr(appendKey(b, in, "first", false), g.First, 4)
	}
	if g.FirstVaries {
		b = append(appendKey(b, in, "first_varies", false), "true"...)
	}
	if len(g.TTLHistogram) > 0 {
		b = append(appendKey(b, in, "ttl_histogram", false), '[')
		for i := range g.TTLHistogram {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, in+"  "...)
			b = appendInts(b, in+"  ", g.TTLHistogram[i][:])
		}
		b = append(b, in+"]"...)
	}
	return append(b, "\n      }"...)
}
