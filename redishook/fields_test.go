package redishook

import (
	"bytes"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/guard"
	"github.com/keyguard/keyguard/internal/rediscmd"
)

// jsonValue is a value whose MarshalBinary gives JSON, as a struct with a
// MarshalBinary method for go-redis would.
type jsonValue string

func (v jsonValue) MarshalBinary() ([]byte, error) { return []byte(v), nil }

// TestSchemaClassify: writes of fields a template does not declare, and
// values of a JSON template that are not JSON objects, are refused in
// enforce mode and let through in the others.
func TestSchemaClassify(t *testing.T) {
	sha := guard.ScriptSHA()
	n := int64(1)
	for _, tt := range []struct {
		name    string
		service string
		args    []any
		want    Reason
	}{
		// Hashes.
		{"declared fields", "order-team", []any{"hset", "order:order:1:promo", "couponAmount", "10", "promoTotal", "90"}, 0},
		{"one undeclared field", "order-team", []any{"hset", "order:order:1:promo", "couponAmount", "10", "activityId", "7"}, ReasonSchema},
		{"field as bytes", "order-team", []any{"hset", "order:order:1:promo", []byte("promoTotal"), 1}, 0},
		{"undeclared field as bytes", "order-team", []any{"hset", "order:order:1:promo", []byte("promoTotalX"), 1}, ReasonSchema},
		{"field name that is a value, not a field", "order-team", []any{"hset", "order:order:1:promo", "promoTotal", "activityId"}, 0},
		{"hmset", "order-team", []any{"hmset", "order:order:1:promo", "couponAmount", "1", "x", "2"}, ReasonSchema},
		{"hsetnx declared", "order-team", []any{"hsetnx", "order:order:1:promo", "couponAmount", "1"}, 0},
		{"hsetnx undeclared", "order-team", []any{"HSETNX", "order:order:1:promo", "x", "1"}, ReasonSchema},
		{"hincrby declared", "order-team", []any{"hincrby", "order:order:1:promo", "promoTotal", 5}, 0},
		{"hincrby undeclared", "order-team", []any{"hincrby", "order:order:1:promo", "total", 5}, ReasonSchema},
		{"hincrbyfloat undeclared", "order-team", []any{"hincrbyfloat", "order:order:1:promo", "total", 0.5}, ReasonSchema},
		{"hdel of an undeclared field cleans up", "order-team", []any{"hdel", "order:order:1:promo", "x"}, 0},
		{"hgetall", "order-team", []any{"hgetall", "order:order:1:promo"}, 0},
		{"owner field on an unguarded hash", "order-team", []any{"hsetnx", "order:order:1:promo", "__ns__", "order-team"}, ReasonSchema},
		{"open field set", "order-team", []any{"hset", "order:prefs:7", "lang", "zh", "theme", "dark"}, 0},
		{"template without fields", "order-team", []any{"hset", "order:order:1:base", "anything", "1"}, 0},
		{"numeric field name", "order-team", []any{"hset", "order:order:1:promo", 1, "x"}, ReasonSchema},
		{"foreign writer: the owner rule comes first", "order-team", []any{"hset", "promo:activity:1", "couponAmount", "10"}, ReasonNotWriter},
		{"owner, declared", "promo-team", []any{"hset", "promo:activity:1", "activityId", "7", "discountType", "PCT"}, 0},
		{"owner, the other team's field", "promo-team", []any{"hset", "promo:activity:1", "activityId", "7", "couponAmount", "10"}, ReasonSchema},
		{"guard claim (best-effort mode)", "promo-team", []any{"hsetnx", "promo:activity:1", "__ns__", "promo-team"}, 0},
		{"owner field set by hand", "promo-team", []any{"hset", "promo:activity:1", "__ns__", "promo-team"}, ReasonSchema},
		{"guard write, declared", "promo-team", []any{"evalsha", sha, 1, "promo:activity:1", "set", "promo-team", int64(600000), "activityId", "7", "discountValue", "5"}, 0},
		{"guard write, undeclared", "promo-team", []any{"evalsha", sha, 1, "promo:activity:1", "set", "promo-team", int64(600000), "activityId", "7", "couponAmount", "10"}, ReasonSchema},
		{"guard write by EVAL, undeclared", "promo-team", []any{"eval", guard.Script(), 1, "promo:activity:1", "set", "promo-team", int64(0), "couponAmount", "10"}, ReasonSchema},
		{"guard delete", "promo-team", []any{"evalsha", sha, 1, "promo:activity:1", "del", "promo-team"}, 0},
		{"another script", "promo-team", []any{"evalsha", strings.Repeat("0", 40), 1, "promo:activity:1", "set", "promo-team", int64(0), "couponAmount", "10"}, 0},
		// JSON strings.
		{"json object", "order-team", []any{"set", "order:rule:1", `{"threshold":100,"discount":5}`, "ex", 60}, 0},
		{"json object as bytes", "order-team", []any{"set", "order:rule:1", []byte(` {"discount": {"pct": [5]}} `), "ex", 60}, 0},
		{"json key that looks like a number", "order-team", []any{"set", "order:rule:1", `{"1":true}`, "ex", 60}, 0},
		{"json from MarshalBinary", "order-team", []any{"set", "order:rule:1", jsonValue(`{"threshold":1}`), "ex", 60}, 0},
		{"json undeclared key", "order-team", []any{"set", "order:rule:1", `{"threshold":100,"couponAmount":5}`, "ex", 60}, ReasonSchema},
		{"json undeclared key, escaped", "order-team", []any{"set", "order:rule:1", `{"thres\u0068old":1,"x\"":2}`, "ex", 60}, ReasonSchema},
		{"json from MarshalBinary, undeclared", "order-team", []any{"set", "order:rule:1", jsonValue(`{"y":1}`), "ex", 60}, ReasonSchema},
		{"not an object", "order-team", []any{"set", "order:rule:1", "100", "ex", 60}, ReasonSchema},
		{"an array", "order-team", []any{"set", "order:rule:1", `[{"threshold":1}]`, "ex", 60}, ReasonSchema},
		{"broken json", "order-team", []any{"set", "order:rule:1", `{"threshold":`, "ex", 60}, ReasonSchema},
		{"a number", "order-team", []any{"set", "order:rule:1", 100, "ex", 60}, ReasonSchema},
		{"a pointer to a number", "order-team", []any{"set", "order:rule:1", &n, "ex", 60}, ReasonSchema},
		{"setex checks the value, not the seconds", "order-team", []any{"setex", "order:rule:1", 60, `{"discount":1}`}, 0},
		{"setex undeclared", "order-team", []any{"setex", "order:rule:1", 60, `{"z":1}`}, ReasonSchema},
		{"psetex not an object", "order-team", []any{"psetex", "order:rule:1", 60000, "x"}, ReasonSchema},
		{"mset: the TTL rule comes first", "order-team", []any{"mset", "order:rule:1", `{"discount":1}`}, ReasonNoTTL},
		{"append edits in place", "order-team", []any{"append", "order:rule:1", "x"}, ReasonSchema},
		{"incr", "order-team", []any{"incr", "order:rule:1"}, ReasonSchema},
		{"setrange", "order-team", []any{"setrange", "order:rule:1", 0, "{"}, ReasonSchema},
		{"getdel", "order-team", []any{"getdel", "order:rule:1"}, 0},
		{"expire", "order-team", []any{"expire", "order:rule:1", 60}, 0},
		{"open json object", "order-team", []any{"set", "order:tags:1", `{"a":1,"zz":2}`, "ex", 60}, 0},
		{"open json, not an object", "order-team", []any{"set", "order:tags:1", `plain`, "ex", 60}, ReasonSchema},
		{"json template without fields", "order-team", []any{"set", "order:cache:1", `plain`, "ex", 60}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, mode := range []Mode{Observe, Warn, Enforce} {
				h, _ := newHook(t, tt.service, mode)
				err := h.command(cmdOf(tt.args...))
				var d *DeniedError
				switch {
				case mode != Enforce || tt.want == 0:
					if err != nil {
						t.Fatalf("%s: %v", mode, err)
					}
				case !errors.As(err, &d) || d.Reason != tt.want:
					t.Fatalf("enforce: got %v, want %s", err, tt.want)
				}
				// The schema counter moves in every mode, exactly when the
				// write breaks the declared format.
				if mode != Enforce || tt.want == ReasonSchema || tt.want == 0 {
					got := schemaCount(h)
					if want := b2f(tt.want == ReasonSchema); got != want {
						t.Fatalf("%s: schema writes %v, want %v", mode, got, want)
					}
				}
			}
		})
	}
}

