package hotkey

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/hotkey/topk"
	"github.com/keyguard/keyguard/internal/rediscmd"
	"github.com/keyguard/keyguard/keytmpl"
	"github.com/keyguard/keyguard/registry"
)

// Detector defaults.
const (
	DefaultTopK        = 64
	DefaultWindow      = 10 * time.Second
	DefaultReportEvery = 10 * time.Second
	DefaultReportTTL   = 10 * time.Minute
)

// TemplateUnregistered is the template label of keys matching no template.
const TemplateUnregistered = "unregistered"

// DetectorOptions configures a Detector.
type DetectorOptions struct {
	// Service names this process in reports, as the registry's owner and
	// writers fields do ("catalog-team"). Required to report.
	Service string
	// TopK is how many keys the detector tracks (DefaultTopK when zero).
	TopK int
	// Window is the ageing period: every Window all counts halve, so a key
	// read at a steady rate r counts about 2·r·Window (DefaultWindow).
	Window time.Duration
	// ReportEvery is the interval of the reports Start writes to Redis
	// (DefaultReportEvery), ReportTTL how long a report outlives its
	// writer (DefaultReportTTL).
	ReportEvery, ReportTTL time.Duration
	// Registerer receives the metrics; nil counts without exporting.
	Registerer prometheus.Registerer
	// Logger receives report errors; nil discards.
	Logger *slog.Logger
	// Seed seeds the sketch's hash; zero picks one.
	Seed uint64
}

// Detector finds the hottest keys of this process: a go-redis hook (or
// direct Observe calls) feeds a concurrent top-k sketch with every key
// read or written; the top keys are classified per template (and region),
// exported as metrics and reported to Redis, where 'keyguard hotkeys'
// merges the reports of every instance.
type Detector struct {
	reg      *registry.Registry
	sk       *topk.Sketch
	opts     DetectorOptions
	id       string
	meta     instanceMeta
	m        *metrics
	log      *slog.Logger
	halvings atomic.Int64
	lastAge  atomic.Int64 // unix ns of the last halving (or the start)

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

// NewDetector returns a detector over reg. It does not contact Redis.
func NewDetector(reg *registry.Registry, opts DetectorOptions) (*Detector, error) {
	if reg == nil {
		return nil, fmt.Errorf("hotkey: nil registry; load one with registry.Load")
	}
	if opts.TopK <= 0 {
		opts.TopK = DefaultTopK
	}
	if opts.Window <= 0 {
		opts.Window = DefaultWindow
	}
	if opts.ReportEvery <= 0 {
		opts.ReportEvery = DefaultReportEvery
	}
	if opts.ReportTTL <= 0 {
		opts.ReportTTL = DefaultReportTTL
	}
	m, err := newMetrics(opts.Registerer)
	if err != nil {
		return nil, fmt.Errorf("hotkey: register metrics: %w (another collector uses a keyguard_hotkey_ name)", err)
	}
	d := &Detector{
		reg:  reg,
		sk:   topk.New(topk.Options{K: opts.TopK, Seed: opts.Seed}),
		opts: opts,
		id:   newID(),
		m:    m,
		log:  opts.Logger,
	}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	d.meta = newMeta(opts.Service, opts.Window)
	d.lastAge.Store(time.Now().UnixNano())
	return d, nil
}

// newID is a random instance id: 16 hex digits.
func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// ID returns the instance id this detector reports under.
func (d *Detector) ID() string { return d.id }

// Observe counts one access to key.
func (d *Detector) Observe(key string) { d.sk.Observe(key) }

// span is the time the current counts cover: since the last halving,
// plus the halved past (W + W/2 + … for each halving).
func (d *Detector) span(now time.Time) time.Duration {
	n := min(d.halvings.Load(), 62)
	w := float64(d.opts.Window)
	s := time.Duration(float64(now.UnixNano()-d.lastAge.Load()) + w*(2-math.Ldexp(2, -int(n))))
	return max(s, time.Second)
}

// Rate returns the estimated operations per second on key.
func (d *Detector) Rate(key string) float64 {
	c := d.sk.Count(key)
	if c == 0 {
		return 0
	}
	return float64(c) / d.span(time.Now()).Seconds()
}

// Halve ages the counts by one window; Start calls it every Window.
func (d *Detector) Halve() {
	d.sk.Halve()
	d.halvings.Add(1)
	d.lastAge.Store(time.Now().UnixNano())
}

// Hot is one hot key: its template (nil when unregistered), the region
// when the template has a {name:region} placeholder, and its rate.
type Hot struct {
	Key    string
	Entry  *registry.Entry
	Region string
	Rate   float64 // operations per second
	Count  uint32  // the sketch's (aged) count
}

// Template returns the template text, or TemplateUnregistered.
func (h *Hot) Template() string {
	if h.Entry == nil {
		return TemplateUnregistered
	}
	return h.Entry.Template.String()
}

// Top returns this process's hottest keys, hottest first. Copies of a
// replicated key count as the key.
func (d *Detector) Top() []Hot {
	span := d.span(time.Now()).Seconds()
	items := d.sk.Top(nil)
	out := make([]Hot, 0, len(items))
	at := map[string]int{}
	for _, it := range items {
		key, e, region := Classify(d.reg, it.Key)
		if i, ok := at[key]; ok {
			out[i].Count += it.Count
			out[i].Rate = float64(out[i].Count) / span
			continue
		}
		at[key] = len(out)
		out = append(out, Hot{Key: key, Entry: e, Region: region, Count: it.Count, Rate: float64(it.Count) / span})
	}
	sortHot(out)
	return out
}

// Classify returns the key a name stands for (a copy's base key when the
// base's template is replicated), its entry and region.
func Classify(reg *registry.Registry, name string) (string, *registry.Entry, string) {
	key := name
	if base, ok := BaseKey(name); ok {
		if e := reg.Lookup(base); e != nil && e.Hot != nil && e.Hot.Replicas > 1 {
			key = base
		}
	}
	e, caps := reg.Classify(key)
	return key, e, regionOf(e, caps)
}

// regionOf returns the value of the entry's first region placeholder.
func regionOf(e *registry.Entry, caps []keytmpl.Capture) string {
	if e == nil {
		return ""
	}
	for _, p := range e.Template.Placeholders() {
		if p.Kind != keytmpl.Region {
			continue
		}
		for _, c := range caps {
			if c.Name == p.Name {
				return c.Value
			}
		}
	}
	return ""
}

// updateMetrics sets the per-template gauges from top.
func (d *Detector) updateMetrics(top []Hot) {
	type agg struct {
		rate float64
		n    int
	}
	per := map[string]agg{}
	for i := range top {
		t := top[i].Template()
		a := per[t]
		a.rate = max(a.rate, top[i].Rate)
		a.n++
		per[t] = a
	}
	d.m.rate.Reset()
	d.m.topKeys.Reset()
	for t, a := range per {
		d.m.rate.WithLabelValues(t).Set(a.rate)
		d.m.topKeys.WithLabelValues(t).Set(float64(a.n))
	}
}

// Start ages the counts every Window and, when c is not nil, reports the
// top keys to Redis every ReportEvery, in a background goroutine until
// ctx ends or Close is called. Give it a client without auto-pipelining
// (the reports are a MULTI/EXEC). Calling Start again does nothing.
func (d *Detector) Start(ctx context.Context, c redis.Cmdable) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.done != nil {
		return
	}
	ctx, d.cancel = context.WithCancel(ctx)
	d.done = make(chan struct{})
	go d.loop(ctx, c, d.done)
}

