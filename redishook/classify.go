package redishook

import (
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/rediscmd"
)

// maxSeen bounds the distinct (template, access) pairs one command is
// deduplicated over; beyond it a template may be counted more than once.
const maxSeen = 8

// tally is what scanning one command found. It lives on the stack.
type tally struct {
	n        int
	seen     [maxSeen]int32 // (entry index + 1) * 2 + access; entry -1 is "unregistered"
	overflow bool
	unknown  bool // command missing from the table (allowed or not)
	cmd      *rediscmd.Command
	// The first violation.
	reason Reason
	key    string
	entry  int32 // -1: unregistered
	pos    int   // the key's index in the command's arguments (ReasonSchema)
}

// add records a (template, access) pair; false when it was seen already.
func (t *tally) add(v int32) bool {
	for _, s := range t.seen[:t.n] {
		if s == v {
			return false
		}
	}
	if t.n == maxSeen {
		t.overflow = true
		return false
	}
	t.seen[t.n] = v
	t.n++
	return true
}

func (t *tally) violate(r Reason, key string, entry int32) {
	if t.reason == 0 {
		t.reason, t.key, t.entry = r, key, entry
	}
}

func (t *tally) violateAt(r Reason, key string, entry int32, pos int) {
	if t.reason == 0 {
		t.reason, t.key, t.entry, t.pos = r, key, entry, pos
	}
}

const (
	accRead  = 0
	accWrite = 1
)

// scan classifies every key of args (a command of pipe at index at, or a
// single command when pipe is nil) into t. It counts nothing and does not
// allocate for string keys.
func (h *Hook) scan(t *tally, args []any, pipe []redis.Cmder, at int) {
	c, ok := rediscmd.LookupArgs(args)
	if !ok {
		h.scanUnknown(t, args)
		return
	}
	t.cmd = c
	if c.Class == rediscmd.ClassNone {
		return
	}
	// The closure does not escape (Keys only calls it), so it stays on the stack.
	_ = c.Keys(args, func(pos int, key string, f rediscmd.KeyFlags) bool {
		h.key(t, c, args, pipe, at, pos, key, f)
		return true
	})
	// A Keys error (arity, missing numkeys keys, a key go-redis cannot
	// marshal) means the server or go-redis rejects the command: nothing to
	// count or refuse.
	if t.n == 0 && !t.overflow && c.Class == rediscmd.ClassWrite && c.ACL&rediscmd.CatKeyspace != 0 && !c.HasKeys() {
		t.violate(ReasonKeyspace, "", -1) // FLUSHALL, FLUSHDB, SWAPDB
	}
}

// hotKeyRecordPrefix is hotkey.RecordPrefix, under which the hot-key
// detector of every service reports. It is repeated here so that the hook
// does not pull in the hot-key SDK; a test holds the two equal.
const hotKeyRecordPrefix = "keyguard:{hotkeys}:"

// ownRecord reports whether key is one of the records keyguard's SDK
// writes from every service, whoever owns the keyguard domain: the writer
// records (RecordPrefix) and the hot-key reports. The hook neither counts
// them as unregistered nor refuses them.
func ownRecord(key string) bool {
	return strings.HasPrefix(key, RecordPrefix) || strings.HasPrefix(key, hotKeyRecordPrefix)
}

// key classifies one key, args[pos].
func (h *Hook) key(t *tally, c *rediscmd.Command, args []any, pipe []redis.Cmder, at, pos int, key string, f rediscmd.KeyFlags) {
	acc := int32(accRead)
	if f.Writes() {
		acc = accWrite
	}
	e := h.reg.Lookup(key)
	if e == nil {
		if ownRecord(key) {
			return
		}
		t.add(acc)
		if acc == accWrite {
			t.violate(ReasonUnregistered, key, -1)
		}
		return
	}
	idx := int32(e.Index)
	t.add((idx+1)*2 + acc)
	if acc != accWrite || t.reason != 0 {
		return
	}
	es := &h.ents[idx]
	if !es.mayWrite {
		if ownRecord(key) {
			return // declared with keyguard as owner, and still every service's to write
		}
		t.violate(ReasonNotWriter, key, idx)
		return
	}
	if h.mode != Observe {
		if r := ttlRule(c, args, pipe, at, es, key); r != 0 {
			t.violate(r, key, idx)
			return
		}
	}
	// Checked in observe mode too: schema writes are metered in every mode.
	if es.fields.kind != fieldsNone && es.fields.broken(c.Name, args, pos, h.guardSHA, nil) {
		t.violateAt(ReasonSchema, key, idx, pos)
	}
}

