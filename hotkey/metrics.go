package hotkey

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Metric names. Labels carry templates, never raw keys.
const (
	// MetricRate is the estimated operations per second of the hottest key
	// of a template seen by this process, per template (set at each report).
	MetricRate = "keyguard_hotkey_rate"
	// MetricTopKeys is how many keys of a template are in this process's
	// top list, per template.
	MetricTopKeys = "keyguard_hotkey_top_keys"
	// MetricLocal counts reads of hot templates answered by the local tier
	// (result="hit") or not (result="miss"), per template.
	MetricLocal = "keyguard_hotkey_local_total"
	// MetricLoads counts loader calls per template (result="ok"|"error").
	MetricLoads = "keyguard_hotkey_loads_total"
	// MetricLock counts misses per template by what the cluster lock did:
	// result="acquired", "waited" (another process loaded it), "timeout"
	// (the wait bound passed and this process loaded it anyway).
	MetricLock = "keyguard_hotkey_lock_total"
	// MetricStale counts values served after their soft deadline (logical
	// expiry) while a refresh runs, per template.
	MetricStale = "keyguard_hotkey_stale_total"
	// MetricRefresh counts background refreshes per template by result:
	// "ok", "error", "skipped" (another process holds the lock).
	MetricRefresh = "keyguard_hotkey_refresh_total"
	// MetricFanoutErrors counts copy writes or deletes that failed while
	// others of the same key succeeded, per template.
	MetricFanoutErrors = "keyguard_hotkey_fanout_errors_total"
	// MetricInvalidations counts local-tier invalidations broadcast
	// (direction="sent") and applied from other instances ("received").
	MetricInvalidations = "keyguard_hotkey_invalidations_total"
	// MetricSubscribed is 1 while the invalidation subscription is up (the
	// local tier is used only then), else 0.
	MetricSubscribed = "keyguard_hotkey_subscribed"
	// MetricPreheat counts keys preheated per template by result: "ok",
	// "error", "skipped" (present and Missing was asked for), "absent"
	// (the loader found nothing).
	MetricPreheat = "keyguard_hotkey_preheat_total"
)

type metrics struct {
	rate, topKeys                                   *prometheus.GaugeVec
	local, loads, lock, stale, refresh, fanout, pre *prometheus.CounterVec
	inval                                           *prometheus.CounterVec
	subscribed                                      prometheus.Gauge
}

func newMetrics(r prometheus.Registerer) (*metrics, error) {
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	}
	m := &metrics{
		rate: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: MetricRate,
			Help: "Estimated operations per second of the hottest key of a template seen by this process."}, []string{"template"}),
		topKeys: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: MetricTopKeys,
			Help: "Keys of a template in this process's hot-key top list."}, []string{"template"}),
		local:   counter(MetricLocal, "Reads of hot templates answered by the local tier (hit) or not (miss).", "template", "result"),
		loads:   counter(MetricLoads, "Loader calls per template.", "template", "result"),
		lock:    counter(MetricLock, "Cache misses by what the cluster-wide load lock did: acquired, waited, timeout.", "template", "result"),
		stale:   counter(MetricStale, "Values served after their soft deadline while one caller refreshes them.", "template"),
		refresh: counter(MetricRefresh, "Background refreshes of logically expired values: ok, error, skipped.", "template", "result"),
		fanout:  counter(MetricFanoutErrors, "Writes or deletes of key copies that failed while other copies succeeded.", "template"),
		pre:     counter(MetricPreheat, "Keys preheated: ok, error, skipped, absent.", "template", "result"),
		inval:   counter(MetricInvalidations, "Local-tier invalidations sent to and received from other instances.", "direction"),
		subscribed: prometheus.NewGauge(prometheus.GaugeOpts{Name: MetricSubscribed,
			Help: "1 while the invalidation subscription is up (the local tier is in use), else 0."}),
	}
	if r == nil {
		return m, nil
	}
	for _, c := range []any{&m.rate, &m.topKeys, &m.local, &m.loads, &m.lock, &m.stale, &m.refresh, &m.fanout, &m.pre, &m.inval, &m.subscribed} {
		if err := register(r, c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// register registers the collector *p points to, or replaces it with the
// one already registered under its name, so that several Caches and
// Detectors of a process share their series.
func register(r prometheus.Registerer, p any) error {
	var c prometheus.Collector
	switch v := p.(type) {
	case **prometheus.GaugeVec:
		c = *v
	case **prometheus.CounterVec:
		c = *v
	case *prometheus.Gauge:
		c = *v
	}
	err := r.Register(c)
	var are prometheus.AlreadyRegisteredError
	if err == nil || !errors.As(err, &are) {
		return err
	}
	ok := false
	switch v := p.(type) {
	case **prometheus.GaugeVec:
		*v, ok = are.ExistingCollector.(*prometheus.GaugeVec)
	case **prometheus.CounterVec:
		*v, ok = are.ExistingCollector.(*prometheus.CounterVec)
	case *prometheus.Gauge:
		*v, ok = are.ExistingCollector.(prometheus.Gauge)
	}
	if !ok {
		return err
	}
	return nil
}
