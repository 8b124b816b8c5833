package migrate

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/registry"
)

const (
	opCopy    = "copy"
	opVerify  = "verify"
	opCleanup = "cleanup"
	opRestore = "restore"
)

// Copy copies every key of the old template to its new key, on every
// master. SCAN asks for keys of the template's type only (the others are
// left alone; Verify lists them). Value and expiry are copied exactly:
// COPY when both keys are on one node (a standalone server, or one Cluster
// slot), otherwise DUMP and PEXPIRETIME of the old key and RESTORE … ABSTTL
// of the new, so the new key expires at the same instant as the old. A new
// key that exists is never overwritten unless opts.Overwrite: COPY without
// REPLACE and RESTORE without REPLACE (BUSYKEY) check and write in one
// step, so a service that dual-writes meanwhile keeps its newer data. Keys
// that expire during the copy are counted, not errors.
func (p *Plan) Copy(ctx context.Context, rdb redis.UniversalClient, opts Options) (*Result, error) {
	j := newJob(opCopy, p, rdb, opts)
	j.work = &copier{j: j, sc: newScripts(), ttl: newTTLPolicy(p.ToEntry, opts.KeepTTL)}
	return j.run(ctx)
}

type copier struct {
	j   *job
	sc  *scripts
	ttl ttlPolicy
}

// ttlPolicy is what a whole-key copy does with expiries: the new
// template's TTL policy, or (keep) the old expiry as is.
type ttlPolicy struct {
	keep     bool
	ttl, max int64 // the new template's TTL and longest TTL in ms; max 0: persistent, -1: no TTL declared
}

func newTTLPolicy(to *registry.Entry, keep bool) ttlPolicy {
	p := ttlPolicy{keep: keep, ttl: to.TTL.Milliseconds(), max: to.MaxTTL().Milliseconds()}
	switch {
	case to.Persistent:
		p.max = 0
	case to.TTL <= 0:
		p.max = -1
	}
	return p
}

func (p ttlPolicy) mode() string {
	if p.keep {
		return "keep"
	}
	return "apply"
}

// expiry is copy.lua's decision for a RESTORE: the new key's expiry from
// the old key's deadline (PEXPIRETIME, -1 for none) at now (Unix ms), as
// RESTORE's ttl argument, whether it is absolute (ABSTTL), and copy.lua's
// answer (1 the old expiry, 2 set by the template, 3 or 4 kept and
// breaking it: no expiry, or one the template does not allow).
func (p ttlPolicy) expiry(deadline, now int64) (ttl int64, abs bool, v int64) {
	old := max(deadline, 0)
	var breaks bool
	switch {
	case p.max < 0:
		return old, true, 1
	case p.max == 0:
		breaks = deadline > 0
	default:
		breaks = deadline < 0 || deadline > now+p.max
	}
	switch {
	case !breaks:
		return old, true, 1
	case p.keep && deadline < 0:
		return old, true, 3
	case p.keep:
		return old, true, 4
	case p.max == 0:
		return 0, false, 2
	case deadline < 0:
		return p.ttl, false, 2
	}
	return p.max, false, 2
}

// allows reports whether nw is an expiry copy may have given a new key by
// the template's policy, for an old key expiring at old (both PEXPIRETIME)
// at now: none for a persistent template; else one within the template's
// longest TTL from now that does not outlive the old key.
func (p ttlPolicy) allows(old, nw, now, tol int64) bool {
	switch {
	case p.max < 0:
		return false
	case p.max == 0:
		return nw < 0
	}
	return nw > 0 && nw <= now+p.max+tol && (old < 0 || nw <= old+tol)
}

// copied counts a key written with copy.lua's answer v.
func (c *copier) copied(pr pair, v int64, n *Counts) {
	n.Copied++
	switch v {
	case 2:
		n.TTLSet++
	case 3, 4:
		n.TTLBreaks++
		c.j.warning(Mismatch{Old: pr.old, New: pr.new, Kind: WarningTTL, Detail: c.ttl.breach(v)})
	}
}

// breach says how a kept expiry breaks the new template (copy.lua's 3 or 4).
func (p ttlPolicy) breach(v int64) string {
	switch {
	case p.max == 0:
		return "kept its expiry, and the new template is persistent"
	case v == 3:
		return fmt.Sprintf("kept no TTL, and the new template's is %s", registry.FormatTTL(time.Duration(p.ttl)*time.Millisecond))
	}
	return fmt.Sprintf("kept an expiry later than the new template's %s allows", registry.FormatTTL(time.Duration(p.max)*time.Millisecond))
}

