package report_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/keyguard/keyguard/internal/audit/report"
)

// encodedAt is v as an element of an array whose elements are at indent,
// the way encoding/json writes it with WriteJSON's settings.
func encodedAt(t testing.TB, indent string, v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent(indent, "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func groupCases() []report.Group {
	db := 3
	var out []report.Group
	for i, s := range awkward {
		g := report.Group{Name: s, Kind: awkward[(i+1)%len(awkward)], Owner: awkward[(i+2)%len(awkward)], Keys: int64(i) * 1001, Bytes: -int64(i),
			NoTTL: int64(i % 3), TTLSeconds: report.TTLStats{Min: int64(i), P50: int64(i * 7), Max: 1 << 40}, Domain: awkward[(i+3)%len(awkward)],
			WithTTL: int64(i % 2), Findings: int64(i * 3), Example: awkward[(i+4)%len(awkward)], Suggested: awkward[(i+5)%len(awkward)]}
		switch i % 3 {
		case 0: // nil types, no database, no histogram
		case 1:
			g.Types, g.DB = map[string]int64{}, &db
			g.TTLHistogram = []report.TTLBucket{}
		default:
			g.Types = map[string]int64{"string": 5, "hash": 2, awkward[i%len(awkward)]: 1, "zset": 0}
			g.TTLHistogram = []report.TTLBucket{{Label: "<1m", Keys: 3, Bytes: 300}, {Label: awkward[i%len(awkward)], Keys: 0, Bytes: -1}}
		}
		out = append(out, g)
	}
	return out
}

func stateGroupCases() []report.StateGroup {
	var out []report.StateGroup
	for i, s := range awkward {
		g := report.StateGroup{Kind: awkward[(i+1)%len(awkward)], Name: report.Str(s), DB: i % 3, Keys: int64(i), Bytes: int64(i) << 33,
			NoTTL: -int64(i), Findings: int64(i % 2), TTL: report.StateTTL{N: int64(i)}, WithTTL: int64(i % 2),
			Example: report.Str(awkward[(i+2)%len(awkward)]), First: report.Str(awkward[(i+3)%len(awkward)]), FirstVaries: i%2 == 0}
		switch i % 3 {
		case 0: // nil types, no buckets, no histogram
		case 1:
			g.Types, g.TTL.Buckets, g.TTLHistogram = []int64{}, [][2]int64{}, [][3]int64{}
			g.TTL.MinMS = 5
		default:
			g.Types = []int64{1, 0, 3, 0, 0, 0, 0, 9}
			g.TTL.MinMS, g.TTL.MaxMS, g.TTL.Buckets = 0, 1<<40, [][2]int64{{3, 4}, {17, 1}}
			g.TTLHistogram = [][3]int64{{0, 1, 2}, {9, 10, 11}}
		}
		out = append(out, g)
	}
	return out
}

// TestAppendGroupsAsEncoded: the report's own encoders of its groups,
// prefixes and state groups write what encoding/json writes, awkward
// strings, nil and empty maps and slices, and omitted fields included.
func TestAppendGroupsAsEncoded(t *testing.T) {
	for i, g := range groupCases() {
		if got, want := string(report.AppendGroupJSON(nil, &g)), encodedAt(t, "    ", &g); got != want {
			t.Errorf("group %d:\n got %q\nwant %q", i, got, want)
		}
	}
	for i, s := range awkward {
		p := report.Prefix{Prefix: s, Depth: i, Keys: int64(i * 9), Bytes: int64(i) << 35, NoTTL: -1, Groups: i % 2}
		if got, want := string(report.AppendPrefixJSON(nil, &p)), encodedAt(t, "    ", &p); got != want {
			t.Errorf("prefix %d:\n got %q\nwant %q", i, got, want)
		}
	}
	for i, g := range stateGroupCases() {
		if got, want := string(report.AppendStateGroupJSON(nil, &g)), encodedAt(t, "      ", &g); got != want {
			t.Errorf("state group %d:\n got %q\nwant %q", i, got, want)
		}
	}
}

func FuzzAppendGroupAsEncoded(f *testing.F) {
	for _, g := range groupCases() {
		f.Add(g.Name, g.Kind, g.Owner, g.Domain, g.Example, g.Suggested, g.Keys, g.Bytes, len(g.Types), len(g.TTLHistogram), g.DB != nil)
	}
	f.Fuzz(func(t *testing.T, name, kind, owner, domain, example, suggested string, keys, bytes int64, types, hist int, withDB bool) {
		g := report.Group{Name: name, Kind: kind, Owner: owner, Domain: domain, Example: example, Suggested: suggested, Keys: keys, Bytes: bytes,
			TTLSeconds: report.TTLStats{Min: keys, P50: bytes, Max: keys ^ bytes}, WithTTL: bytes, Findings: keys}
		if withDB {
			db := int(keys % 16)
			g.DB = &db
		}
		if types%4 != 0 {
			g.Types = map[string]int64{}
			for i := range types % 4 {
				g.Types[[]string{name, kind, "hash", owner}[i]] = int64(i)
			}
		}
		for i := range hist % 3 {
			g.TTLHistogram = append(g.TTLHistogram, report.TTLBucket{Label: []string{example, suggested, "1h"}[i], Keys: keys, Bytes: int64(i)})
		}
		if got, want := string(report.AppendGroupJSON(nil, &g)), encodedAt(t, "    ", &g); got != want {
			t.Errorf("\n got %q\nwant %q", got, want)
		}
	})
}

func FuzzAppendStateGroupAsEncoded(f *testing.F) {
	for _, g := range stateGroupCases() {
		f.Add(g.Kind, string(g.Name), string(g.Example), string(g.First), g.Keys, g.Bytes, g.DB, len(g.Types), len(g.TTL.Buckets), g.FirstVaries)
	}
	f.Fuzz(func(t *testing.T, kind, name, example, first string, keys, bytes int64, db, types, buckets int, varies bool) {
		g := report.StateGroup{Kind: kind, Name: report.Str(name), DB: db, Keys: keys, Bytes: bytes, NoTTL: keys, Findings: bytes,
			TTL: report.StateTTL{N: keys, MinMS: bytes % 7, MaxMS: keys % 5}, WithTTL: bytes % 3, Example: report.Str(example),
			First: report.Str(first), FirstVaries: varies}
		if n := (types%3 + 3) % 3; n != 0 {
			g.Types = make([]int64, n-1) // nil, empty or one
		}
		for i := range buckets % 3 {
			g.TTL.Buckets = append(g.TTL.Buckets, [2]int64{int64(i), keys})
			g.TTLHistogram = append(g.TTLHistogram, [3]int64{int64(i), keys, bytes})
		}
		if got, want := string(report.AppendStateGroupJSON(nil, &g)), encodedAt(t, "      ", &g); got != want {
			t.Errorf("\n got %q\nwant %q", got, want)
		}
	})
}
