package fix

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"example.com/svc/keys"
)

const skuPrefix = "promo:sku:"

func a(ctx context.Context, rdb *redis.Client, uid int64, sku int, name string) {
	rdb.HGetAll(ctx, "user:1001:info")                           // want `raw-key: key "user:1001:info"`
	rdb.HGetAll(ctx, "user:"+strconv.FormatInt(uid, 10)+":info") // want `raw-key: key "user:\{uid:int\}:info"`
	rdb.HGetAll(ctx, skuPrefix+strconv.Itoa(sku))                // want `raw-key: key "promo:sku:\{sku:int\}"`
	rdb.LRange(ctx, fmt.Sprintf("{order:%d}:items", uid), 0, -1) // want `raw-key: key "\{\{order:\{uid:int\}\}\}:items"`
	rdb.HGetAll(ctx, "user:"+name+":info")                       // want `raw-key: key "user:\{name\}:info"`
	rdb.Get(ctx, keys.SeqOrderNo().String())
}
