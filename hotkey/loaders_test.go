package hotkey

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/keyguard/keyguard/internal/redistest"
)

func TestExecLoader(t *testing.T) {
	ctx := context.Background()
	v, err := ExecLoader(`printf 'v:%s:%s\n' "$1" "$KEYGUARD_KEY"`)(ctx, "config:global:a b")
	if err != nil || v != "v:config:global:a b:config:global:a b" {
		t.Fatalf("%q, %v", v, err)
	}
	if _, err := ExecLoader(`exit 3`)(ctx, "k"); !errors.Is(err, ErrNotFound) {
		t.Errorf("exit 3: %v", err)
	}
	_, err = ExecLoader(`echo starting >&2; echo "no such product" >&2; exit 1`)(ctx, "k")
	if err == nil || !strings.Contains(err.Error(), "no such product") || strings.Contains(err.Error(), "starting") {
		t.Errorf("exit 1: %v, want the last line of stderr", err)
	}
	_, err = execLoader(`yes`, 1<<16)(ctx, "k") // endless output: stopped at the cap
	if err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("huge output: %v", err)
	}
	cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := ExecLoader(`sleep 30`)(cctx, "k"); err == nil {
		t.Errorf("a command past the deadline succeeded")
	}
}

func TestRedisLoader(t *testing.T) {
	ctx := context.Background()
	src := redistest.Start(t).Client(t)
	reg := testRegistry(t)
	src.Set(ctx, "config:global:plain", "p", time.Hour)
	src.Set(ctx, ReplicaKey("cache:product:detail:P5", 2, 3), encodeLogical("from-copy", time.Now()), time.Hour)
	load := RedisLoader(src, reg)
	if v, err := load(ctx, "config:global:plain"); err != nil || v != "p" {
		t.Errorf("plain: %q, %v", v, err)
	}
	if v, err := load(ctx, "cache:product:detail:P5"); err != nil || v != "from-copy" {
		t.Errorf("copy: %q, %v", v, err)
	}
	if _, err := load(ctx, "config:global:none"); !errors.Is(err, ErrNotFound) {
		t.Errorf("absent: %v", err)
	}
}
