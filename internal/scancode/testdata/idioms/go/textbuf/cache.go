// Package textbuf builds keys in a strings.Builder or bytes.Buffer,
// statement by statement.
package textbuf

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Sessions keeps sessions under a namespace the caller chooses.
type Sessions struct {
	Namespace string
	rdb       *redis.Client
}

// sessionKey writes the key piece by piece: a helper of one shape.
func (s *Sessions) sessionKey(id string) string {
	b := strings.Builder{}
	b.WriteString(s.Namespace)
	b.WriteByte(':')
	b.WriteString("sess:")
	b.WriteString(id)
	return b.String()
}

// run hands its keys to a script whole: its callers' keys are checked.
func (s *Sessions) run(ctx context.Context, keys []string, args ...any) *redis.Cmd {
	return s.rdb.EvalSha(ctx, "sha", keys, args...)
}

func (s *Sessions) Touch(ctx context.Context, id string) {
	s.run(ctx, []string{s.sessionKey(id)}, 1) // want unregistered-code {Namespace}:sess:{id} via Sessions.run
	s.rdb.Del(ctx, s.sessionKey(id))          // want unregistered-code {Namespace}:sess:{id}
}

func (s *Sessions) Order(ctx context.Context, orderID int64) {
	buf := bytes.NewBufferString("order:")
	fmt.Fprintf(buf, "order:%d", orderID)
	_, _ = buf.WriteString(":base")
	s.rdb.HGetAll(ctx, buf.String()) // want raw-key order:order:{orderID:int}:base
}

func (s *Sessions) User(ctx context.Context, uid int) {
	var b bytes.Buffer
	b.Grow(32)
	b.Write([]byte("user:"))
	fmt.Fprint(&b, uid)
	b.WriteRune(':')
	b.WriteString("info")
	key := b.String()
	s.rdb.HGetAll(ctx, key) // want raw-key user:{uid:int}:info
}

// A write in a loop or a branch is not followed: the key is unknown.
func (s *Sessions) Tags(ctx context.Context, tags []string, admin bool) {
	var b strings.Builder
	b.WriteString("tags:")
	for _, t := range tags {
		b.WriteString(t)
	}
	s.rdb.Get(ctx, b.String()) // want raw-key {b}

	var c strings.Builder
	c.WriteString("role:")
	if admin {
		c.WriteString("admin")
	}
	s.rdb.Get(ctx, c.String()) // want raw-key {c}

	var d strings.Builder
	d.WriteString("flag:")
	d.Reset()
	d.WriteString("x")
	s.rdb.Get(ctx, d.String()) // want raw-key {d}
}
