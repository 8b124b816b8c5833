package report

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/jsonout"
)

// Meta is what the walker knows about the run.
type Meta struct {
	Source    Source
	Registry  string // registry file
	StartedAt time.Time
	Duration  time.Duration
	Complete  bool       // the whole keyspace was walked
	Stopped   []NodeStop // where nodes stopped early
	Notes     []string   // e.g. why hot-key data is unavailable
}

// Source is what was audited.
type Source struct {
	Kind   string `json:"kind"`   // redis|cluster|rdb
	Target string `json:"target"` // URL without password, or file names
	Nodes  int    `json:"nodes"`
}

// NodeStop says where a node's walk stopped, so that it can be resumed.
type NodeStop struct {
	Node   string `json:"node"`
	Reason string `json:"reason"`
	Cursor string `json:"cursor,omitempty"` // SCAN cursor to resume from, or RDB byte offset
	Keys   int64  `json:"keys"`             // keys read from the node before it stopped
	DB     int    `json:"db,omitempty"`     // the database the cursor walks
	Slots  string `json:"slots,omitempty"`  // Cluster: the slot ranges not counted ("0-99,200"), walked again by --resume
	RunID  string `json:"run_id,omitempty"` // the server's run_id when its walk began: the cursor holds for it only
}

// Report is the audit report: the base fields, then those marked as
// extensions. Its JSON is the --format json output and what ReadReport
// and Diff read back.
type Report struct {
	Source   Source `json:"source"`
	Registry string `json:"registry"`
	// RegistryDigest names what the registry declared when the report
	// was made (16 hex digits; registry.Registry.Digest): a resume or
	// merge under a registry that declares otherwise is refused, and a
	// diff says when its two reports differ in it. Absent without a
	// registry, and in reports of keyguard versions before it.
	RegistryDigest string    `json:"registry_digest,omitempty"`
	StartedAt      time.Time `json:"started_at"`
	DurationMS     int64     `json:"duration_ms"`
	Complete       bool      `json:"complete"`
	// ResumedFrom names the partial report a resumed audit carried over
	// (its keys are in this report), or the reports merged into this one.
	ResumedFrom string    `json:"resumed_from,omitempty"`
	Summary     Summary   `json:"summary"`
	Groups      []Group   `json:"groups"`
	TopKeys     []TopKey  `json:"top_keys"`
	Findings    []Finding `json:"findings"`

	// Extensions.
	FindingsOmitted map[string]int64 `json:"findings_omitted,omitempty"` // per rule: findings counted but not listed (cap)
	Stopped         []NodeStop       `json:"stopped,omitempty"`
	Notes           []string         `json:"notes,omitempty"`
	Estimate        bool             `json:"estimate,omitempty"` // counts are extrapolated from a sample
	Sample          *Sample          `json:"sample,omitempty"`
	TTLHistogram    []TTLBucket      `json:"ttl_histogram,omitempty"`
	UnusedTemplates []string         `json:"unused_templates,omitempty"` // registry templates with no key
	Databases       []int            `json:"databases,omitempty"`        // the databases keys came from, when more than one
	Prefixes        []Prefix         `json:"prefixes,omitempty"`         // memory by key prefix (PrefixTree)
	MergedFrom      []string         `json:"merged_from,omitempty"`      // the reports merged into this one
	Coverage        *Coverage        `json:"coverage,omitempty"`         // which keys the report counted, and which not and why

	// NotChecked lists what the audit could not check because it ran
	// without a registry (NoRegistryChecks); empty with one.
	NotChecked []string `json:"not_checked,omitempty"`

	// DocsBase is where docs/ is published, for absolute rule links
	// (LinkDocs); "" links relative to the repository. Not written.
	DocsBase string `json:"-"`

	// State is what merge and resume need to carry this report's
	// aggregates over (exact counts, TTL sketches, samples). Not meant
	// for reading; its shape may change between versions.
	State *State `json:"state,omitempty"`
}

