// Package monitor reads the lines MONITOR streams, one command each:
//
//	1700000000.123456 [0 127.0.0.1:50000] "hset" "promo:sku:1001" "a" "1"
//
//	l, err := monitor.Parse(text) // text: the status reply, without '+' and CRLF
//	l.Source, l.Args              // "127.0.0.1:50000", ["hset" "promo:sku:1001" "a" "1"]
//	monitor.Quote(l.Args[1])      // quoted back as the server quotes it
//
// The source is the client's address as the server prints it
// ("host:port", "[ipv6]:port", "unix:/path/to.sock"), or "lua" for a
// command a script or function ran. Arguments come back unquoted, so a
// binary key is the bytes the client sent.
//
// It imports no package of this module.
package monitor

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Line is one line of MONITOR output.
type Line struct {
	Time   time.Time
	DB     int
	Source string   // "host:port", "[ipv6]:port", "unix:/path", or SourceLua
	Args   []string // unquoted; Args[0] is the command name as the client sent it
}

// SourceLua is the source of a command run by a script or a function (the
// script's caller is the script call printed just before it).
const SourceLua = "lua"

// ErrLine is the error of a line that is not a MONITOR command line (the
// errors Parse returns wrap it).
var ErrLine = errors.New("not a MONITOR line")

// Parse parses one MONITOR line, without the RESP '+' and CRLF.
func Parse(s string) (Line, error) { return parse(s, false) }

// ParseCut parses the start of a line that was cut short (a reader keeps
// only so many bytes of a line): the arguments read whole are kept, the
// cut one is dropped. It fails when not even the command name is whole.
func ParseCut(s string) (Line, error) { return parse(s, true) }

func parse(s string, cut bool) (Line, error) {
	var l Line
	sp := strings.IndexByte(s, ' ')
	if sp < 0 {
		return l, fmt.Errorf("%w: no time stamp", ErrLine)
	}
	t, err := parseStamp(s[:sp])
	if err != nil {
		return l, err
	}
	l.Time = t
	rest := s[sp+1:]
	if len(rest) < 2 || rest[0] != '[' {
		return l, fmt.Errorf("%w: no [db source] after the time stamp", ErrLine)
	}
	sp = strings.IndexByte(rest, ' ')
	if sp < 2 || !digits(rest[1:sp]) {
		return l, fmt.Errorf("%w: no database number", ErrLine)
	}
	if l.DB, err = strconv.Atoi(rest[1:sp]); err != nil {
		return l, fmt.Errorf("%w: database %q", ErrLine, rest[1:sp])
	}
	rest = rest[sp+1:]
	// The source ends at the first `] "`: an IPv6 source holds a ']' of
	// its own ("[::1]:6379"), but never followed by a space.
	end := strings.Index(rest, "] \"")
	if end < 1 {
		return l, fmt.Errorf("%w: no source or no arguments", ErrLine)
	}
	l.Source = rest[:end]
	l.Args, err = parseArgs(rest[end+2:], cut)
	return l, err
}

// parseStamp reads "seconds.microseconds".
func parseStamp(s string) (time.Time, error) {
	sec, frac, ok := strings.Cut(s, ".")
	if !ok || !digits(sec) || !digits(frac) || len(frac) > 9 {
		return time.Time{}, fmt.Errorf("%w: time stamp %q", ErrLine, clip(s))
	}
	secs, err1 := strconv.ParseInt(sec, 10, 64)
	f, err2 := strconv.ParseUint(frac, 10, 32)
	if err1 != nil || err2 != nil {
		return time.Time{}, fmt.Errorf("%w: time stamp %q", ErrLine, clip(s))
	}
	for i := len(frac); i < 9; i++ {
		f *= 10
	}
	return time.Unix(secs, int64(f)), nil
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// parseArgs reads `"a" "b\x00"…`: arguments quoted the way the server's
// sdscatrepr quotes them, separated by one space. In a cut line the first
// argument that does not read whole ends the arguments.
func parseArgs(s string, cut bool) ([]string, error) {
	args := make([]string, 0, 4)
	for i := 0; ; {
		var err error
		if i >= len(s) || s[i] != '"' {
			err = fmt.Errorf("%w: argument %d is not quoted", ErrLine, len(args)+1)
		} else {
			a, n, uerr := unquote(s[i:])
			if uerr == nil {
				args = append(args, a)
				i += n
				if i == len(s) {
					return args, nil
				}
				if s[i] == ' ' {
					i++
					continue
				}
				err = fmt.Errorf("%w: no space after argument %d", ErrLine, len(args))
			} else {
				err = fmt.Errorf("%w: argument %d: %v", ErrLine, len(args)+1, uerr)
			}
		}
		if cut && len(args) > 0 {
			return args, nil
		}
		return nil, err
	}
}

// unquote reads one quoted argument at the start of s and returns it and
// the bytes it took.
func unquote(s string) (string, int, error) {
	// Fast path: no escape before the closing quote.
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '"':
			return s[1:i], i + 1, nil
		case '\\':
			return unquoteSlow(s)
		}
	}
	return "", 0, errors.New("no closing quote")
}

func unquoteSlow(s string) (string, int, error) {
	var b strings.Builder
	b.Grow(len(s))
	for i := 1; i < len(s); i++ {
		c := s[i]
		if c == '"' {
			return b.String(), i + 1, nil
		}
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		if i++; i >= len(s) {
			break
		}
		switch s[i] {
		case '\\', '"':
			b.WriteByte(s[i])
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'x':
			hi, ok1 := unhex(s, i+1)
			lo, ok2 := unhex(s, i+2)
			if !ok1 || !ok2 {
				return "", 0, errors.New(`bad \x escape`)
			}
			b.WriteByte(hi<<4 | lo)
			i += 2
		default:
			// sdscatrepr writes no other escape: a line that holds one
			// is not the server's.
			return "", 0, fmt.Errorf(`unknown escape \%c`, s[i])
		}
	}
	return "", 0, errors.New("no closing quote")
}

func unhex(s string, i int) (byte, bool) {
	if i >= len(s) {
		return 0, false
	}
	switch c := s[i]; {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// Quote quotes a as the server's sdscatrepr does, the inverse of what
// Parse does to an argument: for showing arguments in reports, and for
// writing lines in tests.
func Quote(a string) string {
	var b strings.Builder
	b.Grow(len(a) + 2)
	b.WriteByte('"')
	for i := 0; i < len(a); i++ {
		c := a[i]
		switch c {
		case '\\', '"':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\a':
			b.WriteString(`\a`)
		case '\b':
			b.WriteString(`\b`)
		default:
			if c >= 0x20 && c < 0x7f {
				b.WriteByte(c)
			} else {
				const hex = "0123456789abcdef"
				b.WriteString(`\x`)
				b.WriteByte(hex[c>>4])
				b.WriteByte(hex[c&15])
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

func clip(s string) string {
	if len(s) > 32 {
		return s[:32] + "…"
	}
	return s
}
