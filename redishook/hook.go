package redishook

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/guard"
	"github.com/keyguard/keyguard/registry"
)

// Mode is what the hook does with a command that breaks the registry's rules.
type Mode uint8

// Modes, from the most lenient.
const (
	// Observe only counts (metrics and writer records).
	Observe Mode = iota
	// Warn counts and logs each violation, rate-limited per template.
	Warn
	// Enforce refuses the command (the whole pipeline or transaction) with
	// a *DeniedError before anything is sent, and counts it.
	Enforce
)

func (m Mode) String() string {
	switch m {
	case Observe:
		return "observe"
	case Warn:
		return "warn"
	case Enforce:
		return "enforce"
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

// ParseMode parses "observe", "warn" or "enforce".
func ParseMode(s string) (Mode, error) {
	for _, m := range []Mode{Observe, Warn, Enforce} {
		if strings.EqualFold(s, m.String()) {
			return m, nil
		}
	}
	return 0, fmt.Errorf("redishook: mode %q: use observe, warn or enforce", s)
}

// DefaultWarnEvery is the default Options.WarnEvery.
const DefaultWarnEvery = 10 * time.Second

// Options configures a Hook.
type Options struct {
	// Service is the name of this writer, as the registry's owner and
	// writers fields spell it ("order-team"). Required.
	Service string
	Mode    Mode
	// Logger receives violations (warn mode) and refusals (enforce mode),
	// at most one line per template per WarnEvery. Nil discards.
	Logger *slog.Logger
	// Registerer receives the metrics (see the Metric constants). Nil
	// counts without exporting. Collectors already registered by another
	// Hook on the same Registerer are shared.
	Registerer prometheus.Registerer
	// Recorder, when set, receives this service's writes per template and
	// flushes them to Redis for 'keyguard writers'.
	Recorder *Recorder
	// WarnEvery is the minimum interval between two log lines about one
	// template (DefaultWarnEvery when zero). Suppressed lines are counted
	// in the next one.
	WarnEvery time.Duration
	// AllowUnknown names commands missing from keyguard's Redis 7.0 command
	// table that enforce mode lets through unchecked ("json.set",
	// "hsetex"). Case-insensitive.
	AllowUnknown []string
}

// Hook is a go-redis hook that classifies every key of every command
// against the registry, meters it and, in enforce mode, refuses writes the
// registry does not allow. It is safe for concurrent use; one Hook may be
// added to several clients.
type Hook struct {
	reg       *registry.Registry
	service   string
	mode      Mode
	log       *slog.Logger
	warnEvery int64 // ns
	m         *metrics
	ents      []entryState
	unreg     slotState // keys matching no template, keyspace and unknown commands
	unknown   prometheus.Counter
	rec       *writeTable
	allow     []string
	guardSHA  string // the guard script's digest: guarded writes are checked against declared fields
	err       error
}

// entryState is what the hot path needs about one registry entry, with its
// metric children resolved once at New.
type entryState struct {
	e          *registry.Entry
	mayWrite   bool
	ttl        bool // a TTL template: writes must leave a TTL
	persistent bool
	fields     fieldSet           // the declared value format; kind fieldsNone when undeclared
	schema     prometheus.Counter // nil when the template declares no fields
	slotState
}

type slotState struct {
	cmds    [2]prometheus.Counter // read, write
	denied  prometheus.Counter
	foreign prometheus.Counter // nil when this service may write the template
	lastLog atomic.Int64       // unix ns of the last log line
	quiet   atomic.Int64       // log lines suppressed since
}

// New returns a hook for service over reg. It does not contact Redis. A
// configuration error (no service, a metric name registered as another
// collector type) is returned by Err, and every command through the hook
// then fails with it: a misconfigured guard must not pass writes silently.
func New(reg *registry.Registry, opts Options) *Hook {
	h := &Hook{reg: reg, service: opts.Service, mode: opts.Mode, log: opts.Logger, warnEvery: int64(opts.WarnEvery),
		guardSHA: guard.ScriptSHA()}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	if h.warnEvery <= 0 {
		h.warnEvery = int64(DefaultWarnEvery)
	}
	for _, a := range opts.AllowUnknown {
		h.allow = append(h.allow, strings.ToLower(a))
	}
	switch {
	case reg == nil:
		h.err = fmt.Errorf("redishook: nil registry; load one with registry.Load")
	case opts.Service == "":
		h.err = fmt.Errorf("redishook: Options.Service is empty; name the service as the registry's owner and writers fields do")
	case opts.Mode > Enforce:
		h.err = fmt.Errorf("redishook: invalid mode %d", opts.Mode)
	}
	m, err := newMetrics(opts.Registerer)
	if err != nil && h.err == nil {
		h.err = fmt.Errorf("redishook: register metrics: %w (another collector uses a keyguard_ metric name)", err)
	}
	if m == nil {
		m, _ = newMetrics(nil)
	}
	h.m = m
	s := opts.Service
	if reg != nil {
		h.ents = make([]entryState, len(reg.Entries))
		for i, e := range reg.Entries {
			es := &h.ents[i]
			es.e = e
			es.mayWrite = e.MayWrite(s)
			es.persistent = e.Persistent
			es.ttl = !e.Persistent && e.TTL > 0
			t := e.Template.String()
			es.cmds[0] = m.commands.WithLabelValues(t, e.Owner, s, AccessRead)
			es.cmds[1] = m.commands.WithLabelValues(t, e.Owner, s, AccessWrite)
			es.denied = m.denied.WithLabelValues(t, e.Owner, s)
			if !es.mayWrite {
				es.foreign = m.foreign.WithLabelValues(t, e.Owner, s)
			}
			if es.fields = newFieldSet(e); es.fields.kind != fieldsNone {
				es.schema = m.schema.WithLabelValues(t, e.Owner, s)
			}
		}
		if opts.Recorder != nil {
			h.rec = opts.Recorder.table(reg, s)
		}
	}
	h.unreg.cmds[0] = m.unregistered.WithLabelValues(s, AccessRead)
	h.unreg.cmds[1] = m.unregistered.WithLabelValues(s, AccessWrite)
	h.unreg.denied = m.denied.WithLabelValues(TemplateUnregistered, "", s)
	h.unknown = m.unknown.WithLabelValues(s)
	return h
}

// Err reports a configuration error of New.
func (h *Hook) Err() error { return h.err }

// Service returns Options.Service.
func (h *Hook) Service() string { return h.service }

// Mode returns Options.Mode.
func (h *Hook) Mode() Mode { return h.mode }

// Install adds the hook to c: a *redis.Client, *redis.ClusterClient or
// *redis.Ring.
//
// On a ClusterClient the hook goes on the cluster client itself, not on
// each node (OnNewNode): go-redis runs cluster-level hooks once per logical
// command, pipeline or transaction, and follows MOVED/ASK redirections
// below them, while a node-level hook sees every attempt and would count a
// redirected command twice; a pipeline refused at the cluster level is
// refused whole, not node by node. The one command path that bypasses
// cluster-level hooks is the callback of ClusterClient.Watch (go-redis
// #1547): run it through Hook.Watch.
func (h *Hook) Install(c redis.UniversalClient) { c.AddHook(h) }

// Watch runs c.Watch(ctx, fn, keys...) with the hook also applied to the
// commands fn sends through its *redis.Tx. go-redis does not run a
// ClusterClient's (or Ring's) hooks inside Watch; on a *redis.Client the
// Tx inherits the client's hooks and this is plain c.Watch.
func (h *Hook) Watch(ctx context.Context, c redis.UniversalClient, fn func(*redis.Tx) error, keys ...string) error {
	if _, plain := c.(*redis.Client); plain {
		return c.Watch(ctx, fn, keys...)
	}
	return c.Watch(ctx, func(tx *redis.Tx) error {
		tx.AddHook(h)
		return fn(tx)
	}, keys...)
}

// GuardConflict counts a namespace-guard conflict on template (the
// registry template text) against owner (the namespace the guard found).
// The guard layer calls it when a write fails with guard.ErrConflict.
func (h *Hook) GuardConflict(template, owner string) {
	h.m.guard.WithLabelValues(template, owner).Inc()
}

// GuardConflictKey is GuardConflict for a concrete key: it counts under
// the key's template, or TemplateUnregistered.
func (h *Hook) GuardConflictKey(key, owner string) {
	t := TemplateUnregistered
	if h.reg != nil {
		if e := h.reg.Lookup(key); e != nil {
			t = e.Template.String()
		}
	}
	h.GuardConflict(t, owner)
}

// DialHook implements redis.Hook; it does nothing.
func (h *Hook) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessHook implements redis.Hook: one command.
func (h *Hook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if err := h.command(cmd); err != nil {
			cmd.SetErr(err)
			return err
		}
		return next(ctx, cmd)
	}
}

// ProcessPipelineHook implements redis.Hook: a pipeline, or a transaction
// (the slice then starts with MULTI and ends with EXEC).
func (h *Hook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if err := h.pipeline(cmds); err != nil {
			for _, c := range cmds {
				c.SetErr(err)
			}
			return err
		}
		return next(ctx, cmds)
	}
}

// command classifies one command; a non-nil error refuses it.
func (h *Hook) command(cmd redis.Cmder) error {
	if h.err != nil {
		return h.err
	}
	args := cmd.Args()
	var t tally
	h.scan(&t, args, nil, 0)
	if t.reason != 0 && h.mode == Enforce {
		return h.deny(&t, args)
	}
	h.commit(&t, args, nil, 0)
	return nil
}

// pipeline classifies a pipeline. In enforce mode every command is checked
// before anything is counted, so a refused pipeline counts only as denied.
func (h *Hook) pipeline(cmds []redis.Cmder) error {
	if h.err != nil {
		return h.err
	}
	var t tally
	if h.mode == Enforce {
		for i, c := range cmds {
			t = tally{}
			args := c.Args()
			h.scan(&t, args, cmds, i)
			if t.reason != 0 {
				return h.deny(&t, args)
			}
		}
	}
	for i, c := range cmds {
		t = tally{}
		args := c.Args()
		h.scan(&t, args, cmds, i)
		h.commit(&t, args, cmds, i)
	}
	return nil
}