// Summary totals the report. With a sample, keys, bytes, no_ttl and
// unregistered are extrapolated; findings are what the sample showed.
type Summary struct {
	Keys         int64 `json:"keys"`
	Bytes        int64 `json:"bytes"`
	NoTTL        int64 `json:"no_ttl"`
	Unregistered int64 `json:"unregistered"`
	Findings     int64 `json:"findings"`

	// Extensions.
	BytesUnknown   int64                    `json:"bytes_unknown,omitempty"` // keys whose size could not be read
	BySeverity     SeverityCount            `json:"by_severity"`
	ByRule         map[string]int64         `json:"by_rule,omitempty"`
	ByRuleSeverity map[string]SeverityCount `json:"by_rule_severity,omitempty"` // a rule's findings per severity (some rules' severity depends on the key: docs/rules.md)
}

// SeverityCount counts findings per severity.
type SeverityCount struct {
	Error   int64 `json:"error"`
	Warning int64 `json:"warning"`
	Info    int64 `json:"info"`
}

// Group is one template (kind "template") or inferred family of
// unregistered keys (kind "prefix").
type Group struct {
	Name       string           `json:"name"`
	Kind       string           `json:"kind"`
	DB         *int             `json:"db,omitempty"` // when the source holds more than one database
	Owner      string           `json:"owner"`
	Keys       int64            `json:"keys"`
	Bytes      int64            `json:"bytes"`
	NoTTL      int64            `json:"no_ttl"`
	Types      map[string]int64 `json:"types"`
	TTLSeconds TTLStats         `json:"ttl_seconds"`

	// Extensions.
	Domain    string `json:"domain,omitempty"`
	WithTTL   int64  `json:"with_ttl"`            // keys with a TTL (the ttl_seconds population)
	Findings  int64  `json:"findings"`            // findings on keys of the group
	Example   string `json:"example,omitempty"`   // prefix groups: one key of the family
	Suggested string `json:"suggested,omitempty"` // prefix groups: a registry entry to paste under keys:

	// The group's keys by remaining TTL, in the classes of the report's
	// ttl_histogram; only the classes that hold keys.
	TTLHistogram []TTLBucket `json:"ttl_histogram,omitempty"`
}

// TTLStats are remaining TTLs in seconds of the keys that have one; p50
// is approximate (log buckets, within 12.5%), min and max are exact.
type TTLStats struct {
	Min int64 `json:"min"`
	P50 int64 `json:"p50"`
	Max int64 `json:"max"`
}

// TopKey is one of the largest keys.
type TopKey struct {
	Key       string `json:"key"`
	KeyBase64 string `json:"key_base64,omitempty"` // the exact bytes when key is not valid UTF-8
	KeyLen    int    `json:"key_len,omitempty"`    // the full length when key was cut at 1 KiB
	Type      string `json:"type"`
	Bytes     int64  `json:"bytes"`
	Elements  int64  `json:"elements"`
	TTLMS     *int64 `json:"ttl_ms,omitempty"` // -1 no TTL; absent when unknown
	Template  string `json:"template,omitempty"`
	Node      string `json:"node,omitempty"`
	DB        *int   `json:"db,omitempty"` // when the source holds more than one database
}

// Finding is a finding of the report: finding.Finding's fields, plus the
// exact key bytes when the key is not valid UTF-8 and the full length when
// the key was cut.
type Finding struct {
	finding.Finding
	KeyBase64 string `json:"key_base64,omitempty"`
	KeyLen    int    `json:"key_len,omitempty"`
	DB        *int   `json:"db,omitempty"`    // when the source holds more than one database
	Bytes     int64  `json:"bytes,omitempty"` // the key's memory, when known
	Doc       string `json:"doc,omitempty"`   // the rule's section in docs/rules.md
}

