package hotkey

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/keyguard/keyguard/internal/pace"
	"github.com/keyguard/keyguard/keybuild"
	"github.com/keyguard/keyguard/keytmpl"
	"github.com/keyguard/keyguard/registry"
)

// MaxExpand bounds the keys Expand builds.
const MaxExpand = 10_000_000

// Batch is a group of keys preheated together before the next group:
// one region's keys, or a plain list (Region "").
type Batch struct {
	Region string
	Keys   []string
}

// Expand builds the keys of entry e from values for its placeholders,
// one batch per value of its first {name:region} placeholder (in the
// order given), so that a preheat goes region by region; without a
// region placeholder there is one batch. The other placeholders' values
// are combined in order. {name:hash} values are raw and hashed as the
// key builders hash them. Every key is checked to classify to e.
func Expand(reg *registry.Registry, e *registry.Entry, values map[string][]string) ([]Batch, error) {
	phs := e.Template.Placeholders()
	region := -1
	total := 1
	for i, p := range phs {
		vs := values[p.Name]
		if len(vs) == 0 {
			return nil, fmt.Errorf("no values for {%s} of %s", p.Name, e.Key)
		}
		if p.Kind == keytmpl.Region && region < 0 {
			region = i
		}
		total *= len(vs)
		if total > MaxExpand {
			return nil, fmt.Errorf("%s: more than %d keys; preheat in several runs", e.Key, MaxExpand)
		}
	}
	for name := range values {
		found := false
		for _, p := range phs {
			found = found || p.Name == name
		}
		if !found {
			return nil, fmt.Errorf("%s has no placeholder {%s}", e.Key, name)
		}
	}
	regions := []string{""}
	if region >= 0 {
		regions = values[phs[region].Name]
	}
	var batches []Batch
	pick := make([]string, len(phs))
	for _, rv := range regions {
		b := Batch{Region: rv}
		var rec func(i int) error
		rec = func(i int) error {
			if i == len(phs) {
				k, err := buildKey(reg, e, phs, pick)
				if err == nil {
					b.Keys = append(b.Keys, k)
				}
				return err
			}
			vs := values[phs[i].Name]
			if i == region {
				vs = []string{rv}
			}
			for _, v := range vs {
				if phs[i].Kind == keytmpl.Hash {
					v = keybuild.HashValue(v)
				}
				pick[i] = v
				if err := rec(i + 1); err != nil {
					return err
				}
			}
			return nil
		}
		if err := rec(0); err != nil {
			return nil, err
		}
		batches = append(batches, b)
	}
	return batches, nil
}

// buildKey writes the key of e with the placeholder values vals.
func buildKey(reg *registry.Registry, e *registry.Entry, phs []keytmpl.Placeholder, vals []string) (string, error) {
	var b strings.Builder
	i := 0
	for si, seg := range e.Template.Segments() {
		if si > 0 {
			b.WriteByte(e.Template.Separator())
		}
		for _, p := range seg.Parts {
			if p.IsPlaceholder() {
				b.WriteString(vals[i])
				i++
			} else {
				b.WriteString(p.Lit)
			}
		}
	}
	key := b.String()
	if got := reg.Lookup(key); got != e {
		what := "matches no template"
		if got != nil {
			what = "classifies to " + got.Key
		}
		var vs []string
		for j, p := range phs {
			vs = append(vs, p.Name+"="+vals[j])
		}
		return "", fmt.Errorf("%q (%s) %s, not %s: check the values' types", key, strings.Join(vs, " "), what, e.Key)
	}
	return key, nil
}

// PreheatOptions configures Preheat.
type PreheatOptions struct {
	// Rate caps keys per second (0: as fast as Concurrency allows).
	Rate float64
	// Concurrency is the number of keys loaded at once (default 4).
	Concurrency int
	// Missing preheats only keys absent from Redis (EXISTS first).
	Missing bool
	// Local also puts the values of hot templates into this process's
	// local tier (a service warming itself at start-up).
	Local bool
	// Progress, when set, is called after every key, one call at a time.
	Progress func(PreheatProgress)
}

// PreheatProgress counts the keys done so far.
type PreheatProgress struct {
	Done, Total int
	OK          int // loaded and stored
	Skipped     int // present already (Missing)
	Absent      int // the loader found nothing (ErrNotFound)
	Failed      int
	Batch       int    // index of the current batch
	Region      string // its region
	Elapsed     time.Duration
}

