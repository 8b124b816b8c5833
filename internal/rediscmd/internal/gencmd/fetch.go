// Package gencmd reads the command table of a live redis-server (COMMAND
// INFO) and renders rediscmd's zz_commands.go from it.
//
//	snap, err := gencmd.Fetch(ctx, client)
//	src, err := gencmd.Render(snap)
//	err = os.WriteFile("zz_commands.go", src, 0o644)
package gencmd

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Snapshot is the command table of one server.
type Snapshot struct {
	Version  string // redis_version from INFO server
	Commands []Cmd  // top-level commands sorted by name
}

// Cmd is one command or subcommand as COMMAND INFO describes it.
type Cmd struct {
	Name                    string // lower case, "container|sub" for a subcommand
	Arity                   int
	Flags                   []string
	FirstKey, LastKey, Step int
	ACL                     []string
	Tips                    []string
	KeySpecs                []Spec
	Subcommands             []Cmd // sorted by name
}

// Spec is one key specification.
type Spec struct {
	Notes     string
	Flags     []string
	BeginType string // index, keyword, unknown
	Index     int
	Keyword   string
	StartFrom int
	FindType  string // range, keynum, unknown
	LastKey   int
	KeyStep   int
	Limit     int
	KeyNumIdx int
	FirstKey  int
}

// Fetch reads INFO server and COMMAND INFO from c. It checks that every
// command COMMAND COUNT announces is there.
func Fetch(ctx context.Context, c redis.UniversalClient) (*Snapshot, error) {
	info, err := c.Info(ctx, "server").Result()
	if err != nil {
		return nil, fmt.Errorf("INFO server: %w (is the server reachable and Redis >= 7.0?)", err)
	}
	snap := &Snapshot{Version: infoField(info, "redis_version")}
	if snap.Version == "" {
		return nil, fmt.Errorf("INFO server has no redis_version field; is this a Redis server?")
	}
	count, err := c.Do(ctx, "COMMAND", "COUNT").Int()
	if err != nil {
		return nil, fmt.Errorf("COMMAND COUNT: %w", err)
	}
	raw, err := c.Do(ctx, "COMMAND", "INFO").Slice()
	if err != nil {
		return nil, fmt.Errorf("COMMAND INFO: %w (Redis >= 7.0 is needed for key specs)", err)
	}
	for i, r := range raw {
		cmd, err := parseCmd(r, "")
		if err != nil {
			return nil, fmt.Errorf("COMMAND INFO entry %d: %w", i, err)
		}
		snap.Commands = append(snap.Commands, cmd)
	}
	if len(snap.Commands) != count {
		return nil, fmt.Errorf("COMMAND INFO returned %d commands, COMMAND COUNT says %d", len(snap.Commands), count)
	}
	sort.Slice(snap.Commands, func(i, j int) bool { return snap.Commands[i].Name < snap.Commands[j].Name })
	return snap, nil
}

func infoField(info, name string) string {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+":"); ok {
			return v
		}
	}
	return ""
}

// parseCmd decodes one COMMAND INFO entry:
// [name, arity, flags, first, last, step, acl, tips, key specs, subcommands].
func parseCmd(v any, parent string) (Cmd, error) {
	a, ok := v.([]any)
	if !ok || len(a) < 10 {
		return Cmd{}, fmt.Errorf("want an array of 10 fields, got %T of %d (is the server Redis >= 7.0?)", v, lenOf(v))
	}
	var c Cmd
	var err error
	if c.Name, err = str(a[0]); err != nil {
		return c, fmt.Errorf("name: %w", err)
	}
	c.Name = strings.ToLower(c.Name)
	if parent != "" && !strings.HasPrefix(c.Name, parent+"|") {
		return c, fmt.Errorf("subcommand %q of %q lacks the %q prefix", c.Name, parent, parent+"|")
	}
	ints := []*int{nil, &c.Arity, nil, &c.FirstKey, &c.LastKey, &c.Step}
	for i, p := range ints {
		if p == nil {
			continue
		}
		if *p, err = integer(a[i]); err != nil {
			return c, fmt.Errorf("%s field %d: %w", c.Name, i, err)
		}
	}
	if c.Flags, err = strs(a[2]); err != nil {
		return c, fmt.Errorf("%s flags: %w", c.Name, err)
	}
	if c.ACL, err = strs(a[6]); err != nil {
		return c, fmt.Errorf("%s ACL categories: %w", c.Name, err)
	}
	if c.Tips, err = strs(a[7]); err != nil {
		return c, fmt.Errorf("%s tips: %w", c.Name, err)
	}
	specs, ok := a[8].([]any)
	if !ok {
		return c, fmt.Errorf("%s key specs: want an array, got %T", c.Name, a[8])
	}
	for i, s := range specs {
		spec, err := parseSpec(s)
		if err != nil {
			return c, fmt.Errorf("%s key spec %d: %w", c.Name, i, err)
		}
		c.KeySpecs = append(c.KeySpecs, spec)
	}
	subs, ok := a[9].([]any)
	if !ok {
		return c, fmt.Errorf("%s subcommands: want an array, got %T", c.Name, a[9])
	}
	for _, s := range subs {
		sub, err := parseCmd(s, c.Name)
		if err != nil {
			return c, err
		}
		c.Subcommands = append(c.Subcommands, sub)
	}
	sort.Slice(c.Subcommands, func(i, j int) bool { return c.Subcommands[i].Name < c.Subcommands[j].Name })
	return c, nil
}

