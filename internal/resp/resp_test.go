package resp

import (
	"bufio"
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func readerConn(data []byte) *Conn {
	return &Conn{br: bufio.NewReaderSize(bytes.NewReader(data), 16)}
}

func TestReadReplies(t *testing.T) {
	c := readerConn([]byte("+OK\r\n-ERR no\r\n:42\r\n:-1\r\n$3\r\na\x00b\r\n$-1\r\n*2\r\n$1\r\n0\r\n*1\r\n$0\r\n\r\n*-1\r\n$20\r\n" + "0123456789abcdef\r\n\r\n\r\n"))
	want := []struct {
		kind byte
		n    int64
		str  string
	}{
		{'+', 0, "OK"}, {'-', 0, "ERR no"}, {':', 42, ""}, {':', -1, ""}, {'$', 3, "a\x00b"}, {0, 0, ""},
		{'*', 2, ""}, {'$', 1, "0"}, {'*', 1, ""}, {'$', 0, ""}, {0, 0, ""}, {'$', 20, "0123456789abcdef\r\n\r\n"},
	}
	for i, w := range want {
		rp, err := c.Read()
		if err != nil {
			t.Fatalf("reply %d: %v", i, err)
		}
		if rp.Kind != w.kind || rp.N != w.n || string(rp.Str) != w.str {
			t.Errorf("reply %d: got %q %d %q, want %q %d %q", i, rp.Kind, rp.N, rp.Str, w.kind, w.n, w.str)
		}
	}
	if _, err := c.Read(); err == nil {
		t.Error("read past the end: no error")
	}
}

func TestReadRejectsBadReplies(t *testing.T) {
	for _, in := range []string{"", "\r\n", "?x\r\n", ":12a\r\n", "$-2\r\n", "$5\r\nab\r\n", "$2\r\nabcd", "*x\r\n", ":99999999999999999999\r\n", "+no-crlf\n", "$1\r\nab"} {
		c := readerConn([]byte(in))
		if _, err := c.Read(); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}

// FuzzRead feeds arbitrary bytes to the reply reader and holds it to a
// round trip: the replies it reads, written back in canonical RESP, read
// back as the same replies, and writing those gives the same bytes. Read
// with Skip walks the same replies, one whole reply at a time. ParseInt
// agrees with strconv.ParseInt.
func FuzzRead(f *testing.F) {
	for _, s := range []string{"+OK\r\n", "*2\r\n$1\r\n0\r\n*0\r\n", "$-1\r\n", "-NOPERM x\r\n", ":1\r\n", "$3\r\nabc\r\n", ":-007\r\n", "*-1\r\n+a\rb\r\n", "*3\r\n:1\r\n", ":9223372036854775807\r\n", ":-9223372036854775808\r\n", ":99999999999999999999\r\n", "$123456789012345678\r\n", "$2\r\nabcd\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got := readAll(data)
		canon := encodeReplies(got)
		again := readAll(canon)
		if !slices.EqualFunc(got, again, sameReply) {
			t.Fatalf("%q read as %v; written back %q, read as %v", data, got, canon, again)
		}
		if b := encodeReplies(again); !bytes.Equal(b, canon) {
			t.Fatalf("%q: written back %q, then %q", data, canon, b)
		}
		c := readerConn(data)
		for pos := 0; len(got) < maxFlat || pos < len(got); {
			rp, err := c.Read()
			if err != nil {
				if pos != len(got) {
					t.Fatalf("%q: Read fails after %d of %d replies: %v", data, pos, len(got), err)
				}
				break
			}
			if pos >= len(got) || !sameReply(rp, got[pos]) {
				t.Fatalf("%q: reply %d is %v with Skip, not %v", data, pos, rp, got[min(pos, len(got)-1)])
			}
			pos += 1 + nested(got[pos:])
			if c.Skip(rp) != nil {
				break
			}
		}
		// Replies read from the buffer agree with the general path's,
		// with a buffer that holds them all and one that cuts them.
		for _, size := range []int{16, 4096} {
			fast := &Conn{br: bufio.NewReaderSize(bytes.NewReader(data), size)}
			slow := &Conn{br: bufio.NewReaderSize(bytes.NewReader(data), size)}
			for range maxFlat {
				a, aerr := fast.Read()
				b, berr := slow.readLine()
				if (aerr == nil) != (berr == nil) || aerr == nil && !sameReply(a, b) {
					t.Fatalf("%q (buffer %d): Read %v %v, general path %v %v", data, size, a, aerr, b, berr)
				}
				if aerr != nil {
					break
				}
			}
		}
		if n, ok := ParseInt(data); ok {
			if m, err := strconv.ParseInt(string(data), 10, 64); err != nil || m != n {
				t.Fatalf("ParseInt(%q) = %d, strconv: %d %v", data, n, m, err)
			}
		} else if m, err := strconv.ParseInt(string(data), 10, 64); err == nil && len(data) <= 20 && data[0] != '+' {
			t.Fatalf("ParseInt(%q) refused, strconv reads %d", data, m)
		}
	})
}

const maxFlat = 256

// readAll reads replies one by one (arrays flattened) until an error, at
// most maxFlat, copying their bytes.
func readAll(data []byte) []Reply {
	c := readerConn(data)
	var out []Reply
	for range maxFlat {
		rp, err := c.Read()
		if err != nil {
			break
		}
		rp.Str = bytes.Clone(rp.Str)
		out = append(out, rp)
	}
	return out
}

// nested counts the flat replies inside the array that starts rs.
func nested(rs []Reply) int {
	if len(rs) == 0 || rs[0].Kind != '*' {
		return 0
	}
	n, i := 0, 1
	for range rs[0].N {
		if i >= len(rs) {
			return n
		}
		k := 1 + nested(rs[i:])
		n, i = n+k, i+k
	}
	return n
}

// encodeReplies writes replies in canonical RESP2.
func encodeReplies(rs []Reply) []byte {
	var b []byte
	for _, r := range rs {
		switch r.Kind {
		case '+', '-':
			b = append(append(append(b, r.Kind), r.Str...), "\r\n"...)
		case ':', '*':
			b = append(strconv.AppendInt(append(b, r.Kind), r.N, 10), "\r\n"...)
		case '$':
			b = append(strconv.AppendInt(append(b, '$'), int64(len(r.Str)), 10), "\r\n"...)
			b = append(append(b, r.Str...), "\r\n"...)
		default:
			b = append(b, "$-1\r\n"...)
		}
	}
	return b
}

func sameReply(a, b Reply) bool { return a.Kind == b.Kind && a.N == b.N && bytes.Equal(a.Str, b.Str) }

func TestParseInt(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "-1": -1, "9223372036854775807": 1<<63 - 1, "123": 123} {
		if got, ok := ParseInt([]byte(in)); !ok || got != want {
			t.Errorf("%q: %d %v", in, got, ok)
		}
	}
	for _, in := range []string{"", "-", "1.5", "9223372036854775808", "x", " 1"} {
		if _, ok := ParseInt([]byte(in)); ok {
			t.Errorf("%q parsed", in)
		}
	}
}

