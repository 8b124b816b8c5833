package investigate

import (
	"errors"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/keyguard/keyguard/internal/rediscmd"
)

// Access is what one client (one MONITOR source, or the caller of a
// script) did to one key during a capture.
type Access struct {
	Key    string
	Source string // MONITOR source of the client; SourceLua when a script's caller was not seen
	// Commands counts the commands by lower-case name; commands a script
	// ran count under their own name and in ViaScript too.
	Commands  map[string]int
	Writes    int
	Reads     int
	ViaScript int // writes and reads made by a script the client called
	ViaMulti  int // writes and reads inside the client's MULTI/EXEC
	Scripts   map[string]int
	Fields    map[string]bool // hash fields and top-level JSON keys written
	Kinds     map[string]int  // kinds of string values written (json, text…)
	// TTLs counts the TTLs the client's writes gave the key, in whole
	// seconds (ms/1000 rounded); -1 is "no TTL" (SET without EX, PERSIST).
	TTLs        map[int64]int
	First, Last time.Time
}

// Attributor turns a stream of MONITOR lines into accesses per key and
// client. A command a script runs (source "lua") belongs to the client
// whose EVAL, EVALSHA or FCALL the server printed just before it (the
// server prints a script call before the commands it runs, and nothing
// runs in between); commands between a client's MULTI and EXEC belong to
// it and are dropped on DISCARD. It is pure and not safe for concurrent
// use: feed it from one goroutine.
type Attributor struct {
	keep func(key string) bool
	db   int // -1: every database

	scriptActive bool
	scriptCaller string
	scriptName   string
	scriptMulti  bool

	multi    map[string][]pending // source → accesses waiting for EXEC
	acc      map[accessKey]*Access
	argv     []any
	keys     []rediscmd.Key
	Lines    int64 // lines fed
	Matched  int64 // lines that touched a kept key
	Orphaned int64 // script commands whose caller was not seen
}

type accessKey struct{ key, source string }

type pending struct {
	line   *Line
	source string
	script string
}

// NewAttributor returns an Attributor that records keys for which keep
// is true, in database db (-1 for every database).
func NewAttributor(db int, keep func(key string) bool) *Attributor {
	return &Attributor{keep: keep, db: db, multi: map[string][]pending{}, acc: map[accessKey]*Access{}}
}

// isScriptCall reports the commands that run a script or a function.
func isScriptCall(name string) bool {
	switch name {
	case "eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro":
		return true
	}
	return false
}

// Feed takes the next line. The line must not be changed afterwards (a
// line inside MULTI is kept until EXEC).
func (a *Attributor) Feed(l *Line) {
	a.Lines++
	if len(l.Args) == 0 || (a.db >= 0 && l.DB != a.db) {
		return
	}
	if l.Source == SourceLua {
		if !a.scriptActive {
			a.Orphaned++
			a.record(l, SourceLua, "a script whose call was not shown")
			return
		}
		if a.scriptMulti {
			a.multi[a.scriptCaller] = append(a.multi[a.scriptCaller], pending{l, a.scriptCaller, a.scriptName})
			return
		}
		a.record(l, a.scriptCaller, a.scriptName)
		return
	}
	a.scriptActive = false
	name := strings.ToLower(l.Args[0])
	_, inMulti := a.multi[l.Source]
	switch {
	case name == "multi":
		if !inMulti {
			a.multi[l.Source] = []pending{}
		}
		return
	case name == "exec" && inMulti:
		for _, p := range a.multi[l.Source] {
			a.recordVia(p.line, p.source, p.script, true)
		}
		delete(a.multi, l.Source)
		return
	case name == "discard":
		delete(a.multi, l.Source)
		return
	case isScriptCall(name):
		a.scriptActive, a.scriptCaller, a.scriptMulti = true, l.Source, inMulti
		a.scriptName = scriptName(name, l.Args)
		return
	}
	if inMulti {
		a.multi[l.Source] = append(a.multi[l.Source], pending{l, l.Source, ""})
		return
	}
	a.record(l, l.Source, "")
}

