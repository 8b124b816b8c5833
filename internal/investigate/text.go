package investigate

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/human"
	"github.com/keyguard/keyguard/registry"
)

// WriteText writes the report for a person: each step's evidence, then
// the conclusion, the fixes and the findings.
func (r *Report) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "keyguard investigate %s", r.Query.text())
	if r.Target != "" {
		fmt.Fprintf(bw, " on %s", r.Target)
	}
	fmt.Fprintf(bw, " (%s)", plural(r.Nodes, "node"))
	switch {
	case r.Registry != "":
		fmt.Fprintf(bw, ", registry %s", r.Registry)
	case r.NoRegistry:
		fmt.Fprintf(bw, ", no registry (keys of the families inferred from their names; keyguard init writes one)")
	}
	fmt.Fprintln(bw)
	r.textKeys(bw)
	r.textStyles(bw)
	r.textSlowLog(bw)
	r.textWatch(bw)
	r.textCapture(bw)
	r.textNotify(bw)
	fmt.Fprintf(bw, "\nConclusion\n")
	for _, s := range r.Conclusion {
		fmt.Fprintf(bw, "  - %s\n", s)
	}
	if len(r.Fixes) > 0 {
		fmt.Fprintf(bw, "\nFix\n")
		for _, s := range r.Fixes {
			fmt.Fprintf(bw, "  - %s\n", s)
		}
	}
	r.textFindings(bw)
	return bw.Flush()
}

func (q Query) text() string {
	switch {
	case q.ID != "":
		return "--id " + finding.Display(q.ID)
	case q.Key != "":
		return "--key " + finding.Display(q.Key)
	}
	return "--match " + finding.Display(q.Match)
}

func plural(n int, what string) string { return human.Plural(n, what) }

