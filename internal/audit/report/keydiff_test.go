package report

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// plantedExports writes two exports of n keys in format to dir: the new
// one with planted changes (a quarter each added/removed, the rest type,
// grown and shrunk), and with changes below the thresholds that must not
// be reported. It returns the paths and the changes expected.
func plantedExports(t *testing.T, dir, format string, n, planted int) (string, string, map[string]string) {
	t.Helper()
	rng := rand.New(rand.NewPCG(11, 12))
	keyOf := func(i int) string {
		switch i % 97 {
		case 3: // bytes no report shows as they are
			return fmt.Sprintf("bin:\xff\xfe\x00%d", i)
		case 5:
			return fmt.Sprintf("=cmd|' /C calc'!A%d", i)
		case 7:
			return fmt.Sprintf("csv:\"quoted\",comma\nline:%d", i)
		}
		return fmt.Sprintf("order:order:%d:base", i)
	}
	want := map[string]string{} // db/key → change
	id := func(db int, key string) string { return fmt.Sprintf("%d/%q", db, key) }
	// Which rows change: distinct indexes, in five kinds.
	perm := rng.Perm(n)[:planted]
	kind := map[int]string{}
	for j, i := range perm {
		switch {
		case j < planted/4:
			kind[i] = KeyRemoved
		case j < planted/2:
			kind[i] = KeyType
		case j < 5*planted/8:
			kind[i] = KeyGrown
		case j < 3*planted/4:
			kind[i] = KeyShrunk
		default:
			kind[i] = "quiet" // changed below the thresholds
		}
	}
	open := func(name string) (*os.File, *KeyExport, *KeyBuffer) {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		x, err := NewKeyExport(f, format)
		if err != nil {
			t.Fatal(err)
		}
		return f, x, x.Buffer()
	}
	of, ox, ob := open("old." + format)
	nf, nx, nb := open("new." + format)
	for i := range n {
		db := i % 3
		r := KeyRow{DB: db, Key: keyOf(i), Type: "hash", Encoding: "listpack", Bytes: 2000 + int64(i%500), Elements: 7, TTL: -1, Group: "order:order:{id:int}:base", Kind: KindTemplate, Owner: "order-team"}
		ob.Add(&r)
		switch kind[i] {
		case KeyRemoved:
			want[id(db, r.Key)] = KeyRemoved
			continue
		case KeyType:
			r.Type = "string"
			want[id(db, r.Key)] = KeyType
		case KeyGrown:
			r.Bytes *= 3
			want[id(db, r.Key)] = KeyGrown
		case KeyShrunk:
			r.Bytes = 100
			want[id(db, r.Key)] = KeyShrunk
		case "quiet":
			r.Bytes += 500 // under the 1 KiB floor
			r.TTL = time.Hour
		}
		nb.Add(&r)
	}
	// Added keys: as many as removed.
	for j := range planted / 4 {
		r := KeyRow{DB: j % 2, Key: fmt.Sprintf("cart:new:%d\t", j), Type: "list", Bytes: 500, Elements: -1, TTL: time.Minute, Group: "cart:new:{id}", Kind: KindPrefix}
		nb.Add(&r)
		want[id(r.DB, r.Key)] = KeyAdded
	}
	ob.Flush()
	nb.Flush()
	for _, x := range []*KeyExport{ox, nx} {
		if x.Err() != nil {
			t.Fatal(x.Err())
		}
	}
	of.Close()
	nf.Close()
	return of.Name(), nf.Name(), want
}

