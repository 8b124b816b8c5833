package svc

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/keyguard/keyguard/guard"
	"github.com/keyguard/keyguard/keybuild"
	"github.com/redis/go-redis/v9"

	"example.com/svc/keys"
	"example.com/svc/store"
)

const skuPrefix = "promo:sku:"

const script = "return redis.call('GET', KEYS[1])"

type cache struct {
	rdb redis.UniversalClient
	key string
}

// Literal keys, concatenation, Sprintf, Join, constants.
func literals(ctx context.Context, rdb *redis.Client, uid int64, sku int, oid string) {
	rdb.HGetAll(ctx, "user:1001:info")                                           // want `raw-key: key "user:1001:info" is built by hand; it is a key of "user:\{userId:int\}:info" \(owner user-team\); build it with the generated builder: keys.UserInfo\(1001\).String\(\)`
	rdb.Get(ctx, "tmp:report")                                                   // want `unregistered-code: key "tmp:report" matches no template of the registry`
	rdb.HGetAll(ctx, "user:"+strconv.FormatInt(uid, 10)+":info")                 // want `raw-key: key "user:\{uid:int\}:info" is built by hand`
	rdb.HSet(ctx, fmt.Sprintf("user:%d:info", uid), "name", "ann")               // want `raw-key: key "user:\{uid:int\}:info"`
	rdb.HGetAll(ctx, strings.Join([]string{"order", "order", oid, "base"}, ":")) // want `raw-key: key "order:order:\{oid\}:base" is built by hand; it is a key of "order:order:\{orderId:int\}:base"`
	rdb.HGetAll(ctx, skuPrefix+strconv.Itoa(sku))                                // want `raw-key: key "promo:sku:\{sku:int\}"`
	rdb.Get(ctx, fmt.Sprintf("{order:%d}:items", uid))                           // want `raw-key: key "\{\{order:\{uid:int\}\}\}:items" is built by hand; it is a key of "\{\{order:\{orderId:int\}\}\}:items"`
	rdb.Get(ctx, "user:"+oid+":avatar")                                          // want `unregistered-code: key "user:\{oid\}:avatar" matches no template`
	rdb.Get(ctx, "auth:session:"+oid)                                            // want `raw-key: key "auth:session:\{oid\}" is built by hand and its end is not visible here; it may be a key of "auth:session:u\{userId:int\}"`
}

// Simple local data flow: a variable assigned once, across lines.
func flow(ctx context.Context, rdb *redis.Client, id int64, name string) {
	k := "user:" +
		fmt.Sprint(id) +
		":info"
	rdb.HGetAll(ctx, k) // want `raw-key: key "user:\{id:int\}:info"`
	var tmp string
	tmp = "tmp:" + name
	rdb.Del(ctx, tmp) // want `unregistered-code: key "tmp:\{name\}"`
	rest := name
	rdb.Get(ctx, "user:"+rest) // want `raw-key: key "user:\{name\}" is built by hand and its end is not visible here; it may be a key of "user:\{userId:int\}:info", "user:admin:settings"`
	changing := "user:admin:settings"
	changing = changing + name
	rdb.Get(ctx, changing) // want `raw-key: key is not built by the generated builder: "changing" comes from where the scan cannot follow it`
}

// Pipelines, transactions, scripts, Watch, Do and multi-key commands.
func commands(ctx context.Context, rdb *redis.Client, id int64) {
	pipe := rdb.Pipeline()
	pipe.Set(ctx, "seq:order:no", 1, 0) // want `raw-key: key "seq:order:no" is built by hand; it is a key of "seq:order:no" \(owner order-team\); build it with the generated builder: keys.SeqOrderNo\(\).String\(\)`
	_, _ = rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Incr(ctx, "tmp:counter") // want `unregistered-code: key "tmp:counter"`
		return nil
	})
	rdb.Eval(ctx, script, []string{"user:7:info", keys.UserInfo(8).String()}) // want `raw-key: key "user:7:info"`
	rdb.FCall(ctx, "fn", []string{"tmp:fcall"})                               // want `unregistered-code: key "tmp:fcall"`
	ks := []string{"tmp:a", keys.SeqOrderNo().String()}                       // want `unregistered-code: key "tmp:a"`
	rdb.Del(ctx, ks...)
	rdb.Del(ctx, "tmp:b", keys.SeqOrderNo().String())                                           // want `unregistered-code: key "tmp:b"`
	_ = rdb.Watch(ctx, func(tx *redis.Tx) error { return nil }, "user:"+fmt.Sprint(id)+":info") // want `raw-key: key "user:\{id:int\}:info"`
	rdb.Do(ctx, "set", "tmp:do", "v")                                                           // want `unregistered-code: key "tmp:do"`
	rdb.Do(ctx, "ping")
	rdb.Rename(ctx, keys.UserInfo(id).String(), "tmp:renamed")                                 // want `unregistered-code: key "tmp:renamed"`
	rdb.ZUnionStore(ctx, keys.OrderItems(id).String(), &redis.ZStore{Keys: []string{"tmp:z"}}) // want `unregistered-code: key "tmp:z"`
	rdb.XAdd(ctx, &redis.XAddArgs{Stream: "tmp:stream", Values: []string{"a", "b"}})           // want `unregistered-code: key "tmp:stream"`
}

