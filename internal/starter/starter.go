// Package starter writes the registries keyguard init writes: the
// commented starter, and one built from an audit report (the entries of the
// audit's registry its keys matched, then its suggested entries, every
// decision marked FILL-IN). It writes YAML with registry.Writer and checks
// that what it wrote loads. It must not be imported by the SDK, and imports
// no Redis client.
package starter

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/cli"
	"github.com/keyguard/keyguard/internal/human"
	"github.com/keyguard/keyguard/keytmpl"
	"github.com/keyguard/keyguard/registry"
)

// Options are what keyguard init runs with.
type Options struct {
	Out       string // the file to write; "-" is stdout
	FromAudit string // an audit report (--format json) to build from; "" writes the starter
}

// Run writes the registry, checks that it loads as lint will read it, and
// says on stderr what is left to do with it. Whether Out may be replaced is
// the caller's decision.
func Run(e *cli.Env, o Options) error {
	var doc []byte
	summary, warn := "", ""
	if o.FromAudit != "" {
		defer cli.WarmReports(o.FromAudit)()
		rep, err := cli.ReadReportFile(e, o.FromAudit)
		if err != nil {
			return err
		}
		var entries int
		doc, entries, err = registryFromAudit(rep, o.FromAudit)
		if err != nil {
			return err
		}
		summary = fmt.Sprintf("%d entries from %s", entries, o.FromAudit)
		if p := partial(rep); p != "" {
			warn = fmt.Sprintf("keyguard init: warning: %s is %s: the families of the keys it did not reach are not in the registry; finish the audit (--resume a live one, copy a damaged file again) and run init --from-audit on the complete report\n", o.FromAudit, p)
		}
	} else {
		doc = []byte(Registry)
		summary = "a starter registry"
	}
	// What init writes must load: check it as lint will read it.
	reg, err := registry.Parse(o.Out, doc)
	if err != nil {
		return fmt.Errorf("the registry built does not load (please report this): %w", err)
	}
	out, err := cli.OpenOutput(e, "--out", o.Out)
	if err != nil {
		return err
	}
	_, err = out.Write(doc)
	if err := out.Finish(err); err != nil {
		return err
	}
	if o.Out != "-" {
		fmt.Fprintf(e.Stderr, "keyguard init: wrote %s: %s%s\n", o.Out, summary, nextStep(reg, o.Out))
	}
	fmt.Fprint(e.Stderr, warn)
	return nil
}

// partial says how much of the keyspace an incomplete audit covered ("a
// partial audit (database 0; 48.7% covered)"), or "" for a complete one.
func partial(rep *report.Report) string {
	if rep.Complete {
		return ""
	}
	if rep.Coverage != nil {
		return fmt.Sprintf("a partial audit (%s)", rep.Coverage.Summary())
	}
	return "a partial audit"
}

// carryOn says how to get the complete report of a partial one.
func carryOn(rep *report.Report, path string) string {
	if rep.Source.Kind == "rdb" {
		return "read a whole snapshot file (the report's file stopped early) and build from that report"
	}
	return "continue the audit (keyguard audit … --resume " + path + ") and build from the complete report"
}

// partialNote is the header's line on an incomplete audit, or "".
func partialNote(rep *report.Report) string {
	p := partial(rep)
	if p == "" {
		return ""
	}
	return "\n\nThe report is " + p + ":\nthe families of the keys it did not reach are not here."
}

// nextStep says what is left to do with the file written.
func nextStep(reg *registry.Registry, path string) string {
	fill := 0
	for _, f := range reg.Lint() {
		if f.Rule == finding.FillIn || f.Rule == finding.Owner {
			fill++
		}
	}
	lint := "keyguard lint"
	if path != "keyguard.yaml" {
		lint += " --registry " + path
	}
	if fill == 0 {
		return fmt.Sprintf("; adapt it to your keys, then run %s", lint)
	}
	return fmt.Sprintf("; %d values are FILL-IN (grep -n FILL-IN %s): %s fails until they are replaced", fill, path, lint)
}

// suggestion is one suggested entry of an audit report, by template.
type suggestion struct {
	template, text string
	keys, bytes    int64
}

