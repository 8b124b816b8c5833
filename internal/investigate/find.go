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

	"github.com/keyguard/keyguard/internal/audit/live"
	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/glob"
	"github.com/keyguard/keyguard/internal/pace"
	"github.com/keyguard/keyguard/internal/resp/redisopt"
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

// search is what the key search found and what it covered.
type search struct {
	keys     []found
	more     int              // keys found beyond the bound, left out
	coverage *report.Coverage // nil for one key (no walk)
	notes    []string
}

// find walks every master (every slot of a Cluster, re-planned on its
// owner when a failover or a migration moves it; the server's database
// again from the start when the server restarts) with the walk the audit
// uses, and keeps the keys the target names, at most limit of them
// (sorted).
func find(ctx context.Context, rdb redis.UniversalClient, nodes []*node, t Target, sep byte, limit int, self string, rate float64) (*search, error) {
	if t.Key != "" {
		return findKey(ctx, nodes, t.Key)
	}
	keep := t.keeps(sep)
	cfg, addrs, db, cluster, err := redisopt.Reach(ctx, rdb)
	if err != nil {
		return nil, err
	}
	type hit struct{ key, addr string }
	var mu sync.Mutex
	var hits []hit
	res, err := live.Walk(ctx, live.TargetOf(cfg, addrs, db, cluster), live.WalkOptions{
		Match:     t.pattern(),
		Name:      self,
		Limiter:   pace.New(rate, max(int(rate/10), 1)),
		PerListed: 1,
		Visit: func(_ context.Context, b *live.Batch) error {
			mu.Lock()
			defer mu.Unlock()
			for _, k := range b.Keys {
				if keep(k) {
					hits = append(hits, hit{k, b.Node})
				}
			}
			return nil
		},
		Restarted: func(addr string, _ int) {
			mu.Lock()
			defer mu.Unlock()
			hits = slices.DeleteFunc(hits, func(h hit) bool { return h.addr == addr })
		},
	})
	if err != nil {
		return nil, fmt.Errorf("key search: %w", err)
	}
	byAddr := map[string]*node{}
	for _, n := range nodes {
		byAddr[n.addr] = n
	}
	s := &search{coverage: res.Coverage, notes: res.Notes}
	for _, h := range hits {
		n := byAddr[h.addr]
		if n == nil {
			// A master promoted or added during the search: the client
			// knows it by now.
			cc, ok := rdb.(*redis.ClusterClient)
			if !ok {
				return nil, fmt.Errorf("key search: %s is not the server searched", h.addr)
			}
			m, err := cc.MasterForKey(ctx, h.key)
			if err != nil {
				return nil, fmt.Errorf("the master of %s: %w", h.key, err)
			}
			n = &node{addr: m.Options().Addr, c: m}
			if have := byAddr[n.addr]; have != nil {
				n = have
			}
			byAddr[h.addr], byAddr[n.addr] = n, n
		}
		s.keys = append(s.keys, found{h.key, n})
	}
	sort.Slice(s.keys, func(i, j int) bool { return s.keys[i].key < s.keys[j].key })
	s.keys = slices.CompactFunc(s.keys, func(a, b found) bool { return a.key == b.key }) // SCAN may return a key twice
	if len(s.keys) > limit {
		s.more = len(s.keys) - limit
		s.keys = s.keys[:limit]
	}
	return s, nil
}

// findKey finds one key: it belongs to the node that does not redirect,
// and is watched there even if it does not exist yet.
func findKey(ctx context.Context, nodes []*node, key string) (*search, error) {
	s := &search{}
	for _, n := range nodes {
		err := n.c.Exists(ctx, key).Err()
		if err != nil && !isRedirect(err) {
			return nil, fmt.Errorf("EXISTS on %s: %w", n.addr, err)
		}
		if err == nil {
			s.keys = append(s.keys, found{key, n})
		}
	}
	return s, nil
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
