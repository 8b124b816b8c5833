package migrate

import (
	"context"
	"crypto/sha1"
	_ "embed"
	"encoding/hex"
	"fmt"

	"github.com/redis/go-redis/v9"
)

var (
	//go:embed readfields.lua
	readFieldsSrc string
	//go:embed writefields.lua
	writeFieldsSrc string
	//go:embed unlink.lua
	unlinkSrc string
	//go:embed hdel.lua
	hdelSrc string
	//go:embed tomb.lua
	tombSrc string
	//go:embed tombfields.lua
	tombFieldsSrc string
	//go:embed restore.lua
	restoreSrc string
	//go:embed copy.lua
	copySrc string
)

// script is a Lua script run by EVALSHA.
type script struct{ src, sha string }

func newScript(src string) *script {
	sum := sha1.Sum([]byte(src))
	return &script{src: src, sha: hex.EncodeToString(sum[:])}
}

// The scripts, built per job (no package state).
type scripts struct {
	readFields, writeFields, unlink, hdel *script
	tomb, tombFields, restore, copy       *script
}

func newScripts() *scripts {
	return &scripts{
		readFields: newScript(readFieldsSrc), writeFields: newScript(writeFieldsSrc),
		unlink: newScript(unlinkSrc), hdel: newScript(hdelSrc),
		tomb: newScript(tombSrc), tombFields: newScript(tombFieldsSrc), restore: newScript(restoreSrc),
		copy: newScript(copySrc),
	}
}

func (s *scripts) all() []*script {
	return []*script{s.readFields, s.writeFields, s.unlink, s.hdel, s.tomb, s.tombFields, s.restore, s.copy}
}

// call is one command of a pipeline: a script with its keys and
// arguments, or (s nil) a plain command in args.
type call struct {
	s    *script
	keys []string
	args []any
}

// exec sends calls in one pipeline (one round trip per master on a
// Cluster) and returns their replies in order. A server that lost its
// scripts (restart, SCRIPT FLUSH) answers NOSCRIPT: the scripts are loaded
// and those calls sent again. A reply that is an error stays in its Cmd;
// a failed connection is the error.
func exec(ctx context.Context, rdb redis.UniversalClient, sc *scripts, calls []call) ([]*redis.Cmd, error) {
	cmds := make([]*redis.Cmd, len(calls))
	todo := make([]int, len(calls))
	for i := range todo {
		todo[i] = i
	}
	for attempt := 0; ; attempt++ {
		pipe := rdb.Pipeline()
		for _, i := range todo {
			c := &calls[i]
			if c.s == nil {
				cmds[i] = pipe.Do(ctx, c.args...)
			} else {
				cmds[i] = pipe.EvalSha(ctx, c.s.sha, c.keys, c.args...)
			}
		}
		_, err := pipe.Exec(ctx)
		if err != nil && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var again []int
		for _, i := range todo {
			err := cmds[i].Err()
			switch {
			case err == nil || err == redis.Nil:
			case redis.HasErrorPrefix(err, "NOSCRIPT"):
				again = append(again, i)
			case !isReply(err):
				return nil, err
			}
		}
		if len(again) == 0 {
			return cmds, nil
		}
		if attempt > 0 {
			return nil, fmt.Errorf("the server keeps losing keyguard's scripts (NOSCRIPT after SCRIPT LOAD)")
		}
		for _, s := range sc.all() {
			if err := rdb.ScriptLoad(ctx, s.src).Err(); err != nil {
				return nil, fmt.Errorf("SCRIPT LOAD: %w\n\tTry: migrate needs EVAL and SCRIPT LOAD (Lua); allow them for this user", err)
			}
		}
		todo = again
	}
}

// replyErr is a failed reply of a call, with the command's name.
func replyErr(c *call, err error) error {
	name := "script"
	if c.s == nil && len(c.args) > 0 {
		name = fmt.Sprint(c.args[0])
	}
	return fmt.Errorf("%s: %w", name, err)
}