// suggestionsOf lists the report's suggested entries, one per template,
// in the report's order (largest first).
func suggestionsOf(rep *report.Report, path string) ([]suggestion, error) {
	var sugg []suggestion
	seen := map[string]bool{}
	for _, g := range rep.Groups {
		if g.Kind != "prefix" || g.Suggested == "" {
			continue
		}
		tmpl, err := suggestedTemplate(g.Suggested)
		if err != nil {
			return nil, fmt.Errorf("%s: the suggested entry of %s does not load: %v", path, g.Name, err)
		}
		if seen[tmpl] {
			continue
		}
		seen[tmpl] = true
		sugg = append(sugg, suggestion{tmpl, g.Suggested, g.Keys, g.Bytes})
	}
	switch {
	case len(sugg) > 0:
	case rep.Summary.Keys == 0 && !rep.Complete:
		return nil, fmt.Errorf("%s is %s that counted no key: nothing to build a registry from; %s", path, partial(rep), carryOn(rep, path))
	case rep.Summary.Keys == 0:
		return nil, fmt.Errorf("%s counted no key: nothing to build a registry from; audit the server that holds the keys (keyguard init alone writes a commented starter)", path)
	case !rep.Complete:
		return nil, fmt.Errorf("%s has no suggested entries: every key of %s matched a template of its registry (%s), but the keys it did not reach may not; %s", path, partial(rep), human.OrDash(rep.Registry), carryOn(rep, path))
	default:
		return nil, fmt.Errorf("%s has no suggested entries: every key the audit saw matched a template of its registry (%s), or the report lists no groups of unregistered keys", path, human.OrDash(rep.Registry))
	}
	return sugg, nil
}