// Flush applies the commands of MULTI blocks whose EXEC the capture did
// not see (it stopped in between): the server ran or will run them.
func (a *Attributor) Flush() {
	for src, ps := range a.multi {
		for _, p := range ps {
			a.recordVia(p.line, p.source, p.script, true)
		}
		delete(a.multi, src)
	}
}

func scriptName(cmd string, args []string) string {
	switch cmd {
	case "fcall", "fcall_ro":
		if len(args) > 1 {
			return "FCALL " + args[1]
		}
	case "evalsha", "evalsha_ro":
		if len(args) > 1 {
			sha := args[1]
			if len(sha) > 8 {
				sha = sha[:8]
			}
			return "EVALSHA " + sha
		}
	}
	return strings.ToUpper(cmd)
}

func (a *Attributor) record(l *Line, source, script string) { a.recordVia(l, source, script, false) }

func (a *Attributor) recordVia(l *Line, source, script string, multi bool) {
	// A key of the investigation is one of the arguments: most lines hold
	// none and are dropped before the command table is consulted.
	kept := false
	for _, arg := range l.Args[1:] {
		if kept = a.keep(arg); kept {
			break
		}
	}
	if !kept {
		return
	}
	name := strings.ToLower(l.Args[0])
	cmd, known := rediscmd.Lookup(name)
	if known && !cmd.HasKeys() && len(cmd.Subcommands()) == 0 {
		return
	}
	a.argv = a.argv[:0]
	for _, s := range l.Args {
		a.argv = append(a.argv, s)
	}
	a.keys = a.keys[:0]
	if known {
		if c, ok := rediscmd.LookupArgs(a.argv); ok {
			var err error
			a.keys, err = c.AppendKeys(a.keys, a.argv)
			if n := len(a.argv); errors.Is(err, rediscmd.ErrArity) && n < max(c.Arity, -c.Arity) {
				// A line MONITOR's reader cut short (a multi-megabyte
				// value): the arguments before the cut still name their
				// keys. Stand-ins fill the arity; keys among them are none.
				for len(a.argv) < max(c.Arity, -c.Arity) {
					a.argv = append(a.argv, "")
				}
				a.keys, _ = c.AppendKeys(a.keys[:0], a.argv)
				a.keys = slices.DeleteFunc(a.keys, func(k rediscmd.Key) bool { return k.Pos >= n })
			}
		}
	} else if len(l.Args) > 1 { // a module command: its first argument is its key, by convention
		a.keys = append(a.keys, rediscmd.Key{Pos: 1, Name: l.Args[1], Flags: moduleFlags(name)})
	}
	matched := false
	for _, k := range a.keys {
		if !a.keep(k.Name) {
			continue
		}
		matched = true
		x := a.access(k.Name, source)
		x.Commands[name]++
		if x.First.IsZero() {
			x.First = l.Time
		}
		x.Last = l.Time
		switch {
		case k.Flags.Writes():
			x.Writes++
			applyEffect(x, name, l, k.Pos)
		case k.Flags.Reads():
			x.Reads++
		}
		if script != "" {
			x.ViaScript++
			x.Scripts[script]++
		}
		if multi {
			x.ViaMulti++
		}
	}
	if matched {
		a.Matched++
	}
}

// moduleFlags guesses how a module command uses its key from its name
// (JSON.SET writes, JSON.GET reads); other module commands count as
// neither.
func moduleFlags(name string) rediscmd.KeyFlags {
	switch {
	case strings.HasSuffix(name, ".set"), strings.HasSuffix(name, ".del"), strings.HasSuffix(name, ".merge"), strings.HasSuffix(name, ".mset"):
		return rediscmd.KeyRW
	case strings.HasSuffix(name, ".get"), strings.HasSuffix(name, ".mget"):
		return rediscmd.KeyRO
	}
	return 0
}

func (a *Attributor) access(key, source string) *Access {
	k := accessKey{key, source}
	x := a.acc[k]
	if x == nil {
		x = &Access{Key: key, Source: source, Commands: map[string]int{}, Scripts: map[string]int{},
			Fields: map[string]bool{}, Kinds: map[string]int{}, TTLs: map[int64]int{}}
		a.acc[k] = x
	}
	return x
}

