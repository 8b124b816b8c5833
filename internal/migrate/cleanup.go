package migrate

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Cleanup deletes every old key whose new key verifies now, as Verify
// would check it; with moved fields it deletes those fields from the old
// hash, which keeps its other fields. An old key is deleted only if, at
// the moment of deletion, it still holds exactly what was compared and its
// new key still exists and holds what verified:
//
//   - both keys on one node (a standalone server, or one Cluster slot): one
//     script compares the old key (DUMP digest and expiry, or the moved
//     fields' values) and the new key (DUMP digest and expiry, or the
//     fields and expiry), then deletes the old key;
//   - across Cluster slots no script sees both keys, so the delete is made
//     recoverable: a script moves the old key (or its fields) to a
//     tombstone in its own slot that expires after Options.Grace; the new
//     key is then checked again, and if it no longer verifies the old key
//     is put back at once. Within the grace period Restore brings every
//     tombstone back, and every Cleanup run on a Cluster checks the new
//     key of every tombstone it finds again (orphans).
//
// A key that changed in between is left alone and counted as Changed;
// keys that do not verify are left alone and counted as Mismatched.
func (p *Plan) Cleanup(ctx context.Context, rdb redis.UniversalClient, opts Options) (*Result, error) {
	j := newJob(opCleanup, p, rdb, opts)
	j.work = &cleaner{v: newVerifier(j)}
	return j.run(ctx)
}

type cleaner struct {
	v     *verifier
	tombs tombs
}

// moved is an old key moved to its tombstone, waiting for the second
// check of its new key.
type moved struct {
	pr   pair
	vd   *verdict
	tomb string
}

func (c *cleaner) batch(ctx context.Context, pairs []pair, n *Counts) error {
	var tombs []pair
	keys := pairs[:0:0]
	for _, pr := range pairs {
		if pr.tomb != "" {
			tombs = append(tombs, pr)
		} else {
			keys = append(keys, pr)
		}
	}
	if len(keys) > 0 {
		vs, err := c.v.check(ctx, keys)
		if err != nil {
			return err
		}
		if err := c.retire(ctx, keys, vs, n); err != nil {
			return err
		}
	}
	return c.orphans(ctx, tombs, n)
}

// orphans checks again the new keys of tombstones the walk found. A
// cleanup interrupted between moving old keys to their tombstones and
// checking their new keys again (recheck) leaves them unchecked, and a new
// key can also vanish later, within the grace period: every cleanup run
// puts back the old keys whose new key no longer verifies against the
// tombstone, as recheck does. The others stay until the grace period ends.
func (c *cleaner) orphans(ctx context.Context, ps []pair, n *Counts) error {
	if len(ps) == 0 {
		return nil
	}
	j, sc := c.v.j, c.v.sc
	vs, err := c.v.check(ctx, ps)
	if err != nil {
		return err
	}
	var back []call
	var lost []*verdict
	for i := range vs {
		switch vs[i].state {
		case stOK:
			n.Rechecked++
		case stExpired: // the tombstone expired, or was put back, meanwhile
		default:
			if j.opts.DryRun {
				n.Restored++
				n.Mismatched++
				j.mismatch(vs[i].m)
				continue
			}
			back = append(back, restoreCall(sc, ps[i].tomb, ps[i].old, ps[i].deadline, j.plan.Fields != nil))
			lost = append(lost, &vs[i])
		}
	}
	got, err := c.putBack(ctx, back)
	if err != nil {
		return err
	}
	for i, v := range got {
		switch v {
		case 1: // back, beside a new key that does not verify
			n.Restored++
			n.Mismatched++
			j.mismatch(lost[i].m)
		case 0: // the old key was written again since: it is newer
			n.Changed++
		}
	}
	return nil
}

