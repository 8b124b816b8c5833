package investigate

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/keyguard/keyguard/registry"
)

// Writer is one service's activity on one key during the capture: a
// writer when it wrote, a reader when it only read.
type Writer struct {
	Service    string         `json:"service"`
	Named      bool           `json:"named"` // the connections carry a CLIENT SETNAME name
	Addrs      []string       `json:"addrs"`
	LibName    string         `json:"lib_name,omitempty"`
	User       string         `json:"user,omitempty"`
	Commands   map[string]int `json:"commands"`
	Writes     int            `json:"writes"`
	Reads      int            `json:"reads"`
	ViaScript  int            `json:"via_script,omitempty"`
	ViaMulti   int            `json:"via_multi,omitempty"`
	Scripts    []string       `json:"scripts,omitempty"`
	Fields     []string       `json:"fields,omitempty"` // written; none for a map keyed by IDs (OpenFields counts them)
	OpenFields int            `json:"open_fields,omitempty"`
	Kinds      []string       `json:"kinds,omitempty"` // of string values written
	TTLs       []int64        `json:"ttls,omitempty"`  // seconds its writes gave; -1 none
	Styles     []string       `json:"styles,omitempty"`
	Team       string         `json:"team,omitempty"` // the registry owner the service belongs to
	// Allowed: "yes" (the template's owner or a listed writer), "no", or
	// "unknown" (unregistered key, or a connection without a name).
	Allowed string `json:"allowed"`
	Move    *Move  `json:"move,omitempty"`
}

// Move is the fix the registry implies for a writer of another team's key.
type Move struct {
	Template   string `json:"template"`
	Owner      string `json:"owner,omitempty"`
	Example    string `json:"example,omitempty"` // the key it should write instead
	Registered bool   `json:"registered"`        // false: a suggestion to add to the registry
}

// KeyActivity is who wrote and who read one key during the capture.
type KeyActivity struct {
	Key      string   `json:"key"`
	Template string   `json:"template,omitempty"`
	Owner    string   `json:"owner,omitempty"`
	Writers  []Writer `json:"writers"`
	Readers  []Writer `json:"readers,omitempty"`
}

// unknownCaller is the service of script commands whose caller MONITOR did
// not show.
const unknownCaller = "a script whose caller MONITOR did not show"

// resolve maps a MONITOR source to the client that had it. Clients of a
// unix socket share one source: keyguard's own (named self) are left out,
// and when the others are one service, it is that service.
func resolve(clients map[string][]Client, source, self string) Client {
	if source == SourceLua {
		return Client{Addr: SourceLua, Name: unknownCaller}
	}
	addr := monitorSourceAddr(source)
	cs := clients[addr]
	if len(cs) > 1 {
		var others []Client
		for _, c := range cs {
			if c.Name != self {
				others = append(others, c)
			}
		}
		if len(others) > 0 {
			cs = others
		}
	}
	switch {
	case len(cs) == 1:
		return cs[0]
	case len(cs) > 1: // one unix socket, several clients
		var names []string
		for i := range cs {
			names = appendOnce(names, cs[i].Service())
		}
		if len(names) == 1 {
			return cs[0]
		}
		sort.Strings(names)
		return Client{Addr: addr, Name: "unix socket clients (" + strings.Join(names, ", ") + ")"}
	}
	return Client{Addr: addr}
}

