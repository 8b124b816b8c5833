package resp

import (
	"bufio"
	"io"
	"runtime"
	"strings"
	"testing"
)

// lineStream is a MONITOR stream made up as it is read: a status reply
// of n bytes of text, then more short ones.
type lineStream struct {
	long  int64 // bytes of the long line's text still to send
	state int   // 0 '+', 1 text, 2 CRLF, 3 short lines
	short int   // short lines left
}

func (s *lineStream) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		switch s.state {
		case 0:
			p[n] = '+'
			n++
			s.state = 1
		case 1:
			k := int(min(s.long, int64(len(p)-n)))
			for i := range k {
				p[n+i] = 'v'
			}
			n += k
			if s.long -= int64(k); s.long == 0 {
				s.state = 2
			}
		case 2:
			if len(p)-n < 2 {
				return n, nil
			}
			n += copy(p[n:], "\r\n")
			s.state = 3
		case 3:
			const line = "+1.5 [0 127.0.0.1:5] \"get\" \"k\"\r\n"
			if s.short == 0 {
				if n == 0 {
					return 0, io.EOF
				}
				return n, nil
			}
			if len(p)-n < len(line) {
				return n, nil
			}
			n += copy(p[n:], line)
			s.short--
		}
	}
	return n, nil
}

// TestReadLineFlood: a 256 MiB line (a SET of a big value as MONITOR
// prints it) is read through and counted in whole while at most the limit
// is kept, and a flood of short lines after it allocates nothing per
// line: what a reader holds is bounded by its limit, not by the stream.
func TestReadLineFlood(t *testing.T) {
	const big, short, limit = 256 << 20, 200_000, 64 << 10
	c := &Conn{br: bufio.NewReaderSize(&lineStream{long: big, short: short}, 64<<10)}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	l, err := c.ReadLine(limit)
	if err != nil || !l.Cut || len(l.Text) != limit || l.Size != big+3 || strings.Trim(string(l.Text), "v") != "" {
		t.Fatalf("the long line: %v, cut %v, %d bytes kept, size %d", err, l.Cut, len(l.Text), l.Size)
	}
	n := 0
	for {
		l, err := c.ReadLine(limit)
		if err == io.EOF {
			break
		}
		if err != nil || l.Cut || string(l.Text) != `1.5 [0 127.0.0.1:5] "get" "k"` {
			t.Fatalf("short line %d: %q %v", n, l.Text, err)
		}
		n++
	}
	runtime.ReadMemStats(&after)
	if n != short {
		t.Errorf("%d short lines, want %d", n, short)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4*limit {
		t.Errorf("%d bytes allocated reading %d MiB and %d lines with a limit of %d", alloc, big>>20, short, limit)
	}
	if cap(c.long) > 2*(limit+3) {
		t.Errorf("kept a buffer of %d bytes for a limit of %d", cap(c.long), limit)
	}
}
