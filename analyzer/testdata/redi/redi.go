// Package redi uses redigo: commands go as conn.Do("SET", key, v), the
// keys at the server's own key positions of the command.
package redi

import (
	"context"
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"

	"example.com/svc/keys"
)

type store struct{ pool *redis.Pool }

func commands(ctx context.Context, s *store, id int64, name string) error {
	conn := s.pool.Get()
	defer conn.Close()
	if _, err := conn.Do("SET", "tmp:redigo:"+name, "v", "EX", 60); err != nil { // want `unregistered-code: key "tmp:redigo:\{name\}" matches no template`
		return err
	}
	v, err := redis.String(conn.Do("GET", fmt.Sprintf("user:%d:info", id))) // want `raw-key: key "user:\{id:int\}:info" is built by hand`
	_ = conn.Send("HSET", keys.UserInfo(id).String(), "name", v)
	_ = conn.Send("RENAME", keys.UserInfo(id).String(), "tmp:redigo:new")                // want `unregistered-code: key "tmp:redigo:new" matches no template`
	_, _ = redis.DoContext(conn, ctx, "DEL", "tmp:redigo:a", keys.SeqOrderNo().String()) // want `unregistered-code: key "tmp:redigo:a" matches no template`
	_, _ = redis.DoWithTimeout(conn, time.Second, "incr", "seq:order:no")                // want `raw-key: key "seq:order:no" is built by hand`
	_, _ = conn.Do("PING")
	_, _ = conn.Do("PUBLISH", "tmp:channel", "hello")
	return err
}

// get hands its key to redigo whole: its callers are checked.
func get(conn redis.Conn, key string) (string, error) { // want get:"keyParams.1."
	return redis.String(conn.Do("GET", key))
}

func callers(ctx context.Context, s *store) {
	conn, _ := s.pool.GetContext(ctx)
	_, _ = get(conn, "tmp:redigo:helper") // want `unregistered-code: key "tmp:redigo:helper" matches no template.* \(via redi\.get\)`
}

var incrBy = redis.NewScript(1, "return redis.call('INCRBY', KEYS[1], ARGV[1])")

// Scripts: the first keyCount arguments are keys.
func scripts(ctx context.Context, conn redis.Conn, name string) {
	_, _ = incrBy.Do(conn, "tmp:redigo:script:"+name, 1)                                                                   // want `unregistered-code: key "tmp:redigo:script:\{name\}" matches no template`
	_, _ = redis.NewScript(2, "return 1").DoContext(ctx, conn, keys.SeqOrderNo().String(), "tmp:redigo:second", "tmp:arg") // want `unregistered-code: key "tmp:redigo:second" matches no template`
	_ = redis.NewScript(-1, "return 1").Send(conn, 1, "tmp:redigo:counted", "tmp:arg")                                     // want `unregistered-code: key "tmp:redigo:counted" matches no template`
}

type profile struct{ Name string }

// Argument lists built with redis.Args: the known elements are checked.
func argLists(conn redis.Conn, name string, p *profile) {
	_, _ = conn.Do("HMSET", redis.Args{}.Add("tmp:redigo:args:"+name).AddFlat(p)...)                           // want `unregistered-code: key "tmp:redigo:args:\{name\}" matches no template`
	_, _ = conn.Do("DEL", redis.Args{"tmp:redigo:lit"}.Add(keys.SeqOrderNo().String(), "tmp:redigo:added")...) // want `unregistered-code: key "tmp:redigo:lit" matches no template` `unregistered-code: key "tmp:redigo:added" matches no template`
	args := []interface{}{"tmp:redigo:slice", keys.SeqOrderNo().String()}                                      // want `unregistered-code: key "tmp:redigo:slice" matches no template`
	_, _ = conn.Do("MGET", args...)
	grown := []interface{}{keys.SeqOrderNo().String()}
	grown = append(grown, "tmp:redigo:grown") // want `unregistered-code: key "tmp:redigo:grown" matches no template`
	_, _ = conn.Do("DEL", grown...)
}
