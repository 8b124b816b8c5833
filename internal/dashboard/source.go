package dashboard

// This file is the dashboard's one seam to the audit and its report: the
// report type, how a report is read and written, how an audit is run, and
// where writer records and hot keys come from. Everything else works on
// the view model (view.go) built from a report.

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/hotkey"
	"github.com/keyguard/keyguard/internal/audit/live"
	"github.com/keyguard/keyguard/internal/audit/replsync"
	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/audit/snapshot"
	"github.com/keyguard/keyguard/internal/redisconn"
	"github.com/keyguard/keyguard/redishook"
	"github.com/keyguard/keyguard/registry"
)

// Report is the audit report the dashboard shows: the JSON of
// keyguard audit --format json.
type Report = report.Report

// Aliases of the report's parts the view model is built from.
type (
	reportGroup     = report.Group
	reportFinding   = report.Finding
	reportTopKey    = report.TopKey
	reportSource    = report.Source
	reportSummary   = report.Summary
	reportTTLBucket = report.TTLBucket
	reportNodeStop  = report.NodeStop
)

// kindTemplate is the kind of a report group that is a registry template
// (the others are inferred families of unregistered keys).
const kindTemplate = report.KindTemplate

// readReport reads a report written by writeReport.
func readReport(r io.Reader) (*Report, error) { return report.ReadReport(r) }

// writeReport writes rep as keyguard audit --format json does.
func writeReport(w io.Writer, rep *Report) error { return rep.WriteJSON(w) }

// An Auditor runs one audit. It returns an error only when the audit could
// not run at all (server unreachable, credentials refused); a run that
// stopped early returns its partial report (Complete false).
type Auditor interface {
	Audit(ctx context.Context) (*Report, error)
}

// NewAuditor audits a live Redis or Cluster with package audit: read-only
// SCAN and probes, as keyguard audit does.
func NewAuditor(reg *registry.Registry, t live.Target, opts live.Options) Auditor {
	return &liveAuditor{reg: reg, target: t, opts: opts}
}

type liveAuditor struct {
	reg    *registry.Registry
	target live.Target
	opts   live.Options
	cur    atomic.Pointer[Progress] // of the audit running, nil between audits
}

func (a *liveAuditor) Audit(ctx context.Context) (*Report, error) {
	opts := a.opts
	opts.Progress = func(p live.Progress) {
		a.cur.Store(&Progress{Scanned: p.Scanned, Total: p.Total, Nodes: p.Nodes, NodesDone: p.NodesDone})
		if a.opts.Progress != nil {
			a.opts.Progress(p)
		}
	}
	a.cur.Store(&Progress{})
	defer a.cur.Store(nil)
	res, err := live.Run(ctx, a.reg, a.target, opts)
	if err != nil {
		return nil, err
	}
	return res.Report, nil
}

// SnapshotOptions are the audits of the nodes' snapshots (keyguard serve
// --snapshot): which nodes send one, and what the audit reads of them.
type SnapshotOptions struct {
	Nodes replsync.Options
	Read  snapshot.Options
}

// NewSnapshotAuditor audits the snapshot each node sends a new replica
// (SYNC), as keyguard audit --snapshot does: one fork per node, no
// command per key.
func NewSnapshotAuditor(reg *registry.Registry, o SnapshotOptions) Auditor {
	return &snapshotAuditor{reg: reg, opts: o}
}

type snapshotAuditor struct {
	reg  *registry.Registry
	opts SnapshotOptions
}

func (a *snapshotAuditor) Audit(ctx context.Context) (*Report, error) {
	res, err := replsync.Run(ctx, a.reg, a.opts.Nodes, a.opts.Read)
	if err != nil {
		return nil, err
	}
	return res.Report, nil
}

// followMaster audits the master a Sentinel URL names: before each
// audit it asks the Sentinels where the master is now, so that the audits
// after a failover read the new master.
type followMaster struct {
	conn     *redisconn.Target
	target   live.Target
	reg      *registry.Registry
	walk     live.Options
	snapshot *SnapshotOptions
	cur      atomic.Pointer[liveAuditor] // the audit running, for its progress
}

func (f *followMaster) Audit(ctx context.Context) (*Report, error) {
	if err := f.conn.MasterNow(ctx); err != nil {
		return nil, err
	}
	t := f.target
	t.Conn.Addr = f.conn.Opts.Addr
	t.Conn.TLS = f.conn.Opts.TLSConfig
	if f.snapshot != nil {
		so := *f.snapshot
		so.Nodes.Target = t
		return NewSnapshotAuditor(f.reg, so).Audit(ctx)
	}
	a := &liveAuditor{reg: f.reg, target: t, opts: f.walk}
	f.cur.Store(a)
	return a.Audit(ctx)
}

func (f *followMaster) Progress() (Progress, bool) {
	if a := f.cur.Load(); a != nil {
		return a.Progress()
	}
	return Progress{}, false
}

