package redishook

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Metric names. Labels never carry a raw key: keys are reduced to their
// template, and keys matching no template to TemplateUnregistered.
const (
	// MetricCommands counts commands per template they touch, owner of the
	// template, this service and access (read|write). A command touching
	// several keys of one template counts once for it.
	MetricCommands = "keyguard_commands_total"
	// MetricDenied counts commands refused in enforce mode, per template
	// ("unregistered" for a key matching none), owner and service.
	MetricDenied = "keyguard_denied_total"
	// MetricUnregistered counts commands touching keys that match no
	// template, per service and access.
	MetricUnregistered = "keyguard_unregistered_total"
	// MetricForeignWrites counts write attempts by a service that is neither
	// the template's owner nor in its writers, in every mode (in enforce
	// mode they are also denied).
	MetricForeignWrites = "keyguard_foreign_writes_total"
	// MetricUnknownCommands counts commands missing from keyguard's command
	// table (module commands, commands newer than Redis 7.0), per service.
	MetricUnknownCommands = "keyguard_unknown_commands_total"
	// MetricGuardConflicts counts namespace-guard conflicts per template and
	// the owner the guard found (see Hook.GuardConflict).
	MetricGuardConflicts = "keyguard_guard_conflicts_total"
	// MetricSchemaWrites counts writes, per template, owner and service,
	// that break the template's declared fields: a field it does not
	// declare, or a value of a JSON template that is not a JSON object. In
	// every mode (in enforce mode they are also denied). Field names are
	// never labels.
	MetricSchemaWrites = "keyguard_schema_writes_total"
)

// TemplateUnregistered is the template label of keys that match no template.
const TemplateUnregistered = "unregistered"

// Access label values.
const (
	AccessRead  = "read"
	AccessWrite = "write"
)

type metrics struct {
	commands, denied, unregistered, foreign, unknown, guard, schema *prometheus.CounterVec
}

// newMetrics builds the collectors and registers them with r (nil: counted
// but not exported). A collector already registered by another Hook on the
// same Registerer is reused, so several clients (and services) of one
// process share the series.
func newMetrics(r prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		commands: prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricCommands,
			Help: "Redis commands per key template, template owner, calling service and access (read|write)."},
			[]string{"template", "owner", "service", "access"}),
		denied: prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricDenied,
			Help: "Redis commands refused by keyguard's enforce mode before being sent."},
			[]string{"template", "owner", "service"}),
		unregistered: prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricUnregistered,
			Help: "Redis commands touching keys that match no registered template."},
			[]string{"service", "access"}),
		foreign: prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricForeignWrites,
			Help: "Write attempts by a service that is neither the template's owner nor one of its writers."},
			[]string{"template", "owner", "service"}),
		unknown: prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricUnknownCommands,
			Help: "Redis commands missing from keyguard's command table, whose keys cannot be checked."},
			[]string{"service"}),
		guard: prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricGuardConflicts,
			Help: "Namespace guard conflicts: writes refused because another namespace owns the key."},
			[]string{"template", "owner"}),
		schema: prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricSchemaWrites,
			Help: "Writes that break the template's declared fields: an undeclared field, or a JSON template's value that is not a JSON object."},
			[]string{"template", "owner", "service"}),
	}
	if r == nil {
		return m, nil
	}
	for _, v := range []**prometheus.CounterVec{&m.commands, &m.denied, &m.unregistered, &m.foreign, &m.unknown, &m.guard, &m.schema} {
		if err := r.Register(*v); err != nil {
			var are prometheus.AlreadyRegisteredError
			if !errors.As(err, &are) {
				return nil, err
			}
			existing, ok := are.ExistingCollector.(*prometheus.CounterVec)
			if !ok {
				return nil, err
			}
			*v = existing
		}
	}
	return m, nil
}
