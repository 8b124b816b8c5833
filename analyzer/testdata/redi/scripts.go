package redi

import "github.com/gomodule/redigo/redis"

// Argument lists made with make and grown with append, and scripts whose
// number of keys the code computes, kept in variables and fields (as
// gocraft/work's): the keys are the list's first elements, counted as
// they are appended.
type reaper struct {
	pool     *redis.Pool
	unique   *redis.Script
	uniqueIn *redis.Script
}

func newReaper(pool *redis.Pool) *reaper {
	return &reaper{pool: pool, unique: redis.NewScript(2, "return 1"), uniqueIn: redis.NewScript(2, "return 2")}
}

func (r *reaper) observe(id string) {
	conn := r.pool.Get()
	defer conn.Close()
	args := make([]interface{}, 0, 5)
	args = append(args, "tmp:redigo:worker:"+id, "job", id) // want `unregistered-code: key "tmp:redigo:worker:\{id\}" matches no template`
	_, _ = conn.Do("HMSET", args...)
}

func (r *reaper) requeueAll(jobs []string) {
	conn := r.pool.Get()
	defer conn.Close()
	script := redis.NewScript(len(jobs)+1, "return 1")
	args := make([]interface{}, 0, len(jobs)+2)
	args = append(args, "tmp:redigo:dead") // want `unregistered-code: key "tmp:redigo:dead" matches no template`
	for _, j := range jobs {
		args = append(args, "tmp:redigo:jobs:"+j) // want `unregistered-code: key "tmp:redigo:jobs:\{j\}" matches no template`
	}
	args = append(args, "tmp:redigo:prefix:") // ARGV[1]: not a key
	_, _ = script.Do(conn, args...)
}

func (r *reaper) locks(jobs []string) {
	conn := r.pool.Get()
	defer conn.Close()
	n := len(jobs) * 2
	script := redis.NewScript(n, "return 1")
	var args = make([]interface{}, 0, n+1)
	for _, j := range jobs {
		args = append(args, "tmp:redigo:lock:"+j, "tmp:redigo:info:"+j) // want `unregistered-code: key "tmp:redigo:lock:\{j\}" matches no template` `unregistered-code: key "tmp:redigo:info:\{j\}" matches no template`
	}
	args = append(args, "tmp:arg")
	_, _ = script.Do(conn, args...)
}

// A count of another form than the list's appends give (one more than a
// length, the list one for each job): no element is taken for a key.
func (r *reaper) mismatch(jobs, others []string) {
	conn := r.pool.Get()
	defer conn.Close()
	script := redis.NewScript(len(others)+1, "return 1")
	args := make([]interface{}, 0)
	for _, j := range jobs {
		args = append(args, "tmp:redigo:unsure:"+j)
	}
	_, _ = script.Do(conn, args...)
}

// A script of two keys, one of two scripts kept in fields: the first two
// elements, appended before the branch.
func (r *reaper) enqueue(name string, at bool) {
	conn := r.pool.Get()
	defer conn.Close()
	args := []interface{}{}
	script := r.unique
	args = append(args, "tmp:redigo:q:"+name) // want `unregistered-code: key "tmp:redigo:q:\{name\}" matches no template`
	args = append(args, "tmp:redigo:u:"+name) // want `unregistered-code: key "tmp:redigo:u:\{name\}" matches no template`
	if at {
		args = append(args, "tmp:arg")
		args[0] = "tmp:redigo:scheduled" // want `unregistered-code: key "tmp:redigo:scheduled" matches no template`
		args[2] = "tmp:arg:other"
		script = r.uniqueIn
	}
	_, _ = script.Do(conn, args...)
}

// deleteFrom hands its key to a script of one key: its callers are
// checked.
func (r *reaper) deleteFrom(zset, id string) { // want deleteFrom:"keyParams.0."
	conn := r.pool.Get()
	defer conn.Close()
	script := redis.NewScript(1, "return 1")
	args := make([]interface{}, 0, 2)
	args = append(args, zset)
	args = append(args, id)
	_, _ = script.Do(conn, args...)
}

func (r *reaper) deletes() {
	r.deleteFrom("tmp:redigo:zset", "1") // want `unregistered-code: key "tmp:redigo:zset" matches no template`
}

// requeuer builds its script and its list where it is made, and runs
// them from its fields.
type requeuer struct {
	pool   *redis.Pool
	script *redis.Script
	args   []interface{}
}

func newRequeuer(pool *redis.Pool, jobs []string) *requeuer {
	args := make([]interface{}, 0, len(jobs)+2)
	args = append(args, "tmp:redigo:retry") // want `unregistered-code: key "tmp:redigo:retry" matches no template`
	for _, j := range jobs {
		args = append(args, "tmp:redigo:rq:"+j) // want `unregistered-code: key "tmp:redigo:rq:\{j\}" matches no template`
	}
	args = append(args, "tmp:arg")
	return &requeuer{pool: pool, script: redis.NewScript(len(jobs)+1, "return 1"), args: args}
}

func (r *requeuer) run() {
	conn := r.pool.Get()
	defer conn.Close()
	_, _ = r.script.Do(conn, r.args...)
}

// fetcher makes its script where its job types are set, and builds its
// list from its samples, one for each job type: the count is computed
// from another slice than the list, of the same form (two for each).
type fetcher struct {
	pool    *redis.Pool
	script  *redis.Script
	samples []sample
}

type sample struct{ queue, lock string }

func (w *fetcher) setTypes(types []string) {
	w.samples = nil
	for _, t := range types {
		w.samples = append(w.samples, sample{queue: "tmp:redigo:fq:" + t, lock: "tmp:redigo:fl:" + t})
	}
	w.script = redis.NewScript(len(types)*2, "return 1")
}

func (w *fetcher) fetch() {
	conn := w.pool.Get()
	defer conn.Close()
	args := make([]interface{}, 0, len(w.samples)*2+1)
	for _, s := range w.samples {
		args = append(args, s.queue, s.lock) // want `unregistered-code: key "tmp:redigo:fq:\{t\}" matches no template` `unregistered-code: key "tmp:redigo:fl:\{t\}" matches no template`
	}
	args = append(args, "tmp:arg")
	_, _ = w.script.Do(conn, args...)
}
