package resp

import (
	"bufio"
	"bytes"
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

// FuzzRead feeds arbitrary bytes to the reply reader: it must return
// replies or errors, never panic or loop.
func FuzzRead(f *testing.F) {
	for _, s := range []string{"+OK\r\n", "*2\r\n$1\r\n0\r\n*0\r\n", "$-1\r\n", "-NOPERM x\r\n", ":1\r\n", "$3\r\nabc\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c := readerConn(data)
		for range 64 {
			rp, err := c.Read()
			if err != nil {
				return
			}
			if err := c.Skip(rp); err != nil {
				return
			}
		}
	})
}

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
	ca := &Conn{bw: bufio.NewWriter(&a)}
	cb := &Conn{bw: bufio.NewWriter(&b)}
	key := "k\x00\r\n" + string(make([]byte, 300))
	ca.Key(NewKeyCmd([]string{"MEMORY", "USAGE"}, "SAMPLES", "5"), key)
	cb.Cmd("MEMORY", "USAGE", key, "SAMPLES", "5")
	ca.Key(NewKeyCmd([]string{"TYPE"}), "")
	cb.Cmd("TYPE", "")
	ca.bw.Flush()
	cb.bw.Flush()
	if a.String() != b.String() || ca.Take() != 2 {
		t.Errorf("key:\n%q\ncmd:\n%q", a.String(), b.String())
	}
}