func (d *Detector) loop(ctx context.Context, c redis.Cmdable, done chan struct{}) {
	defer close(done)
	age := time.NewTicker(d.opts.Window)
	defer age.Stop()
	report := time.NewTicker(d.opts.ReportEvery)
	defer report.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-age.C:
			d.Halve()
		case <-report.C:
			if c == nil {
				d.updateMetrics(d.Top())
				continue
			}
			if err := d.Flush(ctx, c); err != nil && ctx.Err() == nil {
				d.log.Warn("keyguard: hot-key report", "err", err)
			}
		}
	}
}

// Close stops Start's goroutine.
func (d *Detector) Close() error {
	d.mu.Lock()
	cancel, done := d.cancel, d.done
	d.cancel, d.done = nil, nil
	d.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
	return nil
}

// skipDetection marks a context whose commands the hook does not count:
// the Cache counts its reads itself, as the key rather than the copy.
type skipDetection struct{}

func withoutDetection(ctx context.Context) context.Context {
	return context.WithValue(ctx, skipDetection{}, true)
}

// Install adds the detector's hook to c.
func (d *Detector) Install(c redis.UniversalClient) { c.AddHook(d) }

// DialHook implements redis.Hook; it does nothing.
func (d *Detector) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessHook implements redis.Hook: every key of the command is counted.
func (d *Detector) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if ctx.Value(skipDetection{}) == nil {
			d.observeArgs(cmd.Args())
		}
		return next(ctx, cmd)
	}
}

// ProcessPipelineHook implements redis.Hook.
func (d *Detector) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if ctx.Value(skipDetection{}) == nil {
			for _, c := range cmds {
				d.observeArgs(c.Args())
			}
		}
		return next(ctx, cmds)
	}
}

func (d *Detector) observeArgs(args []any) {
	c, ok := rediscmd.LookupArgs(args)
	if !ok || c.Class == rediscmd.ClassNone {
		return
	}
	_ = c.Keys(args, func(_ int, key string, _ rediscmd.KeyFlags) bool {
		d.sk.Observe(key)
		return true
	})
}

// sortHot orders hot keys hottest first, ties by key.
func sortHot(hs []Hot) {
	slices.SortFunc(hs, func(a, b Hot) int {
		if a.Rate != b.Rate {
			if a.Rate > b.Rate {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Key, b.Key)
	})
}
