package redisconn

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/redistest"
)

func TestParseRedisURL(t *testing.T) {
	tests := []struct {
		raw     string
		cluster bool
		addrs   []string
		user    string
		pass    string
		db      int
		tls     bool
		display string
		err     string
	}{
		{raw: "redis://127.0.0.1:6379", addrs: []string{"127.0.0.1:6379"}, display: "redis://127.0.0.1:6379"},
		{raw: "127.0.0.1:7000", addrs: []string{"127.0.0.1:7000"}, display: "redis://127.0.0.1:7000"},
		{raw: "redis://u:p%40ss@h1/2", addrs: []string{"h1:6379"}, user: "u", pass: "p@ss", db: 2, display: "redis://u@h1:6379/2"},
		{raw: "rediss://:secret@h1:6380", addrs: []string{"h1:6380"}, pass: "secret", tls: true, display: "rediss://h1:6380"},
		{raw: "redis://a:pw@h1:7000,h2:7001, h3", cluster: true, addrs: []string{"h1:7000", "h2:7001", "h3:6379"}, user: "a", pass: "pw", display: "redis://a@h1:7000,h2:7001,h3:6379"},
		{raw: "redis://h1:7000,h2:7001", err: "--cluster"},
		{raw: "redis://h1:7000/3", cluster: true, err: "only database 0"},
		{raw: "http://h1", err: "scheme"},
		{raw: "redis://u:pw@", err: "no host"},
		{raw: "redis://u:p@ss/x#y?z w@h1:6380/1", addrs: []string{"h1:6380"}, user: "u", pass: "p@ss/x#y?z w", db: 1, display: "redis://u@h1:6380/1"},
		{raw: "redis://u:pw%zz@h1", err: "percent-encode @ as %40"},
		{raw: "redis://u:pw@h1:port", err: `host "h1:port": the port must be a number from 1 to 65535`},
		{raw: "redis://u:pw@127.0.0.1:99999", err: "the port must be a number from 1 to 65535"},
		{raw: "redis://u:pw@h1:7000,h2:0", cluster: true, err: `host "h2:0": the port`},
		{raw: "redis://u:pw@[::1", err: "an IPv6 address in brackets ([::1]:6379)"},
		{raw: "redis://u:pw@::1]:7000", err: "an IPv6 address in brackets"},
		{raw: "redis://[::1]:7000", addrs: []string{"[::1]:7000"}, display: "redis://[::1]:7000"},
		{raw: "redis://[::1]", addrs: []string{"[::1]:6379"}, display: "redis://[::1]:6379"},
		{raw: "redis:/127.0.0.1", err: "write the scheme with two slashes: redis://"},
		{raw: "rediss:/u:pw@h1", err: "two slashes: rediss://"},
		{raw: "redis-sentinel://u:pw@h1:70000#m", err: "the port must be a number"},
		{raw: "unix:///run/r.sock?db=2", addrs: []string{"/run/r.sock"}, db: 2, display: "unix:///run/r.sock?db=2"},
		{raw: "unix://u:pw@/run/r.sock", addrs: []string{"/run/r.sock"}, user: "u", pass: "pw", display: "unix://u@/run/r.sock"},
		{raw: "unix://run/r.sock", err: "no socket path"},
		{raw: "unix:///r.sock", cluster: true, err: "reaches one server"},
		{raw: "redis-sentinel://u:pw@h1", err: "no master name"},
		{raw: "redis-sentinel://u:pw@h1#m", cluster: true, err: "name one master"},
		{raw: "redis-sentinel://u:pw@h1/0?cacert=/x#m", err: "use rediss-sentinel://"},
		{raw: "rediss://u:pw@h1?cert=/x", err: "cert= needs key="},
		{raw: "rediss://u:pw@h1?cacert=/x&cacert=/y", err: "given 2 times"},
		{raw: "redis://u:pw@h1?cacert=/x", err: "use rediss://"},
		{raw: "rediss://u:pw@h1:6380?skip_verify=true&sni=redis.test", addrs: []string{"h1:6380"}, user: "u", pass: "pw", tls: true, display: "rediss://u@h1:6380"},
	}
	for _, tt := range tests {
		got, err := ParseURL(tt.raw, tt.cluster)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: err %v, want %q", tt.raw, err, tt.err)
			}
			if err != nil && strings.Contains(err.Error(), "pw") {
				t.Errorf("%s: the error shows the password: %v", tt.raw, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.raw, err)
			continue
		}
		if strings.Join(got.Addrs, ",") != strings.Join(tt.addrs, ",") || got.Opts.Username != tt.user || got.Opts.Password != tt.pass ||
			got.Opts.DB != tt.db || (got.Opts.TLSConfig != nil) != tt.tls || got.Display != tt.display {
			t.Errorf("%s: addrs %v user %q pass %q db %d tls %v display %q", tt.raw, got.Addrs, got.Opts.Username, got.Opts.Password, got.Opts.DB, got.Opts.TLSConfig != nil, got.Display)
		}
	}
}

