// Command auditbare is the floor that bench/audit.sh compares "keyguard
// audit" with: per batch one pipeline of SCAN (for the next batch) plus
// TYPE, PTTL and MEMORY USAGE for every key, written straight as RESP on
// one connection per master, all masters at once — no classification, no
// element counts, no report. What the servers' single threads allow.
//
//	go run ./bench/auditbare -addr 127.0.0.1:6379
//	go run ./bench/auditbare -cluster -addr 127.0.0.1:7000
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:6379", "server address (a seed with -cluster)")
	cluster := flag.Bool("cluster", false, "walk every master of the cluster -addr belongs to")
	count := flag.Int("count", 1000, "SCAN COUNT")
	samples := flag.Int("samples", 5, "MEMORY USAGE SAMPLES")
	flag.Parse()
	nodes := []string{*addr}
	if *cluster {
		var err error
		if nodes, err = masters(*addr); err != nil {
			fmt.Fprintln(os.Stderr, "auditbare:", err)
			os.Exit(1)
		}
	}
	start := time.Now()
	var mu sync.Mutex
	var keys, bytes int64
	var wg sync.WaitGroup
	var failed error
	for _, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k, b, err := walk(n, strconv.Itoa(*count), strconv.Itoa(*samples))
			mu.Lock()
			defer mu.Unlock()
			keys += k
			bytes += b
			if err != nil {
				failed = fmt.Errorf("%s: %w", n, err)
			}
		}()
	}
	wg.Wait()
	if failed != nil {
		fmt.Fprintln(os.Stderr, "auditbare:", failed)
		os.Exit(1)
	}
	fmt.Printf("nodes %d keys %d bytes %d in %v\n", len(nodes), keys, bytes, time.Since(start).Round(time.Millisecond))
}

type conn struct {
	w *bufio.Writer
	r *bufio.Reader
}

func dial(addr string) (*conn, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	return &conn{w: bufio.NewWriterSize(c, 64<<10), r: bufio.NewReaderSize(c, 64<<10)}, nil
}

func (c *conn) cmd(args ...string) {
	c.w.WriteString("*" + strconv.Itoa(len(args)) + "\r\n")
	for _, a := range args {
		c.w.WriteString("$" + strconv.Itoa(len(a)) + "\r\n")
		c.w.WriteString(a)
		c.w.WriteString("\r\n")
	}
}

// read returns a scalar reply as text, or an array's length with isArray.
func (c *conn) read() (s string, n int, isArray bool, err error) {
	line, err := c.r.ReadString('\n')
	if err != nil {
		return "", 0, false, err
	}
	line = strings.TrimSuffix(line, "\r\n")
	if line == "" {
		return "", 0, false, errors.New("empty reply")
	}
	switch line[0] {
	case '+', ':':
		return line[1:], 0, false, nil
	case '-':
		return "", 0, false, errors.New(line[1:])
	case '$':
		l, _ := strconv.Atoi(line[1:])
		if l < 0 {
			return "", 0, false, nil
		}
		b := make([]byte, l+2)
		if _, err := io.ReadFull(c.r, b); err != nil {
			return "", 0, false, err
		}
		return string(b[:l]), 0, false, nil
	case '*':
		l, _ := strconv.Atoi(line[1:])
		return "", l, true, nil
	}
	return "", 0, false, fmt.Errorf("unexpected %q", line)
}

func walk(addr, count, samples string) (keys, bytes int64, err error) {
	c, err := dial(addr)
	if err != nil {
		return 0, 0, err
	}
	cursor := "0"
	var batch []string
	scanning := true
	for scanning || len(batch) > 0 {
		if scanning {
			c.cmd("SCAN", cursor, "COUNT", count)
		}
		for _, k := range batch {
			c.cmd("TYPE", k)
			c.cmd("PTTL", k)
			c.cmd("MEMORY", "USAGE", k, "SAMPLES", samples)
		}
		if err := c.w.Flush(); err != nil {
			return keys, bytes, err
		}
		var next []string
		if scanning {
			if _, _, _, err := c.read(); err != nil { // *2
				return keys, bytes, err
			}
			if cursor, _, _, err = c.read(); err != nil {
				return keys, bytes, err
			}
			_, n, _, err := c.read()
			if err != nil {
				return keys, bytes, err
			}
			next = make([]string, n)
			for i := range next {
				if next[i], _, _, err = c.read(); err != nil {
					return keys, bytes, err
				}
			}
			scanning = cursor != "0"
		}
		for range batch {
			for j := range 3 {
				s, _, _, err := c.read()
				if err != nil {
					return keys, bytes, err
				}
				if j == 2 {
					m, _ := strconv.ParseInt(s, 10, 64)
					bytes += m
				}
			}
		}
		keys += int64(len(batch))
		batch = next
	}
	return keys, bytes, nil
}

// masters returns the addresses of the masters that serve slots.
func masters(seed string) ([]string, error) {
	c, err := dial(seed)
	if err != nil {
		return nil, err
	}
	c.cmd("CLUSTER", "NODES")
	if err := c.w.Flush(); err != nil {
		return nil, err
	}
	txt, _, _, err := c.read()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, line := range strings.Split(txt, "\n") {
		f := strings.Fields(line)
		if len(f) < 9 || !strings.Contains(f[2], "master") || strings.Contains(f[2], "fail") {
			continue
		}
		addr, _, _ := strings.Cut(f[1], "@")
		out = append(out, addr)
	}
	return out, nil
}
