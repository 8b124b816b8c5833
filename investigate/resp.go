package investigate

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// respConn is a connection of our own for MONITOR, spoken in RESP2
// directly: go-redis's MonitorCmd cannot bound what it reads, and a
// connection we own is one we know we closed.
type respConn struct {
	nc net.Conn
	r  *bufio.Reader
}

// maxLine bounds one MONITOR line kept in memory; the rest of a longer
// line (a multi-megabyte SET) is read and dropped.
const maxLine = 1 << 20

// dialRESP connects to addr with the credentials, TLS and dialer of opt,
// names the connection and returns it with its CLIENT ID.
func dialRESP(ctx context.Context, opt *redis.Options, addr, name string) (*respConn, int64, error) {
	dial := opt.Dialer
	if dial == nil {
		o := *opt
		dial = o.NewDialer()
	}
	network := opt.Network
	if network == "" {
		network = "tcp"
	}
	nc, err := dial(ctx, network, addr)
	if err != nil {
		return nil, 0, fmt.Errorf("connect to %s: %w", addr, err)
	}
	c := &respConn{nc: nc, r: bufio.NewReaderSize(nc, 1<<16)}
	if dl, ok := ctx.Deadline(); ok {
		nc.SetDeadline(dl)
	} else {
		nc.SetDeadline(time.Now().Add(10 * time.Second))
	}
	user, pass := opt.Username, opt.Password
	if opt.CredentialsProvider != nil {
		user, pass = opt.CredentialsProvider()
	}
	if opt.CredentialsProviderContext != nil {
		if user, pass, err = opt.CredentialsProviderContext(ctx); err != nil {
			nc.Close()
			return nil, 0, fmt.Errorf("credentials for %s: %w", addr, err)
		}
	}
	var steps [][]string
	switch {
	case user != "":
		steps = append(steps, []string{"AUTH", user, pass})
	case pass != "":
		steps = append(steps, []string{"AUTH", pass})
	}
	steps = append(steps, []string{"CLIENT", "SETNAME", name})
	for _, s := range steps {
		if _, err := c.do(s...); err != nil {
			nc.Close()
			return nil, 0, fmt.Errorf("%s on %s: %w", s[0], addr, err)
		}
	}
	id, err := c.do("CLIENT", "ID")
	if err != nil {
		nc.Close()
		return nil, 0, fmt.Errorf("CLIENT ID on %s: %w", addr, err)
	}
	n, _ := strconv.ParseInt(id, 10, 64)
	nc.SetDeadline(time.Time{})
	return c, n, nil
}

// serverError is an error reply.
type serverError string

func (e serverError) Error() string { return string(e) }

// do sends one command and reads a simple, integer or bulk reply.
func (c *respConn) do(args ...string) (string, error) {
	buf := make([]byte, 0, 64)
	buf = append(buf, '*')
	buf = strconv.AppendInt(buf, int64(len(args)), 10)
	buf = append(buf, '\r', '\n')
	for _, a := range args {
		buf = append(buf, '$')
		buf = strconv.AppendInt(buf, int64(len(a)), 10)
		buf = append(buf, '\r', '\n')
		buf = append(buf, a...)
		buf = append(buf, '\r', '\n')
	}
	if _, err := c.nc.Write(buf); err != nil {
		return "", err
	}
	line, err := c.r.ReadString('\n')
	if err != nil {
		return "", err
	}
	if len(line) < 3 {
		return "", fmt.Errorf("short reply %q", line)
	}
	body := line[1 : len(line)-2]
	switch line[0] {
	case '+', ':':
		return body, nil
	case '-':
		return "", serverError(body)
	case '$':
		n, err := strconv.Atoi(body)
		if err != nil || n < 0 {
			return "", err
		}
		b := make([]byte, n+2)
		if _, err := io.ReadFull(c.r, b); err != nil {
			return "", err
		}
		return string(b[:n]), nil
	}
	return "", fmt.Errorf("unexpected reply %q", line)
}

// readLine reads one simple-string push of MONITOR without its "+" and
// CRLF. size is the bytes the line took on the wire; cut is true when the
// line was longer than maxLine and only its start is returned.
func (c *respConn) readLine() (line string, size int, cut bool, err error) {
	b, err := c.r.ReadSlice('\n')
	size = len(b)
	if errors.Is(err, bufio.ErrBufferFull) {
		acc := append([]byte(nil), b...)
		for errors.Is(err, bufio.ErrBufferFull) {
			b, err = c.r.ReadSlice('\n')
			size += len(b)
			room := maxLine - len(acc)
			if len(b) > room {
				b, cut = b[:max(room, 0)], true
			}
			acc = append(acc, b...)
		}
		b = acc
	}
	if err != nil {
		return "", size, cut, err
	}
	if len(b) < 3 {
		return "", size, cut, fmt.Errorf("short MONITOR line %q", b)
	}
	if b[0] == '-' {
		return "", size, cut, serverError(string(b[1 : len(b)-2]))
	}
	end := len(b)
	if !cut {
		end -= 2 // CRLF
	}
	return string(b[1:end]), size, cut, nil
}

func (c *respConn) close() error { return c.nc.Close() }
