package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/keyguard/keyguard/internal/human"
	"github.com/keyguard/keyguard/internal/jsonout"
)

// KeyDiffWriter writes the changes KeyDiff emits as they come, in text
// (the first Limit changes of each kind, then the changes by template),
// JSON (one document: every change, then the summary) or CSV (one row per
// change).
type KeyDiffWriter struct {
	w      *bufio.Writer
	format string
	limit  int
	shown  map[string]int
	left   map[string]int64
	n      int64
	tw     *tabwriter.Writer
	buf    []byte // a JSON row's
	err    error
}

// KeyDiffFormats are the formats of a key diff.
var KeyDiffFormats = []string{"text", "json", "csv"}

// NewKeyDiffWriter starts a key diff in format; limit is the changes of
// each kind the text lists (0: all).
func NewKeyDiffWriter(w io.Writer, format string, limit int) *KeyDiffWriter {
	x := &KeyDiffWriter{w: bufio.NewWriterSize(w, 64<<10), format: format, limit: limit, shown: map[string]int{}, left: map[string]int64{}}
	switch format {
	case "json":
		x.w.WriteString("{\n  \"changes\": [")
	case "csv":
		x.w.WriteString("change,db,key,key_base64,group,old_type,new_type,old_bytes,new_bytes\n")
	default:
		x.tw = tabwriter.NewWriter(x.w, 0, 0, 2, ' ', 0)
	}
	return x
}

// Change writes one change (KeyDiff's emit).
func (x *KeyDiffWriter) Change(c *KeyChange) error {
	x.n++
	switch x.format {
	case "json":
		if x.n > 1 {
			x.w.WriteByte(',')
		}
		x.w.WriteString("\n    ")
		key, b64 := exportKey(c.Key, false)
		b := append(x.buf[:0], `{"change":`...)
		b = jsonout.AppendString(b, c.Change)
		b = append(b, `,"db":`...)
		b = strconv.AppendInt(b, int64(c.DB), 10)
		b = append(b, `,"key":`...)
		b = jsonout.AppendString(b, key)
		if b64 != "" {
			b = append(b, `,"key_base64":`...)
			b = jsonout.AppendString(b, b64)
		}
		b = append(b, `,"group":`...)
		b = jsonout.AppendString(b, c.Group)
		if c.OldType != "" {
			b = append(b, `,"old_type":`...)
			b = jsonout.AppendString(b, c.OldType)
		}
		if c.NewType != "" {
			b = append(b, `,"new_type":`...)
			b = jsonout.AppendString(b, c.NewType)
		}
		b = append(b, `,"old_bytes":`...)
		b = appendKnownJSON(b, c.OldBytes)
		b = append(b, `,"new_bytes":`...)
		b = appendKnownJSON(b, c.NewBytes)
		b = append(b, '}')
		x.buf = b
		x.w.Write(b)
	case "csv":
		key, b64 := exportKey(c.Key, true)
		b := make([]byte, 0, 128)
		b = append(b, c.Change...)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(c.DB), 10)
		b = append(b, ',')
		b = appendCSVField(b, key)
		b = append(b, ',')
		b = append(b, b64...)
		for _, s := range []string{cell(c.Group), c.OldType, c.NewType} {
			b = append(b, ',')
			b = appendCSVField(b, s)
		}
		b = append(b, ',')
		b = appendKnown(b, c.OldBytes)
		b = append(b, ',')
		b = appendKnown(b, c.NewBytes)
		b = append(b, '\n')
		x.w.Write(b)
	default:
		if x.limit > 0 && x.shown[c.Change] >= x.limit {
			x.left[c.Change]++
			break
		}
		x.shown[c.Change]++
		fmt.Fprintf(x.tw, "  %s\t%s%s\t%s\t%s\n", c.Change, showKey(c.Key, 0), dbSuffix(c.DB), show(c.Group), changeText(c))
	}
	if x.format != "text" {
		_, x.err = x.w.Write(nil)
	}
	return x.err
}

func dbSuffix(db int) string {
	if db == 0 {
		return ""
	}
	return fmt.Sprintf(" (db %d)", db)
}

