package migrate

import (
	"github.com/keyguard/keyguard/migration"
	"github.com/keyguard/keyguard/registry"
)

// Plan is a checked migration (migration.Plan) with the jobs that run it on
// a server: Copy, Verify, Cleanup and the samples of its report.
type Plan struct{ *migration.Plan }

// PlanOptions are migration.PlanOptions.
type PlanOptions = migration.PlanOptions

// NewPlan checks a migration from one template to another (migration.NewPlan).
func NewPlan(reg *registry.Registry, from, to string, opts PlanOptions) (*Plan, error) {
	p, err := migration.NewPlan(reg, from, to, opts)
	if err != nil {
		return nil, err
	}
	return &Plan{p}, nil
}

// Deprecated plans every migration the registry declares (migration.Deprecated).
func Deprecated(reg *registry.Registry, opts PlanOptions) ([]*Plan, error) {
	ps, err := migration.Deprecated(reg, opts)
	if err != nil {
		return nil, err
	}
	out := make([]*Plan, len(ps))
	for i, p := range ps {
		out[i] = &Plan{p}
	}
	return out, nil
}
