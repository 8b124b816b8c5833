package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// redisTarget is a parsed --redis URL: the connection options of its
// first host, every host (Cluster seeds with --cluster), and the URL
// without its password for messages and reports.
type redisTarget struct {
	opts    *redis.Options // credentials, TLS, DB, timeouts; Addr is the first host
	addrs   []string
	cluster bool
	display string
}

// redisTarget parses --redis (env KEYGUARD_REDIS) and --cluster.
func (fs *flagSet) redisTarget() (*redisTarget, error) {
	if fs.opts.redis == "" {
		return nil, usagef("--redis URL is required (or set KEYGUARD_REDIS), e.g. --redis redis://127.0.0.1:6379")
	}
	return parseRedisURL(fs.opts.redis, fs.opts.cluster)
}

// parseRedisURL reads redis://[user:password@]host[:port][,host[:port]…][/db][?options]
// (rediss:// for TLS; options as go-redis's ParseURL: dial_timeout,
// read_timeout …). Several hosts are Cluster seeds and need cluster. A
// bare host:port is taken as redis://host:port.
func parseRedisURL(raw string, cluster bool) (*redisTarget, error) {
	s := strings.TrimSpace(raw)
	if !strings.Contains(s, "://") {
		s = "redis://" + s
	}
	scheme, rest, _ := strings.Cut(s, "://")
	if scheme != "redis" && scheme != "rediss" {
		return nil, usagef("--redis %q: the scheme must be redis:// or rediss:// (TLS)", redact(raw))
	}
	end := strings.IndexAny(rest, "/?")
	if end < 0 {
		end = len(rest)
	}
	authority, tail := rest[:end], rest[end:]
	userinfo, hosts := "", authority
	if i := strings.LastIndexByte(authority, '@'); i >= 0 {
		userinfo, hosts = authority[:i+1], authority[i+1:]
	}
	var addrs []string
	for _, h := range strings.Split(hosts, ",") {
		h = strings.TrimSpace(h)
		if h == "" {
			continue
		}
		if _, _, err := net.SplitHostPort(h); err != nil {
			h = net.JoinHostPort(strings.Trim(h, "[]"), "6379")
		}
		addrs = append(addrs, h)
	}
	if len(addrs) == 0 {
		return nil, usagef("--redis %q: no host", redact(raw))
	}
	if len(addrs) > 1 && !cluster {
		return nil, usagef("--redis lists %d hosts: pass --cluster to use them as Cluster seeds, or give one host", len(addrs))
	}
	opts, err := redis.ParseURL(scheme + "://" + userinfo + addrs[0] + tail)
	if err != nil {
		return nil, usagef("--redis %q: %v", redact(raw), err)
	}
	if cluster && opts.DB != 0 {
		return nil, usagef("--redis %q: a Redis Cluster has only database 0", redact(raw))
	}
	display := scheme + "://"
	if opts.Username != "" {
		display += opts.Username + "@"
	}
	display += strings.Join(addrs, ",")
	if opts.DB != 0 {
		display += fmt.Sprintf("/%d", opts.DB)
	}
	return &redisTarget{opts: opts, addrs: addrs, cluster: cluster, display: display}, nil
}

// redact removes the password from a URL for messages.
func redact(raw string) string {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return raw
	}
	at := strings.LastIndexByte(rest, '@')
	if at < 0 {
		return raw
	}
	user, _, hasPass := strings.Cut(rest[:at], ":")
	if !hasPass {
		return raw
	}
	return scheme + "://" + user + ":xxxxx" + rest[at:]
}

// client returns a go-redis client for the target: a *redis.Client, or a
// *redis.ClusterClient seeded with every host.
func (t *redisTarget) client() redis.UniversalClient {
	off := &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	if !t.cluster {
		o := *t.opts
		o.MaintNotificationsConfig = off
		return redis.NewClient(&o)
	}
	o := t.opts
	return redis.NewClusterClient(&redis.ClusterOptions{
		Addrs:                    t.addrs,
		Username:                 o.Username,
		Password:                 o.Password,
		TLSConfig:                o.TLSConfig,
		DialTimeout:              o.DialTimeout,
		ReadTimeout:              o.ReadTimeout,
		WriteTimeout:             o.WriteTimeout,
		MaxRetries:               o.MaxRetries,
		PoolSize:                 o.PoolSize,
		ClientName:               o.ClientName,
		MaintNotificationsConfig: off,
	})
}

// connectRedis opens a client and checks it with PING, so that a wrong
// URL, a server that is down or refused credentials fail at once with a
// one-line reason.
func connectRedis(ctx context.Context, t *redisTarget) (redis.UniversalClient, error) {
	c := t.client()
	if err := c.Ping(ctx).Err(); err != nil {
		c.Close()
		return nil, redisError(t.addrs[0], err)
	}
	return c, nil
}

// redisError turns a connection or authentication failure into one line
// that says what to check.
func redisError(addr string, err error) error {
	msg := err.Error()
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("cannot connect to %s: connection refused (is the server running, and is --redis right?)", addr)
	case strings.Contains(msg, "WRONGPASS"), strings.Contains(msg, "invalid password"), strings.Contains(msg, "invalid username-password"):
		return fmt.Errorf("%s refused the credentials (%s): check the user and password in --redis (redis://user:password@host:port)", addr, oneLine(msg))
	case strings.Contains(msg, "NOAUTH"):
		return fmt.Errorf("%s requires a password: put it in --redis (redis://user:password@host:port)", addr)
	case errors.Is(err, os.ErrDeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return fmt.Errorf("cannot connect to %s: no answer in time (%s): check the host, port and firewall", addr, oneLine(msg))
	case strings.Contains(msg, "tls:"), strings.Contains(msg, "x509:"), strings.Contains(msg, "TLS handshake"):
		return fmt.Errorf("TLS with %s failed (%s): check rediss:// and the server certificate", addr, oneLine(msg))
	}
	return fmt.Errorf("cannot connect to %s: %s", addr, oneLine(msg))
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
