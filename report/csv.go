package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
)

// csvHeader is the column list of WriteCSV.
func csvHeader() []string {
	return []string{"name", "kind", "domain", "owner", "keys", "bytes", "no_ttl", "with_ttl",
		"ttl_min_s", "ttl_p50_s", "ttl_max_s",
		"string", "hash", "list", "set", "zset", "stream", "module", "unknown", "findings", "estimate"}
}

// WriteCSV writes one row per group. Text that a spreadsheet would run as
// a formula (starting with = + - @, tab or CR) is prefixed with a quote
// mark, since key names come from anyone who can write to Redis.
func (r *Report) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.Write(csvHeader())
	i := strconv.FormatInt
	est := strconv.FormatBool(r.Estimate)
	for _, g := range r.Groups {
		row := []string{cell(g.Name), g.Kind, cell(g.Domain), cell(g.Owner), i(g.Keys, 10), i(g.Bytes, 10), i(g.NoTTL, 10), i(g.WithTTL, 10),
			i(g.TTLSeconds.Min, 10), i(g.TTLSeconds.P50, 10), i(g.TTLSeconds.Max, 10)}
		for _, t := range TypeNames {
			row = append(row, i(g.Types[t], 10))
		}
		row = append(row, i(g.Findings, 10), est)
		cw.Write(row)
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
