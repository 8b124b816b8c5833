package registry

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/keyguard/keyguard/internal/human"
)

// ErrInvalid is matched by every load error (errors.Is).
var ErrInvalid = errors.New("registry: invalid")

// ParseError is one problem in a registry file, with where it is and what
// to write instead.
type ParseError struct {
	Pos  Pos
	Msg  string
	Hint string
}

func (e *ParseError) Error() string {
	var b strings.Builder
	if e.Pos.File != "" {
		b.WriteString(e.Pos.File)
		b.WriteString(":")
	}
	if e.Pos.Line > 0 {
		fmt.Fprintf(&b, "%d:%d: ", e.Pos.Line, e.Pos.Col)
	} else if e.Pos.File != "" {
		b.WriteString(" ")
	}
	b.WriteString(e.Msg)
	if e.Hint != "" {
		b.WriteString("\n\tTry: ")
		b.WriteString(e.Hint)
	}
	return b.String()
}

// Is makes errors.Is(err, ErrInvalid) true.
func (e *ParseError) Is(target error) bool { return target == ErrInvalid }

// ErrorList is every problem found in a file, in file order.
type ErrorList []*ParseError

func (l ErrorList) Error() string {
	var b strings.Builder
	for i, e := range l {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(e.Error())
	}
	if len(l) > 1 {
		fmt.Fprintf(&b, "\n(%d problems)", len(l))
	}
	return b.String()
}

// Is makes errors.Is(err, ErrInvalid) true.
func (l ErrorList) Is(target error) bool { return target == ErrInvalid }

// Unwrap exposes the single errors (errors.As finds *ParseError).
func (l ErrorList) Unwrap() []error {
	out := make([]error, len(l))
	for i, e := range l {
		out[i] = e
	}
	return out
}

func (l ErrorList) sort() {
	sort.SliceStable(l, func(i, j int) bool {
		a, b := l[i].Pos, l[j].Pos
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
}

func sortStrings(s []string) { sort.Strings(s) }

// closest returns the known word nearest to w, for "did you mean" hints.
func closest(w string, known []string) string {
	best, bestD := "", 1<<30
	for _, k := range known {
		if d := human.EditDistance(strings.ToLower(w), strings.ToLower(k)); d < bestD {
			best, bestD = k, d
		}
	}
	if bestD > max(2, len(w)/3) {
		return ""
	}
	return best
}
