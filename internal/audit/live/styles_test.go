package live

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/audit/inventory"
	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/redistest"
	"github.com/keyguard/keyguard/registry"
)

// sharedKeyspace writes n keys of a dozen templates under four owners.
// With mixed, a few values of promo:sku hold the order team's
// {couponAmount, promoTotal} besides the promo team's fields (the order
// team writes those fields in its own order:order:{id}:promo keys, and
// nowhere pure in promo:sku), and a few product caches hold the user
// team's profile fields. Optional fields (endTime in a third of the sku
// keys) and fields every writer writes (updatedAt) are everywhere; two
// sku keys hold a debug field nobody else writes. It returns the keys
// that must be found: mixed-schema key → the owner it must name.
func sharedKeyspace(tb testing.TB, c redis.Cmdable, n int, mixed bool) map[string]string {
	tb.Helper()
	ctx := context.Background()
	want := map[string]string{}
	p := c.Pipeline()
	for i := range n {
		switch i % 12 {
		case 0:
			p.HSet(ctx, fmt.Sprintf("order:order:%d:base", i), "orderId", i, "amount", i%500, "status", "paid", "updatedAt", i)
		case 1:
			p.HSet(ctx, fmt.Sprintf("order:order:%d:promo", i), "couponAmount", 10, "promoTotal", 30, "updatedAt", i)
		case 2:
			p.RPush(ctx, fmt.Sprintf("order:order:%d:items", i), "sku1", "sku2")
		case 3, 4:
			k := fmt.Sprintf("promo:sku:%d", i)
			args := []any{"activityId", i, "discountType", 1, "discountValue", 50, "updatedAt", i}
			if i%3 == 0 {
				args = append(args, "endTime", i)
			}
			switch {
			case mixed && i%1200 == 3:
				args = append(args, "couponAmount", 10, "promoTotal", 30)
				want[k] = "order-team"
			case i == 4 || i == 16:
				args = append(args, "debug", 1)
			}
			p.HSet(ctx, k, args...)
		case 5:
			p.Set(ctx, fmt.Sprintf("promo:activity:%d:detail", i), `{"title":"t","rules":[1,2],"updatedAt":1}`, time.Hour)
		case 6:
			p.HSet(ctx, fmt.Sprintf("user:profile:%d:base", i), "nick", "n", "avatar", "a.png", "level", 3, "updatedAt", i)
		case 7:
			p.Set(ctx, fmt.Sprintf("user:profile:%d:prefs", i), `{"lang":"zh","theme":"dark"}`, time.Hour)
		case 8:
			k := fmt.Sprintf("cache:product:detail:p%d", i)
			v := fmt.Sprintf(`{"name":"phone","price":%d,"stock":3,"updatedAt":1}`, i%2000)
			if mixed && i%2000 == 8 {
				v = `{"name":"phone","price":1,"stock":3,"nick":"n","avatar":"a.png","level":3}`
				want[k] = "user-team"
			}
			p.Set(ctx, k, v, time.Hour)
		case 9:
			p.HSet(ctx, fmt.Sprintf("catalog:sku:%d:stock", i), "qty", 5, "warehouse", "sh")
		case 10:
			p.HSet(ctx, fmt.Sprintf("auth:session:u%d", i), "token", "t", "uid", i, "updatedAt", i)
		default:
			p.ZAdd(ctx, fmt.Sprintf("rank:board:%d", i), redis.Z{Score: 1, Member: "a"})
		}
		if p.Len() >= 4000 {
			if _, err := p.Exec(ctx); err != nil {
				tb.Fatal(err)
			}
		}
	}
	if _, err := p.Exec(ctx); err != nil {
		tb.Fatal(err)
	}
	return want
}

// schemaFound is mixed-schema and schema findings as key → owner named
// in the message (or "" when none is).
func schemaFound(rep *report.Report, rule string) map[string]string {
	out := map[string]string{}
	for _, f := range rep.Findings {
		if f.Rule != rule {
			continue
		}
		owner := ""
		for _, o := range []string{"order-team", "promo-team", "user-team", "catalog-team"} {
			if strings.Contains(f.Message, "which "+o+" writes") {
				owner = o
			}
		}
		out[f.Key] = owner
	}
	return out
}

