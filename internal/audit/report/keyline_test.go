package report

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
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