func parseSpec(v any) (Spec, error) {
	var s Spec
	m, err := asMap(v)
	if err != nil {
		return s, err
	}
	if n, ok := m["notes"]; ok {
		if s.Notes, err = str(n); err != nil {
			return s, fmt.Errorf("notes: %w", err)
		}
	}
	if s.Flags, err = strs(m["flags"]); err != nil {
		return s, fmt.Errorf("flags: %w", err)
	}
	bs, err := asMap(m["begin_search"])
	if err != nil {
		return s, fmt.Errorf("begin_search: %w", err)
	}
	if s.BeginType, err = str(bs["type"]); err != nil {
		return s, fmt.Errorf("begin_search type: %w", err)
	}
	bspec, err := asMap(bs["spec"])
	if err != nil {
		return s, fmt.Errorf("begin_search spec: %w", err)
	}
	switch s.BeginType {
	case "index":
		err = ints(bspec, map[string]*int{"index": &s.Index})
	case "keyword":
		if s.Keyword, err = str(bspec["keyword"]); err == nil {
			err = ints(bspec, map[string]*int{"startfrom": &s.StartFrom})
		}
	case "unknown":
	default:
		err = fmt.Errorf("unknown begin_search type %q: teach rediscmd about it", s.BeginType)
	}
	if err != nil {
		return s, fmt.Errorf("begin_search: %w", err)
	}
	fk, err := asMap(m["find_keys"])
	if err != nil {
		return s, fmt.Errorf("find_keys: %w", err)
	}
	if s.FindType, err = str(fk["type"]); err != nil {
		return s, fmt.Errorf("find_keys type: %w", err)
	}
	fspec, err := asMap(fk["spec"])
	if err != nil {
		return s, fmt.Errorf("find_keys spec: %w", err)
	}
	switch s.FindType {
	case "range":
		err = ints(fspec, map[string]*int{"lastkey": &s.LastKey, "keystep": &s.KeyStep, "limit": &s.Limit})
	case "keynum":
		err = ints(fspec, map[string]*int{"keynumidx": &s.KeyNumIdx, "firstkey": &s.FirstKey, "keystep": &s.KeyStep})
	case "unknown":
	default:
		err = fmt.Errorf("unknown find_keys type %q: teach rediscmd about it", s.FindType)
	}
	if err != nil {
		return s, fmt.Errorf("find_keys: %w", err)
	}
	return s, nil
}

// asMap accepts a RESP2 flat array of pairs or a RESP3 map.
func asMap(v any) (map[string]any, error) {
	out := map[string]any{}
	switch m := v.(type) {
	case []any:
		if len(m)%2 != 0 {
			return nil, fmt.Errorf("odd-length array of %d for a map", len(m))
		}
		for i := 0; i < len(m); i += 2 {
			k, err := str(m[i])
			if err != nil {
				return nil, fmt.Errorf("map key: %w", err)
			}
			out[k] = m[i+1]
		}
	case map[any]any:
		for k, v := range m {
			ks, err := str(k)
			if err != nil {
				return nil, fmt.Errorf("map key: %w", err)
			}
			out[ks] = v
		}
	case map[string]any:
		return m, nil
	default:
		return nil, fmt.Errorf("want a map, got %T", v)
	}
	return out, nil
}

func ints(m map[string]any, want map[string]*int) error {
	for k, p := range want {
		v, ok := m[k]
		if !ok {
			return fmt.Errorf("missing %q", k)
		}
		n, err := integer(v)
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		*p = n
	}
	return nil
}

func str(v any) (string, error) {
	if s, ok := v.(string); ok {
		return s, nil
	}
	return "", fmt.Errorf("want a string, got %T", v)
}

func strs(v any) ([]string, error) {
	a, ok := v.([]any)
	if !ok {
		if v == nil {
			return nil, nil
		}
		if m, ok := v.(map[any]any); ok { // RESP3 set
			a = make([]any, 0, len(m))
			for k := range m {
				a = append(a, k)
			}
			sort.Slice(a, func(i, j int) bool { return fmt.Sprint(a[i]) < fmt.Sprint(a[j]) })
		} else {
			return nil, fmt.Errorf("want an array, got %T", v)
		}
	}
	out := make([]string, 0, len(a))
	for _, e := range a {
		s, err := str(e)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func integer(v any) (int, error) {
	if n, ok := v.(int64); ok {
		return int(n), nil
	}
	return 0, fmt.Errorf("want an integer, got %T", v)
}

func lenOf(v any) int {
	if a, ok := v.([]any); ok {
		return len(a)
	}
	return 0
}
