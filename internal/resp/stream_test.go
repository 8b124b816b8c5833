package resp

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestReadLine(t *testing.T) {
	long := strings.Repeat("x", 100) // longer than readerConn's 16-byte buffer
	in := "+1339518083.107412 [0 127.0.0.1:60866] \"keys\" \"*\"\r\n" + "+short\r\n" + "+" + long + "\r\n" + "+" + long + "\r\n" + "+\r\n" + "-ERR gone\r\n"
	c := readerConn([]byte(in))
	want := []struct {
		text string
		size int
		cut  bool
	}{
		{`1339518083.107412 [0 127.0.0.1:60866] "keys" "*"`, 51, false},
		{"short", 8, false},
		{long[:40], 103, true}, // cut at 40
		{long, 103, false},     // the limit is the line: whole
		{"", 3, false},
	}
	limits := []int{1000, 1000, 40, 100, 10}
	for i, w := range want {
		l, err := c.ReadLine(limits[i])
		if err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		if string(l.Text) != w.text || l.Size != w.size || l.Cut != w.cut {
			t.Errorf("line %d: %q size %d cut %v, want %q %d %v", i, l.Text, l.Size, l.Cut, w.text, w.size, w.cut)
		}
	}
	l, err := c.ReadLine(1000)
	var se ServerError
	if !errors.As(err, &se) || se.Code() != "ERR" || l.Size != 11 {
		t.Errorf("error reply: %v, size %d", err, l.Size)
	}
	if _, err := c.ReadLine(1000); !errors.Is(err, io.EOF) {
		t.Errorf("after the end: %v", err)
	}
	// A short limit on a line that fits the buffer cuts it too.
	c = readerConn([]byte("+abcdef\r\n"))
	if l, err := c.ReadLine(3); err != nil || string(l.Text) != "abc" || !l.Cut || l.Size != 9 {
		t.Errorf("limit 3: %q %v %d %v", l.Text, l.Cut, l.Size, err)
	}
}

func TestReadLineRejects(t *testing.T) {
	for _, in := range []string{"\r\n", "+x\n", ":1\r\n", "*1\r\n", "$3\r\nabc\r\n", "+" + strings.Repeat("y", 50) + "\n"} {
		c := readerConn([]byte(in))
		if l, err := c.ReadLine(1000); err == nil {
			t.Errorf("%q: read %q", in, l.Text)
		}
	}
	// A stream that stops mid-line counts what it sent.
	c := readerConn([]byte("+" + strings.Repeat("z", 40)))
	if l, err := c.ReadLine(10); err == nil || l.Size != 41 {
		t.Errorf("cut stream: %v size %d", err, l.Size)
	}
}

// FuzzReadLine: any bytes give lines or errors, never a panic; the sizes
// add up to at most the input, no text is longer than the limit, nor what
// is kept of a long line longer than the limit and its '+' and CRLF; and a
// stream of status replies comes back line by line, cut exactly where the
// limit says.
func FuzzReadLine(f *testing.F) {
	f.Add([]byte("+OK\r\n-ERR x\r\n"), []byte("1.5 [0 lua] \"get\" \"k\""), 8)
	f.Add([]byte("+"+strings.Repeat("a", 40)+"\r\n"), []byte(strings.Repeat("b", 70)), 16)
	f.Add([]byte("\r\n\n+\r"), []byte(""), 0)
	f.Fuzz(func(t *testing.T, data, text []byte, limit int) {
		limit = limit & 127
		c := readerConn(data)
		total := 0
		for range 64 {
			l, err := c.ReadLine(limit)
			total += l.Size
			if len(l.Text) > limit || len(c.long) > limit+3 {
				t.Fatalf("text of %d bytes (%d kept) over the limit %d", len(l.Text), len(c.long), limit)
			}
			if err != nil {
				break
			}
		}
		if total > len(data) {
			t.Fatalf("sizes add up to %d of %d bytes", total, len(data))
		}
		if bytes.ContainsAny(text, "\r\n") {
			return
		}
		line := append(append([]byte("+"), text...), "\r\n"...)
		c = readerConn(bytes.Repeat(line, 3))
		for i := range 3 {
			l, err := c.ReadLine(limit)
			want := text[:min(len(text), limit)]
			if err != nil || !bytes.Equal(l.Text, want) || l.Size != len(line) || l.Cut != (len(text) > limit) {
				t.Fatalf("line %d of %q, limit %d: %q size %d cut %v %v", i, line, limit, l.Text, l.Size, l.Cut, err)
			}
		}
	})
}
