package investigate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/registry"
)

// Defaults of Options.
const (
	DefaultWatch      = 10 * time.Second
	DefaultWatchEvery = 250 * time.Millisecond
	DefaultMaxKeys    = 1000
	DefaultSelf       = "keyguard-investigate"

	// maxWatchKeys bounds the keys whose TTL is sampled, shapeWatchKeys
	// those whose value shape is sampled too (each costs a read a tick).
	maxWatchKeys   = 200
	shapeWatchKeys = 50
)

// Options tune an investigation. Target says what to look at; the rest
// turns steps on and bounds them.
type Options struct {
	Target
	Display  string // the server as the report names it (a URL without password)
	Registry string // the registry file, for the report

	MaxKeys    int           // keys kept from the search; default DefaultMaxKeys
	SearchRate float64       // keys listed per second by the key search, all masters together; 0 no limit
	Watch      time.Duration // how long to sample TTLs; 0 no watch
	WatchEvery time.Duration // sampling interval; default DefaultWatchEvery

	// Monitor is how long to capture writers with MONITOR on every master
	// that holds the keys; 0 no capture. MaxLines and MaxBytes cap each
	// node's capture (defaults DefaultMonitorLines, DefaultMonitorBytes).
	Monitor  time.Duration
	MaxLines int64
	MaxBytes int64

	// Notify listens to keyspace notifications for NotifyFor (default
	// Watch, else DefaultWatch): timing without identity. EnableNotify
	// lets Run turn them on where they are off, restoring the setting.
	Notify       bool
	NotifyFor    time.Duration
	EnableNotify bool

	// Styles are value styles known beyond the registry's declared fields
	// (such as styles learned per owner across a whole audit); they explain
	// values the way declared fields do.
	Styles []DeclaredStyle

	ShowValues bool // put cut values in the report; off by default (values may hold personal data)
	// NoRegistry: no registry was given or found (the registry passed to
	// Run is empty): the keys are of their inferred families, and none is
	// reported unregistered.
	NoRegistry bool
	Self       string // the client name of the caller's and keyguard's own connections, left out of the evidence; default DefaultSelf
	Logger     *slog.Logger
}

