package dashboard

import (
	"cmp"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// The pages' query parameters: parsed once into a typed query whose
// values() writes them back, so links keep the user's filters. Unknown or
// malformed values fall back to the defaults; they are never an error.

// tableQuery is the templates table's filter and order.
type tableQuery struct {
	Q        string // substring of the template, owner or description
	Owner    string
	Domain   string
	Sort     string // a column of tableColumns
	Desc     bool
	Findings bool // only templates with findings
	Used     bool // only templates with keys
}

// tableColumns are the sortable columns; numeric ones sort descending first.
var tableColumns = []struct {
	Key, Label string
	Numeric    bool
}{
	{"template", "Template", false},
	{"owner", "Owner", false},
	{"type", "Type", false},
	{"keys", "Keys", true},
	{"bytes", "Memory", true},
	{"no_ttl", "No TTL", true},
	{"ttl", "TTL p50", true},
	{"findings", "Findings", true},
	{"writers", "Writers", true},
}

const maxQueryText = 256 // a filter longer than this is cut

func column(key string) (numeric, ok bool) {
	for _, c := range tableColumns {
		if c.Key == key {
			return c.Numeric, true
		}
	}
	return false, false
}

func cut(s string) string {
	if len(s) > maxQueryText {
		s = s[:maxQueryText]
	}
	return strings.TrimSpace(s)
}

func parseTableQuery(v url.Values) tableQuery {
	q := tableQuery{Q: cut(v.Get("q")), Owner: cut(v.Get("owner")), Domain: cut(v.Get("domain")),
		Findings: v.Get("findings") == "1", Used: v.Get("used") == "1"}
	numeric, ok := column(v.Get("sort"))
	if !ok {
		q.Sort, q.Desc = "bytes", true
		return q
	}
	q.Sort = v.Get("sort")
	switch v.Get("order") {
	case "asc":
		q.Desc = false
	case "desc":
		q.Desc = true
	default:
		q.Desc = numeric
	}
	return q
}

func (q tableQuery) values() url.Values {
	v := url.Values{}
	set := func(k, s string) {
		if s != "" {
			v.Set(k, s)
		}
	}
	set("q", q.Q)
	set("owner", q.Owner)
	set("domain", q.Domain)
	if q.Findings {
		v.Set("findings", "1")
	}
	if q.Used {
		v.Set("used", "1")
	}
	v.Set("sort", q.Sort)
	v.Set("order", "asc")
	if q.Desc {
		v.Set("order", "desc")
	}
	return v
}

// sortedBy is the link of a column header: this column, flipped when it
// is the current one.
func (q tableQuery) sortedBy(col string) string {
	numeric, _ := column(col)
	r := q
	if q.Sort == col {
		r.Desc = !q.Desc
	} else {
		r.Sort, r.Desc = col, numeric
	}
	return "/templates?" + r.values().Encode()
}

func (q tableQuery) match(t *TemplateRow) bool {
	if q.Owner != "" && t.Owner != q.Owner || q.Domain != "" && t.Domain != q.Domain ||
		q.Findings && t.Findings == 0 || q.Used && t.Keys == 0 {
		return false
	}
	if q.Q == "" {
		return true
	}
	needle := strings.ToLower(q.Q)
	return strings.Contains(strings.ToLower(t.Name), needle) || strings.Contains(strings.ToLower(t.Owner), needle) ||
		strings.Contains(strings.ToLower(t.Desc), needle)
}

// apply filters and sorts rows, returning pointers into rows.
func (q tableQuery) apply(rows []TemplateRow) []*TemplateRow {
	var out []*TemplateRow
	for i := range rows {
		if q.match(&rows[i]) {
			out = append(out, &rows[i])
		}
	}
	by := func(a, b *TemplateRow) int {
		switch q.Sort {
		case "template":
			return strings.Compare(a.Name, b.Name)
		case "owner":
			return strings.Compare(a.Owner, b.Owner)
		case "type":
			return strings.Compare(a.Type, b.Type)
		case "keys":
			return cmp.Compare(a.Keys, b.Keys)
		case "no_ttl":
			return cmp.Compare(a.NoTTL, b.NoTTL)
		case "ttl":
			return cmp.Compare(a.TTLP50, b.TTLP50)
		case "findings":
			return cmp.Compare(a.Findings, b.Findings)
		case "writers":
			return cmp.Compare(len(a.Writers), len(b.Writers))
		}
		return cmp.Compare(a.Bytes, b.Bytes)
	}
	slices.SortStableFunc(out, func(a, b *TemplateRow) int {
		c := by(a, b)
		if q.Desc {
			c = -c
		}
		return cmp.Or(c, strings.Compare(a.Name, b.Name))
	})
	return out
}

// findingQuery is the findings page's filter and page.
type findingQuery struct {
	FindingFilter
	Page int // from 1
}

const findingsPerPage = 100

var severities = []string{"error", "warning", "info"}

func parseFindingQuery(v url.Values) findingQuery {
	q := findingQuery{FindingFilter: FindingFilter{Rule: cut(v.Get("rule")), Owner: cut(v.Get("owner")),
		Template: cut(v.Get("template")), Query: cut(v.Get("q"))}, Page: 1}
	if s := v.Get("severity"); slices.Contains(severities, s) {
		q.Severity = s
	}
	if n, err := strconv.Atoi(v.Get("page")); err == nil && n > 1 && n <= 1<<20 {
		q.Page = n
	}
	return q
}

func (q findingQuery) values() url.Values {
	v := url.Values{}
	set := func(k, s string) {
		if s != "" {
			v.Set(k, s)
		}
	}
	set("rule", q.Rule)
	set("severity", q.Severity)
	set("owner", q.Owner)
	set("template", q.Template)
	set("q", q.Query)
	if q.Page > 1 {
		v.Set("page", strconv.Itoa(q.Page))
	}
	return v
}

// at is the link to page n of the same filter.
func (q findingQuery) at(n int) string {
	q.Page = n
	if e := q.values().Encode(); e != "" {
		return "/findings?" + e
	}
	return "/findings"
}
