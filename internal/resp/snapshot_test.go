package resp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

const testMark = "0123456789abcdef0123456789abcdef01234567"

// replicaLink serves one replica handshake on a pipe the way a master
// does: +OK to each REPLCONF, then for SYNC keepalive newlines, the
// header and the payload written in pieces of chunk bytes (diskless: the
// end mark, then tail as a replication stream would follow). It returns
// the client's Conn.
func replicaLink(t testing.TB, payload []byte, chunk int, diskless bool, tail []byte) *Conn {
	t.Helper()
	server, client := net.Pipe()
	t.Cleanup(func() { server.Close() })
	go func() {
		br := bufio.NewReader(server)
		for {
			args, err := readCommand(br)
			if err != nil {
				return
			}
			if strings.ToUpper(args[0]) != "SYNC" {
				server.Write([]byte("+OK\r\n"))
				continue
			}
			var out bytes.Buffer
			out.WriteString("\n\n")
			if diskless {
				out.WriteString("$EOF:" + testMark + "\r\n")
				out.Write(payload)
				out.WriteString(testMark)
				out.Write(tail)
			} else {
				fmt.Fprintf(&out, "$%d\r\n", len(payload))
				out.Write(payload)
			}
			b := out.Bytes()
			for len(b) > 0 {
				n := min(len(b), max(chunk, 1))
				if _, err := server.Write(b[:n]); err != nil {
					return
				}
				b = b[n:]
			}
			server.Close()
			return
		}
	}()
	c, err := Dial(context.Background(), Config{Dialer: func(context.Context, string, string) (net.Conn, error) { return client, nil }}, "pipe", Session{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// readCommand reads one RESP array of bulk strings.
func readCommand(br *bufio.Reader) ([]string, error) {
	line, err := br.ReadString('\n')
	if err != nil {
		return nil, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(line[1:]))
	if err != nil || line[0] != '*' {
		return nil, fmt.Errorf("not an array: %q", line)
	}
	args := make([]string, n)
	for i := range args {
		l, err := br.ReadString('\n')
		if err != nil {
			return nil, err
		}
		size, _ := strconv.Atoi(strings.TrimSpace(l[1:]))
		b := make([]byte, size+2)
		if _, err := io.ReadFull(br, b); err != nil {
			return nil, err
		}
		args[i] = string(b[:size])
	}
	return args, nil
}

// readPayload reads p in reads of at most step bytes.
func readPayload(p *Payload, step int) ([]byte, error) {
	var got []byte
	buf := make([]byte, max(step, 1))
	for {
		n, err := p.Read(buf)
		got = append(got, buf[:n]...)
		if err == io.EOF {
			return got, nil
		}
		if err != nil {
			return got, err
		}
	}
}

func TestSnapshotPayload(t *testing.T) {
	big := bytes.Repeat([]byte("REDIS0011 some bytes of a snapshot \x00\xff"), 10000) // past the 64 KiB read buffer
	for _, tc := range []struct {
		name     string
		payload  []byte
		diskless bool
		tail     string
		chunk    int
		step     int
	}{
		{"sized", big, false, "", 4096, 1 << 16},
		{"sized small reads", big[:5000], false, "", 7, 3},
		{"diskless", big, true, "", 4096, 1 << 16},
		{"diskless then a stream", big, true, "*1\r\n$4\r\nPING\r\n", 1000, 100},
		{"diskless byte by byte", big[:3000], true, "more", 1, 1},
		{"diskless mark split across writes", big[:100], true, "", 39, 5},
		{"diskless empty", nil, true, "x", 3, 8},
		{"diskless a mark's prefix in the data", append([]byte(testMark[:39]+"z"), big[:200]...), true, "", 41, 17},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := replicaLink(t, tc.payload, tc.chunk, tc.diskless, []byte(tc.tail))
			p, err := c.Snapshot(context.Background(), false)
			if err != nil {
				t.Fatal(err)
			}
			if p.Diskless != tc.diskless || (!tc.diskless && p.Size != int64(len(tc.payload))) {
				t.Errorf("diskless %v size %d", p.Diskless, p.Size)
			}
			got, err := readPayload(p, tc.step)
			if err != nil {
				t.Fatalf("after %d of %d bytes: %v", len(got), len(tc.payload), err)
			}
			if !bytes.Equal(got, tc.payload) {
				t.Errorf("read %d bytes, want %d (equal prefix %d)", len(got), len(tc.payload), commonPrefix(got, tc.payload))
			}
		})
	}
}

// A link that closes before the payload's end fails the read: a cut
// snapshot is never read as a whole one.
func TestSnapshotPayloadCut(t *testing.T) {
	for _, diskless := range []bool{false, true} {
		server, client := net.Pipe()
		go func() {
			br := bufio.NewReader(server)
			for range 3 {
				args, err := readCommand(br)
				if err != nil {
					return
				}
				if args[0] != "SYNC" {
					server.Write([]byte("+OK\r\n"))
				}
			}
			if diskless {
				server.Write([]byte("$EOF:" + testMark + "\r\nREDIS0011" + testMark[:20]))
			} else {
				server.Write([]byte("$100\r\nREDIS0011"))
			}
			server.Close()
		}()
		c, err := Dial(context.Background(), Config{Dialer: func(context.Context, string, string) (net.Conn, error) { return client, nil }}, "pipe", Session{})
		if err != nil {
			t.Fatal(err)
		}
		p, err := c.Snapshot(context.Background(), false)
		if err != nil {
			t.Fatal(err)
		}
		got, err := readPayload(p, 4)
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("diskless %v: read %q, err %v; want io.ErrUnexpectedEOF", diskless, got, err)
		}
		c.Close()
	}
}

func commonPrefix(a, b []byte) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

func FuzzSnapshotPayload(f *testing.F) {
	f.Add([]byte("REDIS0011\xff"), uint8(3), uint8(2), true, []byte("tail"))
	f.Add([]byte(testMark[:30]), uint8(1), uint8(1), true, []byte(""))
	f.Add([]byte("abc"), uint8(50), uint8(7), false, []byte(""))
	f.Fuzz(func(t *testing.T, payload []byte, chunk, step uint8, diskless bool, tail []byte) {
		if diskless && bytes.Index(append(bytes.Clone(payload), testMark...), []byte(testMark)) < len(payload) {
			t.Skip("the mark inside the payload ends it: a server draws a random mark")
		}
		c := replicaLink(t, payload, int(chunk), diskless, tail)
		p, err := c.Snapshot(context.Background(), false)
		if err != nil {
			t.Fatal(err)
		}
		got, err := readPayload(p, int(step))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, payload) {
			t.Fatalf("read %q, want %q", got, payload)
		}
	})
}
