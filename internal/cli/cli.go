// Package cli holds the conventions every keyguard command shares: its
// environment (standard streams and variables), the errors that decide the
// exit code (a usage error, findings at or above --fail-on), the flag set
// with its common flags, output files written whole or not at all,
// progress lines on stderr, and reading key lists. The tools' Run
// functions take it so that cmd/keyguard stays flags and one call.
//
// It imports no tool and nothing of the network: pure packages may use it.
package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/keyguard/keyguard/finding"
)

// Env is everything a command touches outside itself, injected so tests
// run commands in-process.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
}

// ErrFindings reports that a command found problems at or above the
// --fail-on threshold; it is not printed. The exit code is 1.
var ErrFindings = errors.New("findings at or above the threshold")

// ErrHelp is returned when -h was asked for; usage has been printed.
var ErrHelp = errors.New("help shown")

// UsageError is a command line that cannot run (exit 2, with a pointer to
// the command's help). A OneLine error says all there is (a misspelt flag
// and its correction) without pointing to the help.
type UsageError struct {
	Msg     string
	OneLine bool
}

func (e *UsageError) Error() string { return e.Msg }

// Usagef is a UsageError.
func Usagef(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

// Verdict is ErrFindings when a finding reaches the threshold.
func Verdict(fds []finding.Finding, threshold finding.Severity) error {
	for _, f := range fds {
		if f.Severity.AtLeast(threshold) {
			return ErrFindings
		}
	}
	return nil
}