// KeyError is a key that could not be preheated.
type KeyError struct {
	Key string
	Err error
}

// PreheatResult is the final count, the count per batch and the first
// failures.
type PreheatResult struct {
	PreheatProgress
	Batches  []BatchResult
	Failures []KeyError // at most 100
}

// BatchResult counts one batch's keys.
type BatchResult struct {
	Region                            string
	Keys, OK, Skipped, Absent, Failed int
}

const maxFailures = 100

// Preheat loads the keys of batches through load and stores them as Set
// does (every copy, the template's TTL and jitter, invalidation of the
// other instances), batch after batch, at most Rate keys per second. A
// key that fails is counted and listed, and the others go on; the error
// is ctx's when it ends first.
func (c *Cache) Preheat(ctx context.Context, batches []Batch, load Loader, opts PreheatOptions) (*PreheatResult, error) {
	if opts.Concurrency <= 0 {
		opts.Concurrency = 4
	}
	res := &PreheatResult{}
	for _, b := range batches {
		res.Total += len(b.Keys)
	}
	var mu sync.Mutex
	lim := pace.New(opts.Rate, 1) // keys spaced 1/Rate apart
	start := time.Now()
	ctx = withoutDetection(ctx)
	for bi, b := range batches {
		res.Batch, res.Region = bi, b.Region
		res.Batches = append(res.Batches, BatchResult{Region: b.Region, Keys: len(b.Keys)})
		br := &res.Batches[bi]
		keys := make(chan string)
		var wg sync.WaitGroup
		for range opts.Concurrency {
			wg.Go(func() {
				for k := range keys {
					outcome, err := c.preheatKey(ctx, k, load, opts)
					mu.Lock()
					res.Done++
					switch outcome {
					case "ok":
						res.OK++
						br.OK++
					case "skipped":
						res.Skipped++
						br.Skipped++
					case "absent":
						res.Absent++
						br.Absent++
					default:
						res.Failed++
						br.Failed++
						if len(res.Failures) < maxFailures {
							res.Failures = append(res.Failures, KeyError{Key: k, Err: err})
						}
					}
					res.Elapsed = time.Since(start)
					if opts.Progress != nil {
						opts.Progress(res.PreheatProgress)
					}
					mu.Unlock()
				}
			})
		}
	feed:
		for _, k := range b.Keys {
			if err := lim.Wait(ctx, 1); err != nil {
				break feed
			}
			select {
			case keys <- k:
			case <-ctx.Done():
				break feed
			}
		}
		close(keys)
		wg.Wait()
		if err := ctx.Err(); err != nil {
			return res, fmt.Errorf("preheat stopped after %d of %d keys: %w", res.Done, res.Total, err)
		}
	}
	res.Elapsed = time.Since(start)
	return res, nil
}

// preheatKey loads and stores one key: "ok", "skipped", "absent" or
// "error" with the error.
func (c *Cache) preheatKey(ctx context.Context, key string, load Loader, opts PreheatOptions) (string, error) {
	s, err := c.state("preheat", key)
	if err != nil {
		return "error", err
	}
	outcome, err := c.preheatState(ctx, s, key, load, opts)
	c.m.pre.WithLabelValues(s.tmpl, outcome).Inc()
	return outcome, err
}

func (c *Cache) preheatState(ctx context.Context, s *entState, key string, load Loader, opts PreheatOptions) (string, error) {
	if opts.Missing {
		name := key
		if s.replicas > 1 {
			name = ReplicaKey(key, 0, s.replicas)
		}
		n, err := c.rdb.Exists(ctx, name).Result()
		if err != nil {
			return "error", fmt.Errorf("exists %q: %w", clip(name), err)
		}
		if n > 0 {
			return "skipped", nil
		}
	}
	lctx, cancel := context.WithTimeout(ctx, c.opts.LoadTimeout)
	v, err := load(lctx, key)
	cancel()
	switch {
	case errors.Is(err, ErrNotFound):
		return "absent", nil
	case err != nil:
		return "error", err
	}
	soft, err := c.setSoft(ctx, s, key, v)
	if err != nil {
		return "error", err
	}
	if opts.Local && s.localTTL > 0 && c.up.Load() {
		c.local.Set(key, localValue{v: v, soft: soft, ttl: s.localTTL, s: s})
	}
	return "ok", nil
}
