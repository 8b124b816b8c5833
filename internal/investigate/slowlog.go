package investigate

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/keyguard/keyguard/internal/monitor"
	"github.com/keyguard/keyguard/internal/rediscmd"
)

// slowlogRead is how many SLOWLOG entries are read per node (the server
// keeps 128 by default).
const slowlogRead = 1024

// SlowEntry is a SLOWLOG entry that touched a key of the investigation.
type SlowEntry struct {
	Node     string    `json:"node"`
	ID       int64     `json:"id"`
	Time     time.Time `json:"time"`
	Duration Micros    `json:"duration_us"`
	Command  string    `json:"command"` // name and keys; the other arguments only with ShowValues
	Keys     []string  `json:"keys"`
	Client   string    `json:"client_addr,omitempty"`
	Name     string    `json:"client_name,omitempty"`
}

// slowlog reads SLOWLOG GET on each node and keeps the entries whose keys
// the target keeps. A node the search could not cover either (down) is
// passed over when it does not answer: notRead says which and why.
func slowlog(ctx context.Context, nodes []*node, keep func(string) bool, show bool, down func(addr string) bool) (out []SlowEntry, notRead []string, err error) {
	for _, n := range nodes {
		logs, err := n.c.SlowLogGet(ctx, slowlogRead).Result()
		if err != nil && down(n.addr) && ctx.Err() == nil {
			notRead = append(notRead, fmt.Sprintf("%s: %v", n.addr, err))
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("SLOWLOG GET on %s: %w", n.addr, err)
		}
		for _, l := range logs {
			keys := entryKeys(l.Args, keep)
			if len(keys) == 0 {
				continue
			}
			out = append(out, SlowEntry{Node: n.addr, ID: l.ID, Time: l.Time, Duration: Micros(l.Duration),
				Command: slowCommand(l.Args, keys, show), Keys: keys, Client: l.ClientAddr, Name: l.ClientName})
		}
	}
	return out, notRead, nil
}

// entryKeys returns the keys of a logged command the predicate keeps.
func entryKeys(args []string, keep func(string) bool) []string {
	if len(args) < 2 {
		return nil
	}
	argv := make([]any, len(args))
	for i, a := range args {
		argv[i] = a
	}
	var keys []string
	if c, ok := rediscmd.LookupArgs(argv); ok {
		c.Keys(argv, func(_ int, k string, _ rediscmd.KeyFlags) bool {
			if keep(k) {
				keys = appendOnce(keys, k)
			}
			return true
		})
	} else if keep(args[1]) {
		keys = append(keys, args[1])
	}
	return keys
}

// slowCommand shows a logged command: its name and keys, values hidden
// unless show.
func slowCommand(args, keys []string, show bool) string {
	parts := []string{strings.ToUpper(args[0])}
	if show {
		for _, a := range args[1:] {
			parts = append(parts, monitor.Quote(a))
		}
		return strings.Join(parts, " ")
	}
	for _, k := range keys {
		parts = append(parts, monitor.Quote(k))
	}
	if rest := len(args) - 1 - len(keys); rest > 0 {
		parts = append(parts, fmt.Sprintf("(+%d arguments)", rest))
	}
	return strings.Join(parts, " ")
}
