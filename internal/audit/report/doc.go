// Package report is the audit report of keyguard audit and keyguard rdb:
// its model, its JSON (streamed out, read back), the text, CSV and HTML
// renderings, the drift between two reports, memory by key prefix, and
// the State that lets a report be merged or resumed (package inventory
// builds reports and rebuilds aggregators from them).
//
//	rep, err := report.ReadReport(r)           // a --format json report
//	rep.Prefixes = report.PrefixTree(rep.Groups, ':', 3)
//	err = rep.WriteText(os.Stdout, report.TextOptions{})
//
// It is pure and imports only registry and the one-home helpers (treemap,
// topology, jsonout, human): never inventory, a walker or a Redis client.
// The SDK must not import it.
package report
