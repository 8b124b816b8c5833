// Package store is a helper package: its Get hands its key parameter to
// Redis whole, so its callers' keys are checked where they are built.
package store

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// Get reads a key.
func Get(ctx context.Context, rdb redis.Cmdable, key string) string { // want Get:"keyParams.2."
	return rdb.Get(ctx, key).Val()
}

// Touch builds its key from a parameter: the key is built here.
func Touch(ctx context.Context, rdb redis.Cmdable, id string) {
	rdb.Expire(ctx, "tmp:touch:"+id, 0) // want `unregistered-code: key "tmp:touch:\{id\}" matches no template`
}

// PendingKey is a helper that returns a key: a call of it is a key of its
// shape, with the caller's argument in place of q.
func PendingKey(q string) string { // want PendingKey:`keyShape\(tmp:pending:\{q\}\)`
	return "tmp:pending:" + q
}

// RunScript hands a []string of keys to a script whole: its callers'
// slices are checked element by element.
func RunScript(ctx context.Context, rdb redis.Scripter, keys []string) { // want RunScript:"keyParams.2."
	redis.NewScript("return 1").Run(ctx, rdb, keys)
}
