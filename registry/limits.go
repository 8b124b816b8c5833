package registry

import (
	"bytes"
	"fmt"
	"io"
	"os"
)

// Defaults of Limits.
const (
	DefaultMaxBytes = 16 << 20 // a registry of 10,000 templates is about 1 MiB
	DefaultMaxDepth = 64       // a registry is a few levels deep: keys → entry → fields
)

// Limits bound the registry files Load and Parse accept. Both are checked
// before the YAML parser runs, whose memory grows with the square of the
// nesting depth (a 200 KB file of brackets would take gigabytes).
type Limits struct {
	MaxBytes int64 // default DefaultMaxBytes
	MaxDepth int   // default DefaultMaxDepth
}

func (l Limits) withDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultMaxDepth
	}
	return l
}

// LoadLimited is Load with limits: a file over lim.MaxBytes is refused
// before it is read, one nested deeper than lim.MaxDepth before it is
// parsed.
func LoadLimited(path string, lim Limits) (*Registry, error) {
	lim = lim.withDefaults()
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load registry: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > lim.MaxBytes {
		return nil, tooBig(path, lim.MaxBytes)
	}
	data, err := io.ReadAll(io.LimitReader(f, lim.MaxBytes+1)) // a pipe has no size to ask
	if err != nil {
		return nil, fmt.Errorf("load registry: %w", err)
	}
	if int64(len(data)) > lim.MaxBytes {
		return nil, tooBig(path, lim.MaxBytes)
	}
	return ParseLimited(path, data, lim)
}

// ParseLimited is Parse with limits (see LoadLimited).
func ParseLimited(file string, data []byte, lim Limits) (*Registry, error) {
	lim = lim.withDefaults()
	if int64(len(data)) > lim.MaxBytes {
		return nil, tooBig(file, lim.MaxBytes)
	}
	if line, col, ok := nestedBeyond(data, lim.MaxDepth); ok {
		return nil, ErrorList{{Pos: Pos{File: file, Line: line, Col: col},
			Msg:  fmt.Sprintf("nested deeper than %d levels", lim.MaxDepth),
			Hint: "a registry is a few levels deep (keys, an entry, its fields): check that this is the registry, and close its brackets"}}
	}
	return parse(file, data)
}

func tooBig(file string, max int64) error {
	limit := fmt.Sprintf("%d bytes", max)
	if max%(1<<20) == 0 {
		limit = fmt.Sprintf("%d MiB", max>>20)
	}
	return ErrorList{{Pos: Pos{File: file},
		Msg:  "the file is larger than " + limit + ", the most a registry may have",
		Hint: "a registry of 10,000 templates is about 1 MiB: check that this is the registry, or raise --max-registry-bytes"}}
}

// nestedBeyond is a cheap scan for nesting deeper than max, without
// parsing: flow brackets ([ {) outside quotes and comments, block
// indentation (each deeper indent of a line a level, each "- " that
// opens a sequence on one line another), block scalars (| >) skipped. It
// returns where the limit is passed. It may count a level more than the
// parser would, never fewer than a nesting bomb has.
func nestedBeyond(data []byte, max int) (line, col int, found bool) {
	var indents []int // open block levels
	flow := 0
	quote := byte(0)
	scalar := -1 // indent of the line that opened a block scalar, -1 when none
	for ln, rest := 1, data; len(rest) > 0; ln++ {
		text := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			text, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		ind := 0
		for ind < len(text) && text[ind] == ' ' {
			ind++
		}
		body := bytes.TrimRight(text[ind:], " \t\r")
		if scalar >= 0 {
			if len(body) == 0 || ind > scalar {
				continue // inside a block scalar: text, not structure
			}
			scalar = -1
		}
		if quote == 0 && flow == 0 {
			if len(body) == 0 || body[0] == '#' {
				continue
			}
			for len(indents) > 0 && indents[len(indents)-1] >= ind {
				indents = indents[:len(indents)-1]
			}
			indents = append(indents, ind)
			if len(indents) > max {
				return ln, ind + 1, true
			}
		}
		depth := len(indents)
		for c := ind; c < len(text); c++ {
			ch := text[c]
			switch {
			case quote != 0:
				if ch == quote {
					if quote == '\'' && c+1 < len(text) && text[c+1] == '\'' {
						c++ // '' is a quote inside single quotes
						continue
					}
					quote = 0
				} else if ch == '\\' && quote == '"' {
					c++
				}
			case ch == '"' || ch == '\'':
				if c == ind || text[c-1] == ' ' || text[c-1] == '[' || text[c-1] == '{' || text[c-1] == ',' || text[c-1] == ':' {
					quote = ch
				}
			case ch == '#' && (c == 0 || text[c-1] == ' ' || text[c-1] == '\t'):
				c = len(text) // a comment
			case ch == '[' || ch == '{':
				flow++
				if depth+flow > max {
					return ln, c + 1, true
				}
			case ch == ']' || ch == '}':
				if flow > 0 {
					flow--
				}
			case ch == '-' && flow == 0 && (c+1 == len(text) || text[c+1] == ' ') && onlyDashesBefore(text[ind:c]):
				depth++ // "- - x": a sequence in a sequence on one line
				if depth > max {
					return ln, c + 1, true
				}
			case (ch == '|' || ch == '>') && flow == 0 && c > 0 && text[c-1] == ' ' && blockScalarHeader(body[c-ind:]):
				scalar = ind
				c = len(text)
			}
		}
	}
	return 0, 0, false
}

func onlyDashesBefore(b []byte) bool {
	for _, ch := range b {
		if ch != '-' && ch != ' ' {
			return false
		}
	}
	return true
}

// blockScalarHeader reports whether b (from | or >) is a block scalar's
// header: the indicator, optional chomping and indentation, a comment.
func blockScalarHeader(b []byte) bool {
	for _, ch := range b[1:] {
		switch {
		case ch == '+' || ch == '-' || ch >= '1' && ch <= '9':
		case ch == ' ' || ch == '#':
			return true
		default:
			return false
		}
	}
	return true
}
