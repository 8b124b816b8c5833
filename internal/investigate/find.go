package investigate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/glob"
)

// node is one server the investigation reads: the standalone server, or
// one master of a Cluster.
type node struct {
	addr string
	c    *redis.Client
}

// nodesOf returns the standalone server, or every master of a Cluster.
func nodesOf(ctx context.Context, c redis.UniversalClient) ([]*node, error) {
	switch c := c.(type) {
	case *redis.Client:
		return []*node{{addr: c.Options().Addr, c: c}}, nil
	case *redis.ClusterClient:
		var mu sync.Mutex
		var out []*node
		err := c.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
			mu.Lock()
			out = append(out, &node{addr: m.Options().Addr, c: m})
			mu.Unlock()
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("list the Cluster's masters: %w", err)
		}
		sort.Slice(out, func(i, j int) bool { return out[i].addr < out[j].addr })
		return out, nil
	}
	return nil, fmt.Errorf("investigate: client type %T: use a *redis.Client (one server) or a *redis.ClusterClient", c)
}

// Target is what to investigate: exactly one of ID, Key and Match.
type Target struct {
	ID    string // an entity ID: keys holding it as a whole segment
	Key   string // one key
	Match string // a SCAN MATCH glob pattern
}

func (t Target) validate() error {
	n := 0
	for _, s := range []string{t.ID, t.Key, t.Match} {
		if s != "" {
			n++
		}
	}
	if n != 1 {
		return errors.New("investigate: give exactly one of an ID, a key or a pattern")
	}
	return nil
}

// pattern is the SCAN MATCH pattern that finds the target's keys.
func (t Target) pattern() string {
	switch {
	case t.ID != "":
		return "*" + glob.Escape(t.ID) + "*"
	case t.Key != "":
		return glob.Escape(t.Key)
	}
	return t.Match
}

// keeps returns the predicate a key must satisfy to belong to the
// investigation (for keys created after the SCAN too).
func (t Target) keeps(sep byte) func(string) bool {
	switch {
	case t.ID != "":
		return func(k string) bool { return hasSegment(k, t.ID, sep) }
	case t.Key != "":
		return func(k string) bool { return k == t.Key }
	}
	return func(k string) bool { return glob.MatchString(t.Match, k) }
}

// found is a key and the node that holds it.
type found struct {
	key  string
	node *node
}

// scanCount is SCAN's COUNT: large enough to walk a big keyspace in few
// round trips, small enough that one call stays a short pause.
const scanCount = 1000

// find walks every node with SCAN MATCH and keeps the keys the target
// names, at most max of them (sorted); more reports how many were left out.
func find(ctx context.Context, nodes []*node, t Target, sep byte, max int) (keys []found, more int, err error) {
	keep, pattern := t.keeps(sep), t.pattern()
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make([]error, len(nodes))
	for i, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if t.Key != "" {
				// The key belongs to the node that does not redirect: it is
				// watched there even if it does not exist yet.
				err := n.c.Exists(ctx, t.Key).Err()
				if err != nil && !isRedirect(err) {
					errs[i] = fmt.Errorf("EXISTS on %s: %w", n.addr, err)
				} else if err == nil {
					mu.Lock()
					keys = append(keys, found{t.Key, n})
					mu.Unlock()
				}
				return
			}
			var cursor uint64
			for {
				ks, next, err := n.c.Scan(ctx, cursor, pattern, scanCount).Result()
				if err != nil {
					errs[i] = fmt.Errorf("SCAN on %s: %w", n.addr, err)
					return
				}
				mu.Lock()
				for _, k := range ks {
					if keep(k) {
						keys = append(keys, found{k, n})
					}
				}
				mu.Unlock()
				if cursor = next; cursor == 0 {
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, 0, err
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].key < keys[j].key })
	keys = slices.CompactFunc(keys, func(a, b found) bool { return a.key == b.key }) // SCAN may return a key twice
	if len(keys) > max {
		more = len(keys) - max
		keys = keys[:max]
	}
	return keys, more, nil
}

// isRedirect reports a Cluster MOVED or ASK reply: the key lives on
// another node.
func isRedirect(err error) bool {
	s := err.Error()
	return strings.HasPrefix(s, "MOVED ") || strings.HasPrefix(s, "ASK ")
}

// hasSegment reports whether key holds id as a whole segment: between
// separators, the key's ends, or hash-tag braces ("{order:1001}:items"
// holds 1001).
func hasSegment(key, id string, sep byte) bool {
	if id == "" {
		return false
	}
	for from := 0; ; {
		i := strings.Index(key[from:], id)
		if i < 0 {
			return false
		}
		i += from
		end := i + len(id)
		if (i == 0 || isBoundary(key[i-1], sep)) && (end == len(key) || isBoundary(key[end], sep)) {
			return true
		}
		from = i + 1
	}
}

func isBoundary(c, sep byte) bool { return c == sep || c == '{' || c == '}' }
