package redi

import "github.com/gomodule/redigo/redis"

// queue keeps its keys' prefix in an unexported field, set where the
// queue is made (as gocraft/work's enqueuer): the field holds what every
// value the package gives it holds. An exported field may be set by
// anyone, a field given two shapes holds either: neither is followed.
type queue struct {
	prefix string
	Public string
	mixed  string
	pool   *redis.Pool
}

// ensureColon is the namespace with a colon at its end.
func ensureColon(ns string) string {
	if ns != "" && ns[len(ns)-1] != ':' {
		ns += ":"
	}
	return ns
}

func newQueue(ns string, pool *redis.Pool) *queue {
	q := &queue{prefix: ensureColon(ns) + "tmp:jobs:", Public: "tmp:public:", pool: pool}
	q.mixed = "tmp:a:"
	if ns == "" {
		q.mixed = "tmp:b:"
	}
	return q
}

func (q *queue) push(name string) {
	conn := q.pool.Get()
	defer conn.Close()
	_, _ = conn.Do("LPUSH", q.prefix+name, "x") // want `unregistered-code: key "\{ns\}tmp:jobs:\{name\}" matches no template`
	_, _ = conn.Do("LPUSH", q.Public+name, "x") // want `raw-key: key "\{Public\}\{name\}"`
	_, _ = conn.Do("LPUSH", q.mixed+name, "x")  // want `raw-key: key "\{mixed\}\{name\}"`
}
