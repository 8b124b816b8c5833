package audit

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// The walker speaks RESP2 itself instead of going through go-redis: a
// batch is thousands of tiny commands, and writing them straight into a
// buffer and reading the replies in place costs about a third of the
// client CPU of go-redis's pipeline (one Cmd object and boxed arguments per
// command). On a small machine that shares its cores with redis-server
// that difference is the difference between the audit and the bare scan.

// maxBulk bounds one bulk reply (redis' proto-max-bulk-len default).
const maxBulk = 512 << 20

// conn is one connection to one node, used by one goroutine.
type conn struct {
	nc      net.Conn
	bw      *bufio.Writer
	br      *bufio.Reader
	addr    string
	timeout time.Duration
	pending int    // commands buffered since the last take
	num     []byte // scratch for lengths
	bulk    []byte // scratch for bulk replies
	stop    func() bool
}

// errProtocol marks a reply that is not RESP2: the connection is unusable.
var errProtocol = errors.New("protocol error")

// serverError is an error reply (-ERR …, -NOPERM …, -MOVED …).
type serverError string

func (e serverError) Error() string { return string(e) }

// code is the first word of the error: ERR, NOPERM, MOVED, CLUSTERDOWN …
func (e serverError) code() string {
	c, _, _ := strings.Cut(string(e), " ")
	return c
}

// session is how a connection is set up.
type session struct {
	db       int
	readonly bool // a Cluster replica: READONLY
	noTouch  bool // CLIENT NO-TOUCH ON (Redis 7.2+): probes leave LRU/LFU clocks alone
	timeout  time.Duration
}

// dial connects to addr with the credentials, TLS and dial timeout of opt,
// names the connection keyguard-audit and applies s. ctx bounds the dial;
// afterwards cancelling ctx makes any blocked read or write on the
// connection fail at once.
func dial(ctx context.Context, opt *redis.Options, addr string, s session) (*conn, error) {
	dt := opt.DialTimeout
	if dt <= 0 {
		dt = 5 * time.Second
	}
	dctx, cancel := context.WithTimeout(ctx, dt)
	defer cancel()
	var nc net.Conn
	var err error
	if opt.Dialer != nil {
		nc, err = opt.Dialer(dctx, "tcp", addr)
	} else {
		var d net.Dialer
		nc, err = d.DialContext(dctx, "tcp", addr)
	}
	if err != nil {
		return nil, &ConnectError{Addr: addr, Err: err}
	}
	if opt.TLSConfig != nil {
		cfg := opt.TLSConfig.Clone()
		if cfg.ServerName == "" && !cfg.InsecureSkipVerify {
			cfg.ServerName, _, _ = net.SplitHostPort(addr)
		}
		tc := tls.Client(nc, cfg)
		if err := tc.HandshakeContext(dctx); err != nil {
			nc.Close()
			return nil, &ConnectError{Addr: addr, Err: fmt.Errorf("TLS handshake: %w", err)}
		}
		nc = tc
	}
	timeout := s.timeout
	if timeout <= 0 {
		timeout = DefaultIOTimeout
	}
	c := &conn{
		nc:      nc,
		bw:      bufio.NewWriterSize(nc, 64<<10),
		br:      bufio.NewReaderSize(nc, 64<<10),
		addr:    addr,
		timeout: timeout,
	}
	// Cancelling ctx unblocks reads and writes at once (Ctrl-C, --timeout).
	c.stop = context.AfterFunc(ctx, func() { _ = nc.SetDeadline(time.Unix(1, 0)) })
	if err := c.handshake(ctx, opt, s); err != nil {
		c.close()
		return nil, err
	}
	return c, nil
}