// Sample describes a sampled audit.
type Sample struct {
	Ratio    float64 `json:"ratio"`     // fraction of the keyspace sampled; 0 unknown (nothing extrapolated)
	KeysSeen int64   `json:"keys_seen"` // records actually read
	// BytesMargin is the 95% margin of the extrapolated memory
	// (Summary.Bytes ± BytesMargin); 0 when unknown (a merged report).
	BytesMargin int64 `json:"bytes_margin,omitempty"`
	// Stratified: keys were probed with probabilities of their own, by
	// template or family and by what their sizes showed (docs/audit.md).
	Stratified bool `json:"stratified,omitempty"`
}

// TTLBucket is one bar of the TTL histogram: keys and memory by remaining
// TTL, then keys without TTL and keys whose TTL is unknown.
type TTLBucket struct {
	Label string `json:"label"`
	Keys  int64  `json:"keys"`
	Bytes int64  `json:"bytes"`
}

// LinkDocs makes the rule links of the report absolute, under base (the
// published docs/ directory, finding.DefaultDocsBase by default): a report
// read outside the repository has no docs/rules.md beside it.
func (r *Report) LinkDocs(base string) {
	r.DocsBase = base
	var rule, url string // findings come rule by rule: one link per run
	for i := range r.Findings {
		f := &r.Findings[i]
		if i == 0 || f.Rule != rule {
			rule, url = f.Rule, r.docURL(f.Rule)
		}
		f.Doc = url
	}
}

// docURL is the link to a rule's section in docs/rules.md.
func (r *Report) docURL(rule string) string {
	if r.DocsBase == "" {
		return finding.DocURL(rule)
	}
	return finding.HelpURI(r.DocsBase, rule)
}

// WithoutRegistry reports whether the report was made without a
// registry: it then lists what went unchecked (NoRegistryChecks).
func (r *Report) WithoutRegistry() bool { return len(r.NotChecked) > 0 }

// NoRegistryChecks are what an audit without a registry does not check:
// everything that compares keys with declared templates and owners.
var NoRegistryChecks = []string{
	"unregistered keys",
	"owners",
	"types and TTLs declared by templates",
	"guard (__ns__ owners)",
	"value schemas (fields:)",
}

// RuleRank is a rule's place in the reports' fixed order of rules; rules
// it does not list come last.
func RuleRank(rule string) int {
	switch rule {
	case finding.Unregistered:
		return 0
	case finding.Domain:
		return 1
	case finding.NoTTL:
		return 2
	case finding.Case:
		return 3
	case finding.Charset:
		return 4
	case finding.Length:
		return 5
	case finding.Separator:
		return 6
	case finding.LeadingID:
		return 7
	case finding.Timestamp:
		return 8
	case finding.PII:
		return 9
	case finding.TypeMismatch:
		return 10
	case finding.TTLMismatch:
		return 11
	case finding.BigKey:
		return 12
	case finding.HotKey:
		return 13
	case finding.GuardOwnerless:
		return 14
	case finding.GuardForeign:
		return 15
	case finding.MixedSchema:
		return 16
	}
	return 17
}

