package investigate

import (
	"slices"
	"testing"
	"time"

	"github.com/keyguard/keyguard/registry"
)

// series builds PTTL samples every interval from readings.
func series(interval time.Duration, pttl ...int64) []TTLSample {
	out := make([]TTLSample, len(pttl))
	for i, p := range pttl {
		out[i] = TTLSample{At: Millis(time.Duration(i) * interval), PTTL: p}
	}
	return out
}

func TestAnalyzeTTL(t *testing.T) {
	iv := 500 * time.Millisecond
	for _, tt := range []struct {
		name     string
		samples  []TTLSample
		policies []int64
		resets   int
		cleared  int
		gone     int
	}{
		{"steady decay", series(iv, 600000, 599500, 599000, 598500), []int64{600}, 0, 0, 0},
		{"no TTL", series(iv, -1, -1, -1), []int64{-1}, 0, 0, 0},
		{"reset to the same TTL", series(iv, 599000, 598500, 599800, 599300, 599900), []int64{600}, 2, 0, 0},
		{"two writers: 10m and none", series(iv, 599900, 599400, -1, -1, 599800, 599300, -1), []int64{-1, 600}, 1, 2, 0},
		{"two writers: 10m and 5m", series(iv, 599900, 299800, 299300, 599700, 299900), []int64{300, 600}, 3, 0, 0},
		{"first reading above every later policy", series(iv, 3599000, 299900, 299400), []int64{300, 3599}, 1, 0, 0},
		{"expired and written again", series(iv, 400, -2, -2, 599900), []int64{600}, 1, 0, 1},
		{"jitter within tolerance", series(iv, 600000, 599520, 599010), []int64{600}, 0, 0, 0},
	} {
		w := analyzeTTL("k", tt.samples, iv)
		if !slices.Equal(w.Policies, tt.policies) || w.Resets != tt.resets || w.Cleared != tt.cleared || w.Gone != tt.gone {
			t.Errorf("%s: policies %v resets %d cleared %d gone %d; want %v %d %d %d",
				tt.name, w.Policies, w.Resets, w.Cleared, w.Gone, tt.policies, tt.resets, tt.cleared, tt.gone)
		}
		if w.Fluctuates() != (len(tt.policies) > 1) {
			t.Errorf("%s: Fluctuates %v", tt.name, w.Fluctuates())
		}
	}
}

func TestParseClientList(t *testing.T) {
	text := "id=3 addr=127.0.0.1:50000 laddr=127.0.0.1:6379 fd=8 name=promo-service age=2 idle=0 flags=N db=0 sub=0 psub=0 ssub=0 multi=-1 qbuf=0 qbuf-free=0 argv-mem=0 multi-mem=0 rbs=1024 rbp=0 obl=0 oll=0 omem=0 tot-mem=1800 events=r cmd=hset user=default redir=-1 resp=2 lib-name=go-redis(keyguard) lib-ver=9.23.0\r\n" +
		"id=4 addr=/tmp/r.sock:0 laddr=/tmp/r.sock:0 fd=9 name= age=1 idle=1 flags=U db=0 cmd=get user=app redir=-1 resp=2\n" +
		"garbage line\n"
	cs := ParseClientList(text)
	if len(cs) != 2 {
		t.Fatalf("%+v", cs)
	}
	if c := cs[0]; c.ID != 3 || c.Name != "promo-service" || c.LibName != "go-redis(keyguard)" || c.LibVer != "9.23.0" || c.User != "default" || c.Service() != "promo-service" {
		t.Errorf("%+v", c)
	}
	if c := cs[1]; c.Addr != "/tmp/r.sock:0" || c.Named() || c.Service() != "/tmp/r.sock user app" || monitorSourceAddr("unix:/tmp/r.sock") != c.Addr {
		t.Errorf("%+v service %q", c, c.Service())
	}
	anon := Client{Addr: "10.0.0.7:5000", LibName: "jedis"}
	if anon.Service() != "10.0.0.7 lib jedis" {
		t.Errorf("unnamed client service %q", anon.Service())
	}
}

const styleRegistry = `
version: 1
domains:
  promo: {owner: promo-team}
  order: {owner: order-team}
keys:
  - key: "promo:sku:{skuId:int}"
    type: hash
    ttl: 10m
    fields: [activityId, discountType, discountValue]
  - key: "order:sku:{skuId:int}:settle-preview"
    type: hash
    ttl: 5m
    fields: [couponAmount, promoTotal]
  - key: "cart:{userId:int}"
    type: hash
    ttl: 1h
  - key: "open:{id:int}"
    type: hash
    ttl: 1h
    fields: [a]
    fields_extra: allow
`