// Accesses returns every access, by key then source.
func (a *Attributor) Accesses() []*Access {
	out := make([]*Access, 0, len(a.acc))
	for _, x := range a.acc {
		out = append(out, x)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Key != out[j].Key {
			return out[i].Key < out[j].Key
		}
		return out[i].Source < out[j].Source
	})
	return out
}

// applyEffect records what a write did to the key at args[pos]: the
// fields it wrote, the kind of string value, and the TTL it gave.
func applyEffect(x *Access, name string, l *Line, pos int) {
	args := l.Args
	arg := func(i int) string {
		if i < len(args) {
			return args[i]
		}
		return ""
	}
	from := func(i int) []string { return args[min(i, len(args)):] } // a line cut short has fewer
	value := func(v string) {
		kind, fields := stringShape([]byte(v))
		x.Kinds[kind]++
		addFields(x, fields)
	}
	switch name {
	case "set":
		value(arg(2))
		x.ttl(setTTL(from(3), l.Time))
	case "setnx", "getset":
		value(arg(2))
		x.ttl(-1)
	case "mset", "msetnx":
		value(arg(pos + 1))
		x.ttl(-1)
	case "setex", "psetex":
		value(arg(3))
		x.ttl(relTTL(arg(2), name == "psetex", false, l.Time))
	case "hset", "hmset":
		for i := 2; i < len(args); i += 2 {
			addFields(x, []string{args[i]})
		}
	case "hsetnx", "hincrby", "hincrbyfloat":
		addFields(x, []string{arg(2)})
	case "expire", "pexpire", "expireat", "pexpireat":
		x.ttl(relTTL(arg(2), strings.HasPrefix(name, "p"), strings.HasSuffix(name, "at"), l.Time))
	case "persist":
		x.ttl(-1)
	case "getex":
		if t, ok := ttlOption(from(2), l.Time); ok {
			x.ttl(t)
		}
	case "restore":
		if arg(2) == "0" {
			x.ttl(-1)
		} else {
			abs := false
			for _, o := range from(4) {
				abs = abs || strings.EqualFold(o, "absttl")
			}
			x.ttl(relTTL(arg(2), true, abs, l.Time))
		}
	case "json.set":
		if p := arg(2); p == "$" || p == "." {
			value(arg(3))
		}
	}
}

// ttl counts a TTL a write gave the key; 0 (unchanged, or unreadable) is
// not counted.
func (x *Access) ttl(t int64) {
	if t != 0 {
		x.TTLs[t]++
	}
}

func addFields(x *Access, fields []string) {
	for _, f := range fields {
		if len(x.Fields) >= maxFields {
			return
		}
		x.Fields[f] = true
	}
}

// setTTL is the TTL a SET with these options gives: EX/PX/EXAT/PXAT, the
// key's old TTL with KEEPTTL (not a change: 0), else none (-1).
func setTTL(opts []string, at time.Time) int64 {
	if t, ok := ttlOption(opts, at); ok {
		return t
	}
	for _, o := range opts {
		if strings.EqualFold(o, "keepttl") {
			return 0
		}
	}
	return -1
}

// ttlOption reads EX/PX/EXAT/PXAT n or PERSIST from command options.
func ttlOption(opts []string, at time.Time) (int64, bool) {
	for i, o := range opts {
		u := strings.ToUpper(o)
		switch u {
		case "EX", "PX", "EXAT", "PXAT":
			if i+1 < len(opts) {
				return relTTL(opts[i+1], u[0] == 'P', strings.HasSuffix(u, "AT"), at), true
			}
		case "PERSIST":
			return -1, true
		}
	}
	return 0, false
}

// relTTL turns a TTL argument into whole seconds from the command's time
// (an absolute one is measured from at; the result is at least 1).
func relTTL(v string, millis, absolute bool, at time.Time) int64 {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0
	}
	ms := n
	if !millis {
		ms = n * 1000
	}
	if absolute {
		ms -= at.UnixMilli()
	}
	s := (ms + 500) / 1000
	if s < 1 {
		s = 1
	}
	return s
}
