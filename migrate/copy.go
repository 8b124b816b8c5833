package migrate

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"
)

const (
	opCopy    = "copy"
	opVerify  = "verify"
	opCleanup = "cleanup"
)

// Copy copies every key of the old template to its new key, on every
// master. Value and expiry are copied exactly: COPY when both keys are on
// one node (a standalone server, or one Cluster slot), otherwise the old
// key is read (TYPE, PEXPIRETIME, DUMP in one script) and written with
// RESTORE … ABSTTL, so the new key expires at the same instant as the old.
// A new key that exists is never overwritten unless opts.Overwrite: both
// paths check and write in one atomic step, so a service that dual-writes
// meanwhile keeps its newer data. Keys that expire during the copy are
// counted, not errors.
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
	replace := flag(c.j.opts.Overwrite)
	calls := make([]call, len(pairs))
	for i, pr := range pairs {
		if pr.same {
			calls[i] = call{s: c.sc.copy, keys: []string{pr.old, pr.new}, args: []any{c.j.plan.Type, replace}}
		} else {
			calls[i] = call{s: c.sc.read, keys: []string{pr.old}}
		}
	}
	cmds, err := exec(ctx, c.j.rdb, c.sc, calls)
	if err != nil {
		return err
	}
	var restores []call
	for i, cmd := range cmds {
		if err := cmd.Err(); err != nil {
			return replyErr(&calls[i], err)
		}
		if pairs[i].same {
			v, _ := cmd.Int64()
			n.count(v)
			continue
		}
		r, err := parseRead(cmd)
		if err != nil {
			return err
		}
		switch {
		case r.typ == "none":
			n.Expired++
		case r.typ != c.j.plan.Type:
			n.WrongType++
		case r.payload == nil:
			return fmt.Errorf("the server cannot DUMP the %s %q, and %q is on another node: a copy across nodes needs DUMP and RESTORE", r.typ, pairs[i].old, pairs[i].new)
		default:
			restores = append(restores, call{s: c.sc.restore, keys: []string{pairs[i].new}, args: []any{*r.payload, max(r.deadline, 0), replace}})
		}
	}
	if len(restores) == 0 {
		return nil
	}
	cmds, err = exec(ctx, c.j.rdb, c.sc, restores)
	if err != nil {
		return err
	}
	for i, cmd := range cmds {
		v, err := cmd.Int64()
		if err != nil {
			return replyErr(&restores[i], err)
		}
		n.count(v)
	}
	return nil
}

// count adds the reply of copy.lua, restore.lua or writefields.lua.
func (n *Counts) count(v int64) {
	switch v {
	case 1:
		n.Copied++
	case 0:
		n.Existing++
	case -1:
		n.Expired++
	case -2:
		n.WrongType++
	}
}

// dry counts what a whole-key copy would do, writing nothing.
func (c *copier) dry(ctx context.Context, pairs []pair, n *Counts) error {
	calls := make([]call, 0, 2*len(pairs))
	for _, pr := range pairs {
		calls = append(calls, call{args: []any{"type", pr.old}}, call{args: []any{"exists", pr.new}})
	}
	cmds, err := exec(ctx, c.j.rdb, c.sc, calls)
	if err != nil {
		return err
	}
	for i := range pairs {
		typ, err := cmds[2*i].Text()
		if err != nil {
			return replyErr(&calls[2*i], err)
		}
		exists, err := cmds[2*i+1].Int64()
		if err != nil {
			return replyErr(&calls[2*i+1], err)
		}
		switch {
		case typ == "none":
			n.Expired++
		case typ != c.j.plan.Type:
			n.WrongType++
		case exists == 1 && !c.j.opts.Overwrite:
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

// keyRead is a key as read.lua or readfields.lua returned it.
type keyRead struct {
	typ      string
	deadline int64   // Unix ms, -1 for none
	payload  *string // DUMP; nil when the server cannot serialize the type
	vals     []*string
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
		return keyRead{}, fmt.Errorf("read.lua: unexpected reply %v (%v)", cmd.Val(), err)
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
	if len(r.vals) > 0 {
		r.payload = r.vals[0]
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
