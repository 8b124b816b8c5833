package dashboard

import (
	"net/url"
	"reflect"
	"slices"
	"testing"
)

func TestTableQuery(t *testing.T) {
	rows := []TemplateRow{
		{Name: "b:{id}", Owner: "team-b", Domain: "b", Totals: Totals{Keys: 5, Bytes: 50}, Findings: 1},
		{Name: "a:{id}", Owner: "team-a", Domain: "a", Totals: Totals{Keys: 9, Bytes: 10}, Desc: "Sessions"},
		{Name: "c:{id}", Owner: "team-a", Domain: "c"},
	}
	names := func(rs []*TemplateRow) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.Name)
		}
		return out
	}
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"", []string{"b:{id}", "a:{id}", "c:{id}"}}, // memory, largest first
		{"sort=keys", []string{"a:{id}", "b:{id}", "c:{id}"}},
		{"sort=keys&order=asc", []string{"c:{id}", "b:{id}", "a:{id}"}},
		{"sort=template", []string{"a:{id}", "b:{id}", "c:{id}"}},
		{"sort=nonsense", []string{"b:{id}", "a:{id}", "c:{id}"}},
		{"owner=team-a", []string{"a:{id}", "c:{id}"}},
		{"q=session", []string{"a:{id}"}},
		{"q=TEAM-B", []string{"b:{id}"}},
		{"findings=1", []string{"b:{id}"}},
		{"used=1&sort=owner&order=desc", []string{"b:{id}", "a:{id}"}},
		{"domain=c", []string{"c:{id}"}},
	} {
		v, _ := url.ParseQuery(tc.query)
		if got := names(parseTableQuery(v).apply(rows)); !slices.Equal(got, tc.want) {
			t.Errorf("%q: %v, want %v", tc.query, got, tc.want)
		}
	}
	q := parseTableQuery(url.Values{"sort": {"keys"}})
	if got := q.sortedBy("keys"); got != "/templates?order=asc&sort=keys" {
		t.Errorf("flip: %s", got)
	}
	if got := q.sortedBy("template"); got != "/templates?order=asc&sort=template" {
		t.Errorf("text column: %s", got)
	}
}

func TestFindingQuery(t *testing.T) {
	v, _ := url.ParseQuery("rule=no-ttl&severity=fatal&page=-3&q=+x+")
	q := parseFindingQuery(v)
	if q.Rule != "no-ttl" || q.Severity != "" || q.Page != 1 || q.Query != "x" {
		t.Errorf("%+v", q)
	}
	if got := q.at(3); got != "/findings?page=3&q=x&rule=no-ttl" {
		t.Errorf("page link %s", got)
	}
	rows, n := smallSnapshot(t).Findings(FindingFilter{Rule: "no-ttl", Query: "2"}, 0, 10)
	if n != 1 || len(rows) != 1 || rows[0].Key != "order:order:2:base" {
		t.Errorf("filter: %d %+v", n, rows)
	}
	rows, n = smallSnapshot(t).Findings(FindingFilter{}, 1, 2)
	if n != 4 || len(rows) != 2 || rows[0].Key != "order:order:2:base" {
		t.Errorf("page: %d %+v", n, rows)
	}
}

func smallSnapshot(t testing.TB) *Snapshot { return snapshotOf(smallReport(t0), testRegistry(t)) }

// FuzzTableQuery: what values writes, parse reads back unchanged.
func FuzzTableQuery(f *testing.F) {
	f.Add("q=promo&owner=a&sort=keys&order=asc&findings=1")
	f.Add("sort=bytes&order=sideways&used=1&domain=%00")
	f.Add("q=" + string(make([]byte, 300)))
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		q := parseTableQuery(v)
		if _, ok := column(q.Sort); !ok {
			t.Fatalf("sort %q is no column", q.Sort)
		}
		back := parseTableQuery(q.values())
		if !reflect.DeepEqual(q, back) {
			t.Fatalf("round trip:\n%+v\n%+v", q, back)
		}
		v2, err := url.ParseQuery(q.sortedBy("keys")[len("/templates?"):])
		if err != nil {
			t.Fatal(err)
		}
		if s := parseTableQuery(v2); s.Q != q.Q || s.Owner != q.Owner || s.Sort != "keys" {
			t.Fatalf("sort link lost the filter: %+v", s)
		}
	})
}

// FuzzFindingQuery: the same for the findings page.
func FuzzFindingQuery(f *testing.F) {
	f.Add("rule=no-ttl&severity=error&owner=x&template=a%3A%7Bid%7D&q=k&page=4")
	f.Add("page=99999999999999999999&severity=ERROR")
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		q := parseFindingQuery(v)
		if q.Page < 1 || q.Severity != "" && !slices.Contains(severities, q.Severity) {
			t.Fatalf("%+v", q)
		}
		if back := parseFindingQuery(q.values()); back != q {
			t.Fatalf("round trip:\n%+v\n%+v", q, back)
		}
	})
}
