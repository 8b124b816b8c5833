package clients

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/guard"
	"github.com/keyguard/keyguard/internal/codegen"
	"github.com/keyguard/keyguard/internal/redistest"
)

// A runtime runs guard operations in one language: the Go guard in
// process, or a driver process (python/interop/driver.py,
// typescript/interop/driver.js, java InteropDriver) speaking one JSON
// request and one JSON reply per line.
type runtime interface {
	Name() string
	Do(t testing.TB, req req) reply
}

type req map[string]any

type reply struct {
	OK  json.RawMessage `json:"ok"`
	Err *opErr          `json:"err"`
}

type opErr struct {
	Kind      string `json:"kind"` // conflict, wrongtype, reserved, policy, other
	Key       string `json:"key"`
	Owner     string `json:"owner"`
	Caller    string `json:"caller"`
	FoundType string `json:"found_type"`
	Reason    string `json:"reason"`
	// Undeclared: the fields a write named that its template does not
	// declare (reason schema).
	Undeclared []string `json:"undeclared"`
	Message    string   `json:"message"`
}

type setResult struct {
	Added   int  `json:"added"`
	Updated int  `json:"updated"`
	Claimed bool `json:"claimed"`
	Adopted bool `json:"adopted"`
	TTLSet  bool `json:"ttl_set"`
}

// must decodes a successful reply into v.
func (r reply) must(t testing.TB, what string, v any) {
	t.Helper()
	if r.Err != nil {
		t.Fatalf("%s: %s error: %s", what, r.Err.Kind, r.Err.Message)
	}
	if v != nil {
		if err := json.Unmarshal(r.OK, v); err != nil {
			t.Fatalf("%s: reply %s: %v", what, r.OK, err)
		}
	}
}

// target is a Redis under test: a server or a Cluster.
type target struct {
	name    string
	addrs   []string
	cluster bool
	rdb     redis.UniversalClient
}

func serverTarget(t testing.TB) *target {
	s := redistest.Start(t)
	return &target{name: "server", addrs: []string{s.Addr}, rdb: s.Client(t)}
}

func clusterTarget(t testing.TB) *target {
	c := redistest.StartCluster(t, 3)
	return &target{name: "cluster", addrs: c.Addrs, cluster: true, rdb: c.Client(t)}
}

// flushScripts empties the script cache of every master.
func (tg *target) flushScripts(ctx context.Context) error {
	if cc, ok := tg.rdb.(*redis.ClusterClient); ok {
		return cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error { return c.ScriptFlush(ctx).Err() })
	}
	return tg.rdb.ScriptFlush(ctx).Err()
}

// The runtimes of the interop checks. python-async is the Python package on
// redis.asyncio (AsyncGuard, AsyncRecorder); ts-* are the one TypeScript
// package over its two clients.
var runtimeNames = []string{"go", "python", "python-async", "ts-ioredis", "ts-node-redis", "java"}

func startRuntime(t testing.TB, name string, tg *target) runtime {
	t.Helper()
	addrs := strings.Join(tg.addrs, ",")
	var argv, env []string
	switch name {
	case "go":
		return &goRuntime{rdb: tg.rdb, guards: map[string]*guard.Guard{}}
	case "python", "python-async":
		py := python(t)
		keys := genKeys(t, codegen.Python)
		pkg, _ := filepath.Abs("python")
		argv = []string{py, filepath.Join("python", "interop", "driver.py"), "--addrs", addrs, "--keys", keys}
		env = []string{"PYTHONPATH=" + pkg}
		if name == "python-async" {
			argv = append(argv, "--async")
		}
	case "ts-ioredis", "ts-node-redis":
		dist := typescript(t)
		keys := genKeys(t, codegen.TypeScript)
		argv = []string{"node", filepath.Join("typescript", "interop", "driver.js"), "--addrs", addrs,
			"--client", strings.TrimPrefix(name, "ts-"), "--keys", keys}
		env = []string{"KEYGUARD_TS_DIST=" + dist}
	case "java":
		argv = []string{"java", "-cp", javaClasses(t), "io.keyguard.runtime.InteropDriver", "--addrs", addrs}
	default:
		t.Fatalf("unknown runtime %q", name)
	}
	if tg.cluster {
		argv = append(argv, "--cluster")
	}
	return startProc(t, name, argv, env)
}

type proc struct {
	name   string
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr *lockedBuffer
	mu     sync.Mutex
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func startProc(t testing.TB, name string, argv, env []string) *proc {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	p := &proc{name: name, cmd: cmd, stderr: &lockedBuffer{}}
	cmd.Stderr = p.stderr
	var err error
	if p.in, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.out = bufio.NewReaderSize(out, 1<<20)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s driver: %v", name, err)
	}
	t.Cleanup(func() {
		p.in.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil && !t.Failed() {
				t.Errorf("%s driver exited: %v\n%s", name, err, p.stderr.String())
			}
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
			t.Errorf("%s driver did not exit at end of input; killed", name)
		}
	})
	return p
}

