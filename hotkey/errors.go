package hotkey

import (
	"errors"
	"fmt"
	"strings"
)

// Errors, matched with errors.Is.
var (
	// ErrUnregistered: the key matches no template of the registry.
	ErrUnregistered = errors.New("hotkey: key matches no registered template")
	// ErrType: the template declares a type other than string; the Cache
	// stores strings.
	ErrType = errors.New("hotkey: template is not a string template")
	// ErrNoLock: no lock template is registered for the key's template, so
	// a miss cannot be loaded once per cluster.
	ErrNoLock = errors.New("hotkey: no lock template registered")
	// ErrNotFound is what a Loader returns when the data does not exist.
	// Get returns it as is and caches nothing.
	ErrNotFound = errors.New("hotkey: not found")
	// ErrClosed: the Cache was closed.
	ErrClosed = errors.New("hotkey: cache closed")
)

// Error is a refused call. It matches its Err with errors.Is.
type Error struct {
	Op       string // "get", "set", "delete", "preheat"
	Key      string
	Template string // "" when unregistered
	Err      error
	Hint     string
}

func (e *Error) Error() string {
	t := ""
	if e.Template != "" {
		t = fmt.Sprintf(" (template %q)", e.Template)
	}
	return fmt.Sprintf("%s %q%s: %v; %s", e.Op, clip(e.Key), t, e.Err, e.Hint)
}

func (e *Error) Unwrap() error { return e.Err }

// FanoutError is a write or delete of a replicated key that failed on
// some copies: the others were written, so readers may see either value
// until the next write. Retry the call.
type FanoutError struct {
	Op     string // "set" or "delete"
	Key    string
	Failed []string // copy names that failed
	Total  int      // copies attempted
	Err    error    // the first failure
}

func (e *FanoutError) Error() string {
	return fmt.Sprintf("hotkey: %s %q: %d of %d copies failed (%s; first: %v); readers may see the old value on those copies until the key is written again",
		e.Op, clip(e.Key), len(e.Failed), e.Total, strings.Join(clipAll(e.Failed, 4), ", "), e.Err)
}

func (e *FanoutError) Unwrap() error { return e.Err }

// BroadcastError is a write that reached Redis but whose invalidation was
// not published: other instances keep their local copy until local_ttl.
type BroadcastError struct {
	Key     string
	Channel string
	Err     error
}

func (e *BroadcastError) Error() string {
	return fmt.Sprintf("hotkey: %q was written, but its invalidation on %s failed (%v); other instances may serve the old value until their local_ttl ends", clip(e.Key), e.Channel, e.Err)
}

func (e *BroadcastError) Unwrap() error { return e.Err }

// clip keeps messages readable for huge or binary keys.
func clip(s string) string {
	const max = 200
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}

func clipAll(ss []string, n int) []string {
	out := make([]string, 0, min(n+1, len(ss)))
	for i, s := range ss {
		if i == n {
			out = append(out, fmt.Sprintf("and %d more", len(ss)-n))
			break
		}
		out = append(out, clip(s))
	}
	return out
}
