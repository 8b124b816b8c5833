package hotkey

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/registry"
)

// Loaders for preheating from outside a service: a command, or another
// Redis.

// ExecNotFound is the exit status by which an ExecLoader command says
// the key has no data (ErrNotFound).
const ExecNotFound = 3

// MaxExecValue bounds the value an ExecLoader command may print.
const MaxExecValue = 64 << 20

// ExecLoader returns a Loader that runs command with /bin/sh -c, the key
// as $1 and in KEYGUARD_KEY, and takes its standard output as the value
// (one trailing newline removed). Exit status ExecNotFound means the key
// has no data; any other failure is an error carrying the end of the
// command's standard error.
func ExecLoader(command string) Loader { return execLoader(command, MaxExecValue) }

func execLoader(command string, maxValue int) Loader {
	return func(ctx context.Context, key string) (string, error) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		cmd := exec.CommandContext(ctx, "/bin/sh", "-c", command, "keyguard-preheat", key)
		cmd.Env = append(os.Environ(), "KEYGUARD_KEY="+key)
		// A killed shell's children may hold its output open: do not wait
		// for them longer than this.
		cmd.WaitDelay = time.Second
		out := limitedBuffer{max: maxValue, stop: cancel}
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &stderr
		err := cmd.Run()
		if out.over {
			return "", fmt.Errorf("the loader command printed more than %d bytes for one key", maxValue)
		}
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee) && ee.ExitCode() == ExecNotFound:
			return "", ErrNotFound
		case err != nil:
			msg := strings.TrimSpace(stderr.String())
			if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
				msg = msg[i+1:]
			}
			if msg != "" {
				return "", fmt.Errorf("loader command: %w: %s", err, clip(msg))
			}
			return "", fmt.Errorf("loader command: %w", err)
		}
		return strings.TrimSuffix(out.buf.String(), "\n"), nil
	}
}

// limitedBuffer keeps at most max bytes; past them it notes the
// overflow, stops the command and discards the rest. (It must not embed
// bytes.Buffer: io.Copy would use the buffer's ReadFrom, unbounded.)
type limitedBuffer struct {
	buf  bytes.Buffer
	max  int
	over bool
	stop func()
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if b.over || b.buf.Len()+len(p) > b.max {
		if !b.over {
			b.over = true
			b.buf = bytes.Buffer{}
			b.stop()
		}
		return len(p), nil
	}
	return b.buf.Write(p)
}

// RedisLoader returns a Loader that copies string values from src, a
// Redis holding the same keys (a warm replica, another region's
// Cluster): the key itself, else any of its copies when its template is
// replicated. A logical-expiry envelope is removed (the preheat writes a
// fresh one). A key absent from src is ErrNotFound.
func RedisLoader(src redis.UniversalClient, reg *registry.Registry) Loader {
	return func(ctx context.Context, key string) (string, error) {
		names := []string{key}
		if e := reg.Lookup(key); e != nil && e.Hot != nil && e.Hot.Replicas > 1 {
			names = append(names, ReplicaKeys(key, e.Hot.Replicas)...)
		}
		for _, n := range names {
			v, err := src.Get(ctx, n).Result()
			if errors.Is(err, redis.Nil) {
				continue
			}
			if err != nil {
				return "", fmt.Errorf("source get %q: %w", clip(n), err)
			}
			v, _, _ = decodeLogical(v)
			return v, nil
		}
		return "", ErrNotFound
	}
}