func schemaCount(h *Hook) float64 {
	n := 0.0
	for i := range h.ents {
		if c := h.ents[i].schema; c != nil {
			n += testutil.ToFloat64(c)
		}
	}
	return n
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// TestSchemaDenied: the error names the key, template, owner, the
// undeclared fields and the declared set, and the refusal is counted.
func TestSchemaDenied(t *testing.T) {
	h, pr := newHook(t, "promo-team", Enforce)
	err := h.command(cmdOf("hset", "promo:activity:1001", "activityId", "7", "couponAmount", "10", []byte("promoTotal"), "90"))
	var d *DeniedError
	if !errors.As(err, &d) || d.Reason != ReasonSchema {
		t.Fatalf("got %v", err)
	}
	if d.Key != "promo:activity:1001" || d.Template != "promo:activity:{skuId:int}" || d.Owner != "promo-team" || d.Command != "hset" {
		t.Errorf("got %+v", *d)
	}
	if !slices.Equal(d.Undeclared, []string{"couponAmount", "promoTotal"}) || !slices.Equal(d.Declared, []string{"activityId", "discountType", "discountValue"}) {
		t.Errorf("undeclared %q, declared %q", d.Undeclared, d.Declared)
	}
	for _, s := range []string{`"promo:activity:1001"`, `"promo:activity:{skuId:int}"`, `["couponAmount" "promoTotal"]`, `["activityId" "discountType" "discountValue"]`, "fields in the registry"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("message %q lacks %s", err, s)
		}
	}
	d.Declared[0] = "changed" // the error's copy, not the registry's
	if h.reg.Entries[d.entryIndex(t, h)].Fields[0] != "activityId" {
		t.Error("DeniedError.Declared aliases the registry")
	}
	es := &h.ents[d.entryIndex(t, h)]
	if testutil.ToFloat64(es.denied) != 1 || testutil.ToFloat64(es.schema) != 1 {
		t.Errorf("denied %v, schema %v; want 1 and 1", testutil.ToFloat64(es.denied), testutil.ToFloat64(es.schema))
	}
	lintMetrics(t, pr)

	// At most maxUndeclared names, each clipped.
	args := []any{"hset", "promo:activity:1"}
	for i := range 40 {
		args = append(args, strings.Repeat("x", 300)+string(rune('a'+i%26))+string(rune('a'+i/26)), "v")
	}
	if err := h.command(cmdOf(args...)); !errors.As(err, &d) || len(d.Undeclared) != maxUndeclared || len(d.Undeclared[0]) > 210 {
		t.Fatalf("got %d names (%v)", len(d.Undeclared), err)
	}

	for _, tt := range []struct {
		args []any
		want string
	}{
		{[]any{"set", "order:rule:1", "100", "ex", 60}, "the value is not one"},
		{[]any{"incr", "order:rule:1"}, "INCR edits the value in place"},
		{[]any{"set", "order:rule:1", `{"x":1}`, "ex", 60}, `not ["x"]`},
	} {
		err := New(testRegistry(t), Options{Service: "order-team", Mode: Enforce}).command(cmdOf(tt.args...))
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), `["threshold" "discount" "1"]`) {
			t.Errorf("%v: %v, want it to contain %q and the declared fields", tt.args, err, tt.want)
		}
	}
}

