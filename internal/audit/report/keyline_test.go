package report

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestKeyReaderLineLimit: a key export is read whole when its longest
// line (a CSV record, quoted newlines included) is within the limit, and
// with a limit a byte shorter stops at that line, naming its number,
// after returning every row before it intact.
func TestKeyReaderLineLimit(t *testing.T) {
	rows := []KeyRow{
		{DB: 0, Key: "plain:1", Type: "string", Bytes: 56, Elements: 5, TTL: -1, Group: "g", Kind: KindPrefix},
		{DB: 2, Key: "a,\"b\"\r\nc" + strings.Repeat("\n\"x", 3000), Type: "zset", Bytes: 1, Elements: 3, Group: "g", Kind: KindTemplate},
		{DB: 1, Key: "bin:\xff" + strings.Repeat("\x00", 5000), Type: "set", Bytes: 1, Elements: 0, TTL: -1, Group: "g", Kind: KindTemplate},
		{DB: 3, Key: "short", Type: "list", Bytes: 0, Elements: 0, TTL: -1, Group: "", Kind: KindPrefix},
	}
	for _, format := range KeyExportFormats {
		var buf bytes.Buffer
		x, err := NewKeyExport(&buf, format)
		if err != nil {
			t.Fatal(err)
		}
		kb := x.Buffer()
		lens := make([]int64, len(rows))
		for i := range rows {
			var one []byte
			if format == KeysCSV {
				one = appendKeyCSV(nil, &rows[i])
			} else {
				one = appendKeyJSON(nil, &rows[i])
			}
			lens[i] = int64(len(one) - 1) // without its newline
			kb.Add(&rows[i])
		}
		kb.Flush()
		header := 0
		if format == KeysCSV {
			header = 1
		}
		longest := int64(0)
		for _, n := range lens {
			longest = max(longest, n)
		}
		for _, limit := range []int64{longest, longest - 1, lens[0], 100} {
			r, err := NewKeyReaderLimited(bytes.NewReader(buf.Bytes()), limit)
			if format == KeysCSV && limit < int64(len(keysHeader)-1) {
				if !errors.Is(err, ErrLineTooLong) || !strings.Contains(err.Error(), "line 1:") {
					t.Errorf("csv limit %d under the header's length: %v", limit, err)
				}
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			want := len(rows) // the first row over the limit
			for i, n := range lens {
				if n > limit {
					want = i
					break
				}
			}
			for i := 0; ; i++ {
				var got KeyRow
				err := r.Next(&got)
				if i < want {
					if err != nil || got != rows[i] {
						t.Fatalf("%s limit %d row %d: %v", format, limit, i, err)
					}
					continue
				}
				if want == len(rows) {
					if err != io.EOF {
						t.Errorf("%s limit %d: after the last row: %v", format, limit, err)
					}
				} else if line := fmt.Sprintf("line %d: line too long: over %d bytes", want+1+header, limit); !errors.Is(err, ErrLineTooLong) || !strings.Contains(err.Error(), line) || !strings.Contains(err.Error(), "--max-line-bytes") {
					t.Errorf("%s limit %d: %v, want %q", format, limit, err, line)
				}
				break
			}
		}
	}
}

// endless is a line that never ends.
type endless struct{ head string }

func (e *endless) Read(p []byte) (int, error) {
	n := copy(p, e.head)
	e.head = e.head[n:]
	for i := n; i < len(p); i++ {
		p[i] = 'a'
	}
	return len(p), nil
}

// TestKeyReaderEndlessLine: a line that never ends (a flood on stdin) is
// refused at the limit, having held about that much.
func TestKeyReaderEndlessLine(t *testing.T) {
	for _, head := range []string{`{"db":0,"key":"`, keysHeader + `0,"`} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		r, err := NewKeyReader(&endless{head: head})
		if err != nil {
			t.Fatal(err)
		}
		var row KeyRow
		err = r.Next(&row)
		runtime.ReadMemStats(&after)
		line := 1
		if head != `{"db":0,"key":"` {
			line = 2
		}
		if !errors.Is(err, ErrLineTooLong) || !strings.Contains(err.Error(), fmt.Sprintf("line %d:", line)) {
			t.Errorf("%.10q: %v", head, err)
		}
		// The input is endless: anything proportional to the limit is a
		// bound (a line grows by doubling, and csv copies it once more).
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 10*DefaultMaxKeyLine {
			t.Errorf("%.10q: %d bytes allocated for a limit of %d", head, alloc, DefaultMaxKeyLine)
		}
	}
}

