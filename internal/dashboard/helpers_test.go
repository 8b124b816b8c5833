package dashboard

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/registry"
)

// secretValue is written into every value of the test datasets: no page,
// API answer or metric may ever show it.
const secretValue = "VALUE-NEVER-SHOWN"

func testRegistry(t testing.TB) *registry.Registry {
	t.Helper()
	reg, err := registry.Load("testdata/keyguard.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// dataset is what writeDataset wrote.
type dataset struct {
	keys         map[string]int // per template
	noTTL        map[string]int
	unregistered int
	total        int
}

// writeDataset writes a known number of keys of every template but one
// (cache:unused), some without TTL, and two families of unregistered keys.
func writeDataset(t testing.TB, c redis.Cmdable, scale int) dataset {
	t.Helper()
	ctx := context.Background()
	d := dataset{keys: map[string]int{}, noTTL: map[string]int{}}
	pipe := c.Pipeline()
	n := 0
	flush := func() {
		if n >= 500 {
			if _, err := pipe.Exec(ctx); err != nil {
				t.Fatal(err)
			}
			n = 0
		}
	}
	add := func(template, key string, ttl time.Duration, write func(key string)) {
		write(key)
		if ttl > 0 {
			pipe.Expire(ctx, key, ttl)
		} else if template != "" {
			d.noTTL[template]++
		}
		if template != "" {
			d.keys[template]++
		} else {
			d.unregistered++
		}
		d.total++
		n++
		flush()
	}
	hash := func(fields int) func(string) {
		return func(k string) {
			args := []any{}
			for f := range fields {
				args = append(args, fmt.Sprintf("f%d", f), secretValue)
			}
			pipe.HSet(ctx, k, args...)
		}
	}
	str := func(size int) func(string) {
		return func(k string) { pipe.Set(ctx, k, secretValue+strings.Repeat("x", size), 0) }
	}
	for i := range 40 * scale {
		ttl := time.Hour
		if i < 2 {
			ttl = 0 // written around the SDK: no-ttl findings
		}
		add("order:order:{orderId:int}:base", fmt.Sprintf("order:order:%d:base", 1000+i), ttl, hash(3))
	}
	for i := range 10 * scale {
		add("order:order:{orderId:int}:items", fmt.Sprintf("order:order:%d:items", 1000+i), time.Hour, func(k string) {
			pipe.RPush(ctx, k, secretValue, secretValue, secretValue, secretValue, secretValue)
		})
	}
	for i := range 25 * scale {
		add("promo:sku:{skuId:int}", fmt.Sprintf("promo:sku:%d", 500+i), 10*time.Minute, hash(4))
	}
	for i := range 8 * scale {
		add("promo:activity:{activityId:int}:rules", fmt.Sprintf("promo:activity:%d:rules", 70+i), 30*time.Minute, str(200))
	}
	for i := range 30 * scale {
		add("auth:session:u{userId:int}", fmt.Sprintf("auth:session:u%d", 9000+i), 30*time.Minute, hash(2))
	}
	for i := range 15 * scale {
		add("cache:product:detail:{productNo}", fmt.Sprintf("cache:product:detail:p-%d", i), 10*time.Minute, str(1500))
	}
	add("seq:order:no", "seq:order:no", 0, func(k string) { pipe.Set(ctx, k, "123", 0) })
	for i := range 12 * scale {
		add("", fmt.Sprintf("legacy:user:%d:token", 100+i), 0, str(40))
	}
	for i := range 5 {
		add("", fmt.Sprintf("tmp_data_2024032115%04d", i), 2*time.Hour, str(10))
	}
	n = 500
	flush()
	return d
}

// fixedAuditor hands out reports (the last one again and again), or err.
type fixedAuditor struct {
	mu    sync.Mutex
	reps  []*Report
	err   error
	calls int
}

func (a *fixedAuditor) Audit(ctx context.Context) (*Report, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls++
	if a.err != nil {
		return nil, a.err
	}
	rep := a.reps[0]
	if len(a.reps) > 1 {
		a.reps = a.reps[1:]
	}
	return rep, nil
}

func (a *fixedAuditor) setErr(err error) {
	a.mu.Lock()
	a.err = err
	a.mu.Unlock()
}

func (a *fixedAuditor) Calls() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.calls
}

// smallReport is a hand-written report of the test registry: two
// domains' templates, one unregistered family, findings of three rules.
func smallReport(at time.Time) *Report {
	ttl := int64(-1)
	return &Report{
		Source: reportSource{Kind: "redis", Target: "redis://127.0.0.1:6379", Nodes: 1}, Registry: "testdata/keyguard.yaml",
		StartedAt: at, DurationMS: 1500, Complete: true,
		Summary: reportSummary{Keys: 130, Bytes: 64000, NoTTL: 14, Unregistered: 12, Findings: 15,
			ByRule: map[string]int64{"no-ttl": 2, "unregistered": 12, "hot-key": 1}},
		Groups: []reportGroup{
			{Name: "order:order:{orderId:int}:base", Kind: "template", Owner: "order-team", Domain: "order", Keys: 80, Bytes: 40000, NoTTL: 2,
				Types: map[string]int64{"hash": 80}, WithTTL: 78, Findings: 2,
				TTLHistogram: []reportTTLBucket{{Label: "1m-1h", Keys: 78, Bytes: 39000}, {Label: "no TTL", Keys: 2, Bytes: 1000}}},
			{Name: "promo:sku:{skuId:int}", Kind: "template", Owner: "promo-team", Domain: "promo", Keys: 38, Bytes: 20000,
				Types: map[string]int64{"hash": 38}, WithTTL: 38, Findings: 1},
			{Name: "legacy:user:{id:int}:token", Kind: "prefix", Keys: 12, Bytes: 4000, NoTTL: 12, Types: map[string]int64{"string": 12},
				Findings: 12, Example: "legacy:user:100:token", Suggested: "  - key: \"legacy:user:{id:int}:token\"\n    type: string\n"},
		},
		TopKeys: []reportTopKey{{Key: "order:order:1:base", Type: "hash", Bytes: 900, Elements: 3, TTLMS: &ttl, Template: "order:order:{orderId:int}:base"}},
		Findings: []reportFinding{
			{Finding: finding.Finding{Rule: "no-ttl", Severity: finding.Error, Key: "order:order:1:base", Template: "order:order:{orderId:int}:base", Owner: "order-team", Message: "no TTL"}},
			{Finding: finding.Finding{Rule: "no-ttl", Severity: finding.Error, Key: "order:order:2:base", Template: "order:order:{orderId:int}:base", Owner: "order-team", Message: "no TTL"}},
			{Finding: finding.Finding{Rule: "hot-key", Severity: finding.Warning, Key: "promo:sku:7", Template: "promo:sku:{skuId:int}", Owner: "promo-team", Message: "LFU counter 200"}},
			{Finding: finding.Finding{Rule: "unregistered", Severity: finding.Error, Key: "legacy:user:100:token", Message: "matches no template"}},
		},
		FindingsOmitted: map[string]int64{"unregistered": 11},
		TTLHistogram:    []reportTTLBucket{{Label: "1m-1h", Keys: 116, Bytes: 60000}, {Label: "no TTL", Keys: 14, Bytes: 4000}},
		UnusedTemplates: []string{"cache:unused:{id:int}"},
	}
}

// newTestServer is a server on a fixed auditor, its handler behind
// httptest, and the clock at now.
func newTestServer(t testing.TB, cfg Config) (*Server, *httptest.Server) {
	t.Helper()
	if cfg.Registry == nil {
		cfg.Registry = testRegistry(t)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(hs.Close)
	return s, hs
}

// get fetches path and returns the status and body.
func get(t testing.TB, hs *httptest.Server, path string) (int, string) {
	t.Helper()
	resp, err := hs.Client().Get(hs.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func reportJSONBytes(t testing.TB, rep *Report) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := writeReport(&buf, rep); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
