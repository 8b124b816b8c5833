package guard

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// SetOp is one write of a pipelined batch: Field and Value, or several
// Fields, to set on Key.
type SetOp struct {
	Key    string
	Field  string         // the one field to set, when Fields is nil
	Value  any            // its value
	Fields map[string]any // several fields; Field and Value must then be empty
}

func (g *Guard) opArgs(op SetOp) ([]any, error) {
	if op.Fields != nil {
		if op.Field != "" || op.Value != nil {
			return nil, fmt.Errorf("guard: set %q: SetOp has both Field and Fields; use one of them", op.Key)
		}
		return g.setArgs(op.Key, op.Fields)
	}
	if op.Field == ReservedField {
		return nil, ErrReservedField
	}
	return []any{"set", g.nsArg, g.ttlArg(), op.Field, op.Value}, nil
}

// SetResult is the outcome of one SetOp: Result when Err is nil.
type SetResult struct {
	Result
	Err error
}

// SetPipelined runs the ops in one pipeline (one round trip per node in a
// Cluster; two in best-effort mode), each with the semantics of Set or
// SetMany: every op is atomic on its own (in Lua mode), the batch is not. results has one entry per op, in order. err is the
// first op error, like go-redis Pipeliner.Exec: inspect each SetResult.Err.
//
// go-redis does not fall back to EVAL inside pipelines (go-redis#3228), so
// the guard does it: ops answered NOSCRIPT (after SCRIPT FLUSH, a restart or
// a failover) did not run; the script is loaded (on every node of a
// Cluster) and only those ops are sent again, with EVAL for any that still
// miss it.
func (g *Guard) SetPipelined(ctx context.Context, ops []SetOp) (results []SetResult, err error) {
	if g.err != nil {
		return nil, g.err
	}
	results = make([]SetResult, len(ops))
	args := make([][]any, len(ops))
	valid := 0
	for i, op := range ops {
		if args[i], results[i].Err = g.opArgs(op); results[i].Err == nil {
			valid++
		}
	}
	if valid > 0 {
		if g.opts.BestEffort {
			g.setPipelinedBestEffort(ctx, ops, args, results)
		} else {
			g.setPipelinedScript(ctx, ops, args, results)
		}
	}
	for i := range results {
		if results[i].Err != nil {
			return results, results[i].Err
		}
	}
	return results, nil
}

func (g *Guard) setPipelinedScript(ctx context.Context, ops []SetOp, args [][]any, results []SetResult) {
	cmds := make([]*redis.Cmd, len(ops))
	idx := make([]int, 0, len(ops))
	for i := range ops {
		if args[i] != nil {
			idx = append(idx, i)
		}
	}
	g.pipeEval(ctx, ops, args, cmds, idx, true)

	if retry := noScript(cmds, idx); len(retry) > 0 {
		// The server lost the script: load it and resend only those ops
		// (they did not run, so resending cannot apply a write twice).
		if g.c.ScriptLoad(ctx, scriptSrc).Err() == nil {
			g.pipeEval(ctx, ops, args, cmds, retry, true)
			retry = noScript(cmds, retry)
		}
		if len(retry) > 0 { // flushed again meanwhile, or the load failed on a node
			g.pipeEval(ctx, ops, args, cmds, retry, false)
		}
	}
	for _, i := range idx {
		results[i].Result, results[i].Err = g.parseSet(ops[i].Key, cmds[i])
	}
}

// pipeEval sends EVALSHA (or EVAL) for ops[idx] in one pipeline and stores
// the commands in cmds.
func (g *Guard) pipeEval(ctx context.Context, ops []SetOp, args [][]any, cmds []*redis.Cmd, idx []int, sha bool) {
	pipe := g.c.Pipeline()
	for _, i := range idx {
		keys := []string{ops[i].Key}
		if sha {
			cmds[i] = pipe.EvalSha(ctx, g.sha, keys, args[i]...)
		} else {
			cmds[i] = pipe.Eval(ctx, scriptSrc, keys, args[i]...)
		}
	}
	_, _ = pipe.Exec(ctx) // errors are read per command
}

func noScript(cmds []*redis.Cmd, idx []int) []int {
	var out []int
	for _, i := range idx {
		if isNoScript(cmds[i].Err()) {
			out = append(out, i)
		}
	}
	return out
}
