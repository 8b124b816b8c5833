package hotkeys

import (
	"context"
	"errors"
	"fmt"
	"github.com/keyguard/keyguard/hotkey"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultLFUSample is how many keys SampleLFU looks at per node by default.
const DefaultLFUSample = 10_000

// LFUOptions bounds an OBJECT FREQ sample.
type LFUOptions struct {
	// Sample is the number of keys looked at per node (DefaultLFUSample).
	Sample int
	// Rate caps keys looked at per second per node; 0 does not wait.
	Rate int
	// Match is a SCAN MATCH pattern ("" = every key).
	Match string
	// TopK is how many keys are kept (hotkey.DefaultTopK).
	TopK int
}

// LFUNode is one node's part of the sample.
type LFUNode struct {
	Addr    string `json:"addr"`
	Policy  string `json:"policy,omitempty"` // maxmemory-policy, "" when unknown
	Sampled int    `json:"sampled"`
	// Skipped says why OBJECT FREQ was not used on this node ("" when it was).
	Skipped string `json:"skipped,omitempty"`
}

// LFUKey is a key and its LFU counter (0–255, logarithmic: with the
// default lfu-log-factor 10, about 100 hits give 10, 1,000 give 18,
// 100,000 give 142, a million 255; it decays by one per lfu-decay-time
// minutes).
type LFUKey struct {
	Key  string
	Freq int
	Node string
}

// LFUResult is an OBJECT FREQ sample of every master.
type LFUResult struct {
	Nodes []LFUNode `json:"nodes"`
	Keys  []LFUKey  `json:"-"` // highest counter first (in Report.Keys)
}

// SampleLFU reads the LFU counters of up to Sample keys per master (SCAN,
// then OBJECT FREQ pipelined), on nodes whose maxmemory-policy is an LFU
// policy; other nodes are skipped with the reason. It only reads. rdb is
// a *redis.Client or a *redis.ClusterClient (every master at once).
func SampleLFU(ctx context.Context, rdb redis.UniversalClient, opts LFUOptions) (*LFUResult, error) {
	if opts.Sample <= 0 {
		opts.Sample = DefaultLFUSample
	}
	if opts.TopK <= 0 {
		opts.TopK = hotkey.DefaultTopK
	}
	res := &LFUResult{}
	var mu sync.Mutex
	one := func(ctx context.Context, c *redis.Client) error {
		n, keys, err := sampleNode(ctx, c, opts)
		mu.Lock()
		defer mu.Unlock()
		res.Nodes = append(res.Nodes, n)
		res.Keys = topLFU(append(res.Keys, keys...), opts.TopK)
		return err
	}
	var err error
	switch c := rdb.(type) {
	case *redis.ClusterClient:
		err = c.ForEachMaster(ctx, one)
	case *redis.Client:
		err = one(ctx, c)
	default:
		return nil, fmt.Errorf("hotkey: SampleLFU needs a *redis.Client or *redis.ClusterClient, not %T", rdb)
	}
	slices.SortFunc(res.Nodes, func(a, b LFUNode) int { return strings.Compare(a.Addr, b.Addr) })
	return res, err
}

func sampleNode(ctx context.Context, c *redis.Client, opts LFUOptions) (LFUNode, []LFUKey, error) {
	n := LFUNode{Addr: c.Options().Addr}
	cfg, err := c.ConfigGet(ctx, "maxmemory-policy").Result()
	if err != nil {
		n.Skipped = fmt.Sprintf("CONFIG GET maxmemory-policy refused (%v): cannot tell whether the LFU counters exist", oneLine(err.Error()))
		return n, nil, nil
	}
	n.Policy = cfg["maxmemory-policy"]
	if !strings.HasSuffix(n.Policy, "-lfu") {
		n.Skipped = fmt.Sprintf("maxmemory-policy is %s: OBJECT FREQ needs allkeys-lfu or volatile-lfu", n.Policy)
		return n, nil, nil
	}
	var keys []LFUKey
	start := time.Now()
	var cursor uint64
	for n.Sampled < opts.Sample {
		count := int64(min(100, opts.Sample-n.Sampled))
		batch, next, err := c.Scan(ctx, cursor, opts.Match, count).Result()
		if err != nil {
			return n, keys, fmt.Errorf("SCAN on %s: %w", n.Addr, err)
		}
		batch = batch[:min(len(batch), opts.Sample-n.Sampled)]
		if len(batch) > 0 {
			cmds := make([]*redis.IntCmd, len(batch))
			_, _ = c.Pipelined(ctx, func(p redis.Pipeliner) error {
				for i, k := range batch {
					cmds[i] = p.ObjectFreq(ctx, k)
				}
				return nil
			})
			for i, cmd := range cmds {
				f, err := cmd.Result()
				if errors.Is(err, redis.Nil) {
					continue // gone since SCAN returned it
				}
				if err != nil {
					return n, keys, fmt.Errorf("OBJECT FREQ on %s: %w", n.Addr, err)
				}
				keys = append(keys, LFUKey{Key: batch[i], Freq: int(f), Node: n.Addr})
			}
			n.Sampled += len(batch)
			keys = topLFU(keys, opts.TopK)
		}
		if cursor = next; cursor == 0 {
			break
		}
		if opts.Rate > 0 {
			due := start.Add(time.Duration(float64(n.Sampled) / float64(opts.Rate) * float64(time.Second)))
			if d := time.Until(due); d > 0 {
				select {
				case <-ctx.Done():
					return n, keys, ctx.Err()
				case <-time.After(d):
				}
			}
		}
	}
	return n, keys, nil
}

// topLFU keeps the k highest counters, highest first.
func topLFU(keys []LFUKey, k int) []LFUKey {
	slices.SortStableFunc(keys, func(a, b LFUKey) int {
		if a.Freq != b.Freq {
			return b.Freq - a.Freq
		}
		return strings.Compare(a.Key, b.Key)
	})
	if len(keys) > k {
		keys = keys[:k]
	}
	return keys
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// MasterAddrs returns the address of every master of rdb: the client's
// own for a *redis.Client, each master's for a *redis.ClusterClient.
func MasterAddrs(ctx context.Context, rdb redis.UniversalClient) ([]string, error) {
	switch c := rdb.(type) {
	case *redis.Client:
		return []string{c.Options().Addr}, nil
	case *redis.ClusterClient:
		var mu sync.Mutex
		var addrs []string
		err := c.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
			mu.Lock()
			addrs = append(addrs, m.Options().Addr)
			mu.Unlock()
			return nil
		})
		slices.Sort(addrs)
		return addrs, err
	}
	return nil, fmt.Errorf("hotkey: need a *redis.Client or *redis.ClusterClient, not %T", rdb)
}