func TestConnectRedisHelper(t *testing.T) {
	s := redistest.Start(t)
	ctx := context.Background()
	tgt, err := ParseURL(s.URL(), false)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Connect(ctx, tgt)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	tgt, _ = ParseURL("redis://127.0.0.1:1", false)
	if _, err := Connect(ctx, tgt); err == nil || !strings.Contains(err.Error(), "connection refused") || strings.Contains(err.Error(), "\n") {
		t.Errorf("refused: %v", err)
	}
}

// ClusterTrouble keeps quiet while every master answers, and once the
// master holding a key's slot is killed, names it, its slots and the key.
func TestClusterTrouble(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	ctx := context.Background()
	tgt, err := ParseURL(cl.URL(), true)
	if err != nil {
		t.Fatal(err)
	}
	if msg := ClusterTrouble(ctx, tgt, "some:key"); msg != "" {
		t.Fatalf("every master up: %q", msg)
	}
	c := cl.Client(t)
	slot, err := c.ClusterKeySlot(ctx, "some:key").Result()
	if err != nil {
		t.Fatal(err)
	}
	owner, err := c.MasterForKey(ctx, "some:key")
	if err != nil {
		t.Fatal(err)
	}
	addr := owner.Options().Addr
	killed := -1
	for i, n := range cl.Nodes {
		if n.Addr == addr {
			n.Kill()
			killed = i
		}
	}
	if killed < 0 {
		t.Fatalf("no node at %s", addr)
	}
	// Seed the target with a live node first, as a user would list them.
	tgt.Addrs = append([]string{cl.Addrs[(killed+1)%3]}, tgt.Addrs...)
	msg := ClusterTrouble(ctx, tgt, "some:key")
	want := fmt.Sprintf("some:key lives in slot %d, on that node", slot)
	if !strings.Contains(msg, "master "+addr) || !strings.Contains(msg, "is down") || !strings.Contains(msg, want) {
		t.Errorf("one master killed: %q\nwant %s named, with %q", msg, addr, want)
	}
	// With no node answering, it says so and names each seed tried.
	dead := &Target{Opts: tgt.Opts, Addrs: []string{addr}, Cluster: true, Flag: "--redis"}
	if msg := ClusterTrouble(ctx, dead, "k"); !strings.Contains(msg, "no Redis Cluster node of --redis answers: "+addr) {
		t.Errorf("no node answers: %q", msg)
	}
}

// Error says what to check in one line: refused, wrong password.
func TestErrorSaysWhatToCheck(t *testing.T) {
	s := redistest.Start(t)
	ctx := context.Background()
	if err := s.Client(t).Do(ctx, "ACL", "SETUSER", "app", "on", ">s3cret", "~*", "+@all").Err(); err != nil {
		t.Fatal(err)
	}
	if err := s.Client(t).Do(ctx, "ACL", "SETUSER", "reader", "on", ">s3cret", "~*", "+@read").Err(); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ url, want string }{
		{"redis://app:wrong@" + s.Addr, "refused the credentials"},
		{"redis://nobody:wrong@" + s.Addr, "check the user and password in --redis"},
		{"redis://127.0.0.1:1", "connection refused (is the server running, and is --redis right?)"},
		{"redis://reader:s3cret@" + s.Addr, "the ACL user may not run a command this one needs (NOPERM this user has no permissions to run the 'ping' command); grant it (docs/audit-acl.md gives the rules of audit, hotkeys, investigate and writers)"},
	} {
		tgt, err := ParseURL(tt.url, false)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Connect(ctx, tgt)
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "wrong") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want %q in one line, no password", DisplayURL(tt.url), err, tt.want)
		}
	}
	if c, err := Connect(ctx, mustParse(t, "redis://app:s3cret@"+s.Addr)); err != nil {
		t.Errorf("right password: %v", err)
	} else {
		c.Close()
	}
}

func mustParse(t *testing.T, raw string) *Target {
	t.Helper()
	tgt, err := ParseURL(raw, false)
	if err != nil {
		t.Fatal(err)
	}
	return tgt
}

