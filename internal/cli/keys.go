package cli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/human"
)

// ReadKeys calls fn for every sep-terminated key of r, stripping a
// trailing \r from newline-separated input. Keys of any bytes pass
// through; a line longer than maxLine bytes is refused by its number. fn
// must not keep the string.
func ReadKeys(ctx context.Context, r io.Reader, sep byte, maxLine int64, fn func(string)) error {
	br := bufio.NewReaderSize(&ctxReader{ctx: ctx, r: r}, 256<<10)
	var long []byte
	for n := int64(0); ; {
		if n&4095 == 0 && ctx.Err() != nil {
			return fmt.Errorf("interrupted after %s: %w", human.Plural(n, "key"), ctx.Err())
		}
		line, err := br.ReadSlice(sep)
		if errors.Is(err, bufio.ErrBufferFull) {
			if int64(len(long)+len(line)) > maxLine {
				return report.LineTooLong(n+1, maxLine)
			}
			long = append(long, line...)
			continue
		}
		if long != nil {
			line = append(long, line...)
			long = nil
		}
		if err == nil || (errors.Is(err, io.EOF) && len(line) > 0) {
			n++
			line = bytes.TrimSuffix(line, []byte{sep})
			if sep == '\n' {
				line = bytes.TrimSuffix(line, []byte{'\r'})
			}
			if int64(len(line)) > maxLine {
				return report.LineTooLong(n, maxLine)
			}
			if len(line) > 0 {
				fn(string(line))
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil && ctx.Err() != nil {
			return fmt.Errorf("interrupted after %s: %w", human.Plural(n, "key"), ctx.Err())
		}
		if err != nil {
			return fmt.Errorf("read keys: %w", err)
		}
	}
}

// ctxReader is r, whose Read returns ctx's error as soon as ctx is done:
// a read from a terminal or a pipe that waits for input does not hold up
// Ctrl-C. The read itself goes on in the background; its bytes are
// dropped (the command is ending).
type ctxReader struct {
	ctx  context.Context
	r    io.Reader
	done chan readResult // the read under way, nil when none
	buf  []byte
	rest []byte // read but not yet returned
	err  error  // of the read that gave rest
}

type readResult struct {
	n   int
	err error
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	if len(c.rest) > 0 {
		n := copy(p, c.rest)
		c.rest = c.rest[n:]
		if len(c.rest) == 0 {
			return n, c.err
		}
		return n, nil
	}
	if c.done == nil {
		if cap(c.buf) < len(p) {
			c.buf = make([]byte, len(p))
		}
		buf, done := c.buf[:len(p)], make(chan readResult, 1)
		c.done = done
		go func() {
			n, err := c.r.Read(buf)
			done <- readResult{n, err}
		}()
	}
	select {
	case res := <-c.done:
		c.done = nil
		n := copy(p, c.buf[:res.n])
		if n < res.n {
			c.rest, c.err = c.buf[n:res.n], res.err
			return n, nil
		}
		return n, res.err
	case <-c.ctx.Done():
		return 0, c.ctx.Err()
	}
}

// ReadKeyList reads one item per line from path (- for stdin), skipping
// blank lines and a trailing CR; a line over maxLine bytes is refused by
// its number.
func ReadKeyList(ctx context.Context, e *Env, path string, maxLine int64) ([]string, error) {
	var r io.Reader = e.Stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	var keys []string
	if err := ReadKeys(ctx, r, '\n', maxLine, func(k string) { keys = append(keys, k) }); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return keys, nil
}