func (c *conn) handshake(ctx context.Context, opt *redis.Options, s session) error {
	if err := c.begin(ctx); err != nil {
		return &ConnectError{Addr: c.addr, Err: err}
	}
	user, pass := opt.Username, opt.Password
	if opt.CredentialsProvider != nil {
		user, pass = opt.CredentialsProvider()
	}
	const (
		auth = iota + 1
		setname
		sel
		readonly
		notouch
	)
	var sent []int
	if pass != "" {
		if user != "" {
			c.cmd("AUTH", user, pass)
		} else {
			c.cmd("AUTH", pass)
		}
		sent = append(sent, auth)
	}
	c.cmd("CLIENT", "SETNAME", "keyguard-audit")
	sent = append(sent, setname)
	if s.db != 0 {
		c.cmd("SELECT", strconv.Itoa(s.db))
		sent = append(sent, sel)
	}
	if s.readonly {
		c.cmd("READONLY")
		sent = append(sent, readonly)
	}
	if s.noTouch {
		c.cmd("CLIENT", "NO-TOUCH", "ON")
		sent = append(sent, notouch)
	}
	c.take()
	if err := c.flush(); err != nil {
		return &ConnectError{Addr: c.addr, Err: err}
	}
	var first error
	for _, what := range sent {
		rp, err := c.read()
		if err == nil {
			err = c.skip(rp)
		}
		if err != nil {
			return &ConnectError{Addr: c.addr, Err: err}
		}
		if rp.kind != '-' || first != nil {
			continue
		}
		se := serverError(rp.str)
		switch {
		case what == auth, se.code() == "NOAUTH", se.code() == "WRONGPASS":
			first = &ConnectError{Addr: c.addr, Err: se, Auth: true}
		case what == setname, what == notouch:
			// Courtesies: an ACL may leave them out (the preflight notes it).
		case what == sel:
			first = &ConnectError{Addr: c.addr, Err: fmt.Errorf("SELECT %d: %w", s.db, se)}
		default:
			first = &ConnectError{Addr: c.addr, Err: se}
		}
	}
	return first
}

func (c *conn) close() {
	if c.stop != nil {
		c.stop()
	}
	c.nc.Close()
}

// cmd buffers one command.
func (c *conn) cmd(args ...string) {
	c.num = append(c.num[:0], '*')
	c.num = strconv.AppendInt(c.num, int64(len(args)), 10)
	c.num = append(c.num, '\r', '\n')
	c.bw.Write(c.num)
	for _, a := range args {
		c.num = append(c.num[:0], '$')
		c.num = strconv.AppendInt(c.num, int64(len(a)), 10)
		c.num = append(c.num, '\r', '\n')
		c.bw.Write(c.num)
		c.bw.WriteString(a)
		c.bw.WriteString("\r\n")
	}
	c.pending++
}

// keyCmd is a command with one key argument, encoded once around the
// key: most of a batch is the same few commands on different keys.
type keyCmd struct{ pre, post string }

// newKeyCmd encodes the words before and after the key.
func newKeyCmd(before []string, after ...string) keyCmd {
	enc := func(words []string) string {
		var b []byte
		for _, w := range words {
			b = append(b, '$')
			b = strconv.AppendInt(b, int64(len(w)), 10)
			b = append(b, "\r\n"...)
			b = append(b, w...)
			b = append(b, "\r\n"...)
		}
		return string(b)
	}
	head := "*" + strconv.Itoa(len(before)+1+len(after)) + "\r\n"
	return keyCmd{pre: head + enc(before), post: enc(after)}
}

// key buffers k applied to key.
func (c *conn) key(k keyCmd, key string) {
	c.bw.WriteString(k.pre)
	c.num = append(c.num[:0], '$')
	c.num = strconv.AppendInt(c.num, int64(len(key)), 10)
	c.num = append(c.num, '\r', '\n')
	c.bw.Write(c.num)
	c.bw.WriteString(key)
	c.bw.WriteString("\r\n")
	c.bw.WriteString(k.post)
	c.pending++
}

// begin starts a round trip: its deadline covers writing the commands
// (the buffer may fill and write before flush), flushing and reading the
// replies.
func (c *conn) begin(ctx context.Context) error {
	if err := c.nc.SetDeadline(time.Now().Add(c.timeout)); err != nil {
		return err
	}
	// After SetDeadline: a cancel that fired before it would be undone.
	return ctx.Err()
}

// flush sends the buffered commands; their replies are then read with
// read, one per command, in order (take says how many).
func (c *conn) flush() error { return c.bw.Flush() }

// simple runs one command and returns its status or bulk reply as text;
// an error reply is a serverError.
func (c *conn) simple(ctx context.Context, args ...string) (string, error) {
	if err := c.begin(ctx); err != nil {
		return "", err
	}
	c.cmd(args...)
	c.take()
	if err := c.flush(); err != nil {
		return "", err
	}
	rp, err := c.read()
	if err != nil {
		return "", err
	}
	switch rp.kind {
	case '-':
		return "", serverError(rp.str)
	case '+', '$':
		return string(rp.str), nil
	case ':':
		return strconv.FormatInt(rp.n, 10), nil
	}
	if err := c.skip(rp); err != nil {
		return "", err
	}
	return "", fmt.Errorf("%w: unexpected reply to %s", errProtocol, args[0])
}

