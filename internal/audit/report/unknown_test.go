package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// exportRows writes rows as a key export in format.
func exportRows(t testing.TB, format string, rows []KeyRow) []byte {
	t.Helper()
	var buf bytes.Buffer
	x, err := NewKeyExport(&buf, format)
	if err != nil {
		t.Fatal(err)
	}
	b := x.Buffer()
	for i := range rows {
		b.Add(&rows[i])
	}
	b.Flush()
	if x.Err() != nil {
		t.Fatal(x.Err())
	}
	return buf.Bytes()
}

// TestUnknownSizeExported: a key whose memory (or element count) was not
// measured is written as an empty CSV cell and a JSON null, never as 0,
// and reads back as unknown.
func TestUnknownSizeExported(t *testing.T) {
	rows := []KeyRow{
		{Key: "m:1", Type: "hash", Bytes: -1, Elements: -1, TTL: -1, Group: "m:{id}", Kind: KindPrefix},
		{Key: "m:2", Type: "hash", Bytes: 0, Elements: 0, TTL: -1, Group: "m:{id}", Kind: KindPrefix},
	}
	csvOut := exportRows(t, KeysCSV, rows)
	recs, err := csv.NewReader(bytes.NewReader(csvOut)).ReadAll()
	if err != nil || len(recs) != 3 {
		t.Fatalf("csv: %v %q", err, recs)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	if got := recs[1][col["bytes"]] + "|" + recs[1][col["elements"]]; got != "|" {
		t.Errorf("csv: unmeasured key's bytes|elements = %q, want empty cells", got)
	}
	if got := recs[2][col["bytes"]] + "|" + recs[2][col["elements"]]; got != "0|0" {
		t.Errorf("csv: a measured 0 = %q, want 0|0", got)
	}
	lines := strings.Split(strings.TrimSpace(string(exportRows(t, KeysJSONL, rows))), "\n")
	for i, want := range []any{nil, 0.0} {
		var m map[string]any
		if err := json.Unmarshal([]byte(lines[i]), &m); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"bytes", "elements"} {
			v, ok := m[f]
			if !ok || v != want {
				t.Errorf("jsonl line %d: %s = %v (present %v), want %v: %s", i, f, v, ok, want, lines[i])
			}
		}
	}
	for _, format := range KeyExportFormats {
		r, err := NewKeyReader(bytes.NewReader(exportRows(t, format, rows)))
		if err != nil {
			t.Fatal(err)
		}
		for i := range rows {
			var got KeyRow
			if err := r.Next(&got); err != nil || got != rows[i] {
				t.Errorf("%s row %d: %+v, %v", format, i, got, err)
			}
		}
	}
}

// TestKeyDiffUnknownSize: a key whose size one side did not measure is
// never grown or shrunk (not "shrunk to 0"), counts under size_unknown,
// and an unknown size is null in the JSON diff; a key measured on both
// sides still is.
func TestKeyDiffUnknownSize(t *testing.T) {
	row := func(key string, b int64) KeyRow {
		return KeyRow{Key: key, Type: "hash", Bytes: b, Elements: -1, TTL: -1, Group: "k:{id}", Kind: KindPrefix}
	}
	old := []KeyRow{row("k:known-then-unknown", 50_000), row("k:unknown-then-known", -1), row("k:shrunk", 50_000), row("k:both-unknown", -1)}
	new := []KeyRow{row("k:known-then-unknown", -1), row("k:unknown-then-known", 90_000), row("k:shrunk", 100), row("k:both-unknown", -1), row("k:added-unknown", -1)}
	for _, format := range KeyExportFormats {
		for _, bucketed := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/bucketed=%v", format, bucketed), func(t *testing.T) {
				o := KeyDiffOptions{MinBytes: DefaultKeyDiffMinBytes, Ratio: DefaultKeyDiffRatio, TempDir: t.TempDir(), SizeHint: 1}
				if bucketed {
					o.SizeHint, o.BucketBytes = 1<<20, 1<<16
				}
				or, err := NewKeyReader(bytes.NewReader(exportRows(t, format, old)))
				if err != nil {
					t.Fatal(err)
				}
				nr, err := NewKeyReader(bytes.NewReader(exportRows(t, format, new)))
				if err != nil {
					t.Fatal(err)
				}
				var buf bytes.Buffer
				w := NewKeyDiffWriter(&buf, "json", 0)
				got := map[string]string{}
				sum, err := KeyDiff(or, nr, o, func(c *KeyChange) error {
					got[c.Key] = c.Change
					return w.Change(c)
				})
				if err != nil {
					t.Fatal(err)
				}
				if err := w.Close(sum, "old", "new"); err != nil {
					t.Fatal(err)
				}
				want := map[string]string{"k:shrunk": KeyShrunk, "k:added-unknown": KeyAdded}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("changes %v, want %v", got, want)
				}
				if sum.SizeUnknown != 3 {
					t.Errorf("size unknown for %d keys, want 3", sum.SizeUnknown)
				}
				var doc struct {
					Changes []map[string]any `json:"changes"`
					Summary struct {
						Unknown int64 `json:"size_unknown"`
					} `json:"summary"`
				}
				if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
					t.Fatal(err)
				}
				for _, c := range doc.Changes {
					ob, oldOK := c["old_bytes"]
					nb, newOK := c["new_bytes"]
					switch c["key"] {
					case "k:added-unknown":
						if !oldOK || !newOK || ob != nil || nb != nil {
							t.Errorf("added, size unknown: old %v new %v, want null and null", ob, nb)
						}
					case "k:shrunk":
						if ob != 50_000.0 || nb != 100.0 {
							t.Errorf("shrunk: old %v new %v", ob, nb)
						}
					}
				}
				if doc.Summary.Unknown != 3 {
					t.Errorf("json size_unknown %d", doc.Summary.Unknown)
				}
			})
		}
	}
	var text bytes.Buffer
	w := NewKeyDiffWriter(&text, "text", 0)
	c := KeyChange{Change: KeyAdded, Key: "k:1", Group: "k:{id}", NewType: "hash", OldBytes: -1, NewBytes: -1}
	w.Change(&c)
	w.Close(&KeyDiffSummary{OldKeys: 1, NewKeys: 2, SizeUnknown: 1, Groups: []KeyDiffGroup{{Group: "k:{id}", Added: 1}}}, "old", "new")
	for _, s := range []string{"hash size unknown", "size not measured on one side for 1 key: compared by type only"} {
		if !strings.Contains(text.String(), s) {
			t.Errorf("text lacks %q:\n%s", s, text.String())
		}
	}
}
