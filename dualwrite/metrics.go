package dualwrite

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Metric names. Labels are the migration's two templates (from, to),
// never keys.
const (
	// MetricReads counts reads per result: "new" (found in the new key),
	// "fallback" (missing there, found in the old key: what must dry up
	// before cleanup), "old" (a key outside the rollout, found in the old
	// key), "miss" (in neither), "error".
	MetricReads = "keyguard_migrate_reads_total"
	// MetricWrites counts dual writes per result: "ok", "partial" (one key
	// written), "failed".
	MetricWrites = "keyguard_migrate_writes_total"
	// MetricRollout is the share of keys, 0 to 1, read from the new key first.
	MetricRollout = "keyguard_migrate_read_rollout_ratio"
)

type metrics struct {
	reads, writes *prometheus.CounterVec
	rollout       *prometheus.GaugeVec
}

// newMetrics builds the collectors and registers them with r (nil:
// counted, not exported). Collectors another Writer or Reader registered
// on r are reused, so several migrations of one process share the series.
func newMetrics(r prometheus.Registerer) (*metrics, error) {
	labels := []string{"from", "to"}
	m := &metrics{
		reads: prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricReads,
			Help: "Reads of a key being migrated, per result: new, fallback (old key, because the new one is missing), old (outside the rollout), miss, error."},
			append(labels, "result")),
		writes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricWrites,
			Help: "Dual writes of a key being migrated, per result: ok, partial (only one of the two keys written), failed."},
			append(labels, "result")),
		rollout: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: MetricRollout,
			Help: "Share of keys, 0 to 1, read from the new key first."}, labels),
	}
	if r == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.reads, m.writes, m.rollout} {
		if err := r.Register(c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if !errors.As(err, &are) {
				return nil, err
			}
			switch existing := are.ExistingCollector.(type) {
			case *prometheus.CounterVec:
				if c == m.reads {
					m.reads = existing
				} else {
					m.writes = existing
				}
			case *prometheus.GaugeVec:
				m.rollout = existing
			default:
				return nil, err
			}
		}
	}
	return m, nil
}