// activities groups the accesses of every node's capture by key and
// service, leaving out keyguard's own connections (named self).
func activities(reg *registry.Registry, caps []*NodeCapture, self string) []KeyActivity {
	type wkey struct{ key, service string }
	ws := map[wkey]*Writer{}
	for _, nc := range caps {
		if nc.att == nil {
			continue
		}
		for _, a := range nc.att.Accesses() {
			c := resolve(nc.clients, a.Source, self)
			if c.Name == self {
				continue
			}
			k := wkey{a.Key, c.Service()}
			w := ws[k]
			if w == nil {
				w = &Writer{Service: k.service, Named: c.Named(), LibName: c.LibName, User: c.User, Commands: map[string]int{}}
				ws[k] = w
			}
			mergeAccess(w, a, c.Addr)
		}
	}
	byKey := map[string]*KeyActivity{}
	for k, w := range ws {
		ka := byKey[k.key]
		if ka == nil {
			ka = &KeyActivity{Key: k.key}
			if e := reg.Lookup(k.key); e != nil {
				ka.Template, ka.Owner = e.Key, e.Owner
			}
			byKey[k.key] = ka
		}
		if s := newShape("", "", w.Fields, len(w.Fields)); s.Open {
			// Field names that are IDs (a map keyed by user or SKU) are data,
			// not a format: counted, not listed.
			w.Fields, w.OpenFields = nil, s.Count
		}
		judge(reg, reg.Lookup(k.key), k.key, w)
		if w.Writes > 0 {
			ka.Writers = append(ka.Writers, *w)
		} else if w.Reads > 0 {
			ka.Readers = append(ka.Readers, *w)
		}
	}
	var out []KeyActivity
	for _, ka := range byKey {
		sortWriters(ka.Writers)
		sortWriters(ka.Readers)
		out = append(out, *ka)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

func sortWriters(ws []Writer) {
	sort.Slice(ws, func(i, j int) bool {
		if ws[i].Writes+ws[i].Reads != ws[j].Writes+ws[j].Reads {
			return ws[i].Writes+ws[i].Reads > ws[j].Writes+ws[j].Reads
		}
		return ws[i].Service < ws[j].Service
	})
}

func mergeAccess(w *Writer, a *Access, addr string) {
	w.Addrs = appendOnce(w.Addrs, addr)
	for c, n := range a.Commands {
		w.Commands[c] += n
	}
	w.Writes += a.Writes
	w.Reads += a.Reads
	w.ViaScript += a.ViaScript
	w.ViaMulti += a.ViaMulti
	for s := range a.Scripts {
		w.Scripts = appendOnce(w.Scripts, s)
	}
	for f := range a.Fields {
		w.Fields = appendOnce(w.Fields, f)
	}
	for k := range a.Kinds {
		w.Kinds = appendOnce(w.Kinds, k)
	}
	for t := range a.TTLs {
		if !slices.Contains(w.TTLs, t) {
			w.TTLs = append(w.TTLs, t)
		}
	}
	sort.Strings(w.Fields)
	sort.Strings(w.Scripts)
	sort.Strings(w.Kinds)
	slices.Sort(w.TTLs)
}

// judge decides whether the registry lets w write key, and for a writer it
// does not, which template the writer should use instead.
func judge(reg *registry.Registry, e *registry.Entry, key string, w *Writer) {
	w.Team = teamOf(reg, w.Service)
	switch {
	case w.Writes == 0:
		return
	case e == nil || !w.Named:
		w.Allowed = "unknown"
	case e.MayWrite(w.Service) || (w.Team != "" && w.Team == e.Owner) || listedByStem(e.Writers, w.Service):
		w.Allowed = "yes"
	default:
		w.Allowed = "no"
	}
	if w.Allowed == "no" || (e == nil && w.Named) {
		w.Move = bestMove(reg, e, key, w)
	}
}

// stem is a service or team name without the ending that makes it one:
// promo-service and promo-team are both "promo".
func stem(s string) string {
	s = strings.ToLower(s)
	for _, suf := range []string{"-service", "_service", "-svc", "-server", "-srv", "-api", "-app", "-worker", "-job", "-cron", "-team", "_team"} {
		if t, ok := strings.CutSuffix(s, suf); ok && t != "" {
			return t
		}
	}
	return s
}

// teamOf maps a service to a registry owner: the owner of the same name,
// else the owner with the same stem (order-service → order-team), else the
// owner of the domain named like the stem. "" when none fits.
func teamOf(reg *registry.Registry, service string) string {
	owners := reg.Owners()
	if slices.Contains(owners, service) {
		return service
	}
	st := stem(service)
	for _, o := range owners {
		if stem(o) == st {
			return o
		}
	}
	if d, ok := reg.Domain(st); ok {
		return d.Owner
	}
	return ""
}

func listedByStem(writers []string, service string) bool {
	for _, w := range writers {
		if stem(w) == stem(service) {
			return true
		}
	}
	return false
}

// bestMove picks the template of the writer's team that fits what it
// wrote: the same placeholders, the same entity words, its type and its
// fields. When the team has none that fits, it suggests one: the team's
// domain in front of the rest of the key's template.
func bestMove(reg *registry.Registry, e *registry.Entry, key string, w *Writer) *Move {
	var caps map[string]string
	var src string
	if e != nil {
		caps = map[string]string{}
		_, c := reg.Classify(key) // a hot key's copy too (key#n)
		for _, x := range c {
			caps[x.Name] = x.Value
		}
		src = e.Key
	} else {
		src = reg.NewChecker().Infer(key)
	}
	best, score := (*registry.Entry)(nil), 0
	if w.Team != "" {
		for _, cand := range reg.Entries {
			if cand.Owner != w.Team || cand == e {
				continue
			}
			if s := moveScore(cand, e, w); s > score {
				best, score = cand, s
			}
		}
	}
	if best != nil {
		return &Move{Template: best.Key, Owner: best.Owner, Registered: true, Example: fill(best, caps)}
	}
	// The team's domain named like the service, else its first domain,
	// else the service's own stem.
	domain := ""
	for _, d := range reg.Domains {
		if w.Team != "" && d.Owner == w.Team && (domain == "" || d.Name == stem(w.Service)) {
			domain = d.Name
		}
	}
	if domain == "" {
		domain = stem(w.Service)
	}
	rest := src
	if i := strings.IndexByte(src, reg.Separator); i >= 0 {
		rest = src[i+1:]
	}
	tmpl := domain + string(reg.Separator) + rest
	if known := reg.EntryByKey(tmpl); known != nil {
		return &Move{Template: tmpl, Owner: known.Owner, Registered: true, Example: fill(known, caps)}
	}
	return &Move{Template: tmpl, Owner: w.Team}
}

// moveScore rates a candidate template for a writer moving off e's key:
// shared placeholders and literal words with e, the writer's value type,
// and the fields it wrote against the candidate's declared fields.
func moveScore(cand, e *registry.Entry, w *Writer) int {
	s := 0
	if e != nil {
		names := map[string]bool{}
		for _, p := range e.Template.Placeholders() {
			names[p.Name] = true
		}
		for _, p := range cand.Template.Placeholders() {
			if names[p.Name] {
				s += 4
			}
		}
		sep := string(e.Template.Separator())
		words := map[string]bool{}
		for i, seg := range strings.Split(e.Key, sep) {
			if i > 0 && !strings.Contains(seg, "{") {
				words[seg] = true
			}
		}
		for i, seg := range strings.Split(cand.Key, sep) {
			if i > 0 && words[seg] {
				s += 2
			}
		}
	}
	if t := writeType(w); t != "" && t == cand.Type {
		s += 2
	}
	for _, f := range w.Fields {
		if cand.HasField(f) {
			s += 3
		}
	}
	return s
}

// writeType is the Redis type the writer's commands make.
func writeType(w *Writer) string {
	for c := range w.Commands {
		if strings.HasPrefix(c, "h") && c != "hdel" {
			return "hash"
		}
	}
	if len(w.Kinds) > 0 {
		return "string"
	}
	return ""
}

// fill builds the key of e with the captured values of the same names;
// "" when a placeholder has no value.
func fill(e *registry.Entry, caps map[string]string) string {
	var b strings.Builder
	for i, seg := range e.Template.Segments() {
		if i > 0 {
			b.WriteByte(e.Template.Separator())
		}
		for _, p := range seg.Parts {
			if !p.IsPlaceholder() {
				b.WriteString(p.Lit)
				continue
			}
			v, ok := caps[p.Name]
			if !ok {
				return ""
			}
			b.WriteString(v)
		}
	}
	k := b.String()
	if !e.Template.Matches(k) {
		return ""
	}
	return k
}

// commandSummary is "HSET ×12, PEXPIRE ×12", most used first.
func commandSummary(cmds map[string]int, limit int) string {
	names := slices.Collect(maps.Keys(cmds))
	sort.Slice(names, func(i, j int) bool {
		if cmds[names[i]] != cmds[names[j]] {
			return cmds[names[i]] > cmds[names[j]]
		}
		return names[i] < names[j]
	})
	var parts []string
	for i, n := range names {
		if i == limit {
			parts = append(parts, fmt.Sprintf("+%d more", len(names)-limit))
			break
		}
		parts = append(parts, fmt.Sprintf("%s ×%d", strings.ToUpper(n), cmds[n]))
	}
	return strings.Join(parts, ", ")
}

// ttlSummary says what TTL a writer's writes gave.
func ttlSummary(ttls []int64) string {
	if len(ttls) == 0 {
		return "leaves the TTL as it is"
	}
	var parts []string
	for _, t := range ttls {
		if t < 0 {
			parts = append(parts, "no TTL")
		} else {
			parts = append(parts, "TTL "+secs(t))
		}
	}
	return strings.Join(parts, " or ")
}

// secs writes seconds the registry's way: 600 → 10m, 45 → 45s.
func secs(s int64) string {
	if s < 0 {
		return "none"
	}
	return registry.FormatTTL(seconds(s))
}