// retire deletes the old keys of the pairs that verified (vs).
func (c *cleaner) retire(ctx context.Context, pairs []pair, vs []verdict, n *Counts) error {
	j, sc := c.v.j, c.v.sc
	fields := j.plan.Fields != nil
	// The new key's expiry may move as far as verify lets it differ from
	// the old one's (a server whose clock is read per call).
	tol := j.opts.TTLTolerance.Milliseconds()
	var calls []call
	var tombed []moved // by index in calls, for the tombstone calls
	at := map[int]int{}
	for i := range vs {
		vd := &vs[i]
		if vd.state != stOK {
			vd.count(n)
			continue
		}
		n.Verified++
		if j.opts.DryRun {
			n.Removed++
			continue
		}
		pr := pairs[i]
		if !fields && (vd.oldSum == "" || vd.newSum == "") {
			return fmt.Errorf("the server cannot DUMP the %s %q: cleanup needs DUMP to delete an old key only while both keys are unchanged", j.plan.Type, pr.old)
		}
		if !pr.same {
			tomb := c.tombs.name(pr.old, fields, vd.deadline)
			at[len(calls)] = len(tombed)
			tombed = append(tombed, moved{pr: pr, vd: vd, tomb: tomb})
			if fields {
				calls = append(calls, fieldsCall(sc.tombFields, pr.old, tomb, j.plan.Fields, vd.vals, j.opts.Grace.Milliseconds()))
			} else {
				calls = append(calls, call{s: sc.tomb, keys: []string{pr.old, tomb}, args: []any{vd.oldSum, vd.deadline, j.opts.Grace.Milliseconds()}})
			}
			continue
		}
		if fields {
			calls = append(calls, fieldsCall(sc.hdel, pr.old, pr.new, j.plan.Fields, vd.vals, vd.newDeadline, tol))
		} else {
			calls = append(calls, call{s: sc.unlink, keys: []string{pr.old, pr.new}, args: []any{vd.oldSum, vd.deadline, vd.newSum, vd.newDeadline, tol}})
		}
	}
	if len(calls) == 0 {
		return nil
	}
	cmds, err := exec(ctx, j.rdb, sc, calls)
	if err != nil {
		return err
	}
	var check []moved
	for i, cmd := range cmds {
		v, err := cmd.Int64()
		if err != nil {
			return replyErr(&calls[i], err)
		}
		switch {
		case v != 1:
			n.Changed++
		case calls[i].s == sc.tomb || calls[i].s == sc.tombFields:
			check = append(check, tombed[at[i]])
		default:
			n.Removed++
		}
	}
	return c.recheck(ctx, check, n)
}

// recheck checks the new keys of old keys just moved to their tombstones
// once more, and puts back at once the old keys whose new key no longer
// verifies. The others stay tombstones until the grace period ends:
// dropping them now would leave the same gap between a check and a
// delete that the tombstone closes.
func (c *cleaner) recheck(ctx context.Context, ms []moved, n *Counts) error {
	if len(ms) == 0 {
		return nil
	}
	j, sc := c.v.j, c.v.sc
	ok := make([]bool, len(ms))
	if j.plan.Fields != nil {
		keys := make([]string, len(ms))
		for i, m := range ms {
			keys[i] = m.pr.new
		}
		reads, err := readFields(ctx, j.rdb, sc, j.plan.Fields, keys)
		if err != nil {
			return err
		}
		for i, r := range reads {
			ok[i] = r.typ == "hash" && sameDeadline(r.deadline, ms[i].vd.newDeadline, j.opts.TTLTolerance) && sameVals(r.vals, ms[i].vd.vals)
		}
	} else {
		calls := make([]call, 0, 2*len(ms))
		for _, m := range ms {
			calls = append(calls, call{args: []any{"dump", m.pr.new}}, call{args: []any{"pexpiretime", m.pr.new}})
		}
		cmds, err := exec(ctx, j.rdb, sc, calls)
		if err != nil {
			return err
		}
		for i, m := range ms {
			p, perr := cmds[2*i].Text()
			d, derr := cmds[2*i+1].Int64()
			ok[i] = perr == nil && derr == nil && sha1Hex(&p) == m.vd.newSum && sameDeadline(d, m.vd.newDeadline, j.opts.TTLTolerance)
		}
	}
	var back []call
	for i, m := range ms {
		if ok[i] {
			n.Removed++
			n.Tombstoned++
			continue
		}
		back = append(back, restoreCall(sc, m.tomb, m.pr.old, m.vd.deadline, j.plan.Fields != nil))
	}
	got, err := c.putBack(ctx, back)
	if err != nil {
		return err
	}
	for _, v := range got {
		n.Changed++
		if v != 1 { // the old key was written again meanwhile: the tombstone is left to expire
			n.Tombstoned++
		}
	}
	return nil
}

