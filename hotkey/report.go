package hotkey

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/redis/go-redis/v9"
)

// Hot-key reports live under one hash tag, so that on Redis Cluster they
// share a slot: a report is one MULTI/EXEC to one node, and 'keyguard
// hotkeys' reads them all from it.
//
//	keyguard:{hotkeys}:index      hash  instance id → JSON {service, host, pid, at, window_ms} (persistent, trimmed)
//	keyguard:{hotkeys}:i:<id>     zset  key → operations per second, replaced at each report; TTL = ReportTTL
//
// <id> is a random 16-hex-digit id per Detector. RecordRegistry declares
// these keys for keyguard.yaml.
const (
	RecordPrefix   = "keyguard:{hotkeys}:"
	RecordIndexKey = RecordPrefix + "index"
)

// RecordRegistry is the keyguard.yaml fragment declaring the hot-key
// reports and the default invalidation channel (keys only: the domains
// keyguard and channel must be declared too).
const RecordRegistry = `  - key: "keyguard:{{hotkeys}}:index"
    type: hash
    persistent: true
    desc: "hot-key reports: instance id -> service, host, last report"
  - key: "keyguard:{{hotkeys}}:i:{id:hex}"
    type: zset
    ttl: 10m
    desc: "hot-key report of one instance: key -> operations per second"
  - key: "channel:keyguard:invalidate"
    type: string
    persistent: true
    desc: "Pub/Sub channel: local-tier invalidations of hot keys (no data is stored)"
`

// ReportKey is the sorted set holding the report of instance id.
func ReportKey(id string) string { return RecordPrefix + "i:" + id }

// indexTrimAfter is how long an instance stays in the index after its
// last report.
const indexTrimAfter = 24 * time.Hour

type instanceMeta struct {
	Service  string `json:"service"`
	Host     string `json:"host,omitempty"`
	PID      int    `json:"pid,omitempty"`
	At       int64  `json:"at"` // unix ms of the report
	WindowMS int64  `json:"window_ms"`
}

func newMeta(service string, window time.Duration) instanceMeta {
	host, _ := os.Hostname()
	return instanceMeta{Service: service, Host: host, PID: os.Getpid(), WindowMS: window.Milliseconds()}
}

// Flush reports the current top keys to Redis now: the instance's sorted
// set is replaced and its index entry updated in one MULTI/EXEC, then
// index entries older than a day are removed. It also updates the
// metrics.
func (d *Detector) Flush(ctx context.Context, c redis.Cmdable) error {
	if d.opts.Service == "" {
		return fmt.Errorf("hotkey: report: DetectorOptions.Service is empty; name the service as the registry's owner field does")
	}
	top := d.Top()
	d.updateMetrics(top)
	now := time.Now()
	meta := d.meta
	meta.At = now.UnixMilli()
	mj, err := json.Marshal(meta)
	if err != nil {
		return err
	}
	key := ReportKey(d.id)
	pipe := c.TxPipeline()
	pipe.Del(ctx, key)
	if len(top) > 0 {
		zs := make([]redis.Z, len(top))
		for i := range top {
			zs[i] = redis.Z{Score: top[i].Rate, Member: top[i].Key}
		}
		pipe.ZAdd(ctx, key, zs...)
		pipe.PExpire(ctx, key, d.opts.ReportTTL)
	}
	pipe.HSet(ctx, RecordIndexKey, d.id, string(mj))
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("hotkey: report to %s: %w", key, err)
	}
	return trimIndex(ctx, c, now.Add(-indexTrimAfter))
}

// trimIndex removes index entries last reported before cutoff.
func trimIndex(ctx context.Context, c redis.Cmdable, cutoff time.Time) error {
	all, err := c.HGetAll(ctx, RecordIndexKey).Result()
	if err != nil {
		return fmt.Errorf("hotkey: read %s: %w", RecordIndexKey, err)
	}
	var old []string
	for id, v := range all {
		var m instanceMeta
		if json.Unmarshal([]byte(v), &m) != nil || time.UnixMilli(m.At).Before(cutoff) {
			old = append(old, id)
		}
	}
	if len(old) > 0 {
		return c.HDel(ctx, RecordIndexKey, old...).Err()
	}
	return nil
}

// InstanceReport is the last report of one instance.
type InstanceReport struct {
	ID      string
	Service string
	Host    string
	PID     int
	At      time.Time
	Window  time.Duration
	Keys    []KeyRate // hottest first
}

// KeyRate is a key and its operations per second.
type KeyRate struct {
	Key  string
	Rate float64
}

// ReadReports returns the reports of every instance that reported since
// since, sorted by service and id. It only reads.
func ReadReports(ctx context.Context, c redis.Cmdable, since time.Time) ([]InstanceReport, error) {
	all, err := c.HGetAll(ctx, RecordIndexKey).Result()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", RecordIndexKey, err)
	}
	var reps []InstanceReport
	for id, v := range all {
		var m instanceMeta
		if err := json.Unmarshal([]byte(v), &m); err != nil {
			continue // not ours; the next report of a live instance rewrites it
		}
		at := time.UnixMilli(m.At)
		if at.Before(since) {
			continue
		}
		reps = append(reps, InstanceReport{ID: id, Service: m.Service, Host: m.Host, PID: m.PID, At: at,
			Window: time.Duration(m.WindowMS) * time.Millisecond})
	}
	sort.Slice(reps, func(i, j int) bool {
		if reps[i].Service != reps[j].Service {
			return reps[i].Service < reps[j].Service
		}
		return reps[i].ID < reps[j].ID
	})
	if len(reps) == 0 {
		return nil, nil
	}
	pipe := c.Pipeline()
	cmds := make([]*redis.ZSliceCmd, len(reps))
	for i := range reps {
		cmds[i] = pipe.ZRevRangeWithScores(ctx, ReportKey(reps[i].ID), 0, -1)
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("read hot-key reports: %w", err)
	}
	for i := range reps {
		for _, z := range cmds[i].Val() {
			k, _ := z.Member.(string)
			reps[i].Keys = append(reps[i].Keys, KeyRate{Key: k, Rate: z.Score})
		}
	}
	return reps, nil
}