// refLineLimit is lineLimit's Read a byte at a time, as it was written
// first: the reference the faster scan is held to.
func refLineLimit(l *lineLimit, p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	n, err := l.r.Read(p)
	if n > 0 && !l.started {
		l.started, l.csv = true, p[0] != '{'
	}
	for i, c := range p[:n] {
		switch {
		case c == '"' && l.csv:
			l.inQuote = !l.inQuote
		case c == '\n' && !l.inQuote:
			l.line++
			l.cur = 0
			continue
		}
		if l.cur++; l.cur > l.max {
			l.err = fmt.Errorf("key export %w", LineTooLong(l.line+1, l.max))
			return i, nil
		}
	}
	return n, err
}

// chunks reads its input in pieces of the given sizes, in turn.
type chunks struct {
	s     []byte
	sizes []int
	k     int
}

func (c *chunks) Read(p []byte) (int, error) {
	if len(c.s) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), len(c.s), c.sizes[c.k%len(c.sizes)])
	c.k++
	copy(p, c.s[:n])
	c.s = c.s[n:]
	return n, nil
}

// FuzzLineLimit holds lineLimit to its byte-at-a-time reference: the
// same bytes pass, the same error, at the same place, whatever the input,
// the limit and how the reads are cut.
func FuzzLineLimit(f *testing.F) {
	f.Add([]byte("db,key\n0,\"a\nb\"\n1,c\n"), int64(5), uint8(3))
	f.Add([]byte(`{"db":0,"key":"a\"b"}`+"\n"+`{"db":1}`), int64(12), uint8(1))
	f.Add([]byte("\"\"\"\n\n\n\"x"), int64(1), uint8(2))
	f.Fuzz(func(t *testing.T, in []byte, max int64, cut uint8) {
		if max <= 0 || max > 1<<20 {
			return
		}
		sizes := []int{int(cut)%7 + 1, int(cut)%13 + 1, 64}
		read := func(step func(*lineLimit, []byte) (int, error)) ([]byte, error) {
			l := &lineLimit{r: &chunks{s: in, sizes: sizes}, max: max}
			var out []byte
			buf := make([]byte, 16)
			for {
				n, err := step(l, buf)
				out = append(out, buf[:n]...)
				if err != nil {
					return out, err
				}
				if n == 0 && l.err != nil {
					return out, l.err
				}
			}
		}
		got, gerr := read((*lineLimit).Read)
		want, werr := read(refLineLimit)
		if !bytes.Equal(got, want) || fmt.Sprint(gerr) != fmt.Sprint(werr) {
			t.Fatalf("limit %d: passed %q, %v; the reference %q, %v", max, got, gerr, want, werr)
		}
	})
}

// TestDiffKeyExportRoundTrip: a key diff's own export (KeysDiff) gives
// back what the comparison reads of every row, keys of any bytes and
// longer than the reader's buffer included, a type or group the same as
// the row before's or not; a row cut short is an error, not a row.
func TestDiffKeyExportRoundTrip(t *testing.T) {
	rows := []KeyRow{
		{DB: 0, Key: "plain:1", Type: "string", Bytes: 56, Group: "g:{id}"},
		{DB: 0, Key: "plain:2", Type: "string", Bytes: 57, Group: "g:{id}"},
		{DB: 15, Key: "bin:\xff\x00\r\n,\"", Type: "hash", Bytes: -1, Group: "other"},
		{DB: 3, Key: "", Type: "", Bytes: 0, Group: ""},
		{DB: 1, Key: "long:" + strings.Repeat("x\x00", 70000), Type: "zset", Bytes: 1 << 40, Group: "long:" + strings.Repeat("y", 70000)},
		{DB: 1, Key: "after", Type: "zset", Bytes: 9, Group: "long:" + strings.Repeat("y", 70000)},
	}
	full := slices.Clone(rows)
	for i := range full {
		r := &full[i]
		r.Encoding, r.Elements, r.TTL, r.Kind, r.Owner = "listpack", 7, -1, KindTemplate, "team" // not kept
	}
	all := exportRows(t, KeysDiff, full)
	r := NewDiffKeyReader(bytes.NewReader(all))
	for i := range rows {
		want := rows[i]
		want.Elements = -1
		var got KeyRow
		if err := r.Next(&got); err != nil || got != want {
			t.Fatalf("row %d: %v\ngot  %.80q\nwant %.80q", i, err, fmt.Sprint(got), fmt.Sprint(want))
		}
	}
	var end KeyRow
	if err := r.Next(&end); err != io.EOF {
		t.Fatalf("after the last row: %v", err)
	}
	for _, cut := range []int{len(all) - 1, len(all) - 3, 10} {
		r := NewDiffKeyReader(bytes.NewReader(all[:cut]))
		var err error
		for err == nil {
			err = r.Next(&end)
		}
		if err == io.EOF || !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("cut at %d of %d: %v, want an unexpected end", cut, len(all), err)
		}
	}
}
