package resp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// eofMarkLen is the length of the mark that ends a diskless transfer.
const eofMarkLen = 40

// Payload is the RDB snapshot a server sends over a replication link,
// read as the bytes of an RDB file.
type Payload struct {
	c    *Conn
	ctx  context.Context
	Size int64 // the file's size; -1 for a diskless transfer (known at its end)
	// Diskless: the server wrote the snapshot to the link as it made it
	// (repl-diskless-sync), not to its disk first.
	Diskless bool
	left     int64  // bytes of a sized payload still to read
	mark     []byte // the end mark of a diskless transfer
	checked  int    // bytes at the read buffer's start that cannot start the mark
	done     bool
}

// Snapshot asks the server for an RDB snapshot of its whole dataset
// the way a new replica's first sync does: REPLCONF capa eof (the
// server may send it diskless, as it would to a replica), REPLCONF
// rdb-only 1 (Redis 7+: the RDB alone, no replication stream after it),
// then SYNC. The server forks once and its child writes the snapshot;
// no command runs per key. While it waits for the fork (and, diskless,
// for repl-diskless-sync-delay) the server sends a newline a second:
// each one resets the connection's timeout, so a long wait is not a
// timeout but a silent server is. ctx bounds the whole transfer.
//
// With onDisk, capa eof is not sent: like a replica that cannot take a
// diskless transfer, the snapshot is then written to the server's disk
// (its dbfilename, as BGSAVE writes it) at once, without
// repl-diskless-sync-delay, and sent as a file once written.
//
// The ACL user needs REPLCONF and SYNC (@admin); an error reply is a
// ServerError.
func (c *Conn) Snapshot(ctx context.Context, onDisk bool) (*Payload, error) {
	if err := c.Begin(ctx); err != nil {
		return nil, err
	}
	if !onDisk {
		c.Cmd("REPLCONF", "capa", "eof")
	}
	c.Cmd("REPLCONF", "rdb-only", "1")
	c.Take()
	if err := c.Flush(); err != nil {
		return nil, err
	}
	replies := 2
	if onDisk {
		replies = 1
	}
	for i := range replies {
		rp, err := c.Read()
		if err != nil {
			return nil, err
		}
		// rdb-only is Redis 7's; an older server refuses it and then
		// streams its writes after the snapshot, which is not read.
		if rp.Kind == '-' && i == 0 && !onDisk {
			return nil, ServerError(rp.Str)
		}
	}
	c.Cmd("SYNC")
	c.Take()
	if err := c.Flush(); err != nil {
		return nil, err
	}
	c.sync()
	for {
		if err := c.rearm(ctx); err != nil {
			return nil, err
		}
		line, err := c.line0()
		if err != nil {
			return nil, err
		}
		if len(line) == 0 {
			continue // the server is still making the snapshot
		}
		switch line[0] {
		case '-':
			return nil, ServerError(line[1:])
		case '$':
		default:
			return nil, fmt.Errorf("%w: SYNC replied %q", ErrProtocol, clipBytes(line))
		}
		p := &Payload{c: c, ctx: ctx}
		if m, ok := bytes.CutPrefix(line[1:], []byte("EOF:")); ok {
			if len(m) != eofMarkLen {
				return nil, fmt.Errorf("%w: SYNC's end mark %q", ErrProtocol, clipBytes(line))
			}
			p.mark, p.Size, p.Diskless = bytes.Clone(m), -1, true
			return p, nil
		}
		n, ok := ParseInt(line[1:])
		if !ok || n < 0 {
			return nil, fmt.Errorf("%w: SYNC's length %q", ErrProtocol, clipBytes(line))
		}
		p.Size, p.left = n, n
		return p, nil
	}
}

// rearm bounds a silence of the server from now on. A link the server
// closed already may refuse the deadline: what it sent before is still
// read, and a read that needs more fails on its own.
func (c *Conn) rearm(ctx context.Context) error {
	_ = c.nc.SetDeadline(time.Now().Add(c.timeout))
	// After SetDeadline: a cancel that fired before it would be undone.
	return ctx.Err()
}

// line0 reads one line that ends in LF, CRLF or is an empty keepalive
// (a lone LF), without its end.
func (c *Conn) line0() ([]byte, error) {
	l, err := c.br.ReadSlice('\n')
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	l = l[:len(l)-1]
	return bytes.TrimSuffix(l, []byte{'\r'}), nil
}

// Read reads the snapshot's bytes; io.EOF after its last one. A server
// that sends nothing for the connection's timeout, or a cancelled ctx,
// fails the read.
func (p *Payload) Read(b []byte) (int, error) {
	if p.done {
		return 0, io.EOF
	}
	if len(b) == 0 {
		return 0, nil
	}
	c := p.c
	if err := c.rearm(p.ctx); err != nil {
		return 0, err
	}
	if p.mark == nil {
		if p.left == 0 {
			p.done = true
			return 0, io.EOF
		}
		n, err := c.br.Read(b[:min(int64(len(b)), p.left)])
		p.left -= int64(n)
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF // the link closed before the snapshot's end
		}
		if p.left == 0 && err == nil {
			p.done = true
		}
		return n, err
	}
	// Diskless: the payload ends at the mark. Anything after it is the
	// replication stream of a server without rdb-only, never handed out.
	// What could be the start of the mark is held back until more comes.
	win, err := c.br.Peek(max(c.br.Buffered(), eofMarkLen+1))
	from := min(p.checked, len(win))
	if i := bytes.Index(win[from:], p.mark); i >= 0 {
		i += from
		n := copy(b, win[:i])
		c.br.Discard(n)
		p.checked = i - n
		if n < i {
			return n, nil
		}
		c.br.Discard(eofMarkLen)
		p.done = true
		if n == 0 {
			return 0, io.EOF
		}
		return n, nil
	}
	// Every position before safe was looked at: a mark starting there
	// would lie whole in win.
	if safe := len(win) - (eofMarkLen - 1); safe > 0 {
		n := copy(b, win[:safe])
		c.br.Discard(n)
		p.checked = safe - n
		return n, nil
	}
	// Peek got fewer than eofMarkLen+1 bytes: it failed.
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF // the link closed before the mark
	}
	return 0, err
}
