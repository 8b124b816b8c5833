// Package redisopt turns a go-redis client's options into the RESP
// client's config, so that a connection of keyguard's own (a MONITOR, a
// bounded stream go-redis cannot read) reaches the server the way the
// caller's client does: same network, credentials, TLS and dialer.
//
//	cfg, err := redisopt.Config(ctx, client.Options())
//	c, err := resp.Dial(ctx, cfg, addr, resp.Session{Name: "keyguard-investigate"})
//
// It sits apart from package resp so that the audit, which speaks RESP
// alone, does not depend on go-redis.
package redisopt

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/resp"
)

// Config is o as a resp.Config. As in go-redis, a Dialer of o's own does
// the TLS it wants itself: TLSConfig is applied only with the default
// dialer. Credentials come from o's credentials providers when it has
// them, asked once, now.
func Config(ctx context.Context, o *redis.Options) (resp.Config, error) {
	cfg := resp.Config{
		Username:    o.Username,
		Password:    o.Password,
		Network:     o.Network,
		DialTimeout: o.DialTimeout,
		Dialer:      o.Dialer,
	}
	if o.Dialer == nil {
		cfg.TLS = o.TLSConfig
	}
	if o.CredentialsProvider != nil {
		cfg.Username, cfg.Password = o.CredentialsProvider()
	}
	if o.CredentialsProviderContext != nil {
		user, pass, err := o.CredentialsProviderContext(ctx)
		if err != nil {
			return resp.Config{}, fmt.Errorf("credentials for %s: %w", o.Addr, err)
		}
		cfg.Username, cfg.Password = user, pass
	}
	return cfg, nil
}

// Reach is what a go-redis client reaches, for a walk of keyguard's own:
// the config of its connections, its address (a Cluster client's seeds),
// its database (0 on a Cluster), and whether it is a Cluster client.
func Reach(ctx context.Context, rdb redis.UniversalClient) (cfg resp.Config, addrs []string, db int, cluster bool, err error) {
	switch c := rdb.(type) {
	case *redis.Client:
		o := c.Options()
		cfg, err = Config(ctx, o)
		return cfg, []string{o.Addr}, o.DB, false, err
	case *redis.ClusterClient:
		o := c.Options()
		if len(o.Addrs) == 0 {
			return cfg, nil, 0, true, errors.New("the Cluster client has no seed address")
		}
		cfg, err = Config(ctx, &redis.Options{
			Addr: o.Addrs[0], Username: o.Username, Password: o.Password, DialTimeout: o.DialTimeout,
			Dialer: o.Dialer, TLSConfig: o.TLSConfig,
			CredentialsProvider: o.CredentialsProvider, CredentialsProviderContext: o.CredentialsProviderContext,
		})
		return cfg, o.Addrs, 0, true, err
	}
	return cfg, nil, 0, false, fmt.Errorf("need a *redis.Client or a *redis.ClusterClient, not %T", rdb)
}
