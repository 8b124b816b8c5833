package investigate

import (
	"context"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// TTLSample is one PTTL reading of a key during the watch.
type TTLSample struct {
	At   Millis `json:"at_ms"` // since the watch began (the middle of the round trip)
	PTTL int64  `json:"pttl"`  // ms; -1 no TTL, -2 no key
	rtt  time.Duration
}

// TTLWatch is what the PTTL samples of one key show.
type TTLWatch struct {
	Key     string `json:"key"`
	Samples int    `json:"samples"`
	// Resets counts the times a write set the TTL again: it rose, fell
	// faster than time passes, or appeared. Cleared counts a TTL that went
	// away (SET without EX, PERSIST); Gone a key that vanished (expired or
	// deleted).
	Resets  int `json:"resets"`
	Cleared int `json:"cleared"`
	Gone    int `json:"gone"`
	// Policies are the TTLs the writes gave the key, in seconds, lowest
	// first; -1 is "no TTL". A policy seen only at the first sample is a
	// lower bound.
	Policies []int64     `json:"policies"`
	Series   []TTLSample `json:"series,omitempty"` // the samples where something changed
	// Unobserved is how long the key's node could not be sampled (a lost
	// connection): "steady" is not said of a key with gaps.
	Unobserved Millis `json:"unobserved_ms,omitempty"`
}

// Fluctuates reports two or more TTL policies: writers with different
// TTL strategies.
func (w *TTLWatch) Fluctuates() bool { return len(w.Policies) > 1 }

// analyzeTTL reads the TTL policies out of PTTL samples taken every
// interval. Between writes a TTL falls as fast as time passes; a reading
// off the previous one minus the time elapsed (beyond tolerance, either
// way) is a write that set it again, and that reading is the new policy
// less the time since that write (at most one interval). Readings of "no
// TTL" are the policy "none".
func analyzeTTL(key string, samples []TTLSample, interval time.Duration) TTLWatch {
	w := TTLWatch{Key: key, Samples: len(samples)}
	if len(samples) == 0 {
		return w
	}
	base := max(20*time.Millisecond, interval/20)
	tol := (base + 30*time.Millisecond).Milliseconds() // for the first reading and the policies
	var levels []int64
	first := samples[0]
	w.Series = append(w.Series, first)
	if first.PTTL == -1 {
		levels = append(levels, -1)
	}
	for i := 1; i < len(samples); i++ {
		prev, s := samples[i-1], samples[i]
		changed := true
		switch {
		case s.PTTL == -2:
			if prev.PTTL != -2 {
				w.Gone++
			} else {
				changed = false
			}
		case s.PTTL == -1:
			if prev.PTTL >= 0 {
				w.Cleared++
			}
			if prev.PTTL == -1 {
				changed = false
			}
			levels = append(levels, -1)
		case prev.PTTL < 0:
			w.Resets++
			levels = append(levels, s.PTTL)
		default:
			// The server read each PTTL somewhere in its round trip.
			slack := (base + (prev.rtt+s.rtt)/2).Milliseconds()
			expected := prev.PTTL - time.Duration(s.At-prev.At).Milliseconds()
			if s.PTTL > expected+slack || s.PTTL < expected-slack {
				w.Resets++
				levels = append(levels, s.PTTL)
			} else {
				changed = false
			}
		}
		if changed {
			w.Series = append(w.Series, s)
		}
	}
	if first.PTTL > 0 {
		// The first reading decays from an unknown write: it is a policy
		// of its own only if no later policy explains it.
		explained := false
		for _, l := range levels {
			explained = explained || (l > 0 && first.PTTL <= l+tol+interval.Milliseconds())
		}
		if !explained {
			levels = append(levels, first.PTTL)
		}
	}
	w.Policies = policies(levels, interval.Milliseconds()+tol)
	return w
}

// policies clusters TTL readings (ms) into distinct policies (seconds):
// readings within slack (+2%) of each other are one policy, reported by
// its highest reading rounded up to a second.
func policies(levels []int64, slack int64) []int64 {
	sort.Slice(levels, func(i, j int) bool { return levels[i] < levels[j] })
	var out []int64
	var top int64 = -2
	for _, l := range levels {
		if l == -1 {
			if len(out) == 0 || out[0] != -1 {
				out = append(out, -1)
			}
			continue
		}
		if top >= 0 && l-top <= slack+top/50 {
			top = l
			out[len(out)-1] = (l + 999) / 1000
			continue
		}
		top = l
		out = append(out, (l+999)/1000)
	}
	return out
}

// watched is one key under watch: its node and the samples taken.
type watched struct {
	key     *KeyInfo
	samples []TTLSample
	shapes  []Shape // distinct shapes seen, in order
	types   []string
	lost    time.Duration // time its node could not be sampled
}

// watch samples PTTL (and TYPE, and the value's shape for the first
// shapeKeys keys) of every key each interval until d has passed or ctx
// ends. Nodes are sampled in parallel, each with one pipeline a tick.
//
// A node that cannot be sampled (connection lost) leaves a Span for each
// stretch it was not observed.
func watch(ctx context.Context, keys []*KeyInfo, d, interval time.Duration, shapeKeys int) ([]*watched, []Span) {
	byNode := map[*node][]*watched{}
	var all []*watched
	for _, k := range keys {
		w := &watched{key: k}
		byNode[k.node] = append(byNode[k.node], w)
		all = append(all, w)
	}
	start := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var spans []Span
	for n, ws := range byNode {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.NewTicker(interval)
			defer t.Stop()
			from := time.Duration(-1)
			var why error
			// gap ends a stretch not observed at to.
			gap := func(to time.Duration) {
				if from < 0 {
					return
				}
				for _, w := range ws {
					w.lost += to - from
				}
				mu.Lock()
				spans = append(spans, Span{Step: "TTL watch", Node: n.addr, From: Millis(from), To: Millis(to), Reason: why.Error()})
				mu.Unlock()
				from = -1
			}
			defer func() { gap(min(time.Since(start), d)) }()
			for {
				sent := time.Since(start)
				if err := sampleOnce(ctx, n, ws, start, shapeKeys); err != nil && ctx.Err() == nil {
					if from < 0 {
						from, why = sent, err
					}
				} else if err == nil {
					gap(sent)
				}
				if time.Since(start)+interval > d {
					return
				}
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
			}
		}()
	}
	wg.Wait()
	return all, spans
}

