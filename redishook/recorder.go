package redishook

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/registry"
)

// Writer records live under one hash tag, so that on Redis Cluster they
// share a slot: a flush is one pipeline to one node, and 'keyguard writers'
// reads them all from it.
//
//	keyguard:{writers}:index      hash  template id → template text (persistent)
//	keyguard:{writers}:t:<id>     zset  service → last write, unix ms; trimmed to the window, TTL = window
//
// <id> is TemplateID(template): 16 hex digits of the SHA-256 of the template
// text, stable across registry edits that keep the template. RecordRegistry
// declares these keys for keyguard.yaml. The hook never refuses keys under
// RecordPrefix, declared in the registry or not (nor the hot-key reports
// under hotkey.RecordPrefix).
const (
	RecordPrefix   = "keyguard:{writers}:"
	RecordIndexKey = RecordPrefix + "index"
)

// RecordRegistry is the keyguard.yaml fragment declaring the writer records
// (a domain and two keys). The braces of the hash tag are doubled, as
// literal braces are in templates.
const RecordRegistry = `domains:
  keyguard: {owner: keyguard, desc: "keyguard's own records (redishook.Recorder)"}
keys:
  - key: "keyguard:{{writers}}:index"
    type: hash
    persistent: true
    desc: "writer records: template id -> template text"
  - key: "keyguard:{{writers}}:t:{id:hex}"
    type: zset
    ttl: 24h
    desc: "writer records of one template: service -> last write (unix ms)"
`

// TemplateID is the id of a template in the writer records.
func TemplateID(template string) string {
	sum := sha256.Sum256([]byte(template))
	return hex.EncodeToString(sum[:8])
}

// RecordKey is the sorted set holding the writers of template.
func RecordKey(template string) string { return RecordPrefix + "t:" + TemplateID(template) }

// Recorder defaults.
const (
	DefaultFlushEvery = 10 * time.Second
	DefaultWindow     = 24 * time.Hour
)

// RecorderOptions configures a Recorder.
type RecorderOptions struct {
	// Every is the flush interval (DefaultFlushEvery when zero). It is also
	// the resolution of the recorded last-write times.
	Every time.Duration
	// Window is how long records are kept (DefaultWindow when zero).
	Window time.Duration
	// Logger receives flush errors. Nil discards.
	Logger *slog.Logger
}

// Recorder collects which templates this process's services wrote and
// flushes that to Redis in the background, where 'keyguard writers' finds a
// second writer. The command path only sets a flag per template (an atomic
// load, and a store the first time after a flush); all Redis I/O happens in
// Flush, from the goroutine Start runs or from the caller. It never does
// I/O inside a hook, which would deadlock go-redis auto-pipelining.
type Recorder struct {
	c      redis.Cmdable
	every  time.Duration
	window time.Duration
	log    *slog.Logger

	mu      sync.Mutex
	tables  []*writeTable
	cancel  context.CancelFunc
	done    chan struct{}
	lastErr error
}

// writeTable is the dirty flag per registry entry of one (registry, service).
type writeTable struct {
	reg       *registry.Registry
	service   string
	templates []string
	ids       []string
	dirty     []atomic.Uint32
}

// mark flags entry i as written. Loading first keeps the cache line shared
// between cores while the flag is already set.
func (t *writeTable) mark(i int32) {
	if d := &t.dirty[i]; d.Load() == 0 {
		d.Store(1)
	}
}

// NewRecorder returns a recorder that flushes through c. Give it its own
// client (not one with the Hook on it in auto-pipelining mode); its keys are
// under RecordPrefix, which the hook lets through anyway.
func NewRecorder(c redis.Cmdable, opts RecorderOptions) *Recorder {
	r := &Recorder{c: c, every: opts.Every, window: opts.Window, log: opts.Logger}
	if r.every <= 0 {
		r.every = DefaultFlushEvery
	}
	if r.window <= 0 {
		r.window = DefaultWindow
	}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	return r
}

// table returns the write table of (reg, service), creating it.
func (r *Recorder) table(reg *registry.Registry, service string) *writeTable {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range r.tables {
		if t.reg == reg && t.service == service {
			return t
		}
	}
	t := &writeTable{reg: reg, service: service, dirty: make([]atomic.Uint32, len(reg.Entries))}
	for _, e := range reg.Entries {
		s := e.Template.String()
		t.templates = append(t.templates, s)
		t.ids = append(t.ids, TemplateID(s))
	}
	r.tables = append(r.tables, t)
	return t
}

// Start flushes every Options.Every in a background goroutine until ctx
// ends or Close is called. Calling Start again while running does nothing.
func (r *Recorder) Start(ctx context.Context) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done != nil {
		return
	}
	ctx, r.cancel = context.WithCancel(ctx)
	r.done = make(chan struct{})
	go r.loop(ctx, r.done)
}

func (r *Recorder) loop(ctx context.Context, done chan struct{}) {
	defer close(done)
	tick := time.NewTicker(r.every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if err := r.Flush(ctx); err != nil && ctx.Err() == nil {
				r.log.Warn("keyguard: flush writer records", "err", err)
			}
		}
	}
}

