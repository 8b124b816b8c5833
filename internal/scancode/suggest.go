package scancode

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/rediscmd"
	"github.com/keyguard/keyguard/keytmpl"
	"github.com/keyguard/keyguard/registry"
)

// Suggestion is a registry entry for a key template found in code that
// matches no template of the registry: the code side of an inventory of
// an old system's keys.
type Suggestion struct {
	Key     string   // the template, every placeholder named
	Types   []string // Redis types the calls imply (one when they agree)
	Places  []string // file:line of each use
	Problem string   // why the template is not a valid one, "" when it is
	Domain  string   // the first segment, when it is not a declared domain
}

// Suggest collects the unregistered-code findings into one entry per
// template, most used first. Templates that differ only in the names of
// their placeholders ("arq:job:{job_id}" where the code names the value,
// "arq:job:{}" where it cannot) are one entry, named where the code names
// most: two entries would declare the same keys twice.
func Suggest(reg *registry.Registry, fs []Finding) []Suggestion {
	by := map[string]*Suggestion{}
	anon := map[string]int{}       // by shape: the unnamed placeholders of the template its entry took its names from
	kinds := map[string][]string{} // by shape: each placeholder's kind over every place (mergeKinds)
	for _, f := range fs {
		if f.Rule != finding.UnregisteredCode {
			continue
		}
		shape, unnamed := holeShape(f.Template)
		kinds[shape] = mergeKinds(kinds[shape], holeKinds(f.Template))
		s := by[shape]
		if s == nil || unnamed < anon[shape] {
			key := nameHoles(f.Template)
			if s == nil {
				s = &Suggestion{}
				by[shape] = s
			}
			anon[shape] = unnamed
			s.Key, s.Problem, s.Domain = key, "", ""
			if _, err := keytmpl.Parse(key, reg.Separator); err != nil {
				s.Problem = err.Error()
			}
			first, _, _ := strings.Cut(key, string(reg.Separator))
			if _, ok := reg.Domain(first); !ok && !strings.Contains(first, "{") {
				s.Domain = first
			}
		}
		s.Places = append(s.Places, f.Where())
		if t := typeOfCommand(f.Command); t != "" && !slices.Contains(s.Types, t) {
			s.Types = append(s.Types, t)
		}
	}
	out := make([]Suggestion, 0, len(by))
	for shape, s := range by {
		slices.Sort(s.Types)
		s.Key = withKinds(s.Key, kinds[shape])
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b Suggestion) int {
		if len(a.Places) != len(b.Places) {
			return len(b.Places) - len(a.Places)
		}
		return strings.Compare(a.Key, b.Key)
	})
	return out
}

// holeShape is a shape's text with its placeholders' names and kinds left
// out ({id:int} and {uid} are {}), and how many of them have no name: a
// value one place knows to be an integer and another does not is one
// placeholder (mergeKinds).
func holeShape(t string) (shape string, unnamed int) {
	shape = mapHoles(t, func(name, kind string, hasKind bool) string {
		if name == "" || name == "v" && hasKind {
			unnamed++ // as nameHoles names them
		}
		return "{}"
	})
	return shape, unnamed
}

// holeKinds are the kinds of a shape's placeholders, in order ("" for
// none).
func holeKinds(t string) []string {
	var out []string
	mapHoles(t, func(_, kind string, _ bool) string {
		out = append(out, kind)
		return ""
	})
	return out
}

// mergeKinds merges the kinds one placeholder has at two places: the
// kind both give, else none. The entry must hold the keys of every place:
// {id:int} from one call and {id} from another, whose value may be any
// text, is {id}, not two entries that lint flags as overlapping.
func mergeKinds(a, b []string) []string {
	if a == nil {
		return b
	}
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			a[i] = ""
		}
	}
	return a
}

// withKinds gives the placeholders of a template the kinds given, in
// order.
func withKinds(t string, kinds []string) string {
	i := 0
	return mapHoles(t, func(name, _ string, _ bool) string {
		k := ""
		if i < len(kinds) {
			k = kinds[i]
		}
		i++
		if k == "" {
			return "{" + name + "}"
		}
		return "{" + name + ":" + k + "}"
	})
}

// nameHoles gives every placeholder of a shape's text a name keytmpl
// accepts, unique in the template: {} becomes {p1}, a second {id} {id2}.
func nameHoles(t string) string {
	used := map[string]int{}
	n := 0
	return mapHoles(t, func(name, kind string, hasKind bool) string {
		n++
		if name == "" || name == "v" && hasKind {
			name = "p" + strconv.Itoa(n)
		}
		used[name]++
		if used[name] > 1 {
			name += strconv.Itoa(used[name])
		}
		if hasKind {
			return "{" + name + ":" + kind + "}"
		}
		return "{" + name + "}"
	})
}