// WriteJSON writes the report as indented JSON. It streams:
// the top-level fields, and the groups, top keys and findings one by one,
// go through a small buffer, so the document is never whole in memory.
// The bytes are those encoding/json's Encoder gives the whole Report with
// a two-space indent and no HTML escaping.
func (r *Report) WriteJSON(w io.Writer) error {
	j := jsonout.NewObject(w)
	j.Field("source", &r.Source)
	j.Field("registry", r.Registry)
	if r.RegistryDigest != "" {
		j.Field("registry_digest", r.RegistryDigest)
	}
	j.Field("started_at", r.StartedAt)
	j.Field("duration_ms", r.DurationMS)
	j.Field("complete", r.Complete)
	if r.ResumedFrom != "" {
		j.Field("resumed_from", r.ResumedFrom)
	}
	j.Field("summary", &r.Summary)
	writeArray(j, "groups", r.Groups, func() func([]byte, *Group) []byte { return appendGroup })
	writeTopKeys(j, r.TopKeys)
	writeFindings(j, r.Findings)
	// The extensions, omitted when empty as their omitempty tags say.
	if len(r.FindingsOmitted) > 0 {
		j.Field("findings_omitted", r.FindingsOmitted)
	}
	if len(r.Stopped) > 0 {
		jsonArray(j, "stopped", r.Stopped)
	}
	if len(r.Notes) > 0 {
		j.Field("notes", r.Notes)
	}
	if r.Estimate {
		j.Field("estimate", r.Estimate)
	}
	if r.Sample != nil {
		j.Field("sample", r.Sample)
	}
	if len(r.TTLHistogram) > 0 {
		jsonArray(j, "ttl_histogram", r.TTLHistogram)
	}
	if len(r.UnusedTemplates) > 0 {
		j.Field("unused_templates", r.UnusedTemplates)
	}
	if len(r.Databases) > 0 {
		j.Field("databases", r.Databases)
	}
	if len(r.Prefixes) > 0 {
		writeArray(j, "prefixes", r.Prefixes, func() func([]byte, *Prefix) []byte { return appendPrefix })
	}
	if len(r.MergedFrom) > 0 {
		j.Field("merged_from", r.MergedFrom)
	}
	if r.Coverage != nil {
		j.Field("coverage", r.Coverage)
	}
	if len(r.NotChecked) > 0 {
		j.Field("not_checked", r.NotChecked)
	}
	if r.State != nil {
		j.Key("state")
		writeState(j, r.State)
	}
	if err := j.Close(); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// jsonArray writes a field holding the elements of s, each encoded by
// encoding/json as an element two levels deep (the bytes of the array encoded whole),
// side by side on the cores when there are many (the groups and prefixes
// of a report of thousands of families).
func jsonArray[T any](j *jsonout.Object, name string, s []T) {
	writeArray(j, name, s, reflectAdd[T](2))
}

// reflectAdd returns a newAdd for writeElems that encodes an element with
// encoding/json, indented as an element depth levels deep.
func reflectAdd[T any](depth int) func() func([]byte, *T) []byte {
	return func() func([]byte, *T) []byte { return jsonout.Reflect[T](depth) }
}

// findings writes the findings field with a findingEncoder: the bytes
// jsonArray would write, without encoding/json's reflection and
// re-indentation (a report can hold 10,000 findings per rule).
func writeFindings(j *jsonout.Object, s []Finding) {
	writeArray(j, "findings", s, func() func([]byte, *Finding) []byte {
		var enc findingEncoder
		return enc.append
	})
}

// topKeys writes the top_keys field as jsonArray would, without
// reflection (a report can list 100,000 top keys).
func writeTopKeys(j *jsonout.Object, s []TopKey) {
	writeArray(j, "top_keys", s, func() func([]byte, *TopKey) []byte {
		var enc findingEncoder
		return enc.appendTopKey
	})
}

// state writes the value of the state field as encoding/json would,
// field by field: its hot-key candidates (a report with --hot 100000
// carries tens of thousands) and its groups (one per family) appended
// directly, the rest through encoding/json. The fields and their
// omitempty tags are State's.
func writeState(j *jsonout.Object, st *State) {
	n := 0
	field := func(name string) {
		if n > 0 {
			j.WriteByte(',')
		}
		n++
		j.WriteString("\n    \"")
		j.WriteString(name)
		j.WriteString("\": ")
	}
	value := func(name string, v any) {
		field(name)
		j.Value(2, v) // a field's value two levels deep
	}
	j.WriteByte('{')
	value("version", st.Version)
	value("options", &st.Options)
	value("totals", &st.Totals)
	value("ttl_histogram", st.TTLHistogram)
	// The groups and field states, one per family of a keyspace of
	// thousands: element by element, as the whole array encoded.
	if len(st.Groups) > 0 {
		field("groups")
		writeElems(j, 2, st.Groups, func() func([]byte, *StateGroup) []byte { return appendStateGroup })
	} else {
		value("groups", st.Groups)
	}
	if len(st.Fields) > 0 {
		field("fields")
		writeElems(j, 2, st.Fields, reflectAdd[StateFields](3))
	}
	if len(st.Hot) > 0 {
		field("hot")
		jsonout.Elems(j, 2, st.Hot, appendStateHot)
	}
	if len(st.PII) > 0 {
		value("pii", st.PII)
	}
	if st.PIILost != 0 {
		value("pii_lost", st.PIILost)
	}
	if len(st.RunIDs) > 0 {
		value("run_ids", st.RunIDs)
	}
	j.WriteString("\n  }")
}

// arrayChunk is how many elements writeArray encodes at a time on one
// goroutine.
const arrayChunk = 256

// writeArray writes field name as an indented JSON array of s, each
// element appended by an encoder that newAdd makes (one per goroutine).
// A long array is encoded a few chunks at a time, side by side on the
// cores (a report is written once its run is done), and written in
// order: the bytes are those of one encoder.
func writeArray[T any](j *jsonout.Object, name string, s []T, newAdd func() func([]byte, *T) []byte) {
	j.Key(name)
	if len(s) == 0 {
		j.WriteString("[]")
		return
	}
	writeElems(j, 1, s, newAdd)
}

// writeElems writes the elements of s as the array's value of a field
// depth fields deep (see writeArray): the brackets, and the elements on
// lines of their own.
func writeElems[T any](j *jsonout.Object, depth int, s []T, newAdd func() func([]byte, *T) []byte) {
	sep := "\n" + jsonout.Indent(depth+1)
	j.WriteByte('[')
	encode := func(add func([]byte, *T) []byte, b []byte, from, to int) []byte {
		for i := from; i < to; i++ {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, sep...)
			b = add(b, &s[i])
		}
		return b
	}
	workers := min(runtime.GOMAXPROCS(0), (len(s)+arrayChunk-1)/arrayChunk, 4)
	adds, bufs := make([]func([]byte, *T) []byte, workers), make([][]byte, workers)
	for w := range workers {
		adds[w] = newAdd()
	}
	for start := 0; start < len(s) && j.Err() == nil; start += workers * arrayChunk {
		var wg sync.WaitGroup
		for w := 1; w < workers && start+w*arrayChunk < len(s); w++ {
			from := start + w*arrayChunk
			wg.Go(func() { bufs[w] = encode(adds[w], bufs[w][:0], from, min(from+arrayChunk, len(s))) })
		}
		bufs[0] = encode(adds[0], bufs[0][:0], start, min(start+arrayChunk, len(s)))
		wg.Wait()
		for w := 0; w < workers && start+w*arrayChunk < len(s); w++ {
			for b := bufs[w]; len(b) > 0; b = b[min(len(b), 16<<10):] {
				j.Write(b[:min(len(b), 16<<10)]) // the writer gets writes of the buffer's size, not a chunk's
			}
		}
	}
	j.WriteString("\n" + jsonout.Indent(depth) + "]")
}