// Close stops the background flush and flushes what is left, waiting at
// most 5 s. It returns the error of that last flush.
func (r *Recorder) Close() error {
	r.mu.Lock()
	cancel, done := r.cancel, r.done
	r.cancel, r.done = nil, nil
	r.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
	ctx, stop := context.WithTimeout(context.Background(), 5*time.Second)
	defer stop()
	return r.Flush(ctx)
}

// Flush writes the templates written since the last flush: for each, the
// service's last-write time (ZADD GT, so a lagging clock never moves it
// back), the trim of records older than the window, the set's TTL and the
// id → template index. On error the marks are kept for the next flush.
func (r *Recorder) Flush(ctx context.Context) error {
	r.mu.Lock()
	tables := r.tables
	r.mu.Unlock()

	type pending struct {
		t *writeTable
		i int
	}
	var todo []pending
	for _, t := range tables {
		for i := range t.dirty {
			if t.dirty[i].Swap(0) != 0 {
				todo = append(todo, pending{t, i})
			}
		}
	}
	if len(todo) == 0 {
		return nil
	}
	now := time.Now().UnixMilli()
	oldest := "(" + strconv.FormatInt(now-r.window.Milliseconds(), 10)
	pipe := r.c.Pipeline()
	for _, p := range todo {
		key := RecordPrefix + "t:" + p.t.ids[p.i]
		pipe.HSet(ctx, RecordIndexKey, p.t.ids[p.i], p.t.templates[p.i])
		pipe.ZAddGT(ctx, key, redis.Z{Score: float64(now), Member: p.t.service})
		pipe.ZRemRangeByScore(ctx, key, "-inf", oldest)
		pipe.PExpire(ctx, key, r.window)
	}
	_, err := pipe.Exec(ctx)
	if err != nil {
		for _, p := range todo {
			p.t.mark(int32(p.i))
		}
		err = fmt.Errorf("redishook: flush writer records (%d templates): %w; the records are kept for the next flush", len(todo), err)
	}
	r.mu.Lock()
	r.lastErr = err
	r.mu.Unlock()
	return err
}

// Writer is one service that wrote a template.
type Writer struct {
	Service   string
	LastWrite time.Time
	// Allowed: the service is the template's owner or in its writers. False
	// when the template is not in the registry.
	Allowed bool
}

// TemplateWriters is who wrote one template within the window.
type TemplateWriters struct {
	ID       string
	Template string
	// Entry is the registry entry of Template; nil when the registry has no
	// such template (renamed or removed since the records were written).
	Entry   *registry.Entry
	Writers []Writer // most recent first
}

// Violation reports whether a writer is not allowed by a registered template.
func (t *TemplateWriters) Violation() bool {
	if t.Entry == nil {
		return false
	}
	for _, w := range t.Writers {
		if !w.Allowed {
			return true
		}
	}
	return false
}

// IndexedTemplates is the number of templates the writer records name,
// however old their records. Zero means no Recorder has ever flushed to
// this server (or its database), which 'keyguard writers' reports as a
// warning rather than as a clean result.
func IndexedTemplates(ctx context.Context, c redis.Cmdable) (int64, error) {
	n, err := c.HLen(ctx, RecordIndexKey).Result()
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", RecordIndexKey, err)
	}
	return n, nil
}

// ReadWriters reads the writer records written since since and judges them
// against reg. Templates without a write since then are left out. The
// result is sorted by template.
func ReadWriters(ctx context.Context, c redis.Cmdable, reg *registry.Registry, since time.Time) ([]TemplateWriters, error) {
	index, err := c.HGetAll(ctx, RecordIndexKey).Result()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", RecordIndexKey, err)
	}
	if len(index) == 0 {
		return nil, nil
	}
	byTemplate := map[string]*registry.Entry{}
	if reg != nil {
		for _, e := range reg.Entries {
			byTemplate[e.Template.String()] = e
		}
	}
	ids := make([]string, 0, len(index))
	for id := range index {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return index[ids[i]] < index[ids[j]] })
	min := strconv.FormatInt(since.UnixMilli(), 10)
	pipe := c.Pipeline()
	cmds := make([]*redis.ZSliceCmd, len(ids))
	for i, id := range ids {
		cmds[i] = pipe.ZRevRangeByScoreWithScores(ctx, RecordPrefix+"t:"+id, &redis.ZRangeBy{Min: min, Max: "+inf"})
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("read writer records: %w", err)
	}
	var out []TemplateWriters
	for i, id := range ids {
		zs := cmds[i].Val()
		if len(zs) == 0 {
			continue
		}
		tw := TemplateWriters{ID: id, Template: index[id], Entry: byTemplate[index[id]]}
		for _, z := range zs {
			svc, _ := z.Member.(string)
			w := Writer{Service: svc, LastWrite: time.UnixMilli(int64(z.Score))}
			w.Allowed = tw.Entry != nil && tw.Entry.MayWrite(svc)
			tw.Writers = append(tw.Writers, w)
		}
		out = append(out, tw)
	}
	return out, nil
}
