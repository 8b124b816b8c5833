package hotkey

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/redis/go-redis/v9"
)

// Invalidations travel on one Pub/Sub channel as "<instance id> <key>":
// every instance drops key from its local tier, except the one that sent
// it (it invalidated its own entry before publishing, and may have warmed
// it since). Classic Pub/Sub reaches every subscriber of a Cluster
// whichever node it is published on.

// healthEvery is how long the subscription may stay silent before it is
// pinged: a connection that died without a FIN is found within it.
const healthEvery = 15 * time.Second

// subscribe opens the invalidation subscription and waits for the
// server's confirmation, then listens in the background.
func (c *Cache) subscribe(ctx context.Context) error {
	c.ps = c.rdb.Subscribe(ctx, c.opts.Channel)
	for {
		msg, err := c.ps.Receive(ctx)
		if err != nil {
			c.ps.Close()
			return fmt.Errorf("hotkey: subscribe to %s: %w\n\tTry: check that the server accepts SUBSCRIBE (ACL: +subscribe &%s)", c.opts.Channel, err, c.opts.Channel)
		}
		if sub, ok := msg.(*redis.Subscription); ok && sub.Kind == "subscribe" {
			break
		}
	}
	c.setUp(true)
	c.wg.Add(1)
	go c.listen()
	return nil
}

func (c *Cache) setUp(up bool) {
	if up {
		c.m.subscribed.Set(1)
	} else {
		c.m.subscribed.Set(0)
	}
	c.up.Store(up)
}

// listen applies invalidations until Close. While the subscription is
// down the local tier is emptied and bypassed: an invalidation missed
// meanwhile cannot leave a stale entry behind. go-redis reconnects and
// resubscribes by itself; the confirmation turns the local tier back on.
func (c *Cache) listen() {
	defer c.wg.Done()
	backoff := 50 * time.Millisecond
	for {
		msg, err := c.ps.ReceiveTimeout(c.bg, healthEvery)
		if c.bg.Err() != nil {
			return
		}
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() && c.ps.Ping(c.bg) == nil {
				continue // silence, and the connection answers
			}
			if c.up.Load() {
				c.log.Warn("keyguard: invalidation subscription lost; local tier off until it is back", "channel", c.opts.Channel, "err", err)
			}
			c.setUp(false)
			c.local.InvalidateAll()
			select {
			case <-c.bg.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 2*time.Second)
			continue
		}
		backoff = 50 * time.Millisecond
		switch m := msg.(type) {
		case *redis.Subscription:
			if m.Kind == "subscribe" && !c.up.Load() {
				c.local.InvalidateAll()
				c.setUp(true)
				c.log.Info("keyguard: invalidation subscription back; local tier on", "channel", c.opts.Channel)
			}
		case *redis.Message:
			c.apply(m.Payload)
		}
	}
}

// apply handles one invalidation message.
func (c *Cache) apply(payload string) {
	id := c.id
	if len(payload) <= len(id) || payload[len(id)] != ' ' || payload[:len(id)] == id {
		return
	}
	c.local.Invalidate(payload[len(id)+1:])
	c.m.inval.WithLabelValues("received").Inc()
}

// invalidate drops key from this process's local tier and broadcasts it
// to the others; only keys of templates with a local tier are broadcast.
func (c *Cache) invalidate(ctx context.Context, s *entState, key string) error {
	if s.localTTL <= 0 {
		return nil
	}
	c.local.Invalidate(key)
	if err := c.rdb.Publish(ctx, c.opts.Channel, c.id+" "+key).Err(); err != nil {
		return &BroadcastError{Key: key, Channel: c.opts.Channel, Err: err}
	}
	c.m.inval.WithLabelValues("sent").Inc()
	return nil
}