// ReadReport reads a report written by WriteJSON (keyguard audit or rdb
// --format json), within the default ReadLimits. Keys given as key_base64
// get their exact bytes back.
func ReadReport(r io.Reader) (*Report, error) { return ReadReportLimited(r, ReadLimits{}) }

// ReadReportLimited is ReadReport within lim: a report over them is an
// error that wraps ErrReportLimit.
func ReadReportLimited(r io.Reader, lim ReadLimits) (*Report, error) {
	lim.defaults()
	var rep Report
	br := &boundedReader{r: r, left: lim.MaxBytes, maxDepth: lim.MaxDepth, maxEntries: lim.MaxEntries, maxTotal: lim.MaxTotalEntries}
	dec := json.NewDecoder(br)
	if err := dec.Decode(&rep); err != nil {
		if br.err != nil {
			return nil, fmt.Errorf("read audit report: %w: check that this is a report of keyguard audit --format json", br.err)
		}
		return nil, fmt.Errorf("read audit report: %w (expected the JSON of keyguard audit --format json)", err)
	}
	if rep.Source.Kind == "" {
		return nil, errors.New("read audit report: no source.kind: this is not a keyguard audit or rdb report (make one with keyguard audit --format json)")
	}
	for i := range rep.Findings {
		if err := fromBase64(&rep.Findings[i].Key, rep.Findings[i].KeyBase64); err != nil {
			return nil, fmt.Errorf("read audit report: finding %d: %w", i, err)
		}
	}
	for i := range rep.TopKeys {
		if err := fromBase64(&rep.TopKeys[i].Key, rep.TopKeys[i].KeyBase64); err != nil {
			return nil, fmt.Errorf("read audit report: top key %d: %w", i, err)
		}
	}
	return &rep, nil
}