func (r *Report) textKeys(w io.Writer) {
	found, unreadable, notRead := 0, 0, 0
	for _, k := range r.Keys {
		switch {
		case k.Unreadable:
			unreadable++
		case k.NotRead != "":
			notRead++
		case k.Type != "none":
			found++
		}
	}
	fmt.Fprintf(w, "\nKeys (%d found", found+unreadable+notRead)
	if unreadable > 0 {
		fmt.Fprintf(w, ", %d of them not readable by the ACL user: grant it the key pattern (docs/audit-acl.md)", unreadable)
	}
	if notRead > 0 {
		fmt.Fprintf(w, ", %d of them not read: the server refused their reads", notRead)
	}
	if missing := len(r.Keys) - found - unreadable - notRead; missing > 0 {
		fmt.Fprintf(w, ", %s named but not in Redis", plural(missing, "key"))
	}
	if r.MoreKeys > 0 {
		fmt.Fprintf(w, ", %d more left out: narrow the target or raise --max-keys", r.MoreKeys)
	}
	fmt.Fprintf(w, ")\n")
	if r.Search != nil {
		fmt.Fprintf(w, "  searched: %s\n", r.Search.Summary())
		for _, g := range r.NotSearched() {
			fmt.Fprintf(w, "  not searched: %s\n", g)
		}
		for _, n := range r.SearchNotes {
			fmt.Fprintf(w, "  note: %s\n", n)
		}
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	for _, k := range r.Keys {
		if k.Type == "none" {
			fmt.Fprintf(tw, "  %s\tdoes not exist\t\t\t\t\n", finding.Display(k.Key))
			continue
		}
		if k.Unreadable {
			fmt.Fprintf(tw, "  %s\tnot readable by the ACL user (NOPERM)\t\t\t\t\n", finding.Display(k.Key))
			continue
		}
		if k.NotRead != "" {
			fmt.Fprintf(tw, "  %s\tnot read: %s\t\t\t\t\n", finding.Display(k.Key), k.NotRead)
			continue
		}
		owner := "unregistered, looks like " + k.Inferred
		if r.NoRegistry {
			owner = "family " + k.Inferred
		}
		if k.Registered {
			owner = k.Template + " (" + k.Owner + ")"
		}
		styles := ""
		if len(k.Styles) > 0 {
			styles = "style " + strings.Join(k.Styles, "+")
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", finding.Display(k.Key), k.Type, ttlText(k.TTLms), sizeText(&k), owner, styles)
		if k.Value != "" {
			fmt.Fprintf(tw, "  \tvalue %s\t\t\t\t\n", k.Value)
		}
	}
	tw.Flush()
	if !r.ShowValues && found > 0 {
		fmt.Fprintf(w, "  (values hidden: --show-values shows them, cut)\n")
	}
}

func ttlText(ms int64) string {
	switch {
	case ms == -1:
		return "no TTL"
	case ms < -1:
		return "gone"
	}
	return "TTL " + registry.FormatTTL(time.Duration(ms)*time.Millisecond/time.Second*time.Second)
}

func sizeText(k *KeyInfo) string {
	var parts []string
	switch {
	case k.Shape.Open:
		parts = append(parts, fmt.Sprintf("%d fields (a map)", k.Shape.Count))
	case len(k.Shape.Fields) > 0:
		parts = append(parts, fieldList(k.Shape.Fields, 4))
	case k.Shape.Kind != "":
		parts = append(parts, k.Shape.Kind)
	}
	if k.Bytes > 0 {
		parts = append(parts, fmt.Sprintf("%d B", k.Bytes))
	}
	return strings.Join(parts, " ")
}

func (r *Report) textStyles(w io.Writer) {
	if len(r.Styles) == 0 {
		return
	}
	fmt.Fprintf(w, "\nValue styles\n")
	for _, s := range r.Styles {
		from := "seen together"
		if s.Declared != "" {
			from = "declared by " + s.Declared + " (" + s.Owner + ")"
		}
		fmt.Fprintf(w, "  %s %s  %s; keys: %s", s.ID, s.Label(), from, joinAnd(codes(s.Keys, 3)))
		if len(s.Writers) > 0 {
			fmt.Fprintf(w, "; written by %s", joinAnd(s.Writers))
		}
		fmt.Fprintln(w)
	}
}

func (r *Report) textSlowLog(w io.Writer) {
	defer func() {
		for _, n := range r.SlowLogNotRead {
			fmt.Fprintf(w, "  not read on %s\n", n)
		}
	}()
	if len(r.SlowLog) == 0 {
		fmt.Fprintf(w, "\nSlow log: no entry touches these keys\n")
		return
	}
	fmt.Fprintf(w, "\nSlow log (%s touching these keys)\n", plural(len(r.SlowLog), "entry"))
	for _, e := range r.SlowLog {
		who := e.Client
		if e.Name != "" {
			who = e.Name + " " + e.Client
		}
		fmt.Fprintf(w, "  %s  %s  %dµs  %s  from %s\n", e.Node, e.Time.UTC().Format(time.RFC3339), time.Duration(e.Duration).Microseconds(), e.Command, who)
	}
}

func (r *Report) textWatch(w io.Writer) {
	if r.Watch == nil {
		return
	}
	if r.Watch.Planned > 0 {
		fmt.Fprintf(w, "\nTTL watch (%s of the %s asked: stopped early, a sample every %s", human.Duration(time.Duration(r.Watch.Duration)), registry.FormatTTL(time.Duration(r.Watch.Planned)), time.Duration(r.Watch.Interval))
	} else {
		fmt.Fprintf(w, "\nTTL watch (%s, a sample every %s", registry.FormatTTL(time.Duration(r.Watch.Duration)), time.Duration(r.Watch.Interval))
	}
	if r.Watch.Unwatched > 0 {
		fmt.Fprintf(w, ", %s not watched", plural(r.Watch.Unwatched, "key"))
	}
	fmt.Fprintf(w, ")\n")
	for _, k := range r.Watch.Keys {
		moves := movesText(&k)
		switch {
		case moves == "" && k.Unobserved > 0:
			moves = fmt.Sprintf("not observed for %s (connection lost): no conclusion", time.Duration(k.Unobserved).Round(100*time.Millisecond))
		case moves == "" && len(k.Policies) == 0 && k.Samples > 0:
			moves = "did not exist while watched" // no sample saw a TTL or its absence
		case moves == "":
			moves = "steady"
		case k.Unobserved > 0:
			moves += fmt.Sprintf("; not observed for %s (connection lost)", time.Duration(k.Unobserved).Round(100*time.Millisecond))
		}
		if pt := policyText(k.Policies); pt != "" {
			moves = pt + "; " + moves
		}
		fmt.Fprintf(w, "  %s  %s\n", finding.Display(k.Key), moves)
	}
}

func (r *Report) textCapture(w io.Writer) {
	if r.Capture == nil {
		return
	}
	fmt.Fprintf(w, "\nCapture (MONITOR on %s)\n", plural(len(r.Capture.Nodes), "node"))
	for _, nc := range r.Capture.Nodes {
		fmt.Fprintf(w, "  %s  %s, %d lines, %d bytes, %d about these keys; stopped: %s\n",
			nc.Addr, time.Duration(nc.Duration).Round(time.Millisecond), nc.Lines, nc.Bytes, nc.Matched, nc.Stopped)
	}
	for _, a := range r.Capture.Keys {
		owner := "unregistered"
		if r.NoRegistry {
			owner = "no registry"
		}
		if a.Template != "" {
			owner = a.Template + " (" + a.Owner + ")"
		}
		fmt.Fprintf(w, "  %s  %s\n", finding.Display(a.Key), owner)
		for _, x := range a.Writers {
			fmt.Fprintf(w, "    writer %s  %s  %s  %s  allowed: %s\n", x.Service, strings.Join(x.Addrs, ","), commandSummary(x.Commands, 4), ttlSummary(x.TTLs), x.Allowed)
		}
		for _, x := range a.Readers {
			fmt.Fprintf(w, "    reader %s  %s  %s\n", x.Service, strings.Join(x.Addrs, ","), commandSummary(x.Commands, 4))
		}
	}
}

func (r *Report) textNotify(w io.Writer) {
	if r.Notify == nil {
		return
	}
	fmt.Fprintf(w, "\nKeyspace notifications (%s)\n", registry.FormatTTL(time.Duration(r.Notify.Duration).Round(time.Second)))
	for _, n := range r.Notify.Nodes {
		fmt.Fprintf(w, "  %s  notify-keyspace-events %q", n.Addr, n.Setting)
		if n.Enabled != "" {
			fmt.Fprintf(w, ", %q during the run, restored: %v", n.Enabled, n.Restored)
		}
		if n.Error != "" {
			fmt.Fprintf(w, "  error: %s", n.Error)
		}
		fmt.Fprintln(w)
	}
	if len(r.Notify.Keys) == 0 {
		fmt.Fprintf(w, "  no event on these keys\n")
	}
}

func (r *Report) textFindings(w io.Writer) {
	if len(r.Findings) == 0 {
		fmt.Fprintf(w, "\nNo findings.\n")
		return
	}
	fmt.Fprintf(w, "\nFindings (%d)\n", len(r.Findings))
	for _, f := range r.Findings {
		where := finding.Display(f.Key)
		if f.Key == "" {
			where = f.Template
		}
		fmt.Fprintf(w, "  %-7s %-15s %s: %s\n", f.Severity, f.Rule, where, f.Message)
		if f.Hint != "" {
			fmt.Fprintf(w, "          Try: %s\n", f.Hint)
		}
	}
}
