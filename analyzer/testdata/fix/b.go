package fix

import (
	"context"

	"github.com/redis/go-redis/v9"
)

func b(ctx context.Context, rdb *redis.Client) {
	rdb.Incr(ctx, "seq:order:no") // want `raw-key: key "seq:order:no"`
}
