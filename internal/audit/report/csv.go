package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// csvHeader is the column list of WriteCSV: the group columns first (a
// group per row, as spreadsheets built on them expect), then the columns
// of the other tables. The table column says which table a row is of.
func csvHeader() []string {
	return []string{"name", "kind", "domain", "owner", "keys", "bytes", "no_ttl", "with_ttl",
		"ttl_min_s", "ttl_p50_s", "ttl_max_s",
		"string", "hash", "list", "set", "zset", "stream", "module", "unknown", "findings", "estimate",
		"table", "db", "rule", "severity", "key", "key_base64", "key_len", "template", "type", "elements", "ttl_ms", "message", "hint", "depth"}
}

// Column positions past the group columns.
const (
	cTable = 21 + iota
	cDB
	cRule
	cSeverity
	cKey
	cKeyBase64
	cKeyLen
	cTemplate
	cType
	cElements
	cTTLMS
	cMessage
	cHint
	cDepth
	csvColumns
)

// WriteCSV writes the report as one CSV table with a table column:
// "group" rows (the first columns), then "prefix", "top_key" and
// "finding" rows. Keys that are not UTF-8 are written as JSON writes
// them (invalid bytes replaced) with their exact bytes in key_base64.
// Text that a spreadsheet would run as a formula (starting with = + - @,
// tab or CR) is prefixed with a quote mark, since key names come from
// anyone who can write to Redis.
func (r *Report) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.Write(csvHeader())
	i := func(n int64) string { return strconv.FormatInt(n, 10) }
	est := strconv.FormatBool(r.Estimate)
	row := func(table string) []string {
		rw := make([]string, csvColumns)
		rw[cTable] = table
		return rw
	}
	for _, g := range r.Groups {
		rw := row("group")
		copy(rw, []string{cell(g.Name), g.Kind, cell(g.Domain), cell(g.Owner), i(g.Keys), i(g.Bytes), i(g.NoTTL), i(g.WithTTL),
			i(g.TTLSeconds.Min), i(g.TTLSeconds.P50), i(g.TTLSeconds.Max)})
		for t, name := range TypeNames {
			rw[11+t] = i(g.Types[name])
		}
		rw[19], rw[20], rw[cDB] = i(g.Findings), est, dbCell(g.DB)
		cw.Write(rw)
	}
	for _, p := range r.Prefixes {
		rw := row("prefix")
		rw[0], rw[4], rw[5], rw[6], rw[cDepth] = cell(p.Prefix), i(p.Keys), i(p.Bytes), i(p.NoTTL), strconv.Itoa(p.Depth)
		cw.Write(rw)
	}
	for _, k := range r.TopKeys {
		rw := row("top_key")
		rw[5], rw[cDB], rw[cKey], rw[cKeyBase64], rw[cKeyLen] = i(k.Bytes), dbCell(k.DB), keyCell(k.Key), k.KeyBase64, lenCell(k.KeyLen)
		rw[cTemplate], rw[cType], rw[cElements] = cell(k.Template), k.Type, i(k.Elements)
		if k.TTLMS != nil {
			rw[cTTLMS] = i(*k.TTLMS)
		}
		cw.Write(rw)
	}
	for _, f := range r.Findings {
		rw := row("finding")
		rw[3], rw[5], rw[cDB], rw[cRule], rw[cSeverity] = cell(f.Owner), i(f.Bytes), dbCell(f.DB), f.Rule, f.Severity.String()
		rw[cKey], rw[cKeyBase64], rw[cKeyLen], rw[cTemplate] = keyCell(f.Key), f.KeyBase64, lenCell(f.KeyLen), cell(f.Template)
		rw[cMessage], rw[cHint] = cell(f.Message), cell(f.Hint)
		cw.Write(rw)
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

func cell(s string) string {
	if s != "" {
		switch s[0] {
		case '=', '+', '-', '@', '\t', '\r':
			return "'" + s
		}
	}
	return s
}

// keyCell is a key as JSON shows it: invalid UTF-8 replaced (the exact
// bytes are in key_base64).
func keyCell(k string) string {
	if utf8.ValidString(k) {
		return cell(k)
	}
	var b strings.Builder
	for _, r := range k { // an invalid byte ranges as one RuneError, as encoding/json replaces it
		b.WriteRune(r)
	}
	return cell(b.String())
}

func dbCell(db *int) string {
	if db == nil {
		return ""
	}
	return strconv.Itoa(*db)
}

func lenCell(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}