// registryFromAudit writes a registry from the suggested entries of a
// report's prefix groups: each domain they start with declared with its
// owner FILL-IN, then the entries as the audit wrote them, largest family
// first. An entry suggested twice (once per database) is written once.
func registryFromAudit(rep *report.Report, path string) ([]byte, int, error) {
	sugg, err := suggestionsOf(rep, path)
	if err != nil {
		return nil, 0, err
	}
	domains := map[string]bool{}
	for _, s := range sugg {
		if t, err := keytmpl.Parse(s.template, ':'); err == nil {
			if first, lit := t.Segments()[0].Literal(); lit {
				domains[strings.TrimPrefix(first, "{")] = true
			}
		}
	}
	kept, keptDomains, keptNote := registeredEntries(rep)
	for d := range keptDomains {
		delete(domains, d) // declared with its owner below
	}
	names := make([]string, 0, len(domains))
	for d := range domains {
		names = append(names, d)
	}
	sort.Strings(names)

	var b bytes.Buffer
	w := registry.NewWriter(&b)
	w.Comment(0, fmt.Sprintf(`keyguard.yaml built by keyguard init from the audit report %s
(%s %s, %s, registry %s): the entries of that registry its keys
matched, then one entry per family of keys it found unregistered, largest
first.

Every value a person must decide is marked FILL-IN: the owners, the
descriptions, and TTLs the keys did not show. keyguard lint fails until each
is replaced (grep -n FILL-IN this file). Rules and their fixes: docs/rules.md.%s`,
		path, rep.Source.Kind, rep.Source.Target, rep.StartedAt.UTC().Format("2006-01-02 15:04 UTC"), human.OrDash(rep.Registry), partialNote(rep)))
	w.Header(1, ':', "")
	w.Text(starterPolicy + "\n")
	w.Section("domains")
	for _, d := range names {
		w.Domain(registry.Domain{Name: d, Owner: "FILL-IN", Desc: "FILL-IN: what the " + d + " keys are for"})
	}
	for _, d := range slices.Sorted(maps.Keys(keptDomains)) {
		w.Domain(*keptDomains[d])
	}
	w.Blank()
	w.Section("keys")
	if keptNote != "" {
		w.Comment(2, keptNote)
	}
	for _, k := range kept {
		w.Comment(2, k.note)
		w.Text(k.text + "\n")
	}
	for i, s := range sugg {
		if i > 0 || len(kept) > 0 {
			w.Blank()
		}
		w.Comment(2, human.Plural(s.keys, "key")+", "+human.Bytes(s.bytes))
		w.Text(strings.TrimRight(s.text, "\n") + "\n")
	}
	if err := w.Err(); err != nil {
		return nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	return b.Bytes(), len(sugg), nil
}

// keptEntry is an entry copied from the audit's registry, as written
// there, and the comment written above it.
type keptEntry struct{ note, text string }

// registeredEntries are the entries of the report's registry that keys of
// the report matched, as written in that file (re-indented under keys:),
// and their declared domains: the registry built covers every key the
// audit saw, not only the unregistered ones. note says why none could be
// copied, or is "" (also when the report had no registry).
func registeredEntries(rep *report.Report) (entries []keptEntry, domains map[string]*registry.Domain, note string) {
	domains = map[string]*registry.Domain{}
	used := 0
	for _, g := range rep.Groups {
		if g.Kind == report.KindTemplate && g.Keys > 0 {
			used++
		}
	}
	if rep.Registry == "" || used == 0 {
		return nil, domains, ""
	}
	src, err := os.ReadFile(rep.Registry)
	if err != nil {
		return nil, domains, fmt.Sprintf("FILL-IN: the %d templates of %s the audit's other keys matched could not be copied (%v): copy them here", used, rep.Registry, err)
	}
	reg, err := registry.Parse(rep.Registry, src)
	if err != nil || reg.Env != "" || reg.Separator != ':' {
		return nil, domains, fmt.Sprintf("FILL-IN: copy here the %d templates of %s the audit's other keys matched", used, rep.Registry)
	}
	lines := strings.Split(string(src), "\n")
	starts := make([]int, 0, len(reg.Entries))
	for _, e := range reg.Entries {
		starts = append(starts, e.Pos.Line)
	}
	sort.Ints(starts)
	seen := map[*registry.Entry]bool{}
	for _, g := range rep.Groups {
		e := reg.EntryByKey(g.Name)
		if g.Kind != report.KindTemplate || g.Keys == 0 || e == nil || seen[e] || e.Pos.Line < 1 {
			continue
		}
		seen[e] = true
		end := len(lines)
		if i := sort.SearchInts(starts, e.Pos.Line+1); i < len(starts) {
			end = starts[i] - 1
		}
		text := entryText(lines, e.Pos.Line-1, end)
		if text == "" {
			continue
		}
		entries = append(entries, keptEntry{fmt.Sprintf("%s, %s (from %s)", human.Plural(g.Keys, "key"), human.Bytes(g.Bytes), rep.Registry), text})
		if d, ok := reg.Domain(e.Domain); ok {
			domains[d.Name] = d
		}
	}
	return entries, domains, ""
}

// entryText is lines[from:to] of a registry file (an entry and what
// follows it up to the next), re-indented to start at two spaces, without
// the blank lines and comments that end it nor any top-level line.
func entryText(lines []string, from, to int) string {
	if from < 0 || from >= len(lines) {
		return ""
	}
	first := lines[from]
	dash := strings.Index(first, "-")
	if dash < 0 || strings.TrimSpace(first[:dash]) != "" {
		return ""
	}
	var out []string
	for i := from; i < to && i < len(lines); i++ {
		l := strings.TrimRight(lines[i], " \t\r")
		if i > from && l != "" && !strings.HasPrefix(l, " ") && !strings.HasPrefix(l, "\t") && !strings.HasPrefix(l, "-") {
			break // a top-level key: the section ended
		}
		if len(l) >= dash && strings.TrimSpace(l[:dash]) == "" {
			l = l[dash:]
		} else {
			l = strings.TrimLeft(l, " \t")
		}
		if l != "" {
			l = "  " + l
		}
		out = append(out, l)
	}
	for len(out) > 0 && (out[len(out)-1] == "" || strings.HasPrefix(strings.TrimSpace(out[len(out)-1]), "#")) {
		out = out[:len(out)-1]
	}
	return strings.Join(out, "\n")
}

// suggestedTemplate is the template of a suggested entry, as the
// registry reads it.
func suggestedTemplate(entry string) (string, error) {
	reg, err := registry.Parse("suggested entry", []byte("version: 1\nkeys:\n"+entry))
	if err != nil {
		return "", err
	}
	if len(reg.Entries) != 1 {
		return "", fmt.Errorf("%d entries, not one", len(reg.Entries))
	}
	return reg.Entries[0].Key, nil
}

const starterPolicy = `policy:
  max_key_bytes: 64           # longer keys are reported (naming/length)
  require_ttl: true           # every key expires, unless its entry says persistent: true
  big_key_bytes: 1048576      # 1 MiB: bigger keys are reported by the audits (big-key)
  big_key_elements: 10000     # collections with more elements too`

// Registry is what keyguard init writes: the domains of a common
// naming standard, one example entry each, every field commented. It lints
// clean.
const Registry = `# keyguard.yaml: the registry of the keys of one Redis (or Redis Cluster)
# shared by several teams. Every key the services write matches exactly one
# entry here, which says who owns it, its Redis type and how long it lives.
#
#   keyguard lint                    check this file (CI)
#   keyguard check KEY...            classify concrete keys against it
#   keyguard gen --lang go ...       typed key builders, so nobody writes a key by hand
#   keyguard audit --redis URL       compare a live server with it
#
# Rules and their fixes: docs/rules.md. The entries below are examples of the
# usual domains: keep the domains you use, give them your teams, and replace
# the examples with your keys.
version: 1
separator: ":"                # segments: domain:entity:{id}:attribute
` + starterPolicy + `

# The first segment of every key is a domain, owned by one team. An entry
# takes its domain's owner unless it names its own.
domains:
  auth:    {owner: identity-team, desc: "login state: sessions, refresh tokens"}
  cache:   {owner: platform-team, desc: "caches of data stored elsewhere"}
  lock:    {owner: platform-team, desc: "distributed locks: seconds, never minutes"}
  rate:    {owner: platform-team, desc: "rate-limit counters"}
  verify:  {owner: identity-team, desc: "one-time codes (SMS, e-mail)"}
  seq:     {owner: platform-team, desc: "sequence numbers (INCR): never expire"}
  channel: {owner: platform-team, desc: "streams between services"}
  queue:   {owner: platform-team, desc: "work queues"}
  rank:    {owner: growth-team, desc: "leaderboards (sorted sets)"}
  config:  {owner: platform-team, desc: "runtime configuration, feature flags"}
  keyguard: {owner: platform-team, desc: "keyguard's own records, written by its SDK"}

# Placeholders: {name} any text without ':', {name:int}, {name:hex},
# {name:uuid}, {name:date} (yyyyMMdd), {name:region} (6 digits),
# {name:enum(A,B)}, {name:hash} (the builder stores a hash: for phone numbers,
# e-mail addresses and other personal data). A literal brace is doubled:
# "{{order:{id}}}:items" makes the Cluster hash tag {order:1001}.
#
# Other fields an entry may have:
#   owner: TEAM                 instead of the domain's owner
#   writers: [svc-a, svc-b]     services besides the owner that may write (SDK, ACLs)
#   readers: [svc-c]            services that may read (ACLs)
#   ttl_jitter: 1m              random extra TTL, so keys written together expire apart
#   guard: true                 hash with its owner in the field __ns__ (guard SDK)
#   hot: {replicas: 10, local_ttl: 5s}   hot-key protection (SDK)
#   fields: [a, b]              the hash fields (or JSON keys) of the value
#   pii: allow                  personal data in clear, after review
#   deprecated: {replaced_by: "new:template:{id}"}
#   name: OrderBase             the generated builder's name
keys:
  - key: "auth:session:{userId:int}"
    type: hash
    ttl: 30m                    # renewed on every request
    desc: "a signed-in user's session"

  - key: "cache:user:profile:{userId:int}"
    type: string
    ttl: 10m
    ttl_jitter: 1m
    desc: "user profile JSON; deleted when the profile changes"

  - key: "lock:order:pay:{orderNo}"
    type: string
    ttl: 30s                    # the longest acceptable hold
    desc: "one payment at a time per order"

  - key: "rate:login:{phone:hash}"
    type: string
    ttl: 1m                     # the window
    desc: "login attempts per phone number per minute"

  - key: "verify:sms:{phone:hash}:{scene:enum(LOGIN,RESET_PWD,BIND)}"
    type: string
    ttl: 5m                     # exactly the code's validity
    desc: "the latest SMS code per phone number and scene"

  - key: "seq:order:no"
    type: string
    persistent: true            # INCR counter: must never expire
    desc: "order number sequence"

  - key: "channel:order:events"
    type: stream
    persistent: true            # trimmed by XADD MAXLEN, not expired
    desc: "order state changes for other services"

  - key: "queue:email:send"
    type: list
    persistent: true            # drained by the mail workers
    desc: "e-mails waiting to be sent"

  - key: "rank:sales:daily:{day:date}"
    type: zset
    ttl: 48h                    # a day's board, kept one more day
    desc: "products by sales, one board per day"

  - key: "config:feature:flags"
    type: hash
    persistent: true
    desc: "feature flags by name"

  # keyguard's own keys: the SDK writes them when its writer records (go-redis
  # hook) or hot-key reports are on. Keep them declared, or the audits and the
  # dashboard list them as unregistered. The doubled braces are literal ones:
  # the keys share the Cluster hash tag {writers} or {hotkeys}.
  - key: "keyguard:{{writers}}:index"
    type: hash
    persistent: true
    desc: "writer records: template id -> template text"

  - key: "keyguard:{{writers}}:t:{id:hex}"
    type: zset
    ttl: 24h                    # the records' window
    desc: "writer records of one template: service -> last write (unix ms)"

  - key: "keyguard:{{hotkeys}}:index"
    type: hash
    persistent: true
    desc: "hot-key reports: instance id -> service, host, last report"

  - key: "keyguard:{{hotkeys}}:i:{id:hex}"
    type: zset
    ttl: 10m
    desc: "hot-key report of one instance: key -> operations per second"

  - key: "channel:keyguard:invalidate"
    type: string
    persistent: true
    desc: "Pub/Sub channel: local-tier invalidations of hot keys (no data is stored)"
`
