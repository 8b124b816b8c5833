package snapshot

import (
	"cmp"
	"fmt"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/audit/inventory"
	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/cli"
	"github.com/keyguard/keyguard/registry"
)

// MergeOptions are what keyguard merge runs with.
type MergeOptions struct {
	// LoadRegistry loads the registry the reports were made with; it is
	// not called when every report was made without one.
	LoadRegistry func() (*registry.Registry, error)
	// RegistryGiven: a registry was named (--registry, KEYGUARD_REGISTRY),
	// which reports made without one refuse.
	RegistryGiven bool
	Files         []string // JSON reports; "-" is stdin (once)
	Format        string   // text, json, csv or html
	Out           string
	Threshold     finding.Severity
	View          cli.ReportView
}

// Merge writes one report from the JSON reports of different shards,
// hosts or databases, as if they had been audited together (see
// inventory.MergeReports), with their coverage joined. It returns
// cli.ErrFindings when a finding reaches the threshold.
func Merge(e *cli.Env, o MergeOptions) error {
	stdin := 0
	var reps []*report.Report
	defer cli.WarmReports(o.Files...)()
	for _, f := range o.Files {
		if f == "-" {
			if stdin++; stdin > 1 {
				return cli.Usagef("only one of the reports can come from stdin (-)")
			}
		}
		rep, err := cli.ReadReportFile(e, f)
		if err != nil {
			return err
		}
		reps = append(reps, rep)
	}
	reg, err := mergeRegistry(o, reps)
	if err != nil {
		return err
	}
	covs := make([]*report.Coverage, len(reps))
	for i, r := range reps {
		covs[i] = r.Coverage
	}
	if i, j, what, ok := report.Overlap(covs); ok {
		return fmt.Errorf("%s and %s both counted the keys of %s: merged, those keys would be counted twice; merge reports of different servers, databases or Cluster shards (a report resumed with --resume already holds the keys of the partial one it continued: keep the resumed one)", o.Files[i], o.Files[j], what)
	}
	out, err := cli.OpenOutput(e, "--out", o.Out)
	if err != nil {
		return err
	}
	rep, err := inventory.MergeReports(reg, reps, o.Files)
	if err != nil {
		out.Close(false)
		return err
	}
	rep.Coverage = report.JoinCoverage(covs...)
	view := o.View
	view.Sep = reg.Separator
	if err := cli.WriteReport(out, o.Format, rep, view); err != nil {
		return err
	}
	return cli.ReportVerdict(rep.Summary.BySeverity, o.Threshold)
}

// mergeRegistry is the registry the reports were made with: the one
// LoadRegistry loads, or, when every report was made without a registry
// (as keyguard audit and rdb run where none is found), none, which a
// registry named on the command line contradicts. Reports made with and
// without one do not merge: their groups are of different kinds; nor do
// reports made with registries that declared otherwise, nor under such a
// registry (their digests).
func mergeRegistry(o MergeOptions, reps []*report.Report) (*registry.Registry, error) {
	without := -1 // a report made without a registry
	with := -1    // and one made with one
	for i, r := range reps {
		if r.WithoutRegistry() {
			without = i
		} else {
			with = i
		}
	}
	switch {
	case without >= 0 && with >= 0:
		return nil, fmt.Errorf("%s was made without a registry and %s with %s: merge reports made alike (audit both with the registry, or both without)",
			o.Files[without], o.Files[with], cmp.Or(reps[with].Registry, "one"))
	case without >= 0 && o.RegistryGiven:
		return nil, cli.Usagef("the reports were made without a registry: merge them without --registry (and without KEYGUARD_REGISTRY)")
	case without >= 0:
		return cli.EmptyRegistry()
	}
	first := -1 // the first report that names its registry's digest
	for i, r := range reps {
		switch {
		case r.RegistryDigest == "":
		case first < 0:
			first = i
		case r.RegistryDigest != reps[first].RegistryDigest:
			return nil, fmt.Errorf("%s and %s were made with registries that declared otherwise (digest %s and %s): their keys were grouped and checked by different templates; merge reports made with one registry (audit again with it)",
				o.Files[first], o.Files[i], reps[first].RegistryDigest, r.RegistryDigest)
		}
	}
	reg, err := o.LoadRegistry()
	if err != nil {
		return nil, err
	}
	if first >= 0 {
		if err := inventory.SameRegistry(reg, reps[first]); err != nil {
			return nil, fmt.Errorf("%s was %w", o.Files[first], err)
		}
	}
	return reg, nil
}