// A server still loading its dataset answers LOADING to PING: Connect
// waits for it to load (hotkeys, preheat, writers, investigate and
// migrate, which connect so, stopped at once with "cannot connect").
func TestConnectWaitsForLoading(t *testing.T) {
	s := redistest.Start(t, redistest.SlowLoading(300)...)
	ctx := context.Background()
	rdb := s.Client(t)
	p := rdb.Pipeline()
	for i := range 4000 {
		p.Set(ctx, fmt.Sprintf("k:%d", i), i, 0)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	loaded := s.RestartWhileLoading(t)
	c, err := Connect(ctx, mustParse(t, s.URL()))
	<-loaded
	if err != nil {
		t.Fatalf("connect while loading: %v", err)
	}
	defer c.Close()
	if n, err := c.DBSize(ctx).Result(); err != nil || n != 4000 {
		t.Errorf("DBSIZE %d %v, want 4000 once loaded", n, err)
	}
	if err := Error(s.Addr, false, errors.New("LOADING Redis is loading the dataset in memory"), "--redis"); !strings.Contains(err.Error(), s.Addr+" is loading its dataset") || strings.Contains(err.Error(), "cannot connect") {
		t.Errorf("a loading server's error: %v", err)
	}
}

// A Cluster's nodes are each checked against their own host name: the
// first seed's is not the name of the others' certificates. sni names one
// for every node.
func TestClusterTLSServerName(t *testing.T) {
	for _, tt := range []struct {
		raw     string
		cluster bool
		want    string
	}{
		{"rediss://n1.example:6380", false, "n1.example"},
		{"rediss://n1.example:6380,n2.example:6380", true, ""},
		{"rediss://n1.example:6380,n2.example:6380?sni=redis.example", true, "redis.example"},
	} {
		got, err := ParseURL(tt.raw, tt.cluster)
		if err != nil || got.Opts.TLSConfig == nil || got.Opts.TLSConfig.ServerName != tt.want {
			t.Errorf("%s: %v, server name %q; want %q", tt.raw, err, got.Opts.TLSConfig.ServerName, tt.want)
		}
		if tt.cluster {
			cc, ok := got.Client().(*redis.ClusterClient)
			if !ok || cc.Options().TLSConfig.ServerName != tt.want {
				t.Errorf("%s: the cluster client's server name is not %q", tt.raw, tt.want)
			}
			cc.Close()
		}
	}
}

// FuzzParseShowsNoPassword: whatever the URL, a message of the parser
// never holds its password, and the parser does not panic. The password
// holds a marker; the rest of the URL (hosts, path, options, a Sentinel
// URL without its master name, which would ask a network) is fuzzed.
func FuzzParseShowsNoPassword(f *testing.F) {
	for _, s := range []string{"h1:6379/2", "/run/r.sock?db=x", "h1?cacert=/nope&cert=/x", "h1,h2", "h:port", "%zz@h", "h1?sni=", "[::1]:x/1?dial_timeout=zz"} {
		f.Add("redis", "p@ss", s, false)
		f.Add("unix", "pw", s, false)
		f.Add("rediss-sentinel", "pw", s, true)
	}
	f.Fuzz(func(t *testing.T, scheme, pass, rest string, cluster bool) {
		if strings.Contains(scheme, "sentinel") && strings.Contains(rest, "#") {
			return
		}
		secret := "Zq9SECRET" + pass
		raw := scheme + "://u:" + secret + "@" + rest
		tgt, err := ParseURL(raw, cluster)
		if err != nil && strings.Contains(err.Error(), "Zq9SECRET") {
			t.Fatalf("%q: the error shows the password: %v", raw, err)
		}
		if err == nil && strings.Contains(tgt.Display, "Zq9SECRET") {
			t.Fatalf("%q: the display shows the password: %s", raw, tgt.Display)
		}
	})
}

// TestConnectToAFullServer: a server over its maxclients hangs up on the
// client's first command; Connect says why (hotkeys, writers,
// investigate, preheat and migrate connect so) rather than "broken pipe".
func TestConnectToAFullServer(t *testing.T) {
	s := redistest.Start(t, "maxclients 1")
	ctx := context.Background()
	held, err := ParseURL("redis://"+s.Addr, false)
	if err != nil {
		t.Fatal(err)
	}
	first, err := Connect(ctx, held)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	_, err = Connect(ctx, mustParse(t, "redis://"+s.Addr))
	if err == nil || !strings.Contains(err.Error(), "cannot connect to "+s.Addr+": the server closed the connection: ERR max number of clients reached") ||
		!strings.Contains(err.Error(), "raise maxclients") {
		t.Errorf("a full server: %v", err)
	}
}
