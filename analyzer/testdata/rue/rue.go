// Package rue uses rueidis: keys go into its command builders
// (client.B().Get().Key(k).Build()) or its go-redis-like adapter.
package rue

import (
	"context"
	"fmt"

	"github.com/redis/rueidis"
	"github.com/redis/rueidis/rueidiscompat"

	"example.com/svc/keys"
)

// The builders' key arguments (Key, Newkey) are keys, whatever sends the
// command afterwards (Do, DoMulti).
func builders(ctx context.Context, client rueidis.Client, id int64, name string) {
	client.Do(ctx, client.B().Get().Key("tmp:rue:get").Build())                                       // want `unregistered-code: key "tmp:rue:get" matches no template`
	client.Do(ctx, client.B().Hset().Key(fmt.Sprintf("user:%d:info", id)).FieldValue().Build())       // want `raw-key: key "user:\{id:int\}:info" is built by hand`
	set := client.B().Set().Key("tmp:rue:" + name).Value("v").ExSeconds(10).Build()                   // want `unregistered-code: key "tmp:rue:\{name\}" matches no template`
	client.DoMulti(ctx, set, client.B().Del().Key("tmp:rue:a", keys.SeqOrderNo().String()).Build())   // want `unregistered-code: key "tmp:rue:a" matches no template`
	client.Do(ctx, client.B().Rename().Key(keys.UserInfo(id).String()).Newkey("tmp:rue:new").Build()) // want `unregistered-code: key "tmp:rue:new" matches no template`
	client.Do(ctx, client.B().Get().Key(keys.UserInfo(id).String()).Build())
	b := client.B()
	client.Do(ctx, b.Get().Key("seq:order:no").Build()) // want `raw-key: key "seq:order:no" is built by hand`
	client.Do(ctx, client.B().Hset().Key(keys.UserInfo(id).String()).FieldValue().FieldValue("tmp:field", name).Build())
	client.Do(ctx, client.B().ObjectEncoding().Key("tmp:rue:object").Build()) // want `unregistered-code: key "tmp:rue:object" matches no template`
}

// get hands its key to a builder whole: its callers are checked.
func get(ctx context.Context, client rueidis.Client, key string) (string, error) { // want get:"keyParams.2."
	return client.Do(ctx, client.B().Get().Key(key).Build()).ToString()
}

func callers(ctx context.Context, client rueidis.Client) {
	_, _ = get(ctx, client, "tmp:rue:helper") // want `unregistered-code: key "tmp:rue:helper" matches no template.* \(via rue\.get\)`
}

// rueidiscompat mirrors go-redis's methods and parameters.
func compat(ctx context.Context, client rueidis.Client, uid int64) {
	rdb := rueidiscompat.NewAdapter(client)
	rdb.HGetAll(ctx, "user:"+fmt.Sprint(uid)+":info")              // want `raw-key: key "user:\{uid:int\}:info" is built by hand`
	rdb.Del(ctx, "tmp:compat:a", keys.SeqOrderNo().String())       // want `unregistered-code: key "tmp:compat:a" matches no template`
	rdb.Rename(ctx, keys.UserInfo(uid).String(), "tmp:compat:new") // want `unregistered-code: key "tmp:compat:new" matches no template`
	rdb.Get(ctx, keys.UserInfo(uid).String())
}
