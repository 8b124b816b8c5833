// Package resp is keyguard's own RESP2 client: the live audit's and the
// bench tools' pipelines, and the bounded MONITOR streams of investigate
// and hotkeys. Commands are written straight into a buffer, replies read
// in place, one connection per goroutine. A batch of thousands of tiny
// commands costs about a third of the client CPU of go-redis's pipeline.
//
//	c, err := resp.Dial(ctx, resp.Config{Password: pw}, "127.0.0.1:6379", resp.Session{Name: "keyguard-audit"})
//	c.Begin(ctx); c.Cmd("SCAN", "0"); n := c.Take(); c.Flush()
//	for range n { rp, err := c.Read(); … c.Skip(rp) }
//
// A stream: c.Simple(ctx, "MONITOR"), c.BeginUntil(ctx, end), then
// c.ReadLine(max) until it fails. Package redisopt makes a Config from a
// go-redis client's options.
//
// It imports no package of this module.
package resp

import (
	"bufio"
	"bytes"
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
)

// maxBulk bounds one bulk reply (redis' proto-max-bulk-len default).
const maxBulk = 512 << 20

// Conn is one connection to one node, used by one goroutine.
type Conn struct {
	nc      net.Conn
	w       io.Writer // nc; a buffer in tests
	out     []byte    // commands not yet written
	werr    error     // the first write error, returned by Flush
	br      *bufio.Reader
	addr    string
	cfg     Config // for Farewell
	rounds  int    // round trips begun: a hang-up in the first two asks why
	timeout time.Duration
	pending int    // commands buffered since the last Take
	bulk    []byte // scratch for bulk replies
	long    []byte // scratch for stream lines longer than the buffer
	stop    func() bool
	// win is what br held when the fast path last looked (a Peek), read
	// up to off: br still owes Discard(off), done by sync before anything
	// else reads br.
	win []byte
	off int
}

// ErrProtocol marks a reply that is not RESP2: the connection is unusable.
var ErrProtocol = errors.New("protocol error")

// ServerError is an error reply (-ERR …, -NOPERM …, -MOVED …).
type ServerError string

func (e ServerError) Error() string { return string(e) }

// Code is the first word of the error: ERR, NOPERM, MOVED, CLUSTERDOWN …
func (e ServerError) Code() string {
	c, _, _ := strings.Cut(string(e), " ")
	return c
}

// Config is what every connection of a run shares: credentials, TLS,
// how to dial.
type Config struct {
	Username, Password string
	// Network is "tcp" (when empty) or "unix" (addr is then the socket's path).
	Network     string
	TLS         *tls.Config // nil: no TLS
	DialTimeout time.Duration
	// Dialer, when set, opens the connection (a proxy, a test); TLS, when
	// set, is still done on top of it.
	Dialer func(ctx context.Context, network, addr string) (net.Conn, error)
}

// Session is how one connection is set up.
type Session struct {
	Name     string // CLIENT SETNAME
	DB       int
	ReadOnly bool // a Cluster replica: READONLY
	NoTouch  bool // CLIENT NO-TOUCH ON (Redis 7.2+): probes leave LRU/LFU clocks alone
	Timeout  time.Duration
}

// DefaultTimeout bounds one round trip when Session.Timeout is 0.
const DefaultTimeout = 30 * time.Second

// ConnectError is a node that could not be reached or refused the
// credentials.
type ConnectError struct {
	Addr string
	Auth bool // the server refused the credentials
	Err  error
}

