package resp

import (
	"bufio"
	"errors"
	"fmt"
)

// Line is one status reply of a stream: MONITOR sends one per command
// the server runs.
type Line struct {
	Text []byte // without the '+' and CRLF; valid until the next read
	Size int    // the bytes the reply took on the wire, cut or not
	Cut  bool   // the reply was longer than asked for: Text is its start
}

// ReadLine reads the next status reply of a stream (after MONITOR's +OK),
// keeping at most limit bytes of its text: the rest of a longer one (a
// multi-megabyte SET) is read and dropped. An error reply is a
// ServerError; Size counts what was read either way, so a byte cap holds
// on a stream that ends in an error.
func (c *Conn) ReadLine(limit int) (Line, error) {
	limit = max(limit, 0)
	c.sync()
	b, err := c.br.ReadSlice('\n')
	l := Line{Size: len(b)}
	if errors.Is(err, bufio.ErrBufferFull) {
		acc := append(c.long[:0], b[:min(len(b), limit+3)]...)
		for errors.Is(err, bufio.ErrBufferFull) {
			b, err = c.br.ReadSlice('\n')
			l.Size += len(b)
			if room := limit + 3 - len(acc); room > 0 {
				acc = append(acc, b[:min(len(b), room)]...)
			}
		}
		c.long, b = acc, acc
		// Within limit+3 the line may still end whole: '+', text, CRLF.
		l.Cut = l.Size > len(acc)
	}
	if err != nil {
		return l, err
	}
	if len(b) < 3 || (!l.Cut && b[len(b)-2] != '\r') {
		return l, fmt.Errorf("%w: stream line %q", ErrProtocol, clipBytes(b))
	}
	end := len(b)
	if !l.Cut {
		end -= 2 // CRLF
	}
	text := b[1:end]
	if len(text) > limit {
		text, l.Cut = text[:limit], true
	}
	switch b[0] {
	case '+':
		l.Text = text
		return l, nil
	case '-':
		return l, ServerError(text)
	}
	return l, fmt.Errorf("%w: stream line %q is not a status reply", ErrProtocol, clipBytes(b))
}