func (c *copier) batch(ctx context.Context, pairs []pair, n *Counts) error {
	switch {
	case c.j.plan.Fields != nil:
		return c.fields(ctx, pairs, n)
	case c.j.opts.DryRun:
		return c.dry(ctx, pairs, n)
	}
	// First round trip: COPY where one node holds both keys, the old key's
	// payload and deadline where it does not.
	calls := make([]call, 0, len(pairs))
	for _, pr := range pairs {
		if pr.same {
			calls = append(calls, call{s: c.sc.copy, keys: []string{pr.old, pr.new}, args: []any{flag(c.j.opts.Overwrite), c.ttl.mode(), c.ttl.ttl, c.ttl.max}})
		} else {
			calls = append(calls, call{args: []any{"dump", pr.old}}, call{args: []any{"pexpiretime", pr.old}})
		}
	}
	cmds, err := exec(ctx, c.j.rdb, c.sc, calls)
	if err != nil {
		return err
	}
	next, err := c.second(pairs, calls, cmds, n)
	if err != nil || len(next) == 0 {
		return err
	}
	calls = calls[:0]
	for _, st := range next {
		calls = append(calls, st.call)
	}
	cmds, err = exec(ctx, c.j.rdb, c.sc, calls)
	if err != nil {
		return err
	}
	for i, cmd := range cmds {
		err := cmd.Err()
		switch {
		case redis.HasErrorPrefix(err, "BUSYKEY"): // RESTORE without REPLACE never overwrites
			n.Existing++
		case err != nil:
			return replyErr(&calls[i], err)
		case next[i].args[0] != "exists":
			c.copied(next[i].pr, next[i].v, n)
		case cmd.Val() == int64(0):
			n.Expired++
		default:
			n.Existing++
		}
	}
	return nil
}

// restoreStep is a call of the second round trip, with what counting its
// RESTORE needs.
type restoreStep struct {
	call
	pr pair
	v  int64 // copy.lua's answer for this expiry
}

// second counts the first round trip's answers and returns the second's
// calls: RESTORE of each payload with the expiry the TTL policy gives, and
// EXISTS of the old keys that COPY answered 0 for (the new key exists, or
// the old one is gone).
func (c *copier) second(pairs []pair, calls []call, cmds []*redis.Cmd, n *Counts) ([]restoreStep, error) {
	var next []restoreStep
	now := time.Now().UnixMilli()
	k := 0
	for i := range pairs {
		pr := &pairs[i]
		if pr.same {
			v, err := cmds[k].Int64()
			if err != nil {
				return nil, replyErr(&calls[k], err)
			}
			if v > 0 {
				c.copied(*pr, v, n)
			} else {
				next = append(next, restoreStep{call: call{args: []any{"exists", pr.old}}})
			}
			k++
			continue
		}
		payload, err := cmds[k].Text()
		switch {
		case err == redis.Nil:
			n.Expired++
			k += 2
			continue
		case err != nil:
			return nil, fmt.Errorf("DUMP %q: %w (a copy across nodes needs DUMP and RESTORE)", pr.old, err)
		}
		deadline, err := cmds[k+1].Int64()
		k += 2
		switch {
		case err != nil:
			return nil, replyErr(&calls[k-1], err)
		case deadline == -2 || deadline > 0 && deadline <= now:
			n.Expired++ // gone, or its deadline passed: RESTORE would drop it
			continue
		}
		ttl, abs, v := c.ttl.expiry(deadline, now)
		args := []any{"restore", pr.new, ttl, payload}
		if abs {
			args = append(args, "absttl")
		}
		if c.j.opts.Overwrite {
			args = append(args, "replace")
		}
		next = append(next, restoreStep{call: call{args: args}, pr: *pr, v: v})
	}
	return next, nil
}

// count adds the reply of writefields.lua.
func (n *Counts) count(v int64) {
	switch v {
	case 1:
		n.Copied++
	case 0:
		n.Existing++
	case -1:
		n.Expired++
	}
}

// dry counts what a whole-key copy would do, writing nothing.
func (c *copier) dry(ctx context.Context, pairs []pair, n *Counts) error {
	calls := make([]call, 0, 3*len(pairs))
	for _, pr := range pairs {
		calls = append(calls, call{args: []any{"exists", pr.old}}, call{args: []any{"exists", pr.new}}, call{args: []any{"pexpiretime", pr.old}})
	}
	cmds, err := exec(ctx, c.j.rdb, c.sc, calls)
	if err != nil {
		return err
	}
	now := time.Now().UnixMilli()
	for i := range pairs {
		var v [3]int64
		for k := range v {
			if v[k], err = cmds[3*i+k].Int64(); err != nil {
				return replyErr(&calls[3*i+k], err)
			}
		}
		switch {
		case v[0] == 0:
			n.Expired++
		case v[1] == 1 && !c.j.opts.Overwrite:
			n.Existing++
		default:
			_, _, e := c.ttl.expiry(v[2], now)
			c.copied(pairs[i], e, n)
		}
	}
	return nil
}