func (e *ConnectError) Error() string {
	if e.Auth {
		return fmt.Sprintf("%s: authentication failed: %v", e.Addr, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Addr, e.Err)
}

func (e *ConnectError) Unwrap() error { return e.Err }

// Unreachable reports whether err holds a *ConnectError of a server that
// could not be reached (refused, no answer), as opposed to one that
// refused the credentials.
func Unreachable(err error) bool {
	var ce *ConnectError
	return errors.As(err, &ce) && !ce.Auth
}

// connect opens addr as cfg says (its network, its dialer, then TLS on
// top when it has it); ctx bounds both.
func connect(ctx context.Context, cfg Config, addr string) (net.Conn, error) {
	network := cfg.Network
	if network == "" {
		network = "tcp"
	}
	var nc net.Conn
	var err error
	if cfg.Dialer != nil {
		nc, err = cfg.Dialer(ctx, network, addr)
	} else {
		var d net.Dialer
		nc, err = d.DialContext(ctx, network, addr)
	}
	if err != nil {
		return nil, err
	}
	if cfg.TLS != nil {
		tcfg := cfg.TLS.Clone()
		if tcfg.ServerName == "" && !tcfg.InsecureSkipVerify {
			tcfg.ServerName, _, _ = net.SplitHostPort(addr)
		}
		tc := tls.Client(nc, tcfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			nc.Close()
			return nil, fmt.Errorf("TLS handshake: %w", err)
		}
		nc = tc
	}
	return nc, nil
}

// Dial connects to addr with the credentials, TLS and dial timeout of cfg
// and applies s. ctx bounds the dial; afterwards cancelling ctx makes any
// blocked read or write on the connection fail at once.
func Dial(ctx context.Context, cfg Config, addr string, s Session) (*Conn, error) {
	dt := cfg.DialTimeout
	if dt <= 0 {
		dt = 5 * time.Second
	}
	dctx, cancel := context.WithTimeout(ctx, dt)
	defer cancel()
	nc, err := connect(dctx, cfg, addr)
	if err != nil {
		return nil, &ConnectError{Addr: addr, Err: err}
	}
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	c := &Conn{
		nc:      nc,
		w:       nc,
		out:     make([]byte, 0, writeAt+4<<10),
		br:      bufio.NewReaderSize(nc, 64<<10),
		addr:    addr,
		cfg:     cfg,
		timeout: timeout,
	}
	// Cancelling ctx unblocks reads and writes at once (Ctrl-C, --timeout).
	c.stop = context.AfterFunc(ctx, func() { _ = nc.SetDeadline(time.Unix(1, 0)) })
	if err := c.handshake(ctx, cfg, s); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func (c *Conn) handshake(ctx context.Context, cfg Config, s Session) error {
	if err := c.Begin(ctx); err != nil {
		return &ConnectError{Addr: c.addr, Err: err}
	}
	user, pass := cfg.Username, cfg.Password
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
			c.Cmd("AUTH", user, pass)
		} else {
			c.Cmd("AUTH", pass)
		}
		sent = append(sent, auth)
	}
	if s.Name != "" {
		c.Cmd("CLIENT", "SETNAME", s.Name)
		sent = append(sent, setname)
	}
	if s.DB != 0 {
		c.Cmd("SELECT", strconv.Itoa(s.DB))
		sent = append(sent, sel)
	}
	if s.ReadOnly {
		c.Cmd("READONLY")
		sent = append(sent, readonly)
	}
	if s.NoTouch {
		c.Cmd("CLIENT", "NO-TOUCH", "ON")
		sent = append(sent, notouch)
	}
	c.Take()
	if err := c.Flush(); err != nil {
		return &ConnectError{Addr: c.addr, Err: err}
	}
	var first error
	for _, what := range sent {
		rp, err := c.Read()
		if err == nil {
			err = c.Skip(rp)
		}
		if err != nil {
			return &ConnectError{Addr: c.addr, Err: err}
		}
		if rp.Kind != '-' || first != nil {
			continue
		}
		se := ServerError(rp.Str)
		switch {
		case farewellReply(string(se)):
			// Not an answer to AUTH: the server's reason for hanging up.
			first = &ConnectError{Addr: c.addr, Err: &HungUp{Said: string(se), Err: se}}
		case what == auth, se.Code() == "NOAUTH", se.Code() == "WRONGPASS":
			first = &ConnectError{Addr: c.addr, Err: se, Auth: true}
		case what == setname, what == notouch:
			// Courtesies: an ACL may leave them out (the preflight notes it).
		case what == sel:
			first = &ConnectError{Addr: c.addr, Err: fmt.Errorf("SELECT %d: %w", s.DB, se)}
		default:
			first = &ConnectError{Addr: c.addr, Err: se}
		}
	}
	return first
}

func (c *Conn) Close() {
	if c.stop != nil {
		c.stop()
	}
	c.nc.Close()
}

