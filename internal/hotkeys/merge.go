package hotkeys

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/keyguard/keyguard/hotkey"
	"github.com/keyguard/keyguard/internal/human"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/registry"
)

// Report thresholds by default.
const (
	DefaultMinRate = 1000 // operations per second
	DefaultMinFreq = 100  // LFU counter
	DefaultTop     = 50
)

// ReportOptions says what counts as hot and how much to list.
type ReportOptions struct {
	Target string        // shown in the report (no password)
	Window time.Duration // how far back SDK reports were read
	// MinRate: a key at or above this many operations per second (SDK
	// reports summed over instances, or the MONITOR sample) is hot
	// (DefaultMinRate).
	MinRate float64
	// MinFreq: a key whose LFU counter is at or above it is hot
	// (DefaultMinFreq).
	MinFreq int
	// Top is how many keys the report lists (DefaultTop); every hot key
	// gets a finding whatever its rank.
	Top int
	// DB is the database the SDK reports were read from: the services
	// write them beside their keys, so their keys are counted there.
	DB int
	// NoRegistry: the run was given no registry (none found): every key
	// is of an inferred family, which the report does not call
	// unregistered.
	NoRegistry bool
}

// Report is the hot keys of a server merged from every source: the SDK
// reports of all instances, OBJECT FREQ and a MONITOR sample.
type Report struct {
	Target      string            `json:"target"`
	GeneratedAt time.Time         `json:"generated_at"`
	Window      string            `json:"window"`
	MinRate     float64           `json:"min_rate"`
	MinFreq     int               `json:"min_freq"`
	SDK         SDKSource         `json:"sdk"`
	LFU         *LFUResult        `json:"lfu,omitempty"`
	Monitor     *MonitorResult    `json:"monitor,omitempty"`
	Keys        []KeyHeat         `json:"keys"`
	Templates   []TemplateHeat    `json:"templates"`
	Findings    []finding.Finding `json:"findings"`
	// NoRegistry: no registry was given or found, so every key is of the
	// family inferred from its name (as the audit groups such keys).
	NoRegistry bool `json:"no_registry,omitempty"`
}

// SDKSource summarises the SDK reports read.
type SDKSource struct {
	Instances int      `json:"instances"`
	Services  []string `json:"services"`
	// Unread says why the SDK reports could not be read (the Cluster
	// down, the server gone…): the report holds the other sources alone.
	Unread string `json:"unread,omitempty"`
}

// KeyHeat is one key with its evidence. A key of the same name in two
// databases is two keys.
type KeyHeat struct {
	Key string `json:"key"`
	// DB is the key's database when the report holds more than one (or
	// one other than 0), as in an audit report; nil otherwise.
	DB       *int   `json:"db,omitempty"`
	Template string `json:"template"`
	// Family is, for a key matching no template, the family inferred
	// from its name: the name the audit groups such keys by and
	// keyguard init --from-audit declares them as.
	Family string `json:"family,omitempty"`
	Owner  string `json:"owner,omitempty"`
	Region string `json:"region,omitempty"`
	// Hot is the template's hot: protection, nil when it declares none.
	Hot *HotPolicy `json:"hot,omitempty"`
	// Rate is operations per second summed over the SDK reports, seen by
	// Instances instances of Services.
	Rate      float64  `json:"rate"`
	Instances int      `json:"instances,omitempty"`
	Services  []string `json:"services,omitempty"`
	// MonitorRate is operations per second in the MONITOR sample.
	MonitorRate float64 `json:"monitor_rate,omitempty"`
	// Freq is the LFU counter (-1: not sampled).
	Freq  int    `json:"lfu_freq"`
	Node  string `json:"node,omitempty"`
	IsHot bool   `json:"hot_key"`
}

// HotPolicy is a template's hot: entry.
type HotPolicy struct {
	Replicas int    `json:"replicas,omitempty"`
	LocalTTL string `json:"local_ttl,omitempty"`
}

// TemplateHeat is the heat of one template, and of its regions when the
// template has a {name:region} placeholder. The keys matching no template
// are one TemplateHeat per inferred family (Template "unregistered").
type TemplateHeat struct {
	Template    string       `json:"template"`
	Family      string       `json:"family,omitempty"`
	Owner       string       `json:"owner,omitempty"`
	Hot         *HotPolicy   `json:"hot,omitempty"`
	Keys        int          `json:"keys"`
	HotKeys     int          `json:"hot_keys"`
	Rate        float64      `json:"rate"`
	MonitorRate float64      `json:"monitor_rate,omitempty"`
	MaxFreq     int          `json:"max_lfu_freq"`
	Regions     []RegionHeat `json:"regions,omitempty"`
}