func fromBase64(key *string, b64 string) error {
	if b64 == "" {
		return nil
	}
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return fmt.Errorf("key_base64: %w", err)
	}
	*key = string(b)
	return nil
}

// KeyBase64 is the exact bytes of k in base64 when k is not valid UTF-8
// (the key_base64 of findings and top keys), else "".
func KeyBase64(k string) string {
	if utf8.ValidString(k) {
		return ""
	}
	return base64.StdEncoding.EncodeToString([]byte(k))
}

// Group kinds.
const (
	KindTemplate = "template" // a registry template
	KindPrefix   = "prefix"   // an inferred family of unregistered keys
)

// OtherGroup names the group that counts unregistered keys past the
// family cap or with inferred templates over 256 bytes.
const OtherGroup = "(other)"

// TypeNames are the key types a group counts, in report order: Redis's
// types, then module values, then keys whose type is unknown.
var TypeNames = [...]string{"string", "hash", "list", "set", "zset", "stream", "module", "unknown"}

// RuleRow is one line of a findings-by-rule table: a rule at one
// severity (a rule whose severity depends on the key has a row per
// severity, as docs/rules.md explains), with the example the report
// lists first.
type RuleRow struct {
	Rule     string
	Severity finding.Severity
	Count    int64
	Omitted  int64 // findings of the rule counted but not listed (on its first row)
	Example  *Finding
}

// ruleRows are the findings-by-rule rows of the report: by severity
// (highest first), then the rule table's order.
func (r *Report) ruleRows() []RuleRow {
	type key struct {
		rule string
		sev  finding.Severity
	}
	idx := map[key]int{}
	var rows []RuleRow
	row := func(rule string, sev finding.Severity) *RuleRow {
		k := key{rule, sev}
		i, ok := idx[k]
		if !ok {
			i = len(rows)
			idx[k] = i
			rows = append(rows, RuleRow{Rule: rule, Severity: sev})
		}
		return &rows[i]
	}
	for rule, c := range r.Summary.ByRuleSeverity {
		for _, s := range []struct {
			sev finding.Severity
			n   int64
		}{{finding.Error, c.Error}, {finding.Warning, c.Warning}, {finding.Info, c.Info}} {
			if s.n > 0 {
				row(rule, s.sev).Count = s.n
			}
		}
	}
	for rule, n := range r.Summary.ByRule {
		if _, ok := r.Summary.ByRuleSeverity[rule]; !ok { // a report without per-severity counts
			sev := finding.Info
			for i := range r.Findings {
				if r.Findings[i].Rule == rule {
					sev = max(sev, r.Findings[i].Severity)
				}
			}
			row(rule, sev).Count = n
		}
	}
	for i := range r.Findings {
		f := &r.Findings[i]
		if rw := row(f.Rule, f.Severity); rw.Example == nil {
			rw.Example = f
		}
	}
	slices.SortFunc(rows, func(a, b RuleRow) int {
		return cmp.Or(cmp.Compare(b.Severity, a.Severity), cmp.Compare(RuleRank(a.Rule), RuleRank(b.Rule)), strings.Compare(a.Rule, b.Rule))
	})
	seen := map[string]bool{}
	for i := range rows {
		if !seen[rows[i].Rule] {
			seen[rows[i].Rule] = true
			rows[i].Omitted = r.FindingsOmitted[rows[i].Rule]
		}
	}
	return rows
}