// writeAt is how many buffered bytes are written before Flush: the
// server starts on a long pipeline while the rest is encoded.
const writeAt = 64 << 10

// Cmd buffers one command.
func (c *Conn) Cmd(args ...string) {
	c.out = appendLen(c.out, '*', len(args))
	for _, a := range args {
		c.out = appendLen(c.out, '$', len(a))
		c.out = append(c.out, a...)
		c.out = append(c.out, '\r', '\n')
	}
	c.pending++
	c.spill()
}

// spill writes the buffer once it holds writeAt bytes; a write error is
// kept for Flush.
func (c *Conn) spill() {
	if len(c.out) >= writeAt {
		c.write()
	}
}

// Buffered is the size in bytes of the commands buffered and not yet
// written.
func (c *Conn) Buffered() int { return len(c.out) }

// Push writes the commands buffered so far without waiting for more (a
// write error is kept for Flush): a caller that still has commands to
// encode lets an idle server start on the first ones.
func (c *Conn) Push() { c.write() }

func (c *Conn) write() {
	if c.werr == nil && len(c.out) > 0 {
		_, c.werr = c.w.Write(c.out)
	}
	c.out = c.out[:0]
}

// appendLen appends a RESP length line: kind ('*' array, '$' bulk), n,
// CRLF.
func appendLen(b []byte, kind byte, n int) []byte {
	b = append(b, kind)
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, '\r', '\n')
}

// KeyCmd is a command with one key argument, encoded once around the
// key: most of a batch is the same few commands on different keys.
type KeyCmd struct{ pre, post string }

// NewKeyCmd encodes the words before and after the key.
func NewKeyCmd(before []string, after ...string) KeyCmd {
	enc := func(b []byte, words []string) []byte {
		for _, w := range words {
			b = appendLen(b, '$', len(w))
			b = append(b, w...)
			b = append(b, "\r\n"...)
		}
		return b
	}
	pre := enc(appendLen(nil, '*', len(before)+1+len(after)), before)
	return KeyCmd{pre: string(pre), post: string(enc(nil, after))}
}

// Key buffers k applied to key: appends into one buffer, the most
// frequent call of an audit.
func (c *Conn) Key(k KeyCmd, key string) {
	b := append(c.out, k.pre...)
	b = appendLen(b, '$', len(key))
	b = append(b, key...)
	b = append(b, '\r', '\n')
	c.out = append(b, k.post...)
	c.pending++
	c.spill()
}

// Begin starts a round trip: its deadline covers writing the commands
// (the buffer may fill and write before flush), flushing and reading the
// replies.
func (c *Conn) Begin(ctx context.Context) error { return c.BeginUntil(ctx, time.Now().Add(c.timeout)) }

// BeginUntil is Begin with a deadline of the caller's: a stream read
// until a time (MONITOR for ten seconds) fails with a timeout error then.
func (c *Conn) BeginUntil(ctx context.Context, deadline time.Time) error {
	c.rounds++
	if err := c.nc.SetDeadline(deadline); err != nil {
		return err
	}
	// After SetDeadline: a cancel that fired before it would be undone.
	return ctx.Err()
}

// Flush sends the buffered commands; their replies are then read with
// Read, one per command, in order (Take says how many).
func (c *Conn) Flush() error {
	c.write()
	err := c.werr
	c.werr = nil
	if err != nil {
		return c.hungUp(err)
	}
	return nil
}

// Simple runs one command and returns its status or bulk reply as text;
// an error reply is a ServerError.
func (c *Conn) Simple(ctx context.Context, args ...string) (string, error) {
	if err := c.Begin(ctx); err != nil {
		return "", err
	}
	c.Cmd(args...)
	c.Take()
	if err := c.Flush(); err != nil {
		return "", err
	}
	rp, err := c.Read()
	if err != nil {
		return "", err
	}
	switch rp.Kind {
	case '-':
		if c.rounds <= 2 {
			return "", SaidFarewell(ServerError(rp.Str))
		}
		return "", ServerError(rp.Str)
	case '+', '$':
		return string(rp.Str), nil
	case ':':
		return strconv.FormatInt(rp.N, 10), nil
	}
	if err := c.Skip(rp); err != nil {
		return "", err
	}
	return "", fmt.Errorf("%w: unexpected reply to %s", ErrProtocol, args[0])
}