// RegionHeat is the heat of one region of a template.
type RegionHeat struct {
	Region      string  `json:"region"`
	Keys        int     `json:"keys"`
	HotKeys     int     `json:"hot_keys"`
	Rate        float64 `json:"rate"`
	MonitorRate float64 `json:"monitor_rate,omitempty"`
}

// BuildReport merges the evidence (any of reps, lfu, mon may be empty)
// per key, per template and per region, and gives every hot key a
// hot-key finding: a warning when its template declares no hot:
// protection or is unregistered, info when it does.
func BuildReport(reg *registry.Registry, reps []hotkey.InstanceReport, lfu *LFUResult, mon *MonitorResult, opts ReportOptions) *Report {
	if opts.MinRate <= 0 {
		opts.MinRate = DefaultMinRate
	}
	if opts.MinFreq <= 0 {
		opts.MinFreq = DefaultMinFreq
	}
	if opts.Top <= 0 {
		opts.Top = DefaultTop
	}
	r := &Report{Target: opts.Target, GeneratedAt: time.Now().UTC(), Window: registry.FormatTTL(opts.Window),
		MinRate: opts.MinRate, MinFreq: opts.MinFreq, LFU: lfu, Monitor: mon,
		SDK: SDKSource{Instances: len(reps), Services: []string{}}, Keys: []KeyHeat{}, Templates: []TemplateHeat{}, Findings: []finding.Finding{},
		NoRegistry: opts.NoRegistry}
	keys, dbs, services := mergeEvidence(reg, reps, lfu, mon, opts.DB)
	r.SDK.Services = append(r.SDK.Services, services...)
	multi := lfu.multiDB()
	// In the order the evidence came: the LFU walk's keys sorted already,
	// which the sort below then finds in order.
	all := make([]*KeyHeat, 0, len(keys))
	for i := range keys {
		k := &keys[i]
		if multi || dbs[i] != 0 {
			k.DB = &dbs[i]
		}
		sort.Strings(k.Services)
		k.IsHot = k.Rate >= opts.MinRate || k.MonitorRate >= opts.MinRate || k.Freq >= opts.MinFreq
		all = append(all, k)
	}
	slices.SortFunc(all, func(a, b *KeyHeat) int {
		if c := compareHeat(a, b); c != 0 {
			return c
		}
		return cmp.Or(strings.Compare(a.Key, b.Key), cmp.Compare(dbOf(a), dbOf(b)))
	})
	listed := min(len(all), opts.Top)
	inOrder := true
	for i, k := range all {
		inOrder = inOrder && k == &keys[i]
	}
	if inOrder && listed > 0 {
		r.Keys = keys[:listed:listed] // no copy of 100,000 entries
	} else {
		r.Keys = slices.Grow(r.Keys, listed)
		for _, k := range all[:listed] {
			r.Keys = append(r.Keys, *k)
		}
	}
	hot := 0
	for _, k := range all {
		if k.IsHot {
			hot++
		}
	}
	r.Findings = slices.Grow(r.Findings, hot) // one finding each: tens of thousands at --top 100000
	var hf hotFinder
	for _, k := range all {
		if k.IsHot {
			r.Findings = append(r.Findings, hf.finding(k, opts))
		}
	}
	r.Templates = templateHeat(all)
	return r
}

// dbOf is k's database (0 when the report names none).
func dbOf(k *KeyHeat) int {
	if k.DB == nil {
		return 0
	}
	return *k.DB
}

// multiDB reports whether the walk covered more than one database, or one
// other than 0: every key then says its database, as in an audit report.
func (r *LFUResult) multiDB() bool {
	if r == nil || r.Coverage == nil {
		return false
	}
	dbs := map[int]bool{}
	for _, n := range r.Coverage.Nodes {
		for _, d := range n.DBs {
			dbs[d.DB] = true
		}
	}
	return len(dbs) > 1 || len(dbs) == 1 && !dbs[0]
}