func (o *Options) defaults() {
	if o.MaxKeys <= 0 {
		o.MaxKeys = DefaultMaxKeys
	}
	if o.WatchEvery <= 0 {
		o.WatchEvery = DefaultWatchEvery
	}
	if o.MaxLines <= 0 {
		o.MaxLines = DefaultMonitorLines
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMonitorBytes
	}
	if o.NotifyFor <= 0 {
		o.NotifyFor = o.Watch
		if o.NotifyFor <= 0 {
			o.NotifyFor = DefaultWatch
		}
	}
	if o.Self == "" {
		o.Self = DefaultSelf
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// Run investigates the keys opts names on c (a *redis.Client or a
// *redis.ClusterClient; name its connections opts.Self so that its reads
// are not taken for a client's): find them on every master, look at their
// values, read the slow log, then watch TTLs, capture writers and listen
// to notifications at once, and conclude. It returns an error only when
// it could not do its job (a node unreachable, MONITOR refused); the
// evidence is in the report.
func Run(ctx context.Context, reg *registry.Registry, c redis.UniversalClient, opts Options) (*Report, error) {
	if err := opts.Target.validate(); err != nil {
		return nil, err
	}
	opts.defaults()
	start := time.Now()
	nodes, err := nodesOf(ctx, c)
	if err != nil {
		return nil, err
	}
	r := &Report{Target: opts.Display, Registry: opts.Registry, NoRegistry: opts.NoRegistry, StartedAt: start.UTC(), Nodes: len(nodes), ShowValues: opts.ShowValues,
		Query: Query{ID: opts.ID, Key: opts.Key, Match: opts.Match}, Styles: []Style{}, SlowLog: []SlowEntry{}, Findings: nil}
	keys, err := r.findAndLook(ctx, reg, c, nodes, &opts)
	if err != nil {
		return nil, err
	}
	keep := opts.keeps(reg.Separator)
	if r.SlowLog, r.SlowLogNotRead, err = slowlog(ctx, nodes, keep, opts.ShowValues, r.notSearched); err != nil {
		return nil, err
	}
	if r.SlowLog == nil {
		r.SlowLog = []SlowEntry{}
	}
	p, err := r.observe(ctx, nodes, keys, keep, &opts)
	if err != nil {
		return nil, err
	}
	p.reg, p.keys, p.self = reg, keys, opts.Self
	p.styles = append(DeclaredStyles(reg), opts.Styles...)
	conclude(r, p)
	for _, k := range keys {
		r.Keys = append(r.Keys, *k)
	}
	if r.Keys == nil {
		r.Keys = []KeyInfo{}
	}
	if r.Findings == nil {
		r.Findings = []finding.Finding{}
	}
	r.Duration = Millis(time.Since(start))
	return r, nil
}

// notSearched reports whether the key search lists the node addr among
// what it did not cover (down, unreachable).
func (r *Report) notSearched(addr string) bool {
	return r.Search != nil && slices.ContainsFunc(r.Search.NotCovered, func(g report.Gap) bool { return g.Node == addr })
}

// findAndLook finds the keys on every node and reads what they hold.
func (r *Report) findAndLook(ctx context.Context, reg *registry.Registry, rdb redis.UniversalClient, nodes []*node, opts *Options) ([]*KeyInfo, error) {
	s, err := find(ctx, rdb, nodes, opts.Target, reg.Separator, opts.MaxKeys, opts.Self, opts.SearchRate)
	if err != nil {
		return nil, err
	}
	fs := s.keys
	r.MoreKeys, r.Search, r.SearchNotes = s.more, s.coverage, s.notes
	opts.Logger.Info("keys found", "keys", len(fs), "more", s.more, "complete", s.coverage == nil || len(s.coverage.NotCovered) == 0)
	chk := reg.NewChecker()
	keys := make([]*KeyInfo, len(fs))
	byNode := map[*node][]*KeyInfo{}
	for i, f := range fs {
		k := &KeyInfo{Key: f.key, Node: f.node.addr, node: f.node}
		if e := reg.Lookup(f.key); e != nil {
			k.Template, k.Owner, k.Registered = e.Key, e.Owner, true
		} else {
			k.Inferred = chk.Infer(f.key)
		}
		keys[i] = k
		byNode[f.node] = append(byNode[f.node], k)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for n, ks := range byNode {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := look(ctx, n, ks, opts.ShowValues); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return keys, errors.Join(errs...)
}

// observe runs the watch, the captures and the notification listener at
// once and returns what they gathered.
func (r *Report) observe(ctx context.Context, nodes []*node, keys []*KeyInfo, keep func(string) bool, opts *Options) (parts, error) {
	p := parts{interval: opts.WatchEvery}
	var wg sync.WaitGroup
	var capErr, notifyErr error
	var watched time.Duration
	var readable []*KeyInfo // a key the user may not read has no TTL to watch
	for _, k := range keys {
		if !k.Unreadable && k.NotRead == "" {
			readable = append(readable, k)
		}
	}
	if opts.Watch > 0 && len(readable) > 0 {
		wk := readable[:min(len(readable), maxWatchKeys)]
		r.Watch = &WatchResult{Duration: Millis(opts.Watch), Interval: Millis(opts.WatchEvery), Keys: []TTLWatch{}, Unwatched: len(readable) - len(wk)}
		wg.Add(1)
		go func() {
			defer wg.Done()
			opts.Logger.Info("watching TTLs", "keys", len(wk), "for", opts.Watch)
			start := time.Now()
			p.watched, p.lost = watch(ctx, wk, opts.Watch, opts.WatchEvery, shapeWatchKeys)
			watched = time.Since(start)
		}()
	}
	if opts.Monitor > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.caps, capErr = captureAll(ctx, captureNodes(nodes, keys), keep, opts)
		}()
	}
	if opts.Notify {
		wg.Add(1)
		go func() {
			defer wg.Done()
			opts.Logger.Info("listening to keyspace notifications", "nodes", len(nodes), "for", opts.NotifyFor)
			p.notify, notifyErr = notify(ctx, nodes, nodes[0].c.Options().DB, opts.Target, keep, opts.NotifyFor, opts.EnableNotify)
		}()
	}
	wg.Wait()
	if r.Watch != nil && ctx.Err() != nil && watched < opts.Watch {
		// Stopped early: the report says the span it watched.
		r.Watch.Duration, r.Watch.Planned = Millis(watched), Millis(opts.Watch)
	}
	if err := errors.Join(capErr, notifyErr); err != nil {
		return p, err
	}
	if len(p.caps) > 0 {
		r.Capture = &CaptureResult{Nodes: []NodeCapture{}, Keys: []KeyActivity{}}
		r.Capture.Limits.Duration, r.Capture.Limits.MaxLines, r.Capture.Limits.MaxBytes = Millis(opts.Monitor), opts.MaxLines, opts.MaxBytes
		for _, nc := range p.caps {
			r.Capture.Nodes = append(r.Capture.Nodes, *nc)
			if nc.Stopped == StopServer && time.Duration(nc.Duration) < opts.Monitor {
				p.lost = append(p.lost, Span{Step: "capture", Node: nc.Addr, From: nc.Duration, To: Millis(opts.Monitor),
					Reason: cmp.Or(nc.Reason, StopServer)})
			}
		}
	}
	r.NotObserved = p.lost
	r.Notify = p.notify
	return p, nil
}

// captureNodes is the masters that hold the keys; every master when no key
// was found yet (one may be created during the capture).
func captureNodes(nodes []*node, keys []*KeyInfo) []*node {
	var out []*node
	seen := map[*node]bool{}
	for _, k := range keys {
		if !seen[k.node] {
			seen[k.node] = true
			out = append(out, k.node)
		}
	}
	if len(out) == 0 {
		return nodes
	}
	return out
}

// captureAll runs one capture per node at once. A node whose capture
// cannot start fails the run: the evidence would be silently partial.
func captureAll(ctx context.Context, nodes []*node, keep func(string) bool, opts *Options) ([]*NodeCapture, error) {
	lim := CaptureLimits{Duration: opts.Monitor, MaxLines: opts.MaxLines, MaxBytes: opts.MaxBytes}
	out := make([]*NodeCapture, len(nodes))
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	opts.Logger.Info("capturing with MONITOR", "nodes", len(nodes), "for", opts.Monitor, "max_lines", opts.MaxLines, "max_bytes", opts.MaxBytes)
	for i, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			att := NewAttributor(n.c.Options().DB, keep)
			out[i], errs[i] = capture(ctx, n, opts.Self, lim, att)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("capture: %w", err)
	}
	return out, nil
}
