package hotkeys

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/hotkey"
	"github.com/keyguard/keyguard/internal/pace"
	"github.com/keyguard/keyguard/internal/resp"
	"github.com/keyguard/keyguard/internal/resp/redisopt"
)

// LFU walk defaults.
const (
	// DefaultLFUCount is the SCAN COUNT of the walk: one round trip reads
	// about this many keys' counters.
	DefaultLFUCount = 1000
	// LFUEvidence is the lowest LFU counter listed. Redis starts a key at
	// 5 and, with the default lfu-log-factor 10, a counter of 10 takes
	// about a hundred reads since the key last cooled down: below it a
	// key was barely read, which is no evidence of heat.
	LFUEvidence = 10
)

// LFUOptions bounds the OBJECT FREQ walk.
type LFUOptions struct {
	// Sample, when positive, stops after that many keys per master;
	// 0 walks every key.
	Sample int
	// Rate caps keys read per second per master; 0 does not wait.
	Rate int
	// Match is a SCAN MATCH pattern ("" = every key).
	Match string
	// Count is the SCAN COUNT (DefaultLFUCount).
	Count int
	// TopK is how many keys are kept (hotkey.DefaultTopK).
	TopK int
	// Floor is the lowest counter listed (LFUEvidence).
	Floor int
}

// LFUNode is one node's part of the walk.
type LFUNode struct {
	Addr   string `json:"addr"`
	Policy string `json:"policy,omitempty"` // maxmemory-policy, "" when unknown
	// Sampled is how many keys' counters were read.
	Sampled int `json:"sampled"`
	// Whole is true when the walk covered the node's keyspace (SCAN
	// returned to cursor 0), false when --sample or an error stopped it.
	Whole bool `json:"whole"`
	// Skipped says why OBJECT FREQ was not used on this node ("" when it was).
	Skipped string `json:"skipped,omitempty"`
	// Stopped says why the walk ended early (an error, an interruption):
	// the counters of the keys read so far are in the result.
	Stopped string `json:"stopped,omitempty"`
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

// LFUResult is the OBJECT FREQ walk of every master.
type LFUResult struct {
	Nodes []LFUNode `json:"nodes"`
	Floor int       `json:"floor"` // the lowest counter listed
	Keys  []LFUKey  `json:"-"`     // highest counter first (in Report.Keys)
}

// WalkLFU reads the LFU counter of every key of every master in addrs
// (or the first Sample keys of each), on nodes whose maxmemory-policy is
// an LFU policy; other nodes are skipped with the reason. Each master
// gets two connections: one SCANs, the other reads the counters of the
// keys it returned, pipelined (walkNode). It only
// reads (OBJECT FREQ does not touch the key). conn gives the network,
// credentials, TLS and dialer (its Addr is ignored). On an error or a
// cancelled ctx, what was read so far is returned with the error.
func WalkLFU(ctx context.Context, conn *redis.Options, addrs []string, opts LFUOptions) (*LFUResult, error) {
	if opts.Count <= 0 {
		opts.Count = DefaultLFUCount
	}
	if opts.TopK <= 0 {
		opts.TopK = hotkey.DefaultTopK
	}
	if opts.Floor <= 0 {
		opts.Floor = LFUEvidence
	}
	cfg, err := redisopt.Config(ctx, conn)
	if err != nil {
		return nil, err
	}
	res := &LFUResult{Nodes: make([]LFUNode, len(addrs)), Floor: opts.Floor}
	keys := make([][]LFUKey, len(addrs))
	errs := make([]error, len(addrs))
	var wg sync.WaitGroup
	for i, addr := range addrs {
		wg.Go(func() { res.Nodes[i], keys[i], errs[i] = walkNode(ctx, cfg, conn.DB, addr, opts) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			res.Nodes[i].Addr, res.Nodes[i].Stopped = addrs[i], oneLine(err.Error())
		}
	}
	for _, k := range keys {
		res.Keys = append(res.Keys, k...)
	}
	res.Keys = topLFU(res.Keys, opts.TopK)
	slices.SortFunc(res.Nodes, func(a, b LFUNode) int { return strings.Compare(a.Addr, b.Addr) })
	return res, errors.Join(errs...)
}

var objectFreq = resp.NewKeyCmd([]string{"OBJECT", "FREQ"})

// maxInflight is how many batches of OBJECT FREQ are sent before the
// replies of the first are read: enough to keep the server busy while
// the client reads.
const maxInflight = 4

// walkNode walks one master with two connections: one SCANs ahead and
// hands the keys over, the other reads their counters, maxInflight batches in
// flight, so that neither waits for the other's round trips.
func walkNode(ctx context.Context, cfg resp.Config, db int, addr string, opts LFUOptions) (LFUNode, []LFUKey, error) {
	n := LFUNode{Addr: addr}
	sess := resp.Session{Name: "keyguard-hotkeys", DB: db}
	c, err := resp.Dial(ctx, cfg, addr, sess)
	if err != nil {
		return n, nil, err
	}
	defer c.Close()
	policy, err := configGet(ctx, c, "maxmemory-policy")
	if err != nil {
		n.Skipped = fmt.Sprintf("CONFIG GET maxmemory-policy refused (%v): cannot tell whether the LFU counters exist", oneLine(err.Error()))
		return n, nil, nil
	}
	n.Policy = policy
	if !strings.HasSuffix(n.Policy, "-lfu") {
		n.Skipped = fmt.Sprintf("maxmemory-policy is %s: OBJECT FREQ needs allkeys-lfu or volatile-lfu", n.Policy)
		return n, nil, nil
	}
	sc, err := resp.Dial(ctx, cfg, addr, sess)
	if err != nil {
		return n, nil, err
	}
	defer sc.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan []string, 2*maxInflight)
	var whole bool
	var scanErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(batches)
		whole, scanErr = scanKeys(ctx, sc, opts, batches)
	}()
	var found []LFUKey
	var inflight [][]string
	read := func(batch []string) error {
		for _, k := range batch {
			rp, err := c.Read()
			switch {
			case err != nil:
				return fmt.Errorf("%s: %w", addr, err)
			case rp.Kind == '-':
				return fmt.Errorf("OBJECT FREQ on %s: %s", addr, rp.Str)
			case rp.Kind == ':' && int(rp.N) >= opts.Floor:
				found = append(found, LFUKey{Key: k, Freq: int(rp.N), Node: addr})
			} // null: the key is gone since SCAN returned it
		}
		n.Sampled += len(batch)
		if len(found) > 4*opts.TopK {
			found = topLFU(found, opts.TopK)
		}
		return nil
	}
	fail := func(err error) (LFUNode, []LFUKey, error) {
		cancel()
		for range batches { // let the scanner stop
		}
		<-done
		return n, topLFU(found, opts.TopK), err
	}
	for batch := range batches {
		if err := c.Begin(ctx); err != nil {
			return fail(err)
		}
		for _, k := range batch {
			c.Key(objectFreq, k)
		}
		c.Take()
		if err := c.Flush(); err != nil {
			return fail(fmt.Errorf("%s: %w", addr, err))
		}
		inflight = append(inflight, batch)
		if len(inflight) == maxInflight {
			if err := read(inflight[0]); err != nil {
				return fail(err)
			}
			inflight = inflight[1:]
		}
	}
	for _, b := range inflight {
		if err := read(b); err != nil {
			return fail(err)
		}
	}
	<-done
	n.Whole = whole
	if scanErr != nil {
		scanErr = fmt.Errorf("SCAN on %s: %w", addr, scanErr)
	}
	return n, topLFU(found, opts.TopK), scanErr
}

