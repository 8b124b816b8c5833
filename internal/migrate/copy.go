package migrate

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
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
	j.work = &copier{j: j, sc: newScripts()}
	return j.run(ctx)
}

type copier struct {
	j  *job
	sc *scripts
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
			args := []any{"copy", pr.old, pr.new}
			if c.j.opts.Overwrite {
				args = append(args, "replace")
			}
			calls = append(calls, call{args: args})
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
	cmds, err = exec(ctx, c.j.rdb, c.sc, next)
	if err != nil {
		return err
	}
	for i, cmd := range cmds {
		err := cmd.Err()
		switch {
		case redis.HasErrorPrefix(err, "BUSYKEY"): // RESTORE without REPLACE never overwrites
			n.Existing++
		case err != nil:
			return replyErr(&next[i], err)
		case next[i].args[0] != "exists":
			n.Copied++
		case cmd.Val() == int64(0):
			n.Expired++
		default:
			n.Existing++
		}
	}
	return nil
}

// second counts the first round trip's answers and returns the second's
// calls: RESTORE … ABSTTL of each payload, and EXISTS of the old keys that
// COPY answered 0 for (the new key exists, or the old one is gone).
func (c *copier) second(pairs []pair, calls []call, cmds []*redis.Cmd, n *Counts) ([]call, error) {
	var next []call
	now := time.Now().UnixMilli()
	k := 0
	for i := range pairs {
		pr := &pairs[i]
		if pr.same {
			v, err := cmds[k].Int64()
			if err != nil {
				return nil, replyErr(&calls[k], err)
			}
			if v == 1 {
				n.Copied++
			} else {
				next = append(next, call{args: []any{"exists", pr.old}})
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
		args := []any{"restore", pr.new, max(deadline, 0), payload, "absttl"}
		if c.j.opts.Overwrite {
			args = append(args, "replace")
		}
		next = append(next, call{args: args})
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
	calls := make([]call, 0, 2*len(pairs))
	for _, pr := range pairs {
		calls = append(calls, call{args: []any{"exists", pr.old}}, call{args: []any{"exists", pr.new}})
	}
	cmds, err := exec(ctx, c.j.rdb, c.sc, calls)
	if err != nil {
		return err
	}
	for i := range pairs {
		var v [2]int64
		for k := range v {
			if v[k], err = cmds[2*i+k].Int64(); err != nil {
				return replyErr(&calls[2*i+k], err)
			}
		}
		switch {
		case v[0] == 0:
			n.Expired++
		case v[1] == 1 && !c.j.opts.Overwrite:
			n.Existing++
		default:
			n.Copied++
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