// putBack runs restore calls (restoreCall) and returns their answers.
func (c *cleaner) putBack(ctx context.Context, back []call) ([]int64, error) {
	if len(back) == 0 {
		return nil, nil
	}
	cmds, err := exec(ctx, c.v.j.rdb, c.v.sc, back)
	if err != nil {
		return nil, err
	}
	out := make([]int64, len(cmds))
	for i, cmd := range cmds {
		if out[i], err = cmd.Int64(); err != nil {
			return nil, replyErr(&back[i], err)
		}
	}
	return out, nil
}

// sameDeadline compares two PEXPIRETIME answers as the scripts do.
func sameDeadline(got, want int64, tol time.Duration) bool {
	if got < 0 || want < 0 {
		return got == want
	}
	d := got - want
	return max(d, -d) <= tol.Milliseconds()
}

func sameVals(a, b []*string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !sameVal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// fieldsCall is a call of hdel.lua or tombfields.lua: the fields, their
// verified values, and last the new hash's expiry and tolerance, or the
// grace period.
func fieldsCall(s *script, key, other string, fields []string, vals []*string, last ...int64) call {
	args := make([]any, 0, 2+2*len(fields))
	args = append(args, len(fields))
	for _, f := range fields {
		args = append(args, f)
	}
	for _, v := range vals[:len(fields)] {
		if v == nil {
			args = append(args, "-")
		} else {
			args = append(args, "="+*v)
		}
	}
	for _, v := range last {
		args = append(args, v)
	}
	return call{s: s, keys: []string{key, other}, args: args}
}

func restoreCall(sc *scripts, tomb, old string, deadline int64, fields bool) call {
	kind := "k"
	if fields {
		kind = "f"
	}
	return call{s: sc.restore, keys: []string{tomb, old}, args: []any{deadline, kind}}
}

// Restore brings back, on every master, the old keys (or moved fields)
// that cleanup moved to tombstones across Cluster slots and whose grace
// period has not ended. An old key written again since is newer and is
// left as it is (counted as Existing): a whole key is not put back over
// it, moved fields only where the hash lacks them.
func (p *Plan) Restore(ctx context.Context, rdb redis.UniversalClient, opts Options) (*Result, error) {
	opts.Match = ""
	j := newJob(opRestore, p, rdb, opts)
	j.work = &restorer{j: j, sc: newScripts()}
	return j.run(ctx)
}

type restorer struct {
	j  *job
	sc *scripts
}

func (r *restorer) batch(ctx context.Context, pairs []pair, n *Counts) error {
	calls := make([]call, 0, len(pairs))
	for _, pr := range pairs {
		if r.j.opts.DryRun {
			calls = append(calls, call{args: []any{"exists", pr.old}})
			continue
		}
		calls = append(calls, restoreCall(r.sc, pr.new, pr.old, pr.deadline, r.j.plan.Fields != nil))
	}
	cmds, err := exec(ctx, r.j.rdb, r.sc, calls)
	if err != nil {
		return err
	}
	for i, cmd := range cmds {
		v, err := cmd.Int64()
		if err != nil {
			return replyErr(&calls[i], err)
		}
		if r.j.opts.DryRun { // EXISTS of the old key
			v = 1 - v
			if r.j.plan.Fields != nil {
				v = 1
			}
		}
		switch v {
		case 1:
			n.Restored++
		case 0:
			n.Existing++
		default:
			n.Expired++
		}
	}
	return nil
}
