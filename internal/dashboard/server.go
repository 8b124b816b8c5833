package dashboard

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/keyguard/keyguard/internal/human"
	"github.com/keyguard/keyguard/registry"
)

// Defaults of Config.
const (
	DefaultInterval = 10 * time.Minute
	DefaultHistory  = 144 // a day of audits every 10 minutes
)

// Config configures a Server.
type Config struct {
	Registry *registry.Registry // required
	Auditor  Auditor            // required: runs the audits
	Writers  WriterSource       // optional: SDK writer records
	HotKeys  HotKeySource       // optional: hot keys reported by SDKs

	Interval   time.Duration // between two audit starts; default 10m
	Timeout    time.Duration // bound on one audit (it then gives a partial report); default Interval
	History    int           // audits kept; default 144
	HistoryDir string        // keep each audit's report here, so a restart keeps the history

	Access Access

	// DocsBase is where docs/ is published (finding.DefaultDocsBase, say):
	// the pages' rule links and those of /api/report.json point under it;
	// "" links them relative to the repository.
	DocsBase string

	// Registerer receives the exporter's collector; Gatherer is served at
	// /metrics (usually the same prometheus.Registry). Nil Gatherer: no
	// /metrics.
	Registerer prometheus.Registerer
	Gatherer   prometheus.Gatherer

	Logger *slog.Logger     // nil discards
	Now    func() time.Time // nil: time.Now
}

// Server audits on a schedule, keeps the history and serves the pages,
// the report, /metrics and /healthz.
type Server struct {
	reg      *registry.Registry
	auditor  Auditor
	writers  WriterSource
	hot      HotKeySource
	interval time.Duration
	timeout  time.Duration
	access   Access
	gatherer prometheus.Gatherer
	log      *slog.Logger
	now      func() time.Time
	history  *History
	pages    map[string]*template.Template
	docs     string // Config.DocsBase

	auditMu sync.Mutex // one audit at a time

	mu      sync.RWMutex
	snap    *Snapshot
	metrics []prometheus.Metric
	status  Status
}

// Audit results, as the status and keyguard_audits_total say them.
const (
	resultComplete = "complete"
	resultPartial  = "partial"
	resultFailed   = "failed"
)

// Status is what the server knows about its audits.
type Status struct {
	Started      time.Time // the server
	Running      bool
	RunningSince time.Time
	LastAttempt  time.Time // start of the last audit that ended
	LastResult   string    // complete|partial|failed
	LastError    string    // why the last failed audit failed
	LastErrorAt  time.Time
	Failures     int       // failed audits in a row
	LastGood     time.Time // when the last complete audit ended
	Next         time.Time
	Results      map[string]int64
}

