package migrate

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// Cleanup deletes (UNLINK) every old key whose new key verifies now, as
// Verify would check it; with moved fields it deletes those fields from
// the old hash (HDEL), which keeps its other fields. The delete is a
// compare-and-delete script on the old key: it happens only if the old key
// still holds exactly what was compared (its DUMP digest and expiry, or
// the moved fields' values), so a write between the check and the delete
// keeps the key, counted as Changed. Keys that do not verify are left
// alone and counted as Mismatched.
func (p *Plan) Cleanup(ctx context.Context, rdb redis.UniversalClient, opts Options) (*Result, error) {
	j := newJob(opCleanup, p, rdb, opts)
	j.work = &cleaner{v: &verifier{j: j, sc: newScripts()}}
	return j.run(ctx)
}

type cleaner struct{ v *verifier }

func (c *cleaner) batch(ctx context.Context, pairs []pair, n *Counts) error {
	j, sc := c.v.j, c.v.sc
	vs, err := c.v.check(ctx, pairs)
	if err != nil {
		return err
	}
	var calls []call
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
		if j.plan.Fields != nil {
			calls = append(calls, hdelCall(sc, pairs[i].old, j.plan.Fields, vd.vals))
			continue
		}
		if vd.oldSum == "" {
			return fmt.Errorf("the server cannot DUMP the %s %q: cleanup needs DUMP to delete an old key only while it is unchanged", j.plan.Type, pairs[i].old)
		}
		calls = append(calls, call{s: sc.unlink, keys: []string{pairs[i].old}, args: []any{vd.oldSum, vd.deadline}})
	}
	if len(calls) == 0 {
		return nil
	}
	cmds, err := exec(ctx, j.rdb, sc, calls)
	if err != nil {
		return err
	}
	for i, cmd := range cmds {
		v, err := cmd.Int64()
		if err != nil {
			return replyErr(&calls[i], err)
		}
		if v == 1 {
			n.Removed++
		} else {
			n.Changed++
		}
	}
	return nil
}

func hdelCall(sc *scripts, key string, fields []string, vals []*string) call {
	args := make([]any, 0, 1+2*len(fields))
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
	return call{s: sc.hdel, keys: []string{key}, args: args}
}