func TestKeyCmdEncodesLikeCmd(t *testing.T) {
	var a, b bytes.Buffer
	ca := &Conn{w: &a}
	cb := &Conn{w: &b}
	key := "k\x00\r\n" + string(make([]byte, 300))
	ca.Key(NewKeyCmd([]string{"MEMORY", "USAGE"}, "SAMPLES", "5"), key)
	cb.Cmd("MEMORY", "USAGE", key, "SAMPLES", "5")
	ca.Key(NewKeyCmd([]string{"TYPE"}), "")
	cb.Cmd("TYPE", "")
	// Past writeAt: the buffer is written before Flush, in order.
	for i := range 1000 {
		k := strconv.Itoa(i) + key
		ca.Key(NewKeyCmd([]string{"PTTL"}), k)
		cb.Cmd("PTTL", k)
	}
	if a.Len() == 0 {
		t.Errorf("nothing written before Flush past %d bytes", writeAt)
	}
	ca.Flush()
	cb.Flush()
	if a.String() != b.String() || ca.Take() != 1002 {
		t.Errorf("key:\n%q\ncmd:\n%q", a.String(), b.String())
	}
}

// BenchmarkRead reads what a hash probe pipeline returns: an integer, an
// array of 16 short bulks, an integer, per key.
func BenchmarkRead(b *testing.B) {
	var sb strings.Builder
	for range 200 {
		sb.WriteString(":1\r\n*16\r\n")
		for j := range 16 {
			fmt.Fprintf(&sb, "$8\r\nfield_0%c\r\n", 'a'+j)
		}
		sb.WriteString(":86400000\r\n")
	}
	data := []byte(sb.String())
	r := bytes.NewReader(data)
	c := &Conn{br: bufio.NewReaderSize(r, 64<<10)}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		r.Reset(data)
		c.br.Reset(r)
		c.win, c.off = nil, 0
		for {
			if _, err := c.Read(); err != nil {
				break
			}
		}
	}
}