// mergeEvidence gathers the evidence per key of a database (copies count
// as their key), in the order it came, with each key's database, and the
// services that reported; the SDK reports' keys are counted in database
// sdkDB.
func mergeEvidence(reg *registry.Registry, reps []hotkey.InstanceReport, lfu *LFUResult, mon *MonitorResult, sdkDB int) (heat []KeyHeat, dbs []int, services []string) {
	// One entry per key, in one allocation: --top 100000 makes as many.
	n := 0
	if mon != nil {
		n += len(mon.Keys)
	}
	for _, rep := range reps {
		n += len(rep.Keys)
	}
	if lfu != nil {
		n += len(lfu.Keys)
	}
	// By database, then name: a map by a string alone hashes and
	// compares faster than one by a struct (a tenth of BuildReport).
	keys := map[int]map[string]int32{}
	heat, dbs = make([]KeyHeat, 0, n), make([]int, 0, n)
	chk := reg.NewChecker() // infers the families of unregistered keys, as the audit's does
	get := func(db int, name string) *KeyHeat {
		key, e, region := hotkey.Classify(reg, name)
		in := keys[db]
		if in == nil {
			size := min(n, 1024)
			if len(keys) == 0 {
				size = n // most often the only one
			}
			in = make(map[string]int32, size)
			keys[db] = in
		}
		if i, ok := in[key]; ok {
			return &heat[i]
		}
		heat, dbs = append(heat, KeyHeat{Key: key, Template: hotkey.TemplateUnregistered, Region: region, Freq: -1}), append(dbs, db)
		k := &heat[len(heat)-1] // n is every key get is asked for: heat never moves
		if e == nil {
			k.Family = chk.Infer(key)
		} else {
			k.Template, k.Owner = e.Template.String(), e.Owner
			if e.Hot != nil {
				k.Hot = &HotPolicy{Replicas: e.Hot.Replicas}
				if e.Hot.LocalTTL > 0 {
					k.Hot.LocalTTL = registry.FormatTTL(e.Hot.LocalTTL)
				}
			}
		}
		in[key] = int32(len(heat) - 1)
		return k
	}
	for _, rep := range reps {
		if !slices.Contains(services, rep.Service) {
			services = append(services, rep.Service)
		}
		for _, kr := range rep.Keys {
			k := get(sdkDB, kr.Key)
			k.Rate += kr.Rate
			k.Instances++
			if !slices.Contains(k.Services, rep.Service) {
				k.Services = append(k.Services, rep.Service)
			}
		}
	}
	sort.Strings(services)
	if mon != nil {
		for _, kr := range mon.Keys {
			get(kr.DB, kr.Key).MonitorRate += kr.Rate
		}
	}
	if lfu != nil {
		for _, lk := range lfu.Keys {
			if k := get(lk.DB, lk.Key); lk.Freq > k.Freq {
				k.Freq, k.Node = lk.Freq, lk.Node
			}
		}
	}
	return heat, dbs, services
}

// compareHeat orders keys hottest first: SDK rate, then MONITOR rate,
// then LFU counter.
func compareHeat(a, b *KeyHeat) int {
	switch {
	case a.Rate != b.Rate:
		return cmpDesc(a.Rate, b.Rate)
	case a.MonitorRate != b.MonitorRate:
		return cmpDesc(a.MonitorRate, b.MonitorRate)
	}
	return b.Freq - a.Freq
}

func cmpDesc(a, b float64) int {
	if a > b {
		return -1
	}
	return 1
}

// hotFinder writes hot-key findings: the message of each in one buffer,
// made a string once, and a family's hint once (tens of thousands of hot
// keys in a few families; four formatted strings each took a fifth of
// BuildReport).
type hotFinder struct {
	buf   []byte
	hints [2]map[string]string // by family, of unregistered keys; [1] without a registry
}

