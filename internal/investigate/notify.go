package investigate

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// notifyClasses are the keyspace-notification classes the --notify mode
// needs besides K: generic, string, list, set, hash, sorted set, stream
// and expired events ('A' is all of them).
const notifyClasses = "g$lshzxt"

// NotifyNode is one node's keyspace-notification setting during the run.
type NotifyNode struct {
	Addr     string `json:"addr"`
	Setting  string `json:"setting"`           // notify-keyspace-events before the run
	Enabled  string `json:"enabled,omitempty"` // what keyguard set for the run, restored afterwards
	Restored bool   `json:"restored,omitempty"`
	Error    string `json:"error,omitempty"`
}

// KeyEvents is what keyspace notifications said about one key: timing
// and command kinds, never the client.
type KeyEvents struct {
	Key    string         `json:"key"`
	Counts map[string]int `json:"counts"`
	// Sequence is the events in order, runs folded ("hset×3"), cut at 40.
	Sequence []string  `json:"sequence"`
	First    time.Time `json:"first"`
	Last     time.Time `json:"last"`
}

// NotifyResult is the outcome of the --notify mode.
type NotifyResult struct {
	Duration Millis       `json:"duration_ms"`
	Nodes    []NotifyNode `json:"nodes"`
	Keys     []KeyEvents  `json:"keys"`
}

// missingClasses returns the flags a notify-keyspace-events setting lacks
// for the --notify mode ("" when it has them all).
func missingClasses(setting string) string {
	var miss []byte
	if !strings.ContainsRune(setting, 'K') {
		miss = append(miss, 'K')
	}
	if strings.ContainsRune(setting, 'A') {
		return string(miss)
	}
	for i := 0; i < len(notifyClasses); i++ {
		if !strings.ContainsRune(setting, rune(notifyClasses[i])) {
			miss = append(miss, notifyClasses[i])
		}
	}
	return string(miss)
}

// notify listens to keyspace notifications for the target's keys on every
// node for d. It changes notify-keyspace-events only when enable is set,
// and then restores each node's setting before it returns (even when ctx
// ends).
func notify(ctx context.Context, nodes []*node, db int, t Target, keep func(string) bool, d time.Duration, enable bool) (*NotifyResult, error) {
	res := &NotifyResult{}
	var setNodes []*node
	for _, n := range nodes {
		cfg, err := n.c.ConfigGet(ctx, "notify-keyspace-events").Result()
		if err != nil {
			restoreNotify(ctx, setNodes, res)
			return nil, fmt.Errorf("CONFIG GET notify-keyspace-events on %s: %w\n\tTry: a user allowed +config|get, or --monitor", n.addr, err)
		}
		nn := NotifyNode{Addr: n.addr, Setting: cfg["notify-keyspace-events"]}
		if miss := missingClasses(nn.Setting); miss != "" {
			if !enable {
				restoreNotify(ctx, setNodes, res)
				return nil, fmt.Errorf("keyspace notifications on %s are %q, without %q: --notify hears nothing\n\tTry: --enable-notify to turn them on for this run (keyguard restores %q afterwards; every subscriber of the server sees the extra events meanwhile), or --monitor",
					n.addr, nn.Setting, miss, nn.Setting)
			}
			nn.Enabled = nn.Setting + miss
			if err := n.c.ConfigSet(ctx, "notify-keyspace-events", nn.Enabled).Err(); err != nil {
				restoreNotify(ctx, setNodes, res)
				return nil, fmt.Errorf("CONFIG SET notify-keyspace-events on %s: %w\n\tTry: a user allowed +config|set, or ask an operator to set notify-keyspace-events KA", n.addr, err)
			}
			setNodes = append(setNodes, n)
		}
		res.Nodes = append(res.Nodes, nn)
	}
	defer restoreNotify(ctx, setNodes, res)
	events := map[string]*KeyEvents{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make([]error, len(nodes))
	start := time.Now()
	for i, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = listen(ctx, n, db, t, keep, d, func(key, event string, at time.Time) {
				mu.Lock()
				defer mu.Unlock()
				addEvent(events, key, event, at)
			})
		}()
	}
	wg.Wait()
	res.Duration = Millis(time.Since(start))
	for i, err := range errs {
		if err != nil {
			res.Nodes[i].Error = err.Error()
		}
	}
	for _, ke := range events {
		res.Keys = append(res.Keys, *ke)
	}
	sort.Slice(res.Keys, func(i, j int) bool { return res.Keys[i].Key < res.Keys[j].Key })
	return res, nil
}

// listen subscribes to the keyspace channels of the target on one node.
func listen(ctx context.Context, n *node, db int, t Target, keep func(string) bool, d time.Duration, add func(key, event string, at time.Time)) error {
	prefix := "__keyspace@" + strconv.Itoa(db) + "__:"
	ps := n.c.PSubscribe(ctx, prefix+t.pattern())
	defer ps.Close()
	if _, err := ps.Receive(ctx); err != nil {
		return fmt.Errorf("PSUBSCRIBE on %s: %w", n.addr, err)
	}
	ch := ps.Channel()
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
			return nil
		case m, ok := <-ch:
			if !ok {
				return fmt.Errorf("subscription on %s ended", n.addr)
			}
			key := strings.TrimPrefix(m.Channel, prefix)
			if keep(key) {
				add(key, m.Payload, time.Now())
			}
		}
	}
}

func addEvent(events map[string]*KeyEvents, key, event string, at time.Time) {
	ke := events[key]
	if ke == nil {
		ke = &KeyEvents{Key: key, Counts: map[string]int{}, First: at}
		events[key] = ke
	}
	ke.Counts[event]++
	ke.Last = at
	ke.Sequence = foldEvent(ke.Sequence, event)
}

// maxSequence bounds the folded event sequence kept per key.
const maxSequence = 40

// foldEvent appends event to a sequence of runs: "set", "set" → "set×2".
func foldEvent(seq []string, event string) []string {
	if n := len(seq); n > 0 {
		last := seq[n-1]
		name, count, _ := strings.Cut(last, "×")
		if name == event {
			c := 1
			if count != "" {
				c, _ = strconv.Atoi(count)
			}
			seq[n-1] = event + "×" + strconv.Itoa(c+1)
			return seq
		}
	}
	if len(seq) >= maxSequence {
		return seq
	}
	return append(seq, event)
}

// restoreNotify puts back the settings changed for the run, with a
// context of its own so that an interrupted run still restores them.
func restoreNotify(ctx context.Context, nodes []*node, res *NotifyResult) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	for _, n := range nodes {
		for i := range res.Nodes {
			nn := &res.Nodes[i]
			if nn.Addr != n.addr || nn.Enabled == "" || nn.Restored {
				continue
			}
			if err := n.c.ConfigSet(rctx, "notify-keyspace-events", nn.Setting).Err(); err != nil {
				nn.Error = fmt.Sprintf("could not restore notify-keyspace-events %q: %v (set it back by hand)", nn.Setting, err)
				continue
			}
			nn.Restored = true
		}
	}
}