// info runs INFO (the default sections: server, replication, memory,
// keyspace, cluster …).
func (c *conn) info(ctx context.Context) (info, error) {
	s, err := c.simple(ctx, "INFO")
	if err != nil {
		return nil, err
	}
	return parseInfo(s), nil
}

// reply is one RESP2 reply. For '*' n is the number of elements, read
// next with read; str is valid until the next read.
type reply struct {
	kind byte // '+' status, '-' error, ':' integer, '$' bulk, '*' array, 0 null
	n    int64
	str  []byte
}

// read reads one reply. Errors are network or protocol errors; an error
// reply is a reply of kind '-'.
func (c *conn) read() (reply, error) {
	line, err := c.line()
	if err != nil {
		return reply{}, err
	}
	if len(line) == 0 {
		return reply{}, fmt.Errorf("%w: empty line", errProtocol)
	}
	switch line[0] {
	case '+', '-':
		return reply{kind: line[0], str: line[1:]}, nil
	case ':':
		n, ok := parseInt(line[1:])
		if !ok {
			return reply{}, fmt.Errorf("%w: bad integer %q", errProtocol, clipBytes(line))
		}
		return reply{kind: ':', n: n}, nil
	case '$':
		n, ok := parseInt(line[1:])
		if !ok || n < -1 || n > maxBulk {
			return reply{}, fmt.Errorf("%w: bad bulk length %q", errProtocol, clipBytes(line))
		}
		if n == -1 {
			return reply{}, nil
		}
		b, err := c.readBulk(int(n) + 2)
		if err != nil {
			return reply{}, err
		}
		if b[n] != '\r' || b[n+1] != '\n' {
			return reply{}, fmt.Errorf("%w: bulk without CRLF", errProtocol)
		}
		return reply{kind: '$', n: n, str: b[:n]}, nil
	case '*':
		n, ok := parseInt(line[1:])
		if !ok || n < -1 || n > maxBulk {
			return reply{}, fmt.Errorf("%w: bad array length %q", errProtocol, clipBytes(line))
		}
		if n == -1 {
			return reply{}, nil
		}
		return reply{kind: '*', n: n}, nil
	}
	return reply{}, fmt.Errorf("%w: unexpected %q", errProtocol, clipBytes(line))
}

// readBulk reads need bytes into the scratch buffer, growing it as the
// bytes arrive, so that a bogus length cannot allocate 512 MB up front.
func (c *conn) readBulk(need int) ([]byte, error) {
	const step = 1 << 20
	b := c.bulk[:0]
	for len(b) < need {
		chunk := min(need-len(b), step)
		b = slices.Grow(b, chunk)
		if _, err := io.ReadFull(c.br, b[len(b):len(b)+chunk]); err != nil {
			return nil, err
		}
		b = b[:len(b)+chunk]
	}
	c.bulk = b
	return b, nil
}

// take returns the number of commands buffered since the last take: the
// replies to read after flush.
func (c *conn) take() int {
	n := c.pending
	c.pending = 0
	return n
}

// line reads one CRLF-terminated line without the CRLF. The slice is
// valid until the next read.
func (c *conn) line() ([]byte, error) {
	l, err := c.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		// A line longer than the buffer: only a huge error or status.
		long := append([]byte(nil), l...)
		for errors.Is(err, bufio.ErrBufferFull) {
			if len(long) > maxBulk {
				return nil, fmt.Errorf("%w: line over %d bytes", errProtocol, maxBulk)
			}
			l, err = c.br.ReadSlice('\n')
			long = append(long, l...)
		}
		l = long
	}
	if err != nil {
		return nil, err
	}
	if len(l) < 2 || l[len(l)-2] != '\r' {
		return nil, fmt.Errorf("%w: line without CRLF", errProtocol)
	}
	return l[:len(l)-2], nil
}

// skip reads and discards one reply with everything nested in it.
func (c *conn) skip(rp reply) error {
	for i := int64(0); rp.kind == '*' && i < rp.n; i++ {
		e, err := c.read()
		if err != nil {
			return err
		}
		if err := c.skip(e); err != nil {
			return err
		}
	}
	return nil
}

func parseInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	neg := b[0] == '-'
	if neg {
		b = b[1:]
		if len(b) == 0 {
			return 0, false
		}
	}
	var n int64
	for _, ch := range b {
		if ch < '0' || ch > '9' {
			return 0, false
		}
		d := int64(ch - '0')
		if n > (1<<63-1-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	if neg {
		n = -n
	}
	return n, true
}

func clipBytes(b []byte) string {
	if len(b) > 64 {
		return string(b[:64]) + "…"
	}
	return string(b)
}