// mapHoles returns a shape's text with each placeholder {name[:kind]}
// replaced by what hole returns for it, in order; the text around them,
// doubled braces and a brace left open are kept as they are.
func mapHoles(t string, hole func(name, kind string, hasKind bool) string) string {
	var b strings.Builder
	for i := 0; i < len(t); i++ {
		c := t[i]
		if (c == '{' || c == '}') && i+1 < len(t) && t[i+1] == c {
			b.WriteString(t[i : i+2])
			i++
			continue
		}
		if c != '{' {
			b.WriteByte(c)
			continue
		}
		j := strings.IndexByte(t[i:], '}')
		if j < 0 {
			b.WriteString(t[i:])
			break
		}
		b.WriteString(hole(strings.Cut(t[i+1:i+j], ":")))
		i += j
	}
	return b.String()
}

// typeOfCommand is the Redis type a command or client method implies:
// HSET a hash, LPUSH a list, Spring's opsForZSet a sorted set; "" for
// commands of any type (DEL, EXPIRE).
func typeOfCommand(cmd string) string {
	switch cmd {
	case "opsforvalue", "getbucket", "getatomiclong", "getatomicdouble", "getrbucket":
		return "string"
	case "opsforhash", "getmap", "getmapcache", "getlocalcachedmap", "getlock", "getfairlock", "getreadwritelock":
		return "hash"
	case "opsforlist", "getlist", "getqueue", "getdeque", "getblockingqueue":
		return "list"
	case "opsforset", "getset", "getsetcache":
		return "set"
	case "opsforzset", "getscoredsortedset", "getlexsortedset":
		return "zset"
	case "opsforstream", "getstream":
		return "stream"
	}
	c, ok := rediscmd.Lookup(cmd)
	if !ok {
		return ""
	}
	switch {
	case c.ACL&rediscmd.CatHash != 0:
		return "hash"
	case c.ACL&rediscmd.CatList != 0:
		return "list"
	case c.ACL&rediscmd.CatSortedSet != 0:
		return "zset"
	case c.ACL&rediscmd.CatSet != 0:
		return "set"
	case c.ACL&rediscmd.CatStream != 0:
		return "stream"
	case c.ACL&rediscmd.CatString != 0:
		return "string"
	}
	return ""
}

// WriteSuggestions writes the entries as YAML to paste under keys: in
// keyguard.yaml, each with what the scan could not know left for a person.
func WriteSuggestions(w io.Writer, ss []Suggestion) error {
	rw := registry.NewWriter(w)
	if len(ss) == 0 {
		rw.Comment(0, "scan-code found no key template missing from the registry.")
		return rw.Err()
	}
	rw.Comment(0, "Key templates scan-code found in code that match no entry of the registry.\n"+
		"Review each: name the placeholders, set the TTL (or persistent: true) and the\n"+
		"owner, then paste the entries under keys: and run keyguard lint.")
	writeEntries(rw, ss)
	return rw.Err()
}

// WriteRegistry writes a whole registry of the entries, for a scan
// without one: the file keyguard lint reads once a person has filled in
// what the scan could not know.
func WriteRegistry(w io.Writer, sep byte, ss []Suggestion) error {
	rw := registry.NewWriter(w)
	rw.Comment(0, "keyguard.yaml: the key templates scan-code found in code (keyguard scan-code --suggest).\n"+
		"Review each: name the placeholders, set the type, the TTL (or persistent: true)\n"+
		"and the owner (a domain's owner under domains:), then run keyguard lint.\n"+
		"docs/registry.md explains every field.")
	rw.Header(1, sep, "")
	rw.Section("keys")
	if len(ss) == 0 {
		rw.Comment(2, "scan-code found no key template in code.")
	}
	writeEntries(rw, ss)
	return rw.Err()
}

// writeEntries writes the entries, each with what the scan could not
// know left for a person.
func writeEntries(rw *registry.Writer, ss []Suggestion) {
	for _, s := range ss {
		if s.Problem != "" {
			rw.Comment(2, fmt.Sprintf("%q is not a valid template (%s): write it by hand", s.Key, s.Problem))
			continue
		}
		if !utf8.ValidString(s.Key) {
			rw.Comment(2, fmt.Sprintf("%q is not UTF-8 text, which YAML cannot hold: write it by hand", s.Key))
			continue
		}
		d := registry.Draft{Entry: registry.Entry{Key: s.Key}, Notes: map[string]string{
			"ttl": "how long a key lives (or persistent: true)",
		}}
		switch len(s.Types) {
		case 0:
			d.Notes["type"] = "the calls do not tell (string, hash, list, set, zset or stream)"
		case 1:
			d.Type = s.Types[0]
		default:
			d.Notes["type"] = fmt.Sprintf("the calls disagree (%s): two writers may share this key", strings.Join(s.Types, ", "))
		}
		if s.Domain != "" {
			d.Notes["owner"] = fmt.Sprintf("%q is not a declared domain; declare it or name the owner here", s.Domain)
		}
		d.Desc = strings.ToValidUTF8("found in code: "+firstPlaces(s.Places), "\uFFFD")
		rw.Entry(d)
	}
}

// firstPlaces lists the first three places of a template's uses, then
// how many more there are.
func firstPlaces(places []string) string {
	if len(places) > 3 {
		return strings.Join(places[:3], ", ") + fmt.Sprintf(" and %d more", len(places)-3)
	}
	return strings.Join(places, ", ")
}
