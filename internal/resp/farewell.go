package resp

import (
	"bufio"
	"context"
	"errors"
	"io"
	"strings"
	"syscall"
	"time"
)

// HungUp is a server that closed a new connection after an error reply:
// Redis does so to a client over its maxclients, and in protected mode to
// a client from another host. A client that wrote its first command sees
// only the hang-up ("broken pipe", a reset, EOF); Said is what the
// server told a connection that waited for it (Farewell).
type HungUp struct {
	Said string
	Err  error // the hang-up
}

func (e *HungUp) Error() string {
	const pre = "the server closed the connection: "
	switch {
	case strings.Contains(e.Said, "max number of clients"):
		return pre + e.Said + " (it serves as many clients as its maxclients setting allows: close idle clients, or raise maxclients, and run again)"
	case strings.HasPrefix(e.Said, "DENIED"):
		// Its own text is a page long.
		return pre + "DENIED, protected mode: while its default user has no password, Redis serves clients of its own host only; give the default user a password (and keyguard the URL with it), or run keyguard on the server's host"
	}
	return pre + e.Said
}

func (e *HungUp) Unwrap() error { return e.Err }

// farewellReply reports whether an error reply is one Redis sends a
// client it will not serve, before closing the connection: a client that
// read it took it for the reply to its first command.
func farewellReply(msg string) bool {
	return strings.HasPrefix(msg, "ERR max number of clients reached") || strings.HasPrefix(msg, "DENIED ")
}

// SaidFarewell is err as a HungUp when it is such a reply read as the
// answer to a first command (go-redis's PING, an AUTH), else err.
func SaidFarewell(err error) error {
	var hu *HungUp
	if err == nil || errors.As(err, &hu) || !farewellReply(err.Error()) {
		return err
	}
	return &HungUp{Said: err.Error(), Err: err}
}

// HangUp reports whether err is a connection the other end closed or
// reset.
func HangUp(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET)
}

// farewellWait is how long Farewell waits for a server to speak first.
const farewellWait = 300 * time.Millisecond

// Farewell connects to addr as cfg says, writes nothing, and returns the
// error reply the server sends a client it will not serve before closing
// the connection; "" when it says nothing at once (it serves clients),
// cannot be reached, or says something else.
func Farewell(ctx context.Context, cfg Config, addr string) string {
	ctx, cancel := context.WithTimeout(ctx, farewellWait+max(cfg.DialTimeout, time.Second))
	defer cancel()
	nc, err := connect(ctx, cfg, addr)
	if err != nil {
		return ""
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(farewellWait))
	line, _ := bufio.NewReaderSize(nc, 512).ReadString('\n')
	if len(line) < 2 || line[0] != '-' || !strings.HasSuffix(line, "\r\n") {
		return ""
	}
	return strings.TrimSuffix(line[1:], "\r\n")
}

// hungUp is err, or a HungUp saying why, when the server hung up in the
// connection's first round trips (the handshake, the first command).
func (c *Conn) hungUp(err error) error {
	if c.rounds > 2 || c.nc == nil || !HangUp(err) {
		return err
	}
	if said := Farewell(context.Background(), c.cfg, c.addr); said != "" {
		return &HungUp{Said: said, Err: err}
	}
	return err
}
