package report

import (
	"errors"
	"fmt"
	"io"
)

// Defaults of ReadLimits.
const (
	DefaultMaxReportBytes = 256 << 20 // a report is about 400 bytes a group and 250 a finding
	DefaultMaxReportDepth = 32        // a report nests a few levels: groups, a group's histogram
)

// ReadLimits bound the reports ReadReportLimited accepts: its size, and the
// nesting of its JSON, both checked as it streams in, before the decoder
// builds anything deeper or larger.
type ReadLimits struct {
	MaxBytes int64 // default DefaultMaxReportBytes
	MaxDepth int   // default DefaultMaxReportDepth
}

// ErrReportLimit is the error of a report over its ReadLimits.
var ErrReportLimit = errors.New("the report is over its limits")

// boundedReader passes bytes through while they stay within the limits:
// at most max bytes, JSON nested at most depth levels (brackets outside
// strings).
type boundedReader struct {
	r        io.Reader
	left     int64
	maxDepth int
	depth    int
	inString bool
	escaped  bool
	err      error
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.r.Read(p)
	if int64(n) > b.left {
		b.err = fmt.Errorf("%w: larger than %d bytes (a report of 1,000 templates and 20,000 findings is about 5 MB)", ErrReportLimit, b.left)
		return 0, b.err
	}
	b.left -= int64(n)
	for _, c := range p[:n] {
		switch {
		case b.escaped:
			b.escaped = false
		case b.inString:
			switch c {
			case '\\':
				b.escaped = true
			case '"':
				b.inString = false
			}
		case c == '"':
			b.inString = true
		case c == '[' || c == '{':
			if b.depth++; b.depth > b.maxDepth {
				b.err = fmt.Errorf("%w: nested deeper than %d levels", ErrReportLimit, b.maxDepth)
				return 0, b.err
			}
		case c == ']' || c == '}':
			b.depth--
		}
	}
	return n, err
}