// fields copies the moved fields of each old hash to its new key: read on
// the old key's node, then written on the new key's node only if the new
// key does not exist (both steps atomic scripts). Between the two steps
// a dual-writer can only have made the new key exist, so it is left alone.
func (c *copier) fields(ctx context.Context, pairs []pair, n *Counts) error {
	p := c.j.plan
	reads, err := readFields(ctx, c.j.rdb, c.sc, p.Fields, oldKeys(pairs))
	if err != nil {
		return err
	}
	var writes []call
	var capMS int64
	if !p.ToEntry.Persistent {
		capMS = p.ToEntry.MaxTTL().Milliseconds()
	}
	for i, r := range reads {
		switch {
		case r.typ == "none":
			n.Expired++
			continue
		case r.typ != "hash":
			n.WrongType++
			continue
		case !r.any():
			n.NoFields++
			continue
		}
		if c.j.opts.DryRun {
			writes = append(writes, call{args: []any{"exists", pairs[i].new}})
			continue
		}
		args := []any{flag(c.j.opts.Overwrite), max(r.deadline, 0), capMS}
		for k, f := range p.Fields {
			if r.vals[k] != nil {
				args = append(args, f, *r.vals[k])
			}
		}
		writes = append(writes, call{s: c.sc.writeFields, keys: []string{pairs[i].new}, args: args})
	}
	if len(writes) == 0 {
		return nil
	}
	cmds, err := exec(ctx, c.j.rdb, c.sc, writes)
	if err != nil {
		return err
	}
	for i, cmd := range cmds {
		v, err := cmd.Int64()
		if err != nil {
			return replyErr(&writes[i], err)
		}
		if c.j.opts.DryRun { // EXISTS
			v = 1 - v
			if c.j.opts.Overwrite {
				v = 1
			}
		}
		n.count(v)
	}
	return nil
}

func oldKeys(pairs []pair) []string {
	out := make([]string, len(pairs))
	for i, pr := range pairs {
		out[i] = pr.old
	}
	return out
}

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// keyRead is a key as verify reads it, or as readfields.lua returns it.
type keyRead struct {
	typ      string
	deadline int64     // Unix ms, -1 for none
	payload  *string   // DUMP (verify); nil when the server cannot serialize the type
	vals     []*string // the moved fields (readfields.lua)
}

func (r *keyRead) any() bool {
	for _, v := range r.vals {
		if v != nil {
			return true
		}
	}
	return false
}

func parseRead(cmd *redis.Cmd) (keyRead, error) {
	s, err := cmd.Slice()
	if err != nil || len(s) == 0 {
		return keyRead{}, fmt.Errorf("readfields.lua: unexpected reply %v (%v)", cmd.Val(), err)
	}
	r := keyRead{typ: fmt.Sprint(s[0]), deadline: -1}
	if len(s) > 1 {
		r.deadline = toInt(s[1])
	}
	for _, v := range s[min(2, len(s)):] {
		if str, ok := v.(string); ok {
			r.vals = append(r.vals, &str)
		} else {
			r.vals = append(r.vals, nil)
		}
	}
	return r, nil
}

func toInt(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case string:
		n, _ := strconv.ParseInt(x, 10, 64)
		return n
	}
	return -1
}

// readFields reads the moved fields of keys, one script call each.
func readFields(ctx context.Context, rdb redis.UniversalClient, sc *scripts, fields, keys []string) ([]keyRead, error) {
	args := make([]any, len(fields))
	for i, f := range fields {
		args[i] = f
	}
	calls := make([]call, len(keys))
	for i, k := range keys {
		calls[i] = call{s: sc.readFields, keys: []string{k}, args: args}
	}
	cmds, err := exec(ctx, rdb, sc, calls)
	if err != nil {
		return nil, err
	}
	out := make([]keyRead, len(keys))
	for i, cmd := range cmds {
		if err := cmd.Err(); err != nil {
			return nil, replyErr(&calls[i], err)
		}
		r, err := parseRead(cmd)
		if err != nil {
			return nil, err
		}
		if r.typ != "none" && len(r.vals) < len(fields) {
			r.vals = append(r.vals, make([]*string, len(fields)-len(r.vals))...)
		}
		out[i] = r
	}
	return out, nil
}