// New builds a server: it opens the history (reading the reports a
// previous run left in HistoryDir) and registers the exporter.
func New(cfg Config) (*Server, error) {
	if cfg.Registry == nil || cfg.Auditor == nil {
		return nil, errors.New("dashboard: Config.Registry and Config.Auditor are required")
	}
	s := &Server{reg: cfg.Registry, auditor: cfg.Auditor, writers: cfg.Writers, hot: cfg.HotKeys,
		interval: cfg.Interval, timeout: cfg.Timeout, access: cfg.Access, gatherer: cfg.Gatherer, log: cfg.Logger, now: cfg.Now, docs: cfg.DocsBase}
	if s.interval <= 0 {
		s.interval = DefaultInterval
	}
	if s.timeout <= 0 {
		s.timeout = s.interval
	}
	if s.log == nil {
		s.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if s.now == nil {
		s.now = time.Now
	}
	keep := cfg.History
	if keep <= 0 {
		keep = DefaultHistory
	}
	pages, err := parsePages(cfg.DocsBase)
	if err != nil {
		return nil, err
	}
	s.pages = pages
	h, latest, err := openHistory(cfg.HistoryDir, keep, s.log)
	if err != nil {
		return nil, err
	}
	s.history = h
	s.status = Status{Started: s.now(), Results: map[string]int64{}}
	if latest != nil {
		// The last run's newest report is shown until the first audit ends;
		// it does not count as this run's success.
		snap := snapshotOf(latest, s.reg)
		s.snap, s.metrics = snap, snapshotMetrics(snap)
		s.log.Info("history: loaded", "audits", len(h.Points()), "latest", fmtTime(latest.StartedAt), "dir", cfg.HistoryDir)
	}
	if cfg.Registerer != nil {
		if err := cfg.Registerer.Register(collector{s}); err != nil {
			return nil, fmt.Errorf("dashboard: register the exporter: %w", err)
		}
	}
	return s, nil
}

// Run audits every Interval, the first at once, and serves the handler on
// ln until ctx ends; then it stops the audit in progress and shuts the
// HTTP server down. A failed audit is logged and shown; it never stops Run.
func (s *Server) Run(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelWarn)}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.schedule(ctx)
	}()
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	var err error
	select {
	case <-ctx.Done():
	case err = <-served:
		cancel()
	}
	sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer scancel()
	if serr := hs.Shutdown(sctx); err == nil && serr != nil {
		err = serr
	}
	<-done
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// schedule runs an audit, then waits until Interval after its start.
func (s *Server) schedule(ctx context.Context) {
	for {
		start := s.now()
		s.AuditNow(ctx)
		next := start.Add(s.interval)
		s.mu.Lock()
		s.status.Next = next
		s.mu.Unlock()
		t := time.NewTimer(max(next.Sub(s.now()), 0))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// AuditNow runs one audit and publishes it: the snapshot the pages and the
// exporter show, and a point of the history. It returns the audit's error
// (also shown on the pages and counted); an audit cut short by ctx is
// dropped.
func (s *Server) AuditNow(ctx context.Context) error {
	s.auditMu.Lock()
	defer s.auditMu.Unlock()
	start := s.now()
	s.mu.Lock()
	s.status.Running, s.status.RunningSince = true, start
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.status.Running = false
		s.mu.Unlock()
	}()

	actx, cancel := context.WithTimeout(ctx, s.timeout)
	rep, err := s.auditor.Audit(actx)
	cancel()
	if ctx.Err() != nil {
		return ctx.Err() // shutting down: a partial report of an interrupted run is not news
	}
	if err != nil {
		s.failed(start, err)
		return err
	}
	if s.docs != "" {
		rep.LinkDocs(s.docs)
	}
	snap := snapshotOf(rep, s.reg)
	s.enrich(ctx, snap)
	if herr := s.history.add(rep); herr != nil {
		s.log.Warn("history: the report was not saved", "err", herr)
	}
	result := resultComplete
	if !rep.Complete {
		result = resultPartial
	}
	ms := snapshotMetrics(snap)
	end := s.now()
	s.mu.Lock()
	s.snap, s.metrics = snap, ms
	s.status.LastAttempt, s.status.LastResult = start, result
	s.status.Results[result]++
	s.status.Failures = 0
	if rep.Complete {
		s.status.LastGood = end
	}
	s.mu.Unlock()
	s.log.Info("audit done", "result", result, "keys", rep.Summary.Keys, "findings", rep.Summary.Findings,
		"took", end.Sub(start).Round(time.Millisecond))
	return nil
}

func (s *Server) failed(start time.Time, err error) {
	msg := human.OneLine(err.Error())
	s.mu.Lock()
	s.status.LastAttempt, s.status.LastResult = start, resultFailed
	s.status.LastError, s.status.LastErrorAt = msg, s.now()
	s.status.Failures++
	s.status.Results[resultFailed]++
	n := s.status.Failures
	s.mu.Unlock()
	s.log.Warn("audit failed", "err", msg, "failures_in_a_row", n)
}

// enrich adds writer records and SDK hot keys to a snapshot; a source that
// fails leaves a note instead.
func (s *Server) enrich(ctx context.Context, snap *Snapshot) {
	if s.writers != nil {
		tws, err := s.writers.Writers(ctx)
		if err != nil {
			snap.WritersErr = human.OneLine(err.Error())
			s.log.Warn("writer records not read", "err", snap.WritersErr)
		} else {
			snap.withWriters(tws)
		}
	}
	if s.hot != nil {
		hks, err := s.hot.HotKeys(ctx)
		if err != nil {
			snap.HotKeysErr = human.OneLine(err.Error())
			s.log.Warn("SDK hot keys not read", "err", snap.HotKeysErr)
		} else {
			snap.withHotKeys(hks)
		}
	}
}

// Latest returns the snapshot on show (nil before the first audit) and
// the status.
func (s *Server) Latest() (*Snapshot, Status) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.snap, s.statusCopy()
}

// History returns the server's history.
func (s *Server) History() *History { return s.history }

// exported is what a scrape sends: the status and the latest audit's
// series, read together.
func (s *Server) exported() (Status, []prometheus.Metric) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.statusCopy(), s.metrics
}

// statusCopy is the status with its own Results; s.mu is held.
func (s *Server) statusCopy() Status {
	st := s.status
	st.Results = maps.Clone(s.status.Results)
	return st
}

// Handler serves the pages, /api/report.json, /api/history.json, /metrics
// and /healthz, behind Config.Access.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.overview)
	mux.HandleFunc("GET /templates", s.templatesPage)
	mux.HandleFunc("GET /template", s.templatePage)
	mux.HandleFunc("GET /unregistered", s.unregisteredPage)
	mux.HandleFunc("GET /findings", s.findingsPage)
	mux.HandleFunc("GET /hot-keys", s.hotKeysPage)
	mux.HandleFunc("GET /writers", s.writersPage)
	mux.HandleFunc("GET /history", s.historyPage)
	mux.HandleFunc("GET /api/report.json", s.reportJSON)
	mux.HandleFunc("GET /api/history.json", s.historyJSON)
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.Handle("GET /assets/", assetHandler())
	if s.gatherer != nil {
		mux.Handle("GET /metrics", promhttp.HandlerFor(s.gatherer, promhttp.HandlerOpts{}))
	}
	return s.access.protect(secure(mux))
}

// secure sets headers that keep the pages to themselves: no inline or
// foreign scripts and styles, no framing, no referrer.
func secure(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "no-referrer")
		hd.Set("X-Frame-Options", "DENY")
		h.ServeHTTP(w, r)
	})
}