// The SDK's own calls.
func sdk(ctx context.Context, g *guard.Guard, id int64) {
	_, _ = g.Set(ctx, skuPrefix+fmt.Sprint(id), "price", 1)                               // want `raw-key: key "promo:sku:\{id:int\}"`
	_, _ = g.SetPipelined(ctx, []guard.SetOp{{Key: "tmp:guarded", Field: "f", Value: 1}}) // want `unregistered-code: key "tmp:guarded"`
	_, _ = g.Set(ctx, keys.PromoSku(id).String(), "price", 1)
}

// Keys from the generated builder: no finding.
func builders(ctx context.Context, rdb *redis.Client, c *cache, id int64, phone string) error {
	rdb.HGetAll(ctx, keys.OrderOrderBase(id).String())
	k := keys.UserInfo(id)
	rdb.HGetAll(ctx, k.String())
	s := k.String()
	rdb.Expire(ctx, s, 0)
	v, err := keys.VerifySms(phone, keys.VerifySmsSceneLogin)
	if err != nil {
		return err
	}
	rdb.Get(ctx, v.String())
	viaKey(ctx, rdb, k)
	store.Get(ctx, rdb, keys.SeqOrderNo().String())
	helper(ctx, rdb, keys.UserAdminSettings().String())
	c.rdb.Get(ctx, c.key) // want `raw-key: key is not built by the generated builder: "c.key" comes from where the scan cannot follow it`
	return nil
}

func viaKey(ctx context.Context, rdb *redis.Client, k keybuild.Key) {
	rdb.HGetAll(ctx, k.String())
}

// helper passes its parameter whole: its callers are checked.
func helper(ctx context.Context, rdb *redis.Client, key string) { // want helper:"keyParams.2."
	kk := key
	rdb.Get(ctx, kk)
	store.Get(ctx, rdb, key)
}

// Keys passed to helpers are checked at the call.
func callers(ctx context.Context, rdb *redis.Client) {
	helper(ctx, rdb, "tmp:helper")             // want `unregistered-code: key "tmp:helper".* \(via svc\.helper\)`
	store.Get(ctx, rdb, "user:admin:settings") // want `raw-key: key "user:admin:settings" is built by hand`
}

// Not Redis keys: no finding.
func notKeys(ctx context.Context, rdb *redis.Client) {
	rdb.HGet(ctx, keys.UserInfo(1).String(), "field:"+"x")
	m := map[string]string{}
	_ = m["tmp:x"]
	rdb.Publish(ctx, "tmp:channel", "hello")
}

// A helper of another package returns the key; keys go to a script
// wrapper as a []string grown with append.
func helperShapes(ctx context.Context, rdb *redis.Client, q string) {
	rdb.LLen(ctx, store.PendingKey(q)) // want `unregistered-code: key "tmp:pending:\{q\}" matches no template`
	keys := []string{
		store.PendingKey(q), // want `unregistered-code: key "tmp:pending:\{q\}" matches no template.* \(via store\.RunScript\)`
	}
	keys = append(keys, "tmp:extra:"+q) // want `unregistered-code: key "tmp:extra:\{q\}" matches no template.* \(via store\.RunScript\)`
	store.RunScript(ctx, rdb, keys)
}

// rediser is the service's own interface over the client: its methods
// return go-redis commands, so their key parameters are keys.
type rediser interface {
	Del(ctx context.Context, keys ...string) *redis.IntCmd
}

func reset(ctx context.Context, r rediser, id string) {
	r.Del(ctx, "tmp:rate:"+id) // want `unregistered-code: key "tmp:rate:\{id\}" matches no template`
}
