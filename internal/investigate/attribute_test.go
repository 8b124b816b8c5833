package investigate

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/keyguard/keyguard/internal/monitor"
)

// feed parses lines (source, args…) and feeds them to a fresh Attributor
// that keeps keys starting with "promo:".
func feed(t *testing.T, lines ...string) *Attributor {
	t.Helper()
	a := NewAttributor(0, func(k string) bool { return strings.HasPrefix(k, "promo:") })
	for i, s := range lines {
		l, err := monitor.Parse(s)
		if err != nil {
			t.Fatalf("line %d %q: %v", i, s, err)
		}
		a.Feed(&l)
	}
	a.Flush()
	return a
}

func accessOf(a *Attributor, key, source string) *Access {
	for _, x := range a.Accesses() {
		if x.Key == key && x.Source == source {
			return x
		}
	}
	return nil
}

func TestAttributeScriptToCaller(t *testing.T) {
	a := feed(t,
		`100.000001 [0 10.0.0.5:1000] "evalsha" "1a2b3c4d5e6f" "1" "promo:sku:1001" "600"`,
		`100.000002 [0 lua] "hset" "promo:sku:1001" "activityId" "1" "discountType" "2"`,
		`100.000003 [0 lua] "pexpire" "promo:sku:1001" "600000"`,
		`100.000004 [0 10.0.0.7:2000] "get" "promo:other"`,
		`100.000005 [0 lua] "set" "promo:sku:1001" "x"`, // a script whose call MONITOR did not show
	)
	x := accessOf(a, "promo:sku:1001", "10.0.0.5:1000")
	if x == nil || x.Writes != 2 || x.ViaScript != 2 || x.Scripts["EVALSHA 1a2b3c4d"] != 2 {
		t.Fatalf("script writes not given to the caller: %+v", x)
	}
	if !x.Fields["activityId"] || !x.Fields["discountType"] || x.TTLs[600] != 1 {
		t.Errorf("fields or TTL: %+v", x)
	}
	if o := accessOf(a, "promo:sku:1001", SourceLua); o == nil || o.Writes != 1 || a.Orphaned != 1 {
		t.Errorf("orphaned script command: %+v, orphaned %d", o, a.Orphaned)
	}
	if r := accessOf(a, "promo:other", "10.0.0.7:2000"); r == nil || r.Reads != 1 || r.Writes != 0 {
		t.Errorf("reader: %+v", r)
	}
}

func TestAttributeMulti(t *testing.T) {
	a := feed(t,
		`1.1 [0 10.0.0.7:2000] "MULTI"`,
		`1.2 [0 10.0.0.7:2000] "HSET" "promo:sku:1001" "couponAmount" "10" "promoTotal" "30"`,
		`1.3 [0 10.0.0.5:1000] "SET" "promo:sku:1002" "{\"activityId\":1}" "EX" "600"`,
		`1.4 [0 10.0.0.7:2000] "PERSIST" "promo:sku:1001"`,
		`1.5 [0 10.0.0.7:2000] "EXEC"`,
		`2.1 [0 10.0.0.7:2000] "MULTI"`,
		`2.2 [0 10.0.0.7:2000] "DEL" "promo:sku:1001"`,
		`2.3 [0 10.0.0.7:2000] "DISCARD"`,
		`3.1 [0 10.0.0.8:3000] "MULTI"`,
		`3.2 [0 10.0.0.8:3000] "EVAL" "return 1" "1" "promo:sku:9"`,
		`3.3 [0 lua] "hset" "promo:sku:9" "f" "v"`,
		`3.4 [0 10.0.0.8:3000] "EXEC"`,
	)
	x := accessOf(a, "promo:sku:1001", "10.0.0.7:2000")
	if x == nil || x.Writes != 2 || x.ViaMulti != 2 || x.Commands["del"] != 0 || x.TTLs[-1] != 1 {
		t.Fatalf("MULTI block: %+v", x)
	}
	if got := slices.Sorted(func(yield func(string) bool) {
		for f := range x.Fields {
			if !yield(f) {
				return
			}
		}
	}); !slices.Equal(got, []string{"couponAmount", "promoTotal"}) {
		t.Errorf("fields %v", got)
	}
	s := accessOf(a, "promo:sku:1002", "10.0.0.5:1000")
	if s == nil || s.Kinds[KindJSON] != 1 || !s.Fields["activityId"] || s.TTLs[600] != 1 || s.ViaMulti != 0 {
		t.Errorf("SET between another client's MULTI and EXEC: %+v", s)
	}
	if e := accessOf(a, "promo:sku:9", "10.0.0.8:3000"); e == nil || e.ViaMulti != 1 || e.ViaScript != 1 {
		t.Errorf("script inside MULTI: %+v", e)
	}
}