func TestKeyDiffPlanted(t *testing.T) {
	n, planted := 1_000_000, 1000
	if testing.Short() {
		n = 50_000 // the same 1,000 changes among fewer keys
	}
	for _, format := range KeyExportFormats {
		for _, bucketed := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/bucketed=%v", format, bucketed), func(t *testing.T) {
				dir := t.TempDir()
				oldPath, newPath, want := plantedExports(t, dir, format, n, planted)
				if len(want) != planted {
					t.Fatalf("planted %d changes, want %d", len(want), planted)
				}
				o := KeyDiffOptions{MinBytes: DefaultKeyDiffMinBytes, Ratio: DefaultKeyDiffRatio, TempDir: dir, SizeHint: 1}
				if bucketed {
					fi, _ := os.Stat(oldPath)
					o.SizeHint, o.BucketBytes = 2*fi.Size(), fi.Size()/7 // 15 buckets
				}
				or, nr := openExport(t, oldPath), openExport(t, newPath)
				got := map[string]string{}
				var order []KeyChange
				sum, err := KeyDiff(or, nr, o, func(c *KeyChange) error {
					k := fmt.Sprintf("%d/%q", c.DB, c.Key)
					if _, dup := got[k]; dup {
						t.Errorf("%s reported twice", k)
					}
					got[k] = c.Change
					order = append(order, *c)
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				for k, c := range want {
					if got[k] != c {
						t.Errorf("%s: got %q, want %q", k, got[k], c)
					}
				}
				for k, c := range got {
					if want[k] == "" {
						t.Errorf("%s reported %q, but it did not change past the thresholds", k, c)
					}
				}
				if sum.OldKeys != int64(n) || sum.NewKeys != int64(n) { // as many added as removed
					t.Errorf("keys %d / %d, want %d each", sum.OldKeys, sum.NewKeys, n)
				}
				var total int64
				for _, g := range sum.Groups {
					total += g.total()
				}
				if total != int64(planted) {
					t.Errorf("by group: %d changes, want %d", total, planted)
				}
				if !bucketed && !slices.IsSortedFunc(order, func(a, b KeyChange) int {
					if a.DB != b.DB {
						return a.DB - b.DB
					}
					return strings.Compare(a.Key, b.Key)
				}) {
					t.Error("one bucket's changes are not sorted by db and key")
				}
				if matches, _ := filepath.Glob(filepath.Join(dir, "keyguard-diff-*")); len(matches) > 0 {
					t.Errorf("temporary files left: %v", matches)
				}
				// A second run of the same diff gives its changes in the
				// same order (a text report lists the first of each kind).
				var again []KeyChange
				if _, err := KeyDiff(openExport(t, oldPath), openExport(t, newPath), o, func(c *KeyChange) error {
					again = append(again, *c)
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				if !slices.EqualFunc(order, again, func(a, b KeyChange) bool { return a == b }) {
					t.Error("a second run of the same diff gave its changes in another order")
				}
			})
		}
	}
}

func openExport(t *testing.T, path string) *KeyReader {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	r, err := NewKeyReader(f)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestKeyExportRoundTrip: every row read back from either format is the
// row written, keys of any bytes included; the CSV parses as CSV and the
// JSON lines as JSON.
func TestKeyExportRoundTrip(t *testing.T) {
	rows := []KeyRow{
		{DB: 0, Key: "plain:1", Type: "string", Encoding: "embstr", Bytes: 56, Elements: 5, TTL: -1, Group: "plain:{id:int}", Kind: KindPrefix},
		{DB: 15, Key: "bin:\xff\xfe\x00", Type: "hash", Bytes: -1, Elements: -1, Group: `bin:\xff\xfe\x00`, Kind: KindPrefix},
		{DB: 1, Key: "=SUM(A1)", Type: "set", Bytes: 1, Elements: 0, TTL: 1500 * time.Millisecond, Group: "=x", Kind: KindTemplate, Owner: "+team"},
		{DB: 2, Key: "a,\"b\"\r\nc", Type: "zset", Encoding: "skiplist", Bytes: 1 << 40, Elements: 3, TTL: 0, Group: "g", Kind: KindTemplate, Owner: "o"},
		{DB: 3, Key: "", Type: "list", Bytes: 0, Elements: 0, TTL: -1, Group: "", Kind: KindPrefix},
		{DB: 0, Key: " lead\u2028", Type: "stream", Bytes: 9, Elements: 1, TTL: time.Hour, Group: "t", Kind: KindTemplate},
	}
	for _, format := range KeyExportFormats {
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
		if x.Rows() != int64(len(rows)) {
			t.Fatalf("%s: %d rows counted", format, x.Rows())
		}
		if format == KeysCSV {
			recs, err := csv.NewReader(bytes.NewReader(buf.Bytes())).ReadAll()
			if err != nil || len(recs) != len(rows)+1 {
				t.Fatalf("csv: %d records, %v", len(recs), err)
			}
		} else {
			for line := range strings.Lines(buf.String()) {
				if !json.Valid([]byte(line)) {
					t.Fatalf("jsonl: not JSON: %q", line)
				}
			}
		}
		r, err := NewKeyReader(&buf)
		if err != nil {
			t.Fatal(err)
		}
		for i := range rows {
			var got KeyRow
			if err := r.Next(&got); err != nil {
				t.Fatalf("%s row %d: %v", format, i, err)
			}
			if got != rows[i] {
				t.Errorf("%s row %d:\n got %+v\nwant %+v", format, i, got, rows[i])
			}
		}
		var extra KeyRow
		if err := r.Next(&extra); err != io.EOF {
			t.Errorf("%s: after the last row: %v", format, err)
		}
	}
}

func TestKeyDiffWriterFormats(t *testing.T) {
	changes := []KeyChange{
		{Change: KeyAdded, Key: "a:1", Group: "a:{id}", NewType: "string", OldBytes: -1, NewBytes: 10},
		{Change: KeyRemoved, DB: 2, Key: "b:\xff", Group: `b:\xff`, OldType: "hash", OldBytes: 99, NewBytes: -1},
		{Change: KeyGrown, Key: "c", Group: "c", OldType: "list", NewType: "list", OldBytes: 10, NewBytes: 5000},
		{Change: KeyType, DB: 15, Key: "<a&b>\"\\\n\t\u2028\x01é", Group: "<g>&\u2029", OldType: "zset", NewType: "string", OldBytes: 0, NewBytes: 7},
	}
	sum := &KeyDiffSummary{OldKeys: 3, NewKeys: 3, Groups: []KeyDiffGroup{{Group: "a:{id}", Added: 1, BytesDelta: 10}, {Group: `b:\xff`, Removed: 1, BytesDelta: -99}, {Group: "c", Grown: 1, BytesDelta: 4990}, {Group: "<g>&\u2029", Type: 1, BytesDelta: 7}}}
	for _, format := range KeyDiffFormats {
		var buf bytes.Buffer
		w := NewKeyDiffWriter(&buf, format, 0)
		for i := range changes {
			if err := w.Change(&changes[i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(sum, "old.csv", "new.csv"); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		switch format {
		case "json":
			var doc struct {
				Changes []struct {
					Change    string `json:"change"`
					DB        int    `json:"db"`
					Key       string `json:"key"`
					KeyBase64 string `json:"key_base64"`
					Group     string `json:"group"`
					OldType   string `json:"old_type"`
					NewType   string `json:"new_type"`
					OldBytes  *int64 `json:"old_bytes"`
					NewBytes  *int64 `json:"new_bytes"`
				} `json:"changes"`
				Summary struct {
					Changes  int64            `json:"changes"`
					ByChange map[string]int64 `json:"by_change"`
				} `json:"summary"`
			}
			if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
				t.Fatalf("json: %v\n%s", err, out)
			}
			if doc.Summary.Changes != 4 || doc.Summary.ByChange[KeyGrown] != 1 || len(doc.Changes) != 4 || doc.Changes[1].KeyBase64 != "Yjr/" {
				t.Errorf("json: %s", out)
			}
			// Every field as given, read back by encoding/json.
			for i, c := range doc.Changes {
				w := changes[i]
				key := w.Key
				if c.KeyBase64 != "" {
					b, _ := base64.StdEncoding.DecodeString(c.KeyBase64)
					key = string(b)
				}
				size := func(p *int64) int64 {
					if p == nil {
						return -1
					}
					return *p
				}
				got := KeyChange{Change: c.Change, DB: c.DB, Key: key, Group: c.Group, OldType: c.OldType, NewType: c.NewType, OldBytes: size(c.OldBytes), NewBytes: size(c.NewBytes)}
				if got != w {
					t.Errorf("json: change %d read back as %+v, want %+v", i, got, w)
				}
			}
		case "csv":
			recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
			if err != nil || len(recs) != 5 || recs[2][3] == "" {
				t.Errorf("csv: %v %q", err, recs)
			}
		default:
			for _, s := range []string{"added", "a:1", "removed", `"b:\xff"`, "10 B → 4.9 KiB", "1 added, 1 removed, 1 type, 1 grown, 0 shrunk", "changes by template or family"} {
				if !strings.Contains(out, s) {
					t.Errorf("text lacks %q:\n%s", s, out)
				}
			}
		}
	}
}

// TestDiffLiveAgainstRDB: a live audit and an RDB audit of the same keys
// measure memory differently; their diff compares keys and keys without
// TTL, says which figure each side used, and marks no group changed for
// its memory alone.
func TestDiffLiveAgainstRDB(t *testing.T) {
	g := func(bytes, keys int64) Group {
		return Group{Name: "order:{id}", Kind: KindTemplate, Keys: keys, Bytes: bytes, Types: map[string]int64{}}
	}
	live := &Report{Complete: true, Source: Source{Kind: "redis", Target: "redis://127.0.0.1:6379"}, Groups: []Group{g(1000, 10), {Name: "cart:{id}", Kind: KindTemplate, Keys: 5, Bytes: 50}}}
	rdb := &Report{Complete: true, Source: Source{Kind: "rdb", Target: "dump.rdb"}, Groups: []Group{g(900, 10), {Name: "cart:{id}", Kind: KindTemplate, Keys: 6, Bytes: 40}}}
	d := Diff(live, rdb)
	if d.MemoryCompared || d.Old.Memory != "MEMORY USAGE" || d.New.Memory != "the RDB estimate" {
		t.Fatalf("memory compared %v, old %q, new %q", d.MemoryCompared, d.Old.Memory, d.New.Memory)
	}
	if len(d.Changed) != 1 || d.Changed[0].Name != "cart:{id}" {
		t.Errorf("changed: %+v (only cart:{id}'s keys changed)", d.Changed)
	}
	var buf bytes.Buffer
	if err := d.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"(memory: MEMORY USAGE)", "(memory: the RDB estimate)", "memory is not compared"} {
		if !strings.Contains(buf.String(), s) {
			t.Errorf("text lacks %q:\n%s", s, buf.String())
		}
	}
	same := Diff(live, live)
	if !same.MemoryCompared || len(same.Changed) != 0 {
		t.Errorf("a report against itself: %+v", same)
	}
	rdb.Source.Kind = "redis"
	if d := Diff(live, rdb); !d.MemoryCompared || len(d.Changed) != 2 {
		t.Errorf("two live reports: memory compared %v, %d changed", d.MemoryCompared, len(d.Changed))
	}
}

// TestDiffWithoutRegistry: two reports made without a registry compare
// without an "unregistered" count (every key is, in both); a report made
// with one against one made without gets a note that their groups differ
// by kind.
func TestDiffWithoutRegistry(t *testing.T) {
	fam := &Report{Source: Source{Kind: "rdb", Target: "a.rdb"}, Complete: true, Summary: Summary{Keys: 10, Unregistered: 10},
		Groups: []Group{{Name: "cart:{id:int}", Kind: KindPrefix, Keys: 10}}, NotChecked: NoRegistryChecks}
	fam2 := *fam
	fam2.Summary.Keys, fam2.Summary.Unregistered = 12, 12
	var buf bytes.Buffer
	d := Diff(fam, &fam2)
	if err := d.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	if !d.Old.NoRegistry || !d.New.NoRegistry || strings.Contains(buf.String(), "unregistered") || !strings.Contains(buf.String(), "keys 10 → 12") {
		t.Errorf("two reports without a registry:\n%s", buf.String())
	}
	reg := &Report{Source: fam.Source, Complete: true, Summary: Summary{Keys: 10}, Groups: []Group{{Name: "cart:{cartId:int}", Kind: KindTemplate, Keys: 10}}}
	for _, d := range []*DriftReport{Diff(reg, fam), Diff(fam, reg)} {
		if !slices.ContainsFunc(d.Notes, func(n string) bool {
			return strings.Contains(n, "templates and inferred families are different groups")
		}) {
			t.Errorf("with against without a registry: notes %q", d.Notes)
		}
	}
	if d := Diff(reg, reg); len(d.Notes) != 0 {
		t.Errorf("notes of a report against itself: %q", d.Notes)
	}
}

// TestKeyDiffStops: a diff asked to stop (an interrupt) ends with that
// error, in memory and while splitting into buckets, and leaves no
// temporary files.
func TestKeyDiffStops(t *testing.T) {
	dir := t.TempDir()
	oldPath, newPath, _ := plantedExports(t, dir, KeysCSV, 20_000, 100)
	stop := fmt.Errorf("interrupted")
	for _, hint := range []int64{1, 1 << 40} {
		calls := 0
		o := KeyDiffOptions{TempDir: dir, SizeHint: hint, BucketBytes: 1 << 20, Stop: func() error {
			if calls++; calls > 2 {
				return stop
			}
			return nil
		}}
		_, err := KeyDiff(openExport(t, oldPath), openExport(t, newPath), o, func(*KeyChange) error { return nil })
		if err == nil || !strings.Contains(err.Error(), "interrupted") {
			t.Errorf("size hint %d: %v", hint, err)
		}
		if matches, _ := filepath.Glob(filepath.Join(dir, "keyguard-diff-*")); len(matches) > 0 {
			t.Errorf("temporary files left: %v", matches)
		}
	}
}

// TestHTMLWithoutRegistry: the HTML report of an audit without a registry
// counts no key as unregistered and draws no family as one; with a
// registry it does.
func TestHTMLWithoutRegistry(t *testing.T) {
	fam := &Report{Source: Source{Kind: "rdb", Target: "a.rdb"}, Complete: true, Summary: Summary{Keys: 10, Bytes: 1000, Unregistered: 10},
		Groups: []Group{{Name: "cart:{id:int}", Kind: KindPrefix, Domain: "cart", Keys: 10, Bytes: 1000}}, NotChecked: NoRegistryChecks}
	var buf bytes.Buffer
	if err := fam.WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if strings.Contains(page, "unregistered<b>") || strings.Contains(page, `class="u"`) || !strings.Contains(page, "registry<b>none</b>") {
		t.Errorf("HTML without a registry:\n%s", page)
	}
	reg := *fam
	reg.NotChecked = nil
	buf.Reset()
	if err := reg.WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	if page := buf.String(); !strings.Contains(page, "unregistered<b>10</b>") || !strings.Contains(page, `class="u"`) {
		t.Errorf("HTML with a registry:\n%s", page)
	}
}

// TestKeyDiffAgainstModel holds KeyDiff to a plain model of it (old's
// rows in a map, new's looked up and taken out) on keys made to meet the
// comparison's corners: a key held twice on either side, the empty key,
// keys alike in their first 32 bytes or more, keys of 6 KB, keys that
// differ only by a NUL at the end, several databases, unknown sizes and
// types; one bucket and many.
func TestKeyDiffAgainstModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	long := strings.Repeat("tenant:eu-west-1:catalog:product:", 2)
	keyOf := func() string {
		switch i := rng.IntN(400); {
		case i < 2:
			return ""
		case i < 6: // longer than a bucket reader looks ahead
			return strings.Repeat(long, 100) + strconv.Itoa(rng.IntN(5))
		case i < 40:
			return long + strconv.Itoa(rng.IntN(60))
		case i < 60:
			return "nul:" + strconv.Itoa(rng.IntN(8)) + strings.Repeat("\x00", rng.IntN(3))
		default:
			return "k:" + strconv.Itoa(rng.IntN(300))
		}
	}
	types := []string{"string", "hash", ""}
	row := func() KeyRow {
		b := int64(rng.IntN(5000))
		if rng.IntN(20) == 0 {
			b = -1
		}
		return KeyRow{DB: rng.IntN(3), Key: keyOf(), Type: types[rng.IntN(3)], Bytes: b, Elements: -1, Group: "g" + strconv.Itoa(rng.IntN(4))}
	}
	for round := range 20 {
		var oldRows, newRows []KeyRow
		for range 200 + rng.IntN(400) {
			oldRows = append(oldRows, row())
		}
		for range 200 + rng.IntN(400) {
			newRows = append(newRows, row())
		}
		// The model: the comparison as a map of old's rows.
		type id struct {
			db  int
			key string
		}
		o := KeyDiffOptions{MinBytes: 100, Ratio: 0.2}
		d := &keyDiff{o: o}
		m := map[id]KeyRow{}
		for _, r := range oldRows {
			m[id{r.DB, r.Key}] = r
		}
		var want []KeyChange
		for _, r := range newRows {
			p, ok := m[id{r.DB, r.Key}]
			if !ok {
				want = append(want, KeyChange{Change: KeyAdded, DB: r.DB, Key: r.Key, Group: r.Group, NewType: r.Type, OldBytes: -1, NewBytes: r.Bytes})
				continue
			}
			delete(m, id{r.DB, r.Key})
			c := KeyChange{DB: r.DB, Key: r.Key, Group: r.Group, OldType: p.Type, NewType: r.Type, OldBytes: p.Bytes, NewBytes: r.Bytes}
			switch {
			case p.Type != r.Type && p.Type != "" && r.Type != "":
				c.Change = KeyType
			case p.Bytes >= 0 && r.Bytes >= 0 && d.moved(p.Bytes, r.Bytes):
				c.Change = KeyGrown
				if r.Bytes < p.Bytes {
					c.Change = KeyShrunk
				}
			default:
				continue
			}
			want = append(want, c)
		}
		for k, p := range m {
			want = append(want, KeyChange{Change: KeyRemoved, DB: k.db, Key: k.key, Group: p.Group, OldType: p.Type, OldBytes: p.Bytes, NewBytes: -1})
		}
		byKey := func(a, b KeyChange) int {
			return cmp.Or(cmp.Compare(a.DB, b.DB), strings.Compare(a.Key, b.Key), strings.Compare(a.Change, b.Change),
				strings.Compare(a.Group, b.Group), strings.Compare(a.OldType, b.OldType), strings.Compare(a.NewType, b.NewType),
				cmp.Compare(a.OldBytes, b.OldBytes), cmp.Compare(a.NewBytes, b.NewBytes))
		}
		slices.SortFunc(want, byKey)
		dir := t.TempDir()
		write := func(name string, rows []KeyRow) string {
			path := filepath.Join(dir, name)
			if err := os.WriteFile(path, exportRows(t, KeysCSV, rows), 0o600); err != nil {
				t.Fatal(err)
			}
			return path
		}
		oldPath, newPath := write("old.csv", oldRows), write("new.csv", newRows)
		for _, buckets := range []int64{1, 8} {
			o := o
			o.TempDir, o.SizeHint, o.BucketBytes = dir, 7, 1 // 8 buckets
			if buckets == 1 {
				o.BucketBytes = 1 << 30
			}
			var got []KeyChange
			if _, err := KeyDiff(openExport(t, oldPath), openExport(t, newPath), o, func(c *KeyChange) error {
				got = append(got, *c)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if buckets == 1 && !slices.IsSortedFunc(got, func(a, b KeyChange) int { return cmp.Or(cmp.Compare(a.DB, b.DB), strings.Compare(a.Key, b.Key)) }) {
				t.Errorf("round %d: one bucket's changes are not sorted by db and key", round)
			}
			slices.SortFunc(got, byKey)
			if !slices.Equal(got, want) {
				t.Fatalf("round %d, %d buckets: %d changes, the model %d\ngot  %+v\nwant %+v", round, buckets, len(got), len(want), got, want)
			}
		}
	}
}

// BenchmarkKeyDiff diffs two CSV exports of 200,000 keys in one bucket,
// half of them changed (removed, renamed, retyped or resized: 125,000
// changes) and their order shuffled: reading, comparing, sorting and
// emitting the changes.
func BenchmarkKeyDiff(b *testing.B) {
	const n = 200_000
	rng := rand.New(rand.NewPCG(31, 32))
	var oldRows, newRows []KeyRow
	for i := range n {
		r := KeyRow{DB: i % 2, Key: fmt.Sprintf("order:order:%d:detail", rng.IntN(1<<40)), Type: "hash", Bytes: 2000, Elements: -1, Group: "order:order:{id}:detail"}
		oldRows = append(oldRows, r)
		switch i % 8 {
		case 0:
			continue // removed
		case 1:
			r.Key += ":new" // added
		case 2:
			r.Type = "string"
		case 3:
			r.Bytes = 9000
		}
		newRows = append(newRows, r)
	}
	rng.Shuffle(len(newRows), func(i, j int) { newRows[i], newRows[j] = newRows[j], newRows[i] })
	oldCSV, newCSV := exportRows(b, KeysCSV, oldRows), exportRows(b, KeysCSV, newRows)
	b.SetBytes(int64(len(oldCSV) + len(newCSV)))
	b.ReportAllocs()
	for b.Loop() {
		or, err := NewKeyReader(bytes.NewReader(oldCSV))
		if err != nil {
			b.Fatal(err)
		}
		nr, err := NewKeyReader(bytes.NewReader(newCSV))
		if err != nil {
			b.Fatal(err)
		}
		changes := 0
		if _, err := KeyDiff(or, nr, KeyDiffOptions{MinBytes: DefaultKeyDiffMinBytes, Ratio: DefaultKeyDiffRatio, SizeHint: 1}, func(*KeyChange) error {
			changes++
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		if changes != 5*n/8 { // a renamed key is one added and one removed
			b.Fatalf("%d changes, want %d", changes, 5*n/8)
		}
	}
}