// scanUnknown handles a command missing from the table.
func (h *Hook) scanUnknown(t *tally, args []any) {
	if len(args) == 0 {
		return
	}
	name, _ := args[0].(string)
	if c, ok := rediscmd.Lookup(name); ok && keylessContainer(c) {
		return // a new subcommand of CLIENT, CONFIG…: go-redis sends CLIENT SETINFO (7.2) on connect
	}
	t.unknown = true
	for _, a := range h.allow {
		if strings.EqualFold(a, name) {
			return
		}
	}
	t.violate(ReasonUnknownCommand, "", -1)
}

// keylessContainer reports whether c has subcommands and none of them
// touches keys, so that an unknown subcommand most likely does not either.
func keylessContainer(c *rediscmd.Command) bool {
	subs := c.Subcommands()
	if len(subs) == 0 {
		return false
	}
	for i := range subs {
		if subs[i].Class != rediscmd.ClassNone {
			return false
		}
	}
	return true
}

// commit counts a scanned command that goes to the server: metrics, writer
// records, and in warn mode the violation's log line.
func (h *Hook) commit(t *tally, args []any, pipe []redis.Cmder, at int) {
	for _, v := range t.seen[:t.n] {
		h.count(v)
	}
	if t.overflow {
		h.recount(t, args, pipe, at)
	}
	if t.unknown {
		h.unknown.Inc()
	}
	if t.reason == 0 {
		return
	}
	switch t.reason {
	case ReasonNotWriter:
		h.ents[t.entry].foreign.Inc()
	case ReasonSchema:
		h.ents[t.entry].schema.Inc()
	}
	if h.mode == Warn {
		h.warn(t, args, "keyguard: command breaks the key registry (warn mode: sent anyway)")
	}
}

func (h *Hook) count(v int32) {
	idx, acc := v/2-1, v&1
	if idx < 0 {
		h.unreg.cmds[acc].Inc()
		return
	}
	h.ents[idx].cmds[acc].Inc()
	if acc == accWrite && h.rec != nil {
		h.rec.mark(idx)
	}
}

// recount counts the keys of a command that touched more templates than
// the tally holds, skipping the pairs already counted.
func (h *Hook) recount(t *tally, args []any, pipe []redis.Cmder, at int) {
	if t.cmd == nil {
		return
	}
	_ = t.cmd.Keys(args, func(_ int, key string, f rediscmd.KeyFlags) bool {
		acc := int32(accRead)
		if f.Writes() {
			acc = accWrite
		}
		v := acc
		if e := h.reg.Lookup(key); e != nil {
			v = (int32(e.Index)+1)*2 + acc
		} else if ownRecord(key) {
			return true
		}
		for _, s := range t.seen[:t.n] {
			if s == v {
				return true
			}
		}
		h.count(v)
		return true
	})
}

// deny counts and logs a refused command and returns its error.
func (h *Hook) deny(t *tally, args []any) error {
	// Clone: a []byte key aliases the caller's memory.
	d := &DeniedError{Key: strings.Clone(t.key), Service: h.service, Reason: t.reason, Command: commandName(t.cmd, args)}
	if t.entry >= 0 {
		es := &h.ents[t.entry]
		d.Template, d.Owner = es.e.Template.String(), es.e.Owner
		d.Writers = es.e.Writers
		es.denied.Inc()
		switch {
		case es.foreign != nil && t.reason == ReasonNotWriter:
			es.foreign.Inc()
		case t.reason == ReasonSchema:
			es.schema.Inc()
			d.Declared = slices.Clone(es.e.Fields)
			d.Undeclared = es.fields.undeclared(t.cmd.Name, args, t.pos, h.guardSHA)
		}
	} else {
		h.unreg.denied.Inc()
	}
	if t.unknown {
		h.unknown.Inc()
	}
	h.warn(t, args, "keyguard: command refused (enforce mode)")
	return d
}

func commandName(c *rediscmd.Command, args []any) string {
	if c != nil {
		return strings.ReplaceAll(c.Name, "|", " ")
	}
	if len(args) > 0 {
		if s, ok := args[0].(string); ok {
			return strings.ToLower(s)
		}
	}
	return "?"
}