func TestAttributeTTLsAndDB(t *testing.T) {
	at := time.Unix(1000, 0)
	a := NewAttributor(0, func(string) bool { return true })
	for _, args := range [][]string{
		{"SET", "k", "1", "PX", "1500"},
		{"SET", "k", "1", "KEEPTTL"},
		{"SETEX", "k", "30", "v"},
		{"EXPIREAT", "k", "1060"},
		{"GETEX", "k", "PERSIST"},
		{"RESTORE", "k", "0", "payload"},
		{"HINCRBY", "k", "n", "1"},
	} {
		a.Feed(&Line{Time: at, Source: "c:1", Args: args})
	}
	a.Feed(&Line{Time: at, DB: 1, Source: "c:1", Args: []string{"SET", "k", "v", "EX", "5"}})
	x := accessOf(a, "k", "c:1")
	want := map[int64]int{2: 1, 30: 1, 60: 1, -1: 2}
	if x == nil || len(x.TTLs) != len(want) || x.Writes != 7 {
		t.Fatalf("%+v", x)
	}
	for k, v := range want {
		if x.TTLs[k] != v {
			t.Errorf("TTL %d counted %d times, want %d (%v)", k, x.TTLs[k], v, x.TTLs)
		}
	}
}

// FuzzAttributor: any sequence of MONITOR lines is attributed without
// panicking (command arguments of any shape reach the TTL and field
// readers), and every access belongs to a kept key.
func FuzzAttributor(f *testing.F) {
	f.Add("1.1 [0 a:1] \"MULTI\"\n1.2 [0 a:1] \"set\" \"promo:k\" \"{\\\"a\\\":1}\" \"PXAT\" \"9\"\n1.3 [0 lua] \"hset\" \"promo:k\" \"f\"\n1.4 [0 a:1] \"EXEC\"")
	f.Add("1.1 [0 a:1] \"evalsha\" \"x\" \"1\" \"promo:k\"\n1.2 [0 lua] \"restore\" \"promo:k\" \"5\" \"\" \"ABSTTL\"\n1.3 [0 lua] \"getex\" \"promo:k\" \"EX\"")
	f.Add("1.1 [0 a:1] \"mset\" \"promo:a\" \"1\" \"promo:b\"\n1.2 [0 a:1] \"json.set\" \"promo:j\" \"$\" \"{\\\"x\\\":1\"")
	f.Add("1.1 [0 a:1] \"getex\" \"promo:k\"\n1.2 [0 a:1] \"restore\" \"promo:r\" \"1\"\n1.3 [0 a:1] \"set\" \"promo:s\"")
	f.Fuzz(func(t *testing.T, text string) {
		a := NewAttributor(-1, func(k string) bool { return strings.HasPrefix(k, "promo:") })
		for i, s := range strings.Split(text, "\n") {
			parse := monitor.Parse
			if i%2 == 1 {
				parse = monitor.ParseCut // a line the reader cut short
			}
			if l, err := parse(s); err == nil {
				a.Feed(&l)
			}
		}
		a.Flush()
		for _, x := range a.Accesses() {
			if !strings.HasPrefix(x.Key, "promo:") {
				t.Fatalf("access to a key not kept: %+v", x)
			}
		}
	})
}
