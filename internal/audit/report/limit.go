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

	// A report keyguard writes holds at most --max-findings per rule and
	// --max-groups groups (10,000 each by default), a few fields each.
	// Counts bound what the decoder builds from tiny entries: 3 bytes of
	// "{}," become a whole Finding.
	DefaultMaxReportEntries      = 1_000_000  // entries of one list or map (findings, groups, top_keys, notes, state...)
	DefaultMaxReportTotalEntries = 16_000_000 // entries of all lists and maps, fields included
)

// ReadLimits bound the reports ReadReportLimited accepts: its size, and the
// nesting of its JSON, both checked as it streams in, before the decoder
// builds anything deeper or larger.
type ReadLimits struct {
	MaxBytes int64 // default DefaultMaxReportBytes
	MaxDepth int   // default DefaultMaxReportDepth

	// MaxEntries bounds the entries of any one JSON array or object (the
	// findings, groups, a map of counts); MaxTotalEntries those of all.
	MaxEntries      int // default DefaultMaxReportEntries
	MaxTotalEntries int // default DefaultMaxReportTotalEntries
}

func (l *ReadLimits) defaults() {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxReportBytes
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultMaxReportDepth
	}
	if l.MaxEntries <= 0 {
		l.MaxEntries = DefaultMaxReportEntries
	}
	if l.MaxTotalEntries <= 0 {
		l.MaxTotalEntries = DefaultMaxReportTotalEntries
	}
}

// ErrReportLimit is the error of a report over its ReadLimits.
var ErrReportLimit = errors.New("the report is over its limits")

// boundedReader passes bytes through while they stay within the limits:
// at most left bytes, JSON nested at most maxDepth levels (brackets
// outside strings), at most maxEntries entries in one array or object and
// maxTotal in all. An entry counts as it begins, so a list is refused at
// its first entry over the limit, before the decoder (which reads a whole
// value before it builds anything) holds more of it.
type boundedReader struct {
	r        io.Reader
	left     int64
	maxDepth int

	maxEntries, maxTotal int
	total                int
	stack                []container
	expect               bool // an entry of the innermost container may begin

	inString bool
	escaped  bool
	// The key being read (its first bytes) and the last one read, which
	// names the container it opens.
	inKey        bool
	key, lastKey []byte
	err          error
}

// container is an open JSON array or object.
type container struct {
	object  bool
	keyNext bool // an object's next string is a key
	entries int
	name    string
}

// maxNameDepth is how deep containers get a name for messages (findings,
// state.groups, groups[].types).
const maxNameDepth = 4

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
		if b.err = b.scan(c); b.err != nil {
			return 0, b.err
		}
	}
	return n, err
}

// scan follows one byte of the JSON.
func (b *boundedReader) scan(c byte) error {
	switch {
	case b.escaped:
		b.escaped = false
		b.keyByte(c)
	case b.inString:
		switch c {
		case '\\':
			b.escaped = true
		case '"':
			b.inString = false
			if b.inKey {
				b.inKey = false
				b.lastKey = append(b.lastKey[:0], b.key...)
			}
			return nil
		}
		b.keyByte(c)
	case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ':':
	case c == ',':
		b.expect = len(b.stack) > 0
	case c == ']' || c == '}':
		if len(b.stack) > 0 {
			b.stack = b.stack[:len(b.stack)-1]
		}
		b.expect = false
	default: // a value or a key begins
		if b.expect {
			b.expect = false
			if err := b.begin(); err != nil {
				return err
			}
		}
		switch c {
		case '"':
			b.inString = true
			if top := len(b.stack) - 1; top >= 0 && b.stack[top].object && b.atKey() {
				b.inKey = true
				b.key = b.key[:0]
			}
		case '[', '{':
			if len(b.stack) >= b.maxDepth {
				return fmt.Errorf("%w: nested deeper than %d levels", ErrReportLimit, b.maxDepth)
			}
			b.stack = append(b.stack, container{object: c == '{', name: b.childName()})
			b.expect = true
		}
	}
	return nil
}

// atKey reports whether a string in an object is a key: the last byte
// outside strings before it was '{' or ','. begin runs first and clears
// expect, so it records this in the container.
func (b *boundedReader) atKey() bool {
	top := &b.stack[len(b.stack)-1]
	k := top.keyNext
	top.keyNext = false
	return k
}

// begin counts an entry of the innermost container as it begins.
func (b *boundedReader) begin() error {
	top := &b.stack[len(b.stack)-1]
	top.keyNext = top.object
	if top.entries++; top.entries > b.maxEntries {
		return b.over()
	}
	if b.total++; b.total > b.maxTotal {
		return fmt.Errorf("%w: more than %d entries in all its lists and maps (keyguard audit with the default --max-findings and --max-groups writes a few million at most: make the report again with lower ones)",
			ErrReportLimit, b.maxTotal)
	}
	return nil
}

func (b *boundedReader) over() error {
	name := b.stack[len(b.stack)-1].name
	if name == "" {
		name = "a list or map"
	}
	return fmt.Errorf("%w: %s holds more than %d entries (keyguard audit lists at most --max-findings findings per rule, --max-groups groups and --top keys: make the report again with lower ones)",
		ErrReportLimit, name, b.maxEntries)
}

// keyByte keeps the first bytes of a key being read.
func (b *boundedReader) keyByte(c byte) {
	if b.inKey && len(b.key) < 64 {
		b.key = append(b.key, c)
	}
}

// childName names a container opened now: its key in an object, or its
// parent's name with [] in an array.
func (b *boundedReader) childName() string {
	d := len(b.stack)
	if d == 0 || d >= maxNameDepth {
		return ""
	}
	parent := b.stack[d-1]
	if !parent.object {
		if parent.name == "" {
			return ""
		}
		return parent.name + "[]"
	}
	if parent.name == "" && d > 1 {
		return ""
	}
	if parent.name == "" {
		return string(b.lastKey)
	}
	return parent.name + "." + string(b.lastKey)
}