func (h *hotFinder) finding(k *KeyHeat, opts ReportOptions) finding.Finding {
	b := appendDBText(append(h.buf[:0], "hot key"...), k.DB)
	b = append(b, ": "...)
	sep := false
	next := func() {
		if sep {
			b = append(b, "; "...)
		}
		sep = true
	}
	if k.Rate >= opts.MinRate {
		next()
		b = append(b, fmtRate(k.Rate)...)
		b = append(b, " ops/s in the SDK reports of "...)
		b = append(b, plural(k.Instances, "instance")...)
		b = append(b, " ("...)
		for i, s := range k.Services {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = append(b, s...)
		}
		b = append(b, ')')
	}
	if k.MonitorRate >= opts.MinRate {
		next()
		b = append(b, fmtRate(k.MonitorRate)...)
		b = append(b, " ops/s in the MONITOR sample"...)
	}
	if k.Freq >= opts.MinFreq {
		next()
		b = append(b, "LFU counter "...)
		b = strconv.AppendInt(b, int64(k.Freq), 10)
		b = append(b, " on "...)
		b = append(b, k.Node...)
	}
	f := finding.Finding{Rule: finding.HotKey, Key: k.Key, Owner: k.Owner}
	unregistered := k.Template == hotkey.TemplateUnregistered
	switch {
	case unregistered && opts.NoRegistry:
		// As the audit without a registry: the family, not "unregistered".
		f.Template = k.Family
		f.Severity = finding.Warning
		b = append(b, "; no registry, so no hot: protection is declared"...)
	case unregistered:
		f.Template = k.Family
		f.Severity = finding.Warning
		b = append(b, "; the key matches no template"...)
	case k.Hot == nil:
		f.Template = k.Template
		f.Severity = finding.Warning
		b = append(b, "; the template declares no hot: protection"...)
		f.Hint = "add hot: {replicas: N, local_ttl: 5s} to the template and read it through the hotkey SDK (docs/hotkeys.md)"
	default:
		f.Template = k.Template
		f.Severity = finding.Info
		b = append(b, "; protected by hot: "...)
		b = append(b, k.Hot.String()...)
	}
	if unregistered {
		m := &h.hints[0]
		if opts.NoRegistry {
			m = &h.hints[1]
		}
		hint, ok := (*m)[k.Family]
		if !ok {
			if opts.NoRegistry {
				hint = fmt.Sprintf("declare its family in a registry (keyguard init writes one): - key: %q with hot: {replicas: N, local_ttl: 5s} (docs/hotkeys.md)", k.Family)
			} else {
				hint = fmt.Sprintf("declare it: - key: %q with hot: {replicas: N, local_ttl: 5s} (docs/hotkeys.md)", k.Family)
			}
			if *m == nil {
				*m = map[string]string{}
			}
			(*m)[k.Family] = hint
		}
		f.Hint = hint
	}
	f.Message = string(b)
	h.buf = b
	return f
}

func (h *HotPolicy) String() string {
	var p []string
	if h.Replicas > 1 {
		p = append(p, fmt.Sprintf("replicas %d", h.Replicas))
	}
	if h.LocalTTL != "" {
		p = append(p, "local_ttl "+h.LocalTTL)
	}
	if len(p) == 0 {
		return "{}"
	}
	return "{" + strings.Join(p, ", ") + "}"
}

// templateHeat groups keys per template (hottest template first) and per
// region.
func templateHeat(keys []*KeyHeat) []TemplateHeat {
	type group struct{ template, family string }
	at := map[group]int{}
	var ts []TemplateHeat
	regions := map[int]map[string]*RegionHeat{}
	for _, k := range keys {
		g := group{k.Template, k.Family}
		i, ok := at[g]
		if !ok {
			i = len(ts)
			at[g] = i
			ts = append(ts, TemplateHeat{Template: k.Template, Family: k.Family, Owner: k.Owner, Hot: k.Hot})
		}
		t := &ts[i]
		t.Keys++
		t.Rate += k.Rate
		t.MonitorRate += k.MonitorRate
		t.MaxFreq = max(t.MaxFreq, k.Freq)
		if k.IsHot {
			t.HotKeys++
		}
		if k.Region == "" {
			continue
		}
		if regions[i] == nil {
			regions[i] = map[string]*RegionHeat{}
		}
		rh := regions[i][k.Region]
		if rh == nil {
			rh = &RegionHeat{Region: k.Region}
			regions[i][k.Region] = rh
		}
		rh.Keys++
		rh.Rate += k.Rate
		rh.MonitorRate += k.MonitorRate
		if k.IsHot {
			rh.HotKeys++
		}
	}
	for i := range ts {
		for _, rh := range regions[i] {
			ts[i].Regions = append(ts[i].Regions, *rh)
		}
		slices.SortFunc(ts[i].Regions, func(a, b RegionHeat) int {
			if a.Rate != b.Rate {
				return cmpDesc(a.Rate, b.Rate)
			}
			if a.MonitorRate != b.MonitorRate {
				return cmpDesc(a.MonitorRate, b.MonitorRate)
			}
			return strings.Compare(a.Region, b.Region)
		})
	}
	slices.SortStableFunc(ts, func(a, b TemplateHeat) int {
		if a.Rate != b.Rate {
			return cmpDesc(a.Rate, b.Rate)
		}
		if a.MonitorRate != b.MonitorRate {
			return cmpDesc(a.MonitorRate, b.MonitorRate)
		}
		return b.MaxFreq - a.MaxFreq
	})
	return ts
}