// A second owner's style in a few values of another owner's template, and
// nowhere pure in it, is found in every such value, live and from an RDB,
// naming the other owner; optional and common fields raise nothing; a
// clean keyspace gives no finding.
func TestValueStylesAcrossOwners(t *testing.T) {
	const n = 120_000
	for _, tc := range []struct {
		name     string
		registry string
		mixed    bool
	}{
		{"learned", "testdata/styles.yaml", true},
		{"declared", "testdata/styles_declared.yaml", true},
		{"clean", "testdata/styles.yaml", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg, err := registry.Load(tc.registry)
			if err != nil {
				t.Fatal(err)
			}
			s := redistest.Start(t)
			want := sharedKeyspace(t, s.Client(t), n, tc.mixed)
			live, err := Run(context.Background(), reg, standalone(s), Options{})
			if err != nil {
				t.Fatal(err)
			}
			for name, rep := range map[string]*report.Report{"live": live.Report, "rdb": dumpReport(t, s, reg, inventory.Options{})} {
				got := schemaFound(rep, "mixed-schema")
				if !mapsEqual(got, want) {
					t.Errorf("%s: mixed-schema %d keys, want %d:\n got %v\nwant %v", name, len(got), len(want), sample(got), sample(want))
				}
				schema := schemaFound(rep, "schema")
				switch {
				case tc.name == "declared" && (len(schema) != 2 || !hasKeys(schema, "promo:sku:4", "promo:sku:16")):
					t.Errorf("%s: schema findings %v, want the two keys with the undeclared debug field", name, schema)
				case tc.name != "declared" && len(schema) != 0:
					t.Errorf("%s: schema findings without declared fields: %v", name, schema)
				}
				if tc.mixed && rep.Summary.ByRule["mixed-schema"] != int64(len(want)) {
					t.Errorf("%s: by_rule mixed-schema %d, want %d", name, rep.Summary.ByRule["mixed-schema"], len(want))
				}
				for _, f := range rep.Findings {
					if f.Rule == "mixed-schema" && want[f.Key] == "order-team" && !strings.Contains(f.Message, "order:order:{id:int}:promo") {
						t.Errorf("%s: %s names the wrong template: %s", name, f.Key, f.Message)
						break
					}
				}
			}
			if tc.name == "learned" {
				skipFields(t, s, reg, filepath.Join(s.Dir, "dump.rdb"))
			}
		})
	}
}

// skipFields audits s and its snapshot again without reading field
// names: no field probe reaches the server, no value-format finding, and
// the reports say so.
func skipFields(t *testing.T, s *redistest.Server, reg *registry.Registry, dump string) {
	t.Helper()
	ctx := context.Background()
	probes := func() int64 { // HRANDFIELD and GETRANGE calls so far
		info := s.Client(t).Info(ctx, "commandstats").Val()
		var n int64
		for _, l := range strings.Split(info, "\n") {
			if strings.HasPrefix(l, "cmdstat_hrandfield:") || strings.HasPrefix(l, "cmdstat_getrange:") {
				var calls int64
				fmt.Sscanf(l[strings.Index(l, "calls="):], "calls=%d", &calls)
				n += calls
			}
		}
		return n
	}
	before := probes()
	inv := inventory.Options{SkipFields: true}
	live, err := Run(ctx, reg, standalone(s), Options{Inventory: inv})
	if err != nil {
		t.Fatal(err)
	}
	// One of each on connect: the walker's permission check (on a key
	// that does not exist). None per key.
	if n := probes() - before; n != 2 {
		t.Errorf("SkipFields: %d HRANDFIELD and GETRANGE calls reached the server, want the 2 of the permission check", n)
	}
	for name, rep := range map[string]*report.Report{"live": live.Report, "rdb": rdbReport(t, dump, reg, inv)} {
		if n := rep.Summary.ByRule["mixed-schema"] + rep.Summary.ByRule["schema"]; n != 0 || !slices.ContainsFunc(rep.Notes, func(n string) bool {
			return strings.Contains(n, "value formats were not read")
		}) {
			t.Errorf("SkipFields, %s: %d value-format findings, notes %q", name, n, rep.Notes)
		}
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func hasKeys(m map[string]string, keys ...string) bool {
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			return false
		}
	}
	return true
}

// sample lists a few entries of m for a message.
func sample(m map[string]string) []string {
	var out []string
	for k, v := range m {
		out = append(out, k+"→"+v)
	}
	slices.Sort(out)
	return out[:min(len(out), 6)]
}