func (p *proc) Name() string { return p.name }

func (p *proc) Do(t testing.TB, r req) reply {
	t.Helper()
	line, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	// Errorf, not Fatalf: Do runs on the goroutines of concurrent tests too.
	broken := func(err error) reply {
		t.Errorf("%s driver: %v\n%s", p.name, err, p.stderr.String())
		return reply{Err: &opErr{Kind: "driver", Message: err.Error()}}
	}
	if _, err := p.in.Write(append(line, '\n')); err != nil {
		return broken(err)
	}
	got, err := p.out.ReadBytes('\n')
	if err != nil {
		return broken(err)
	}
	var rep reply
	if err := json.Unmarshal(got, &rep); err != nil {
		return broken(fmt.Errorf("reply %q: %v", got, err))
	}
	return rep
}

// goRuntime runs the requests with package guard, in process.
type goRuntime struct {
	rdb    redis.UniversalClient
	mu     sync.Mutex
	guards map[string]*guard.Guard
}

func (g *goRuntime) Name() string { return "go" }

func (g *goRuntime) guard(owner string, ttl time.Duration) *guard.Guard {
	g.mu.Lock()
	defer g.mu.Unlock()
	k := fmt.Sprint(owner, ttl)
	if g.guards[k] == nil {
		g.guards[k] = guard.New(g.rdb, owner, guard.Options{TTL: ttl})
	}
	return g.guards[k]
}

func goErr(err error) *opErr {
	var ce *guard.ConflictError
	switch {
	case errors.As(err, &ce) && ce.FoundType != "":
		return &opErr{Kind: "wrongtype", Key: ce.Key, FoundType: ce.FoundType, Caller: ce.Namespace, Message: err.Error()}
	case errors.As(err, &ce):
		return &opErr{Kind: "conflict", Key: ce.Key, Owner: ce.Owner, Caller: ce.Namespace, Message: err.Error()}
	case errors.Is(err, guard.ErrReservedField):
		return &opErr{Kind: "reserved", Message: err.Error()}
	}
	return &opErr{Kind: "other", Message: err.Error()}
}

func goResult(r guard.Result) setResult {
	return setResult{Added: r.Added, Updated: r.Updated, Claimed: r.Claimed, Adopted: r.Adopted, TTLSet: r.TTLSet}
}

func fieldsOf(v any) map[string]any {
	m, _ := v.(map[string]any)
	out := make(map[string]any, len(m))
	for k, x := range m {
		out[k] = fmt.Sprint(x)
	}
	return out
}

func (g *goRuntime) Do(t testing.TB, r req) reply {
	ctx := context.Background()
	ttl := time.Hour
	if ms, ok := r["ttl_ms"].(int); ok {
		ttl = time.Duration(ms) * time.Millisecond
	}
	owner, _ := r["owner"].(string)
	key, _ := r["key"].(string)
	gd := g.guard(owner, ttl)
	var out any
	var err error
	switch r["op"] {
	case "hset":
		var res guard.Result
		res, err = gd.SetMany(ctx, key, fieldsOf(r["fields"]))
		out = goResult(res)
	case "get":
		v, found, e := gd.Get(ctx, key, r["field"].(string))
		m := map[string]any{"value": nil}
		if found {
			m["value"] = v
		}
		out, err = m, e
	case "getall":
		m, e := gd.GetAll(ctx, key)
		out, err = map[string]any{"fields": m}, e
	case "owner":
		o, e := gd.Owner(ctx, key)
		m := map[string]any{"owner": nil}
		if o != "" {
			m["owner"] = o
		}
		out, err = m, e
	case "delete":
		ok, e := gd.Delete(ctx, key)
		out, err = map[string]any{"deleted": ok}, e
	case "batch":
		var ops []guard.SetOp
		for _, o := range r["ops"].([]map[string]any) {
			ops = append(ops, guard.SetOp{Key: o["key"].(string), Fields: fieldsOf(o["fields"])})
		}
		res, _ := gd.SetPipelined(ctx, ops)
		var rs []map[string]any
		for _, x := range res {
			if x.Err != nil {
				rs = append(rs, map[string]any{"err": goErr(x.Err)})
			} else {
				rs = append(rs, map[string]any{"ok": goResult(x.Result)})
			}
		}
		out = map[string]any{"results": rs}
	case "version":
		out = map[string]any{"sha": guard.ScriptSHA()}
	default:
		return reply{Err: &opErr{Kind: "other", Message: fmt.Sprintf("go runtime: op %v not supported", r["op"])}}
	}
	if err != nil {
		return reply{Err: goErr(err)}
	}
	b, e := json.Marshal(out)
	if e != nil {
		return reply{Err: &opErr{Kind: "other", Message: e.Error()}}
	}
	return reply{OK: b}
}