// WriteText writes the report for a person.
func (r *Report) WriteText(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 64<<10) // a line a key: --top 100000 is 600,000 prints
	ew := &errWriter{w: bw}
	ew.printf("Hot keys on %s\n", r.Target)
	r.writeSources(ew)
	if len(r.Keys) == 0 {
		if read := r.lfuRead(); read > 0 {
			ew.printf("\nNo key was reported by the services, and none of the %s whose LFU counters were read had a counter of %d or more (keys under it are not listed).\n", plural(read, "key"), r.LFU.Floor)
		} else {
			ew.printf("\nNo key was reported or sampled.\n")
		}
		if r.blind() {
			ew.printf("Nothing here could see heat: no SDK reports, no LFU counters, no MONITOR sample.\n" +
				"  Try: --monitor 10s --min-rate 100 (MONITOR slows the server while it listens; the cost is printed), " +
				"an LFU maxmemory-policy (allkeys-lfu keeps a counter per key), or the services reporting with hotkey.Detector (docs/hotkeys.md)\n")
		}
	} else {
		head := "key  (template, owner)"
		if r.NoRegistry {
			head = "key  (family)"
		}
		ew.printf("\n  %10s %10s %5s  %s\n", "sdk ops/s", "monitor/s", "lfu", head)
		for _, k := range r.Keys {
			mark := " "
			if k.IsHot {
				mark = "*"
			}
			freq := "-"
			if k.Freq >= 0 {
				freq = fmt.Sprint(k.Freq)
			}
			mon := "-"
			if r.Monitor != nil {
				mon = fmtRate(k.MonitorRate)
			}
			ew.printf("%s %10s %10s %5s  %s%s  (%s", mark, fmtRate(k.Rate), mon, freq, displayKey(k.Key), dbText(k.DB), r.groupName(k.Template, k.Family))
			if k.Owner != "" {
				ew.printf(", %s", k.Owner)
			}
			if k.Hot != nil {
				ew.printf(", hot: %s", k.Hot)
			}
			ew.printf(")\n")
		}
		ew.printf("  * hot: at or above %s ops/s or LFU counter %d\n", fmtRate(r.MinRate), r.MinFreq)
	}
	if len(r.Templates) > 0 {
		per := "template"
		if r.NoRegistry {
			per = "family"
		}
		seen := 0
		for _, t := range r.Templates {
			seen += t.Keys
		}
		// The keys with evidence (counters kept, SDK reports, MONITOR), not
		// every key of a template: say so, or 3,548 reads as its size.
		ew.printf("\nPer %s:  (of the %s with evidence of heat, not every key of the %s)\n", per, plural(seen, "key"), per)
		for _, t := range r.Templates {
			prot := "no hot: protection"
			if t.Hot != nil {
				prot = "hot: " + t.Hot.String()
			}
			ew.printf("  %s  %s, %s, %s ops/s", r.groupName(t.Template, t.Family), plural(t.Keys, "key"), plural(t.HotKeys, "hot key"), fmtRate(t.Rate))
			if r.Monitor != nil {
				ew.printf(" (MONITOR %s/s)", fmtRate(t.MonitorRate))
			}
			ew.printf("  [%s]\n", prot)
			for _, rh := range t.Regions {
				ew.printf("      region %s: %s, %s, %s ops/s\n", rh.Region, plural(rh.Keys, "key"), plural(rh.HotKeys, "hot key"), fmtRate(rh.Rate))
			}
		}
	}
	if len(r.Findings) > 0 {
		ew.printf("\nFindings:\n")
		for _, f := range r.Findings {
			ew.printf("  %s %s %s: %s\n", f.Severity, f.Rule, displayKey(f.Key), f.Message)
			if f.Hint != "" {
				ew.printf("      Try: %s\n", f.Hint)
			}
		}
	}
	warn, info := 0, 0
	for _, f := range r.Findings {
		if f.Severity == finding.Warning {
			warn++
		} else {
			info++
		}
	}
	ew.printf("\n%s: %d without hot: protection, %d protected\n", plural(len(r.Findings), "hot key"), warn, info)
	if ew.err != nil {
		return ew.err
	}
	return bw.Flush()
}

// groupName names a key's template, or the family of a key matching
// none: "unregistered, family F", or "family F" in a report without a
// registry (where no key is registered, as the audit words it).
func (r *Report) groupName(template, family string) string {
	switch {
	case family == "":
		return template
	case r.NoRegistry:
		return "family " + family
	}
	return template + ", family " + family
}