// scanKeys SCANs c and sends the keys, a batch per reply, at most
// opts.Sample in all when it is set, paced to opts.Rate keys a second.
// whole is true when SCAN came back to cursor 0 with every key sent.
func scanKeys(ctx context.Context, c *resp.Conn, opts LFUOptions, out chan<- []string) (whole bool, err error) {
	scan := []string{"SCAN", "0", "COUNT", strconv.Itoa(opts.Count)}
	if opts.Match != "" {
		scan = append(scan, "MATCH", opts.Match)
	}
	lim := pace.New(float64(opts.Rate), max(opts.Count, 1))
	sent := 0
	for {
		if err := c.Begin(ctx); err != nil {
			return false, err
		}
		c.Cmd(scan...)
		c.Take()
		if err := c.Flush(); err != nil {
			return false, err
		}
		cursor, keys, err := readScan(c, nil)
		if err != nil {
			return false, err
		}
		scan[1] = cursor
		cut := opts.Sample > 0 && sent+len(keys) > opts.Sample
		if cut {
			keys = keys[:opts.Sample-sent]
		}
		if len(keys) > 0 {
			select {
			case out <- keys:
			case <-ctx.Done():
				return false, ctx.Err()
			}
			sent += len(keys)
		}
		switch {
		case cut || opts.Sample > 0 && sent == opts.Sample && cursor != "0":
			return false, nil
		case cursor == "0":
			return true, nil
		}
		if err := lim.Wait(ctx, len(keys)); err != nil {
			return false, err
		}
	}
}

// readScan reads a SCAN reply: the next cursor, and the keys appended
// to keys.
func readScan(c *resp.Conn, keys []string) (string, []string, error) {
	rp, err := c.Read()
	if err != nil {
		return "", keys, err
	}
	if rp.Kind == '-' {
		return "", keys, resp.ServerError(rp.Str)
	}
	if rp.Kind != '*' || rp.N != 2 {
		return "", keys, fmt.Errorf("%w: SCAN reply of kind %q", resp.ErrProtocol, rp.Kind)
	}
	cur, err := c.Read()
	if err != nil {
		return "", keys, err
	}
	cursor := string(cur.Str)
	arr, err := c.Read()
	if err != nil {
		return "", keys, err
	}
	for range arr.N {
		k, err := c.Read()
		if err != nil {
			return "", keys, err
		}
		keys = append(keys, string(k.Str))
	}
	return cursor, keys, nil
}

// configGet reads one CONFIG GET parameter.
func configGet(ctx context.Context, c *resp.Conn, name string) (string, error) {
	if err := c.Begin(ctx); err != nil {
		return "", err
	}
	c.Cmd("CONFIG", "GET", name)
	c.Take()
	if err := c.Flush(); err != nil {
		return "", err
	}
	rp, err := c.Read()
	switch {
	case err != nil:
		return "", err
	case rp.Kind == '-':
		return "", resp.ServerError(rp.Str)
	case rp.Kind != '*' || rp.N != 2:
		if err := c.Skip(rp); err != nil {
			return "", err
		}
		return "", fmt.Errorf("no %s", name)
	}
	if _, err := c.Read(); err != nil {
		return "", err
	}
	v, err := c.Read()
	return string(v.Str), err
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