// changeText is what changed, in words.
func changeText(c *KeyChange) string {
	switch c.Change {
	case KeyAdded:
		return c.NewType + " " + knownBytes(c.NewBytes)
	case KeyRemoved:
		return c.OldType + " " + knownBytes(c.OldBytes)
	case KeyType:
		return c.OldType + " → " + c.NewType
	}
	return knownBytes(c.OldBytes) + " → " + knownBytes(c.NewBytes)
}

func knownBytes(n int64) string {
	if n < 0 {
		return "size unknown"
	}
	return fmtBytes(n)
}

// Close writes the summary and flushes.
func (x *KeyDiffWriter) Close(s *KeyDiffSummary, old, new string) error {
	switch x.format {
	case "json":
		if x.n > 0 {
			x.w.WriteString("\n  ")
		}
		x.w.WriteString("],\n  \"summary\": ")
		groups := s.Groups
		if groups == nil {
			groups = []KeyDiffGroup{}
		}
		b, err := json.MarshalIndent(struct {
			Old      string           `json:"old"`
			New      string           `json:"new"`
			OldKeys  int64            `json:"old_keys"`
			NewKeys  int64            `json:"new_keys"`
			Changes  int64            `json:"changes"`
			ByChange map[string]int64 `json:"by_change"`
			Unknown  int64            `json:"size_unknown"`
			Groups   []KeyDiffGroup   `json:"by_group"`
		}{old, new, s.OldKeys, s.NewKeys, x.n, s.byChange(), s.SizeUnknown, groups}, "  ", "  ")
		if err != nil {
			return err
		}
		x.w.Write(b)
		x.w.WriteString("\n}\n")
	case "csv":
	default:
		x.tw.Flush()
		for _, k := range KeyChangeKinds {
			if x.left[k] > 0 {
				fmt.Fprintf(x.w, "  … %s more %s (--limit 0, or --format csv|json)\n", fmtCount(x.left[k]), k)
			}
		}
		x.textSummary(s, old, new)
	}
	if err := x.w.Flush(); err != nil {
		return fmt.Errorf("write the diff: %w", err)
	}
	return x.err
}

func (s *KeyDiffSummary) byChange() map[string]int64 {
	m := map[string]int64{}
	for _, g := range s.Groups {
		m[KeyAdded] += g.Added
		m[KeyRemoved] += g.Removed
		m[KeyType] += g.Type
		m[KeyGrown] += g.Grown
		m[KeyShrunk] += g.Shrunk
	}
	return m
}

func (x *KeyDiffWriter) textSummary(s *KeyDiffSummary, old, new string) {
	w := x.w
	by := s.byChange()
	var parts []string
	for _, k := range KeyChangeKinds {
		parts = append(parts, fmtCount(by[k])+" "+k)
	}
	fmt.Fprintf(w, "\nkeys: %s in %s, %s in %s; %s\n", fmtCount(s.OldKeys), show(old), fmtCount(s.NewKeys), show(new), strings.Join(parts, ", "))
	if s.SizeUnknown > 0 {
		fmt.Fprintf(w, "size not measured on one side for %s: compared by type only\n", human.Plural(s.SizeUnknown, "key"))
	}
	if len(s.Groups) == 0 {
		fmt.Fprintf(w, "no key changed\n")
		return
	}
	fmt.Fprintf(w, "\nchanges by template or family\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  group\tadded\tremoved\ttype\tgrown\tshrunk\tmemory\n")
	n := len(s.Groups)
	if x.limit > 0 {
		n = min(n, x.limit)
	}
	for _, g := range s.Groups[:n] {
		sign := "+"
		if g.BytesDelta < 0 {
			sign = "-"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s%s\n", show(g.Group), fmtCount(g.Added), fmtCount(g.Removed), fmtCount(g.Type),
			fmtCount(g.Grown), fmtCount(g.Shrunk), sign, fmtBytes(abs(g.BytesDelta)))
	}
	tw.Flush()
	if n < len(s.Groups) {
		fmt.Fprintf(w, "  … %s (--limit 0, or --format json)\n", human.Plural(int64(len(s.Groups)-n), "more group"))
	}
}