// TestSchemaWarn: warn mode sends the write, counts it and logs the
// undeclared fields; enforce mode logs its refusal the same way.
func TestSchemaWarn(t *testing.T) {
	for _, mode := range []Mode{Warn, Enforce} {
		var buf bytes.Buffer
		h := New(testRegistry(t), Options{Service: "order-team", Mode: mode, Logger: slog.New(slog.NewTextHandler(&buf, nil))})
		err := h.command(cmdOf("hset", "order:order:9:promo", "couponAmount", "1", "activityId", "7"))
		if (err != nil) != (mode == Enforce) {
			t.Fatalf("%s: %v", mode, err)
		}
		line := buf.String()
		for _, s := range []string{"reason=schema", "undeclared=[activityId]", "declared=\"[couponAmount promoTotal]\"", "template=order:order:{orderId:int}:promo"} {
			if !strings.Contains(line, s) {
				t.Errorf("%s: log %q lacks %s", mode, line, s)
			}
		}
		if got := schemaCount(h); got != 1 {
			t.Errorf("%s: schema writes %v", mode, got)
		}
	}
}

// TestSchemaPipeline: one undeclared field refuses the whole pipeline or
// transaction, as any other violation does.
func TestSchemaPipeline(t *testing.T) {
	for _, tt := range []struct {
		name string
		cmds [][]any
		want Reason
	}{
		{"declared", [][]any{{"hset", "order:order:1:promo", "couponAmount", "1"}, {"set", "order:rule:1", `{"discount":1}`, "ex", 9}}, 0},
		{"one undeclared", [][]any{{"hset", "order:order:1:promo", "couponAmount", "1"}, {"hset", "order:order:1:promo", "activityId", "1"}}, ReasonSchema},
		{"tx", [][]any{{"multi"}, {"set", "order:rule:1", `{"discount":1}`, "ex", 9}, {"set", "order:rule:2", `[]`, "ex", 9}, {"exec"}}, ReasonSchema},
		{"mset of two json keys then expire", [][]any{{"mset", "order:rule:1", `{"discount":1}`, "order:rule:2", `{"zz":1}`},
			{"expire", "order:rule:1", 9}, {"expire", "order:rule:2", 9}}, ReasonSchema},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h, _ := newHook(t, "order-team", Enforce)
			var cmds []redis.Cmder
			for _, a := range tt.cmds {
				cmds = append(cmds, cmdOf(a...))
			}
			err := h.pipeline(cmds)
			var d *DeniedError
			switch {
			case tt.want == 0 && err != nil:
				t.Fatal(err)
			case tt.want != 0 && (!errors.As(err, &d) || d.Reason != tt.want):
				t.Fatalf("got %v, want %s", err, tt.want)
			}
		})
	}
}