// ConfigGet reads one CONFIG GET parameter; a parameter the server does
// not have is an error that names it, a refusal a ServerError.
func (c *Conn) ConfigGet(ctx context.Context, name string) (string, error) {
	v, err := c.ConfigGets(ctx, name)
	if err != nil {
		return "", err
	}
	got, ok := v[name]
	if !ok {
		return "", fmt.Errorf("no %s", name)
	}
	return got, nil
}

// ConfigGets reads CONFIG GET parameters in one round trip: the values of
// those the server has (one it does not have is left out, as an older
// server leaves out a newer parameter). A refusal of any is a
// ServerError, returned once every reply is read.
func (c *Conn) ConfigGets(ctx context.Context, names ...string) (map[string]string, error) {
	if err := c.Begin(ctx); err != nil {
		return nil, err
	}
	for _, n := range names {
		c.Cmd("CONFIG", "GET", n)
	}
	c.Take()
	if err := c.Flush(); err != nil {
		return nil, err
	}
	vals := map[string]string{}
	var refused error
	for _, n := range names {
		rp, err := c.Read()
		switch {
		case err != nil:
			return nil, err
		case rp.Kind == '-':
			if refused == nil {
				refused = ServerError(rp.Str)
			}
			continue
		case rp.Kind != '*' || rp.N != 2:
			if err := c.Skip(rp); err != nil {
				return nil, err
			}
			continue
		}
		if _, err := c.Read(); err != nil {
			return nil, err
		}
		v, err := c.Read()
		if err != nil {
			return nil, err
		}
		vals[n] = string(v.Str)
	}
	if refused != nil {
		return nil, refused
	}
	return vals, nil
}

// Reply is one RESP2 reply. For '*' N is the number of elements, read
// next with Read; Str is valid until the next Read.
type Reply struct {
	Kind byte // '+' status, '-' error, ':' integer, '$' bulk, '*' array, 0 null
	N    int64
	Str  []byte
}

// readLine is Read's general path: a line at a time, then a bulk's bytes.
func (c *Conn) readLine() (Reply, error) {
	c.sync()
	line, err := c.line()
	if err != nil {
		return Reply{}, c.hungUp(err)
	}
	if len(line) == 0 {
		return Reply{}, fmt.Errorf("%w: empty line", ErrProtocol)
	}
	switch line[0] {
	case '+', '-':
		return Reply{Kind: line[0], Str: line[1:]}, nil
	case ':':
		n, ok := ParseInt(line[1:])
		if !ok {
			return Reply{}, fmt.Errorf("%w: bad integer %q", ErrProtocol, clipBytes(line))
		}
		return Reply{Kind: ':', N: n}, nil
	case '$':
		n, ok := ParseInt(line[1:])
		if !ok || n < -1 || n > maxBulk {
			return Reply{}, fmt.Errorf("%w: bad bulk length %q", ErrProtocol, clipBytes(line))
		}
		if n == -1 {
			return Reply{}, nil
		}
		b, err := c.bulkBytes(int(n) + 2)
		if err != nil {
			return Reply{}, err
		}
		if b[n] != '\r' || b[n+1] != '\n' {
			return Reply{}, fmt.Errorf("%w: bulk without CRLF", ErrProtocol)
		}
		return Reply{Kind: '$', N: n, Str: b[:n]}, nil
	case '*':
		n, ok := ParseInt(line[1:])
		if !ok || n < -1 || n > maxBulk {
			return Reply{}, fmt.Errorf("%w: bad array length %q", ErrProtocol, clipBytes(line))
		}
		if n == -1 {
			return Reply{}, nil
		}
		return Reply{Kind: '*', N: n}, nil
	}
	return Reply{}, fmt.Errorf("%w: unexpected %q", ErrProtocol, clipBytes(line))
}

