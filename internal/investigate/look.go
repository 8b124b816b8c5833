package investigate

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/human"
	"github.com/keyguard/keyguard/internal/valueform"
)

// Bounds of one look at a value: the bytes of a string read for its JSON
// keys, and the hash fields sampled (HRANDFIELD returns all of a smaller
// hash).
const (
	valueReadBytes = 4096
	valuePreview   = 64 // bytes of a value shown with ShowValues
	previewFields  = 8
)

// KeyInfo is one key found and what its value looked like.
type KeyInfo struct {
	Key        string   `json:"key"`
	Node       string   `json:"node,omitempty"`
	Type       string   `json:"type"`   // "none" when the key does not exist
	TTLms      int64    `json:"ttl_ms"` // -1 no TTL, -2 no key
	Bytes      int64    `json:"bytes,omitempty"`
	Length     int64    `json:"length"` // STRLEN, or the element count
	Template   string   `json:"template,omitempty"`
	Owner      string   `json:"owner,omitempty"`
	Registered bool     `json:"registered"`
	Inferred   string   `json:"inferred,omitempty"` // the template an unregistered key probably follows
	Shape      Shape    `json:"shape"`
	Styles     []string `json:"styles,omitempty"` // IDs of the styles its value showed over the run
	Value      string   `json:"value,omitempty"`  // ShowValues only, cut
	// Unreadable: the ACL user may not read the key (NOPERM on the key);
	// it exists, and nothing else is known of it.
	Unreadable bool `json:"unreadable,omitempty"`
	// NotRead is the server's refusal of the key's probes (CLUSTERDOWN
	// while a master is down, LOADING, TRYAGAIN…): the search listed the
	// key, and nothing else is known of it.
	NotRead string `json:"not_read,omitempty"`
	node    *node
}

// notRead counts the keys whose reads the server refused, and one reply.
func (r *Report) notRead() (n int, why string) {
	for _, k := range r.Keys {
		if k.NotRead != "" {
			n, why = n+1, k.NotRead
		}
	}
	return n, why
}

// probe is the pipeline replies for one key.
type probe struct {
	typ    *redis.StatusCmd
	pttl   *redis.DurationCmd
	mem    *redis.IntCmd
	length *redis.IntCmd
	body   redis.Cmder
}

// look reads type, TTL, size and shape of keys on one node: one pipeline
// for TYPE/PTTL/MEMORY USAGE, one for the length and the shape.
func look(ctx context.Context, n *node, keys []*KeyInfo, show bool) error {
	ps := make([]probe, len(keys))
	_, err := n.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			ps[i].typ = p.Type(ctx, k.Key)
			ps[i].pttl = p.PTTL(ctx, k.Key)
			ps[i].mem = p.MemoryUsage(ctx, k.Key)
		}
		return nil
	})
	if err != nil && !pipelineReplyErr(err) {
		return fmt.Errorf("read keys on %s: %w", n.addr, err)
	}
	readable := keys[:0:0]
	for i, k := range keys {
		if err := ps[i].typ.Err(); keyDenied(err) {
			k.Unreadable = true
			continue
		} else if err != nil && !errors.Is(err, redis.Nil) {
			k.NotRead = human.OneLine(err.Error())
			continue
		}
		k.Type = ps[i].typ.Val()
		k.TTLms = pttlMillis(ps[i].pttl)
		k.Bytes = ps[i].mem.Val() // 0 when MEMORY USAGE is not allowed
		readable = append(readable, k)
	}
	return shapes(ctx, n, readable, show)
}

// keyDenied reports the reply to a command on a key the ACL user may not
// read ("NOPERM … access one of the keys used as arguments"; Redis 6 and
// 7 word it differently).
func keyDenied(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	return strings.HasPrefix(msg, "NOPERM") && strings.Contains(msg, "key")
}

// pipelineReplyErr reports an error that is one command's reply (a
// NOPERM for MEMORY USAGE, WRONGTYPE…), not a broken connection.
func pipelineReplyErr(err error) bool {
	var re redis.Error
	return errors.As(err, &re) || errors.Is(err, redis.Nil)
}