// TestFieldCommands: every Redis 7 command that writes a hash or a string
// is known to the field check, as a command that writes fields (or a
// whole value), one that edits a value in place, or one that writes no
// field. A new command in the table fails here until it is placed.
func TestFieldCommands(t *testing.T) {
	hashFields := []string{"hset", "hmset", "hsetnx", "hincrby", "hincrbyfloat"}
	hashNone := []string{"hdel"}
	values := map[string]int{"set": 1, "setnx": 1, "getset": 1, "mset": 1, "msetnx": 1, "setex": 2, "psetex": 2} // value at key + n
	stringNone := []string{"getdel", "getex"}
	seen := 0
	for _, c := range rediscmd.Commands() {
		if c.Class != rediscmd.ClassWrite || c.ACL&(rediscmd.CatHash|rediscmd.CatString|rediscmd.CatBitmap) == 0 {
			continue
		}
		seen++
		var got []string
		collect := func(f string) { got = append(got, f) }
		switch {
		case slices.Contains(hashFields, c.Name):
			args := []any{c.Name, "k", "f1", "1"}
			if c.Name == "hset" || c.Name == "hmset" {
				args = append(args, "f2", "2")
			}
			writtenFields(fieldsHash, c.Name, args, 1, "", collect)
			if got[0] != "f1" || len(got) != len(args)/2-1 {
				t.Errorf("%s: fields %q", c.Name, got)
			}
		case slices.Contains(hashNone, c.Name):
			writtenFields(fieldsHash, c.Name, []any{c.Name, "k", "f1"}, 1, "", collect)
			if len(got) != 0 {
				t.Errorf("%s writes no field, got %q", c.Name, got)
			}
		case values[c.Name] > 0:
			args := []any{c.Name, "k", "60", `{"f":1}`}
			if values[c.Name] == 1 {
				args = []any{c.Name, "k", `{"f":1}`}
			}
			if !writtenFields(fieldsJSON, c.Name, args, 1, "", collect) || !slices.Equal(got, []string{"f"}) {
				t.Errorf("%s: fields %q", c.Name, got)
			}
		case editsInPlace(c.Name):
			if writtenFields(fieldsJSON, c.Name, []any{c.Name, "k", "1"}, 1, "", collect) {
				t.Errorf("%s edits in place but passes", c.Name)
			}
		case slices.Contains(stringNone, c.Name):
			if !writtenFields(fieldsJSON, c.Name, []any{c.Name, "k"}, 1, "", collect) {
				t.Errorf("%s writes no value but is refused", c.Name)
			}
		default:
			t.Errorf("%s (%s) writes a hash or string: place it in writtenFields", c.Name, c.ACL)
		}
	}
	if seen < 25 {
		t.Errorf("only %d hash and string write commands in the table", seen)
	}
}

// TestSchemaAllocs: checking declared fields allocates nothing.
func TestSchemaAllocs(t *testing.T) {
	h, _ := newHook(t, "order-team", Enforce)
	hset := cmdOf("hset", "order:order:1024:promo", "couponAmount", "10", "promoTotal", "90", []byte("couponAmount"), int64(1))
	set := cmdOf("set", "order:rule:1", `{"threshold":100,"discount":{"pct":5}}`, "ex", int64(60))
	for _, c := range []redis.Cmder{hset, set} {
		if n := testing.AllocsPerRun(200, func() {
			if err := h.command(c); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Errorf("%v: %v allocations", c.Args()[0], n)
		}
	}
}

// TestWrittenFieldsText: a field is judged by the bytes go-redis sends
// for it (rediscmd.ArgText): a time.Time field name is its RFC 3339 text,
// not its MarshalBinary form, and a number its decimal digits.
func TestWrittenFieldsText(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var got []string
	writtenFields(fieldsHash, "hset", []any{"hset", "k", at, "v", &at, "v", int64(7), "v", []byte("b"), "v"}, 1, "", func(f string) { got = append(got, f) })
	if want := []string{"2026-01-02T03:04:05Z", "2026-01-02T03:04:05Z", "7", "b"}; !slices.Equal(got, want) {
		t.Errorf("fields %q, want %q", got, want)
	}
}