func testReg(t *testing.T, src string) *registry.Registry {
	t.Helper()
	reg, err := registry.Parse("test.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func obs(key, from string, fields ...string) Observation {
	return Observation{Key: key, From: from, Shape: newShape("hash", "", fields, len(fields))}
}

func labels(set *StyleSet, idx []int) []string {
	var out []string
	for _, i := range idx {
		out = append(out, set.Styles[i].Label())
	}
	return out
}

func TestGroupStylesDeclared(t *testing.T) {
	reg := testReg(t, styleRegistry)
	set := GroupStyles([]Observation{
		obs("promo:sku:1", "value", "activityId", "discountType", "discountValue", "couponAmount", "promoTotal", registry.NSField),
		obs("promo:sku:2", "value", "activityId", "discountType", "discountValue"),
		obs("promo:sku:3", "value", "activityId", "extra1"),
		obs("open:1", "value", "a", "anything", "couponAmount"),
	}, DeclaredStyles(reg), reg.Lookup)
	mixed := set.Obs[0]
	if !mixed.Mixed() || !slices.Equal(labels(set, mixed.Styles), []string{"{activityId, discountType, discountValue}", "{couponAmount, promoTotal}"}) {
		t.Errorf("value with another template's fields: %v %v", mixed.Styles, labels(set, mixed.Styles))
	}
	if s := set.Styles[mixed.Styles[1]]; s.Declared != "order:sku:{skuId:int}:settle-preview" || s.Owner != "order-team" {
		t.Errorf("the foreign style names its template: %+v", s)
	}
	if set.Obs[1].Mixed() || len(set.Obs[1].Extra) != 0 {
		t.Errorf("clean value: %+v", set.Obs[1])
	}
	if o := set.Obs[2]; !slices.Equal(o.Extra, []string{"extra1"}) || !o.Mixed() {
		t.Errorf("undeclared field: extra %v styles %v", o.Extra, labels(set, o.Styles))
	}
	if o := set.Obs[3]; o.Mixed() || len(o.Extra) != 0 {
		t.Errorf("fields_extra: allow: %+v", o)
	}
	for _, s := range set.Styles {
		if len(s.Keys) == 0 {
			t.Errorf("unused style kept: %+v", s)
		}
	}
}

func TestGroupStylesLearned(t *testing.T) {
	reg := testReg(t, styleRegistry)
	set := GroupStyles([]Observation{
		obs("cart:1", "value", "x", "y", "a", "b", "c"), // mixed, seen first
		obs("cart:1", "watch", "a", "b", "c"),
		obs("cart:1", "write", "x", "y"),
		obs("cart:2", "value", "a", "b"), // part of a style
		{Key: "cart:3", From: "value", Shape: newShape("hash", "", []string{"1001", "1002", "1003", "1004"}, 4)},
		{Key: "cart:4", From: "value", Shape: Shape{Type: "string", Kind: KindText}},
	}, DeclaredStyles(reg), reg.Lookup)
	if !set.Obs[0].Mixed() || len(set.Styles) != 3 {
		t.Fatalf("styles %+v; first %v", set.Styles, set.Obs[0].Styles)
	}
	if got := labels(set, set.Obs[0].Styles); !slices.Contains(got, "{a, b, c}") || !slices.Contains(got, "{x, y}") {
		t.Errorf("mixed value explained by %v", got)
	}
	if set.Obs[3].Mixed() || labels(set, set.Obs[3].Styles)[0] != "{a, b, c}" {
		t.Errorf("a subset joins its style: %v", labels(set, set.Obs[3].Styles))
	}
	if len(set.Obs[4].Styles) != 0 || !set.Obs[4].Shape.Open {
		t.Errorf("a map keyed by IDs has no style: %+v", set.Obs[4])
	}
	if labels(set, set.Obs[5].Styles)[0] != "(text)" {
		t.Errorf("text value: %v", labels(set, set.Obs[5].Styles))
	}
}

// TestGroupStylesGiven: a style passed in (learned elsewhere, no template)
// explains values as declared fields do.
func TestGroupStylesGiven(t *testing.T) {
	reg := testReg(t, styleRegistry)
	given := append(DeclaredStyles(reg), DeclaredStyle{Name: "learned from order-team's keys", Owner: "order-team", Fields: []string{"x", "y", "z"}})
	set := GroupStyles([]Observation{obs("cart:1", "value", "a", "b", "x", "y")}, given, reg.Lookup)
	o := set.Obs[0]
	if !o.Mixed() || set.Styles[o.Styles[0]].Owner != "order-team" || set.Styles[o.Styles[1]].Label() != "{a, b}" {
		t.Errorf("styles %v: %+v", labels(set, o.Styles), set.Styles)
	}
}
