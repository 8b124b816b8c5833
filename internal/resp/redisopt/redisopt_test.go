package redisopt

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/redistest"
	"github.com/keyguard/keyguard/internal/resp"
)

// TestConfigReachesTheServer: a connection made from go-redis options
// reaches a real server as the client would — over the options' unix
// socket, with the credentials of their provider, through their dialer —
// and a provider that fails is an error naming the address.
func TestConfigReachesTheServer(t *testing.T) {
	sock := t.TempDir() + "/r.sock"
	srv := redistest.Start(t, "unixsocket "+sock, "unixsocketperm 700")
	ctx := context.Background()
	if err := srv.Client(t).Do(ctx, "ACL", "SETUSER", "watcher", "on", ">pw", "+acl|whoami", "+client|setname").Err(); err != nil {
		t.Fatal(err)
	}
	whoami := func(o *redis.Options, addr string) (string, error) {
		cfg, err := Config(ctx, o)
		if err != nil {
			return "", err
		}
		c, err := resp.Dial(ctx, cfg, addr, resp.Session{})
		if err != nil {
			return "", err
		}
		defer c.Close()
		return c.Simple(ctx, "ACL", "WHOAMI")
	}
	o := &redis.Options{Network: "unix", Addr: sock, CredentialsProviderContext: func(context.Context) (string, string, error) {
		return "watcher", "pw", nil
	}}
	if who, err := whoami(o, sock); err != nil || who != "watcher" {
		t.Errorf("unix socket, provider: %q %v", who, err)
	}
	var dials atomic.Int32
	o = &redis.Options{Addr: srv.Addr, Username: "watcher", Password: "pw", Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}}
	if who, err := whoami(o, srv.Addr); err != nil || who != "watcher" || dials.Load() != 1 {
		t.Errorf("own dialer: %q %v, %d dials", who, err, dials.Load())
	}
	// TLS as go-redis does it: with the default dialer only.
	tc := &tls.Config{ServerName: "redis.internal"}
	if cfg, _ := Config(ctx, &redis.Options{TLSConfig: tc}); cfg.TLS != tc {
		t.Error("TLSConfig dropped")
	}
	if cfg, _ := Config(ctx, &redis.Options{TLSConfig: tc, Dialer: o.Dialer}); cfg.TLS != nil {
		t.Error("TLS on top of the options' own dialer")
	}
	boom := errors.New("vault sealed")
	o = &redis.Options{Addr: srv.Addr, CredentialsProviderContext: func(context.Context) (string, string, error) { return "", "", boom }}
	if _, err := Config(ctx, o); !errors.Is(err, boom) {
		t.Errorf("failing provider: %v", err)
	}
}

// TestReach: a server client gives its address and database, a Cluster
// client its seeds, database 0 and its credentials; another client type
// is an error naming it.
func TestReach(t *testing.T) {
	ctx := context.Background()
	cfg, addrs, db, cluster, err := Reach(ctx, redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", DB: 3, Username: "u", Password: "p"}))
	if err != nil || cluster || db != 3 || len(addrs) != 1 || addrs[0] != "127.0.0.1:1" || cfg.Username != "u" || cfg.Password != "p" {
		t.Errorf("server: %+v %v %d %v %v", cfg, addrs, db, cluster, err)
	}
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:2", "127.0.0.1:3"},
		CredentialsProvider: func() (string, string) { return "cu", "cp" }})
	defer cc.Close()
	cfg, addrs, db, cluster, err = Reach(ctx, cc)
	if err != nil || !cluster || db != 0 || len(addrs) != 2 || addrs[1] != "127.0.0.1:3" || cfg.Username != "cu" || cfg.Password != "cp" {
		t.Errorf("cluster: %+v %v %d %v %v", cfg, addrs, db, cluster, err)
	}
	if _, _, _, _, err := Reach(ctx, redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": "127.0.0.1:4"}})); err == nil || !strings.Contains(err.Error(), "Ring") {
		t.Errorf("ring: %v", err)
	}
}
