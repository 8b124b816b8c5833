// Package rueidiscompat has the shapes of rueidis's go-redis-like adapter.
package rueidiscompat

import (
	"context"
	"time"

	"github.com/redis/rueidis"
)

type (
	StringCmd          struct{}
	StatusCmd          struct{}
	IntCmd             struct{}
	BoolCmd            struct{}
	MapStringStringCmd struct{}
	Cmd                struct{}
)

// Cmdable mirrors go-redis's methods.
type Cmdable interface {
	Get(ctx context.Context, key string) *StringCmd
	Set(ctx context.Context, key string, value any, expiration time.Duration) *StatusCmd
	Del(ctx context.Context, keys ...string) *IntCmd
	HGetAll(ctx context.Context, key string) *MapStringStringCmd
	Rename(ctx context.Context, key, newkey string) *StatusCmd
	Expire(ctx context.Context, key string, expiration time.Duration) *BoolCmd
}

// NewAdapter wraps a rueidis client.
func NewAdapter(client rueidis.Client) Cmdable { return nil }