// warn logs a violation, at most once per template per WarnEvery.
func (h *Hook) warn(t *tally, args []any, msg string) {
	s := &h.unreg
	if t.entry >= 0 {
		s = &h.ents[t.entry].slotState
	}
	now := time.Now().UnixNano()
	last := s.lastLog.Load()
	if now-last < h.warnEvery || !s.lastLog.CompareAndSwap(last, now) {
		s.quiet.Add(1)
		return
	}
	attrs := []any{
		"service", h.service,
		"reason", t.reason.String(),
		"command", commandName(t.cmd, args),
	}
	if t.key != "" {
		attrs = append(attrs, "key", clip(t.key))
	}
	if t.entry >= 0 {
		es := &h.ents[t.entry]
		attrs = append(attrs, "template", es.e.Template.String(), "owner", es.e.Owner)
		if t.reason == ReasonSchema {
			if u := es.fields.undeclared(t.cmd.Name, args, t.pos, h.guardSHA); len(u) > 0 {
				attrs = append(attrs, "undeclared", u)
			}
			attrs = append(attrs, "declared", es.e.Fields)
		}
	}
	if n := s.quiet.Swap(0); n > 0 {
		attrs = append(attrs, "suppressed", n)
	}
	h.log.Warn(msg, attrs...)
}

// ttlRule checks the TTL policy of es for a write of key by c. pipe and at
// locate the command in its pipeline: a command that would leave the key
// without TTL is allowed when a later command of the same pipeline gives
// the key one.
func ttlRule(c *rediscmd.Command, args []any, pipe []redis.Cmder, at int, es *entryState, key string) Reason {
	switch {
	case es.ttl:
		strips := false
		switch c.Name {
		case "set":
			strips = !setExpires(args) && !hasKeyword(args, 3, "keepttl")
		case "setnx", "getset", "mset", "msetnx", "persist":
			strips = true
		case "getex":
			strips = hasKeyword(args, 2, "persist")
		case "restore":
			strips = len(args) > 2 && isZero(args[2])
		}
		if strips && !expiresLater(pipe, at, key) {
			return ReasonNoTTL
		}
	case es.persistent:
		switch c.Name {
		case "expire", "pexpire", "expireat", "pexpireat", "setex", "psetex":
			return ReasonPersistent
		case "set":
			if setExpires(args) {
				return ReasonPersistent
			}
		case "getex":
			if hasKeyword(args, 2, "ex") || hasKeyword(args, 2, "px") || hasKeyword(args, 2, "exat") || hasKeyword(args, 2, "pxat") {
				return ReasonPersistent
			}
		case "restore":
			if len(args) > 2 && !isZero(args[2]) {
				return ReasonPersistent
			}
		}
	}
	return 0
}

// setExpires reports whether SET args carry EX, PX, EXAT or PXAT.
func setExpires(args []any) bool {
	return hasKeyword(args, 3, "ex") || hasKeyword(args, 3, "px") || hasKeyword(args, 3, "exat") || hasKeyword(args, 3, "pxat")
}

// expiresLater reports whether a command after pipe[at] gives key a TTL.
func expiresLater(pipe []redis.Cmder, at int, key string) bool {
	for j := at + 1; j < len(pipe); j++ {
		args := pipe[j].Args()
		if len(args) < 3 || !argIs(args[1], key) {
			continue
		}
		c, ok := rediscmd.LookupArgs(args)
		if !ok {
			continue
		}
		switch c.Name {
		case "expire", "pexpire", "expireat", "pexpireat", "setex", "psetex":
			return true
		case "set":
			if setExpires(args) {
				return true
			}
		}
	}
	return false
}

// hasKeyword reports whether an argument from index from on equals kw
// (lower case), ignoring ASCII case.
func hasKeyword(args []any, from int, kw string) bool {
	for i := from; i < len(args); i++ {
		switch v := args[i].(type) {
		case string:
			if len(v) == len(kw) && strings.EqualFold(v, kw) {
				return true
			}
		case []byte:
			if len(v) == len(kw) && strings.EqualFold(string(v), kw) {
				return true
			}
		}
	}
	return false
}

// argIs reports whether argument a is the string s (no allocation).
func argIs(a any, s string) bool {
	switch v := a.(type) {
	case string:
		return v == s
	case []byte:
		return string(v) == s
	}
	return false
}

// isZero reports whether a RESTORE ttl argument is 0 (no expiry).
func isZero(a any) bool {
	switch v := a.(type) {
	case int64:
		return v == 0
	case int:
		return v == 0
	case time.Duration:
		return v == 0
	case string:
		return v == "0"
	case []byte:
		return string(v) == "0"
	}
	return false
}