func pttlMillis(c *redis.DurationCmd) int64 {
	d, err := c.Result()
	if err != nil {
		return -2
	}
	if d < 0 { // go-redis returns -1 and -2 as nanoseconds
		return int64(d)
	}
	return d.Milliseconds()
}

// shapes reads the length and field names of each key by its type.
func shapes(ctx context.Context, n *node, keys []*KeyInfo, show bool) error {
	ps := make([]probe, len(keys))
	_, err := n.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			ps[i] = queueShape(ctx, p, k.Key, k.Type, show)
		}
		return nil
	})
	if err != nil && !pipelineReplyErr(err) {
		return fmt.Errorf("read values on %s: %w", n.addr, err)
	}
	for i, k := range keys {
		if ps[i].length != nil {
			k.Length = ps[i].length.Val()
		}
		k.Shape, k.Value = readShape(k.Type, k.Length, ps[i], show)
	}
	return nil
}

// queueShape queues the commands that read a value's shape: a bounded
// read of a string, a sample of a hash's field names, the first element
// of a list, the last entry of a stream. Sets and sorted sets have no
// field names: their length only.
func queueShape(ctx context.Context, p redis.Pipeliner, key, typ string, show bool) probe {
	var pr probe
	switch typ {
	case "string":
		pr.length = p.StrLen(ctx, key)
		pr.body = p.GetRange(ctx, key, 0, valueReadBytes-1)
	case "hash":
		pr.length = p.HLen(ctx, key)
		if show {
			pr.body = p.HRandFieldWithValues(ctx, key, maxFields)
		} else {
			pr.body = p.HRandField(ctx, key, maxFields)
		}
	case "list":
		pr.length = p.LLen(ctx, key)
		pr.body = p.LRange(ctx, key, 0, 0)
	case "set":
		pr.length = p.SCard(ctx, key)
	case "zset":
		pr.length = p.ZCard(ctx, key)
	case "stream":
		pr.length = p.XLen(ctx, key)
		pr.body = p.XRevRangeN(ctx, key, "+", "-", 1)
	}
	return pr
}

func readShape(typ string, length int64, pr probe, show bool) (Shape, string) {
	switch b := pr.body.(type) {
	case *redis.StringCmd: // GETRANGE
		v := b.Val()
		kind, fields := stringShape([]byte(v))
		sh := newShape(typ, kind, fields, len(fields))
		if typ == "string" {
			sh.Form = valueform.Of([]byte(v))
		}
		return sh, preview(show, v, length)
	case *redis.StringSliceCmd:
		v := b.Val()
		if typ == "list" {
			if len(v) == 0 {
				return Shape{Type: typ}, ""
			}
			kind, fields := stringShape([]byte(v[0]))
			return newShape(typ, kind, fields, len(fields)), preview(show, v[0], int64(len(v[0])))
		}
		return newShape(typ, "", v, int(length)), ""
	case *redis.KeyValueSliceCmd:
		kvs := b.Val()
		fields := make([]string, len(kvs))
		var sb strings.Builder
		for i, kv := range kvs {
			fields[i] = kv.Key
			if show && i < previewFields {
				if i > 0 {
					sb.WriteString(" ")
				}
				sb.WriteString(finding.Display(kv.Key) + "=" + preview(true, kv.Value, int64(len(kv.Value))))
			}
		}
		return newShape(typ, "", fields, int(length)), sb.String()
	case *redis.XMessageSliceCmd:
		msgs := b.Val()
		if len(msgs) == 0 {
			return Shape{Type: typ}, ""
		}
		var fields []string
		for f := range msgs[0].Values {
			fields = append(fields, f)
		}
		return newShape(typ, "", fields, len(fields)), ""
	}
	if typ == "none" {
		return Shape{}, ""
	}
	return Shape{Type: typ}, ""
}

// preview is a value cut to valuePreview bytes and quoted for a report;
// "" unless values are to be shown.
func preview(show bool, v string, total int64) string {
	if !show {
		return ""
	}
	cut := v
	if len(cut) > valuePreview {
		cut = cut[:valuePreview]
	}
	s := fmt.Sprintf("%q", cut)
	if total > int64(len(cut)) {
		s += fmt.Sprintf("…(%d bytes)", total)
	}
	return s
}