// Progress is how far the running audit is.
func (a *liveAuditor) Progress() (Progress, bool) {
	p := a.cur.Load()
	if p == nil {
		return Progress{}, false
	}
	return *p, true
}

// Progress is how far an audit has come: keys scanned of the keys the
// nodes held when it started (0: unknown), nodes done.
type Progress struct {
	Scanned, Total   int64
	Nodes, NodesDone int
}

// A progresser is an Auditor that can say how far its running audit is.
type progresser interface {
	Progress() (Progress, bool)
}

// A WriterSource lists who wrote which template recently (the SDK's writer
// records).
type WriterSource interface {
	Writers(ctx context.Context) ([]TemplateWriters, error)
}

// TemplateWriters is the services that wrote one template.
type TemplateWriters struct {
	Template   string
	Owner      string // "" when the template is not in the registry
	Registered bool
	Writers    []Writer // most recent first
}

// Disallowed counts writers the registry does not allow.
func (tw TemplateWriters) Disallowed() int { return disallowed(tw.Writers) }

// Writer is one service that wrote a template.
type Writer struct {
	Service   string
	LastWrite time.Time
	Allowed   bool // the owner, or listed in the template's writers
}

// NewWriterSource reads the records redishook.Recorder flushes to the
// server c points at, written within window before each read.
func NewWriterSource(c redis.Cmdable, reg *registry.Registry, window time.Duration) WriterSource {
	return &hookWriters{c: c, reg: reg, window: window}
}

type hookWriters struct {
	c      redis.Cmdable
	reg    *registry.Registry
	window time.Duration
}

func (h *hookWriters) Writers(ctx context.Context) ([]TemplateWriters, error) {
	tws, err := redishook.ReadWriters(ctx, h.c, h.reg, time.Now().Add(-h.window))
	if err != nil {
		return nil, fmt.Errorf("read writer records: %w", err)
	}
	out := make([]TemplateWriters, 0, len(tws))
	for _, tw := range tws {
		t := TemplateWriters{Template: tw.Template, Registered: tw.Entry != nil}
		if tw.Entry != nil {
			t.Template, t.Owner = tw.Entry.Key, tw.Entry.Owner // as the report names it (no env prefix)
		}
		for _, w := range tw.Writers {
			t.Writers = append(t.Writers, Writer{Service: w.Service, LastWrite: w.LastWrite, Allowed: w.Allowed})
		}
		out = append(out, t)
	}
	return out, nil
}

// A HotKeySource lists hot keys seen outside the audit, such as the
// access counts services' SDKs report. The dashboard shows them beside the
// hot-key findings of the audit (the server's LFU counters).
type HotKeySource interface {
	HotKeys(ctx context.Context) ([]HotKey, error)
}

// HotKey is one hot key. Source says who saw it ("server LFU" for the
// audit's findings; an SDK source names itself).
type HotKey struct {
	Key      string
	Template string
	Owner    string
	Source   string
	Score    float64 // accesses per second, or the LFU counter; what Detail says
	Detail   string
}

// NewHotKeySource reads the hot-key reports services' SDKs (package
// hotkey's Detector) leave on the server c points at, those reported
// within window before each read. A key reported by several instances is
// one hot key: their rates add up. At most top keys are listed, hottest
// first.
func NewHotKeySource(c redis.Cmdable, reg *registry.Registry, window time.Duration, top int) HotKeySource {
	return &sdkHotKeys{c: c, reg: reg, window: window, top: top}
}

type sdkHotKeys struct {
	c      redis.Cmdable
	reg    *registry.Registry
	window time.Duration
	top    int
}

func (h *sdkHotKeys) HotKeys(ctx context.Context) ([]HotKey, error) {
	reps, err := hotkey.ReadReports(ctx, h.c, time.Now().Add(-h.window))
	if err != nil {
		return nil, fmt.Errorf("read hot-key reports: %w", err)
	}
	type agg struct {
		rate     float64
		services []string
	}
	byKey := map[string]*agg{}
	for _, r := range reps {
		for _, k := range r.Keys {
			a := byKey[k.Key]
			if a == nil {
				a = &agg{}
				byKey[k.Key] = a
			}
			a.rate += k.Rate
			if !slices.Contains(a.services, r.Service) {
				a.services = append(a.services, r.Service)
			}
		}
	}
	out := make([]HotKey, 0, len(byKey))
	for key, a := range byKey {
		hk := HotKey{Key: key, Source: "SDK", Score: a.rate,
			Detail: fmt.Sprintf("%s ops/s reported by %s", fmtShort(a.rate), strings.Join(a.services, ", "))}
		if e := h.reg.Lookup(key); e != nil {
			hk.Template, hk.Owner = e.Key, e.Owner
		}
		out = append(out, hk)
	}
	slices.SortFunc(out, func(a, b HotKey) int { return cmp.Or(cmp.Compare(b.Score, a.Score), strings.Compare(a.Key, b.Key)) })
	if h.top > 0 && len(out) > h.top {
		out = out[:h.top]
	}
	return out, nil
}