// Read reads one reply. Errors are network or protocol errors; an error
// reply is a reply of kind '-'.
//
// A well-formed reply that is whole in the read buffer is read straight
// from it, without a call per line: most replies of a pipeline are.
// Anything else (a reply cut by the buffer's end, a long number, a
// malformed reply) goes to the general path, readLine, which reads it
// from the same place.
func (c *Conn) Read() (Reply, error) {
	b := c.win[c.off:]
	if len(b) == 0 {
		c.sync()
		b, _ = c.br.Peek(c.br.Buffered())
		if len(b) == 0 {
			if _, err := c.br.Peek(1); err != nil { // wait for the server
				return c.readLine()
			}
			b, _ = c.br.Peek(c.br.Buffered())
		}
		c.win = b
	}
	if len(b) < 3 {
		return c.readLine()
	}
	kind := b[0]
	switch kind {
	case '+', '-':
		i := bytes.IndexByte(b, '\n')
		if i < 2 || b[i-1] != '\r' {
			return c.readLine()
		}
		c.off += i + 1
		return Reply{Kind: kind, Str: b[1 : i-1]}, nil
	case ':', '$', '*':
	default:
		return c.readLine()
	}
	i, neg := 1, b[1] == '-'
	if neg {
		i++
	}
	start := i
	var n int64
	for ; i < len(b) && i-start < 18 && '0' <= b[i] && b[i] <= '9'; i++ {
		n = n*10 + int64(b[i]-'0')
	}
	if i == start || i+1 >= len(b) || b[i] != '\r' || b[i+1] != '\n' {
		return c.readLine()
	}
	if neg {
		n = -n
	}
	head := i + 2
	switch {
	case kind == ':':
		c.off += head
		return Reply{Kind: ':', N: n}, nil
	case n == -1:
		c.off += head
		return Reply{}, nil
	case n < 0 || n > maxBulk:
		return c.readLine()
	case kind == '*':
		c.off += head
		return Reply{Kind: '*', N: n}, nil
	}
	end := head + int(n)
	if end+2 > len(b) || b[end] != '\r' || b[end+1] != '\n' {
		return c.readLine()
	}
	c.off += end + 2
	return Reply{Kind: '$', N: n, Str: b[head:end]}, nil
}

// sync hands br what the fast path read of its window.
func (c *Conn) sync() {
	if c.off > 0 {
		c.br.Discard(c.off)
	}
	c.win, c.off = nil, 0
}

// bulkBytes returns the next need bytes: in place in the read buffer
// when they fit there (valid until the next Read, as a line is), else
// copied into the scratch buffer.
func (c *Conn) bulkBytes(need int) ([]byte, error) {
	if need > c.br.Size() {
		return c.readBulk(need)
	}
	b, err := c.br.Peek(need)
	if err != nil {
		return nil, err
	}
	// Peek returned need bytes: Discard only moves the read position.
	c.br.Discard(need)
	return b, nil
}

// readBulk reads need bytes into the scratch buffer, growing it as the
// bytes arrive, so that a bogus length cannot allocate 512 MB up front.
func (c *Conn) readBulk(need int) ([]byte, error) {
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

// Take returns the number of commands buffered since the last Take: the
// replies to read after Flush.
func (c *Conn) Take() int {
	n := c.pending
	c.pending = 0
	return n
}

// line reads one CRLF-terminated line without the CRLF. The slice is
// valid until the next read.
func (c *Conn) line() ([]byte, error) {
	l, err := c.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		// A line longer than the buffer: only a huge error or status.
		long := append([]byte(nil), l...)
		for errors.Is(err, bufio.ErrBufferFull) {
			if len(long) > maxBulk {
				return nil, fmt.Errorf("%w: line over %d bytes", ErrProtocol, maxBulk)
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
		return nil, fmt.Errorf("%w: line without CRLF", ErrProtocol)
	}
	return l[:len(l)-2], nil
}

// Skip reads and discards what is nested in rp (the elements of an
// array reply, recursively); rp itself has been read.
func (c *Conn) Skip(rp Reply) error {
	for i := int64(0); rp.Kind == '*' && i < rp.N; i++ {
		e, err := c.Read()
		if err != nil {
			return err
		}
		if err := c.Skip(e); err != nil {
			return err
		}
	}
	return nil
}

// ParseInt parses a RESP integer (what strconv.ParseInt does, on bytes, without allocating).
func ParseInt(b []byte) (int64, bool) {
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