// lfuRead is how many keys' LFU counters were read.
func (r *Report) lfuRead() int {
	n := 0
	if r.LFU != nil {
		for _, x := range r.LFU.Nodes {
			if x.Skipped == "" {
				n += x.Sampled
			}
		}
	}
	return n
}

// blind reports whether no source could observe heat: no SDK report, no
// MONITOR sample, and no node whose LFU counters were read.
func (r *Report) blind() bool {
	if r.SDK.Instances > 0 || r.Monitor != nil {
		return false
	}
	if r.LFU != nil {
		for _, n := range r.LFU.Nodes {
			if n.Skipped == "" {
				return false
			}
		}
	}
	return true
}

func (r *Report) writeSources(ew *errWriter) {
	if r.NoRegistry {
		ew.printf("  registry: none (keys grouped by the families inferred from their names; keyguard init writes a starter keyguard.yaml)\n")
	}
	if r.SDK.Unread != "" {
		ew.printf("  SDK reports: not read: %s\n", r.SDK.Unread)
	} else if r.SDK.Instances == 0 {
		ew.printf("  SDK reports: none in the last %s (services report with hotkey.Detector; docs/hotkeys.md)\n", r.Window)
	} else {
		ew.printf("  SDK reports: %s of %s in the last %s\n", plural(r.SDK.Instances, "instance"), strings.Join(r.SDK.Services, ", "), r.Window)
	}
	if r.LFU != nil {
		source, covered := "OBJECT FREQ on ", "walked"
		if r.LFU.From == LFUFromSnapshot {
			source, covered = "LFU counters from the snapshot of ", "read"
		}
		for _, n := range r.LFU.Nodes {
			if n.Skipped != "" {
				ew.printf("  %s%s: skipped, %s\n", source, n.Addr, n.Skipped)
			} else {
				scope := "every key"
				switch {
				case n.Stopped != "":
					scope = "not every key: stopped, " + n.Stopped
				case n.Unreadable > 0:
					scope = "not every key: " + human.Count(int64(n.Unreadable)) + " not readable by the ACL user"
				case !n.Whole:
					scope = "not every key: stopped by --sample"
				}
				ew.printf("  %s%s (%s): %s read (%s); counters from %d listed\n", source, n.Addr, n.Policy, plural(n.Sampled, "key"), scope, r.LFU.Floor)
			}
		}
		if c := r.LFU.Coverage; c != nil {
			ew.printf("  %s: %s\n", covered, c.Summary())
			_, gaps := c.Lines()
			for _, g := range gaps {
				ew.printf("    not covered: %s\n", g)
			}
		}
		for _, n := range r.LFU.Notes {
			ew.printf("    note: %s\n", n)
		}
	}
	if m := r.Monitor; m != nil {
		ew.printf("  MONITOR for %s: %s lines, %s", m.Duration.Round(time.Millisecond), fmtRate(float64(m.Lines)), fmtBytes(m.Bytes))
		if m.Truncated != "" {
			ew.printf(" (stopped early: %s)", m.Truncated)
		}
		ew.printf("\n")
		for _, n := range m.Nodes {
			switch {
			case n.NotObserved != "":
				ew.printf("    %s: not observed %s (%s): its keys' rates are lower bounds, and a key not listed may be hot all the same\n", n.Addr, n.NotObserved, n.Err)
			case n.Err != "":
				ew.printf("    %s: %s\n", n.Addr, n.Err)
			case n.Cost() != "":
				ew.printf("    cost on %s: %s\n", n.Addr, n.Cost())
			}
			if n.LongLines > 0 {
				ew.printf("    %s: %d lines over the line size cap were skipped\n", n.Addr, n.LongLines)
			}
		}
	}
}

func displayKey(k string) string {
	d := finding.Display(k)
	if d == `"`+k+`"` && !strings.ContainsAny(k, " ") {
		return k
	}
	return d
}

// dbText is " (db N)" for a key of a multi-database report, as the
// audit's report writes it.
func dbText(db *int) string { return string(appendDBText(nil, db)) }

// appendDBText appends dbText(db) to b.
func appendDBText(b []byte, db *int) []byte {
	if db == nil {
		return b
	}
	b = append(b, " (db "...)
	b = strconv.AppendInt(b, int64(*db), 10)
	return append(b, ')')
}

func plural(n int, what string) string { return human.Plural(n, what) }

func fmtBytes(n int64) string { return human.Bytes(n) }

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}
