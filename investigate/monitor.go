package investigate

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Line is one line of MONITOR output:
//
//	1700000000.123456 [0 127.0.0.1:50000] "hset" "promo:sku:1001" "a" "1"
//
// Source is the client's address as the server prints it: "host:port",
// "[ipv6]:port", "unix:/path/to.sock", or "lua" for a command a script
// ran (the script's caller is the script call just before it).
type Line struct {
	Time   time.Time
	DB     int
	Source string
	Args   []string // unquoted; Args[0] is the command name as the client sent it
}

// SourceLua is the source of a command run by a script or a function.
const SourceLua = "lua"

var errLine = errors.New("not a MONITOR line")

// ParseLine parses one MONITOR line (without the RESP "+" and CRLF). Args
// come back unescaped, so binary keys are the bytes the client sent.
func ParseLine(s string) (Line, error) {
	var l Line
	sp := strings.IndexByte(s, ' ')
	if sp < 0 {
		return l, fmt.Errorf("%w: no time stamp", errLine)
	}
	t, err := parseStamp(s[:sp])
	if err != nil {
		return l, err
	}
	l.Time = t
	rest := s[sp+1:]
	if len(rest) < 2 || rest[0] != '[' {
		return l, fmt.Errorf("%w: no [db source] after the time stamp", errLine)
	}
	sp = strings.IndexByte(rest, ' ')
	if sp < 2 {
		return l, fmt.Errorf("%w: no database number", errLine)
	}
	db, err := strconv.Atoi(rest[1:sp])
	if err != nil || db < 0 {
		return l, fmt.Errorf("%w: database %q", errLine, rest[1:sp])
	}
	l.DB = db
	rest = rest[sp+1:]
	// The source ends at the first `] "`: an IPv6 source holds a ']' of
	// its own ("[::1]:6379"), but never followed by a space.
	end := strings.Index(rest, "] \"")
	if end < 1 {
		return l, fmt.Errorf("%w: no source or no arguments", errLine)
	}
	l.Source = rest[:end]
	l.Args, err = parseArgs(rest[end+2:])
	if err != nil {
		return l, err
	}
	return l, nil
}

// parseStamp reads "seconds.microseconds".
func parseStamp(s string) (time.Time, error) {
	sec, frac, ok := strings.Cut(s, ".")
	if !ok || !digits(sec) || !digits(frac) || len(frac) > 9 {
		return time.Time{}, fmt.Errorf("%w: time stamp %q", errLine, s)
	}
	secs, err1 := strconv.ParseInt(sec, 10, 64)
	f, err2 := strconv.ParseUint(frac, 10, 32)
	if err1 != nil || err2 != nil {
		return time.Time{}, fmt.Errorf("%w: time stamp %q", errLine, s)
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
// sdscatrepr quotes them, separated by one space.
func parseArgs(s string) ([]string, error) {
	args := make([]string, 0, 4)
	for i := 0; ; {
		if i >= len(s) || s[i] != '"' {
			return nil, fmt.Errorf("%w: argument %d is not quoted", errLine, len(args)+1)
		}
		a, n, err := unquoteArg(s[i:])
		if err != nil {
			return nil, fmt.Errorf("%w: argument %d: %v", errLine, len(args)+1, err)
		}
		args = append(args, a)
		i += n
		if i == len(s) {
			return args, nil
		}
		if s[i] != ' ' {
			return nil, fmt.Errorf("%w: no space after argument %d", errLine, len(args))
		}
		i++
	}
}

// unquoteArg reads one quoted argument at the start of s and returns it
// and the bytes it took.
func unquoteArg(s string) (string, int, error) {
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
		i++
		if i >= len(s) {
			break
		}
		switch s[i] {
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
			if i+2 < len(s) {
				if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
					b.WriteByte(byte(v))
					i += 2
					continue
				}
			}
			return "", 0, fmt.Errorf("bad \\x escape")
		default: // \\ and \" (and anything a newer server may add): the byte itself
			b.WriteByte(s[i])
		}
	}
	return "", 0, errors.New("no closing quote")
}

// quoteArg quotes a as the server's sdscatrepr does; the inverse of
// unquoteArg, used by the tests and to show arguments in reports.
func quoteArg(a string) string {
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
				fmt.Fprintf(&b, `\x%02x`, c)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
