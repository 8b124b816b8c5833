package migrate

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// digest hashes a value read with the commands of its type in a canonical
// form: equal for equal contents whatever the server's encoding (listpack
// or hash table) and the order a hash table returns. Streams include their
// consumer groups: last delivered ID, entries read, pending entries with
// their consumer and delivery count, and the consumers.
func digest(ctx context.Context, rdb redis.UniversalClient, key, typ string) ([]byte, error) {
	h := sha256.New()
	var err error
	switch typ {
	case "string":
		var s string
		if s, err = rdb.Get(ctx, key).Result(); err == nil {
			put(h, s)
		}
	case "hash":
		var m map[string]string
		if m, err = rdb.HGetAll(ctx, key).Result(); err == nil {
			for _, f := range slices.Sorted(maps.Keys(m)) {
				put(h, f, m[f])
			}
		}
	case "list":
		var l []string
		if l, err = rdb.LRange(ctx, key, 0, -1).Result(); err == nil {
			put(h, l...)
		}
	case "set":
		var l []string
		if l, err = rdb.SMembers(ctx, key).Result(); err == nil {
			slices.Sort(l)
			put(h, l...)
		}
	case "zset":
		var l []redis.Z
		if l, err = rdb.ZRangeWithScores(ctx, key, 0, -1).Result(); err == nil {
			for _, z := range l {
				put(h, fmt.Sprint(z.Member), strconv.FormatFloat(z.Score, 'g', -1, 64))
			}
		}
	case "stream":
		err = digestStream(ctx, rdb, key, h)
	default:
		return nil, fmt.Errorf("%q: cannot compare a value of type %s", key, typ)
	}
	if err != nil && err != redis.Nil {
		return nil, fmt.Errorf("read %q to compare it: %w", key, err)
	}
	return h.Sum(nil), nil
}

func digestStream(ctx context.Context, rdb redis.UniversalClient, key string, h hash.Hash) error {
	entries, err := rdb.Do(ctx, "XRANGE", key, "-", "+").Slice()
	if err != nil {
		return err
	}
	for _, e := range entries {
		putReply(h, e)
	}
	info, err := rdb.XInfoStream(ctx, key).Result()
	if err != nil {
		return err
	}
	put(h, info.LastGeneratedID, info.MaxDeletedEntryID, strconv.FormatInt(info.EntriesAdded, 10))
	groups, err := rdb.XInfoGroups(ctx, key).Result()
	if err != nil {
		return err
	}
	for _, g := range groups {
		put(h, g.Name, g.LastDeliveredID, strconv.FormatInt(g.EntriesRead, 10), strconv.FormatInt(g.Pending, 10))
		pel, err := rdb.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: key, Group: g.Name, Start: "-", End: "+", Count: g.Pending + 1}).Result()
		if err != nil {
			return err
		}
		for _, p := range pel {
			put(h, p.ID, p.Consumer, strconv.FormatInt(p.RetryCount, 10))
		}
		cs, err := rdb.XInfoConsumers(ctx, key, g.Name).Result()
		if err != nil {
			return err
		}
		slices.SortFunc(cs, func(a, b redis.XInfoConsumer) int {
			return strings.Compare(a.Name, b.Name)
		})
		for _, c := range cs {
			put(h, c.Name, strconv.FormatInt(c.Pending, 10))
		}
	}
	return nil
}

// put writes length-prefixed strings, so ("ab","c") and ("a","bc") differ.
func put(h hash.Hash, ss ...string) {
	var n [binary.MaxVarintLen64]byte
	for _, s := range ss {
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(s)))])
		h.Write([]byte(s))
	}
}

// putReply writes a nested reply (arrays of strings) with its shape.
func putReply(h hash.Hash, v any) {
	switch x := v.(type) {
	case []any:
		put(h, "*"+strconv.Itoa(len(x)))
		for _, e := range x {
			putReply(h, e)
		}
	case nil:
		put(h, "_")
	default:
		put(h, "$"+fmt.Sprint(x))
	}
}