// sampleOnce reads PTTL and TYPE of every key of one node in one
// pipeline, then the shapes of the first shapeKeys keys by their type.
func sampleOnce(ctx context.Context, n *node, ws []*watched, start time.Time, shapeKeys int) error {
	sent := time.Since(start)
	pt := make([]*redis.DurationCmd, len(ws))
	ty := make([]*redis.StatusCmd, len(ws))
	_, err := n.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, w := range ws {
			pt[i] = p.PTTL(ctx, w.key.Key)
			ty[i] = p.Type(ctx, w.key.Key)
		}
		return nil
	})
	if err != nil && !pipelineReplyErr(err) {
		return err // a lost sample: the analysis works on the ones taken, the caller notes the gap
	}
	rtt := time.Since(start) - sent
	for i, w := range ws {
		w.samples = append(w.samples, TTLSample{At: Millis(sent + rtt/2), PTTL: pttlMillis(pt[i]), rtt: rtt})
		w.types = appendOnce(w.types, ty[i].Val())
	}
	m := min(shapeKeys, len(ws))
	if m == 0 {
		return nil
	}
	ps := make([]probe, m)
	_, err = n.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, w := range ws[:m] {
			ps[i] = queueShape(ctx, p, w.key.Key, ty[i].Val(), false)
		}
		return nil
	})
	if err != nil && !pipelineReplyErr(err) {
		return nil // the TTLs were read; only shapes are missing
	}
	for i, w := range ws[:m] {
		var length int64
		if ps[i].length != nil {
			length = ps[i].length.Val()
		}
		s, _ := readShape(ty[i].Val(), length, ps[i], false)
		if s.Type != "" && !containsShape(w.shapes, s) {
			w.shapes = append(w.shapes, s)
		}
	}
	return nil
}

func containsShape(ss []Shape, s Shape) bool {
	for _, x := range ss {
		if x.Type == s.Type && x.Kind == s.Kind && x.Open == s.Open && slices.Equal(x.Fields, s.Fields) {
			return true
		}
	}
	return false
}
