package keybuild

import (
	"errors"
	"strings"
	"testing"
	"time"
)

var (
	orderItem = Spec{
		Name: "OrderItem", Template: "order:{orderId:int}:item:{sku}", Separator: ':', MaxKeyBytes: 64,
		Parts: []Part{{Lit: "order:"}, {Name: "orderId", Kind: KindInt}, {Lit: ":item:"}, {Name: "sku"}},
		Type:  "hash", TTL: time.Hour, TTLJitter: 10 * time.Minute, Owner: "order-team",
	}
	kinds = Spec{
		Template: "k:{h:hex}:{u:uuid}:{r:region}:{d:date}:{e:enum(A,B_C)}", Separator: ':', MaxKeyBytes: 128,
		Parts: []Part{{Lit: "k:"}, {Name: "h", Kind: KindHex}, {Lit: ":"}, {Name: "u", Kind: KindUUID}, {Lit: ":"},
			{Name: "r", Kind: KindRegion}, {Lit: ":"}, {Name: "d", Kind: KindDate}, {Lit: ":"}, {Name: "e", Kind: KindEnum, Enum: []string{"A", "B_C"}}},
	}
	hashed = Spec{
		Template: "{{rate}}:login:{phone:hash}", Separator: ':', MaxKeyBytes: 64,
		Parts: []Part{{Lit: "{rate}:login:"}, {Name: "phone", Kind: KindHash}},
	}
)

func TestBuild(t *testing.T) {
	okKinds := []Arg{String("00ffAA"), String("123e4567-e89b-12d3-a456-426614174000"), String("110101"), String("20240229"), String("B_C")}
	with := func(i int, a Arg) []Arg {
		out := append([]Arg(nil), okKinds...)
		out[i] = a
		return out
	}
	tests := []struct {
		name   string
		spec   *Spec
		args   []Arg
		want   string
		reason Reason
		ph     string
	}{
		{"int", &orderItem, []Arg{Int(1001), String("sku-9")}, "order:1001:item:sku-9", 0, ""},
		{"negative int", &orderItem, []Arg{Int(-9223372036854775808), String("x")}, "order:-9223372036854775808:item:x", 0, ""},
		{"int as text", &orderItem, []Arg{String("007"), String("x")}, "order:007:item:x", 0, ""},
		{"int into any", &orderItem, []Arg{Int(1), Int(-2)}, "order:1:item:-2", 0, ""},
		{"unicode", &orderItem, []Arg{Int(1), String("商品")}, "order:1:item:商品", 0, ""},
		{"empty", &orderItem, []Arg{Int(1), String("")}, "", ReasonEmpty, "sku"},
		{"bad utf8", &orderItem, []Arg{Int(1), String("a\xffb")}, "", ReasonEncoding, "sku"},
		{"control", &orderItem, []Arg{Int(1), String("a\nb")}, "", ReasonControl, "sku"},
		{"del", &orderItem, []Arg{Int(1), String("a\x7f")}, "", ReasonControl, "sku"},
		{"separator", &orderItem, []Arg{Int(1), String("a:b")}, "", ReasonSeparator, "sku"},
		{"control before separator", &orderItem, []Arg{Int(1), String("a:\tb")}, "", ReasonControl, "sku"},
		{"brace", &orderItem, []Arg{Int(1), String("{a}")}, "", ReasonBrace, "sku"},
		{"int kind", &orderItem, []Arg{String("12a"), String("x")}, "", ReasonKind, "orderId"},
		{"lone minus", &orderItem, []Arg{String("-"), String("x")}, "", ReasonKind, "orderId"},
		{"plus sign", &orderItem, []Arg{String("+1"), String("x")}, "", ReasonKind, "orderId"},
		{"too long", &orderItem, []Arg{Int(1), String(strings.Repeat("x", 52))}, "", ReasonTooLong, ""},
		{"just fits", &orderItem, []Arg{Int(1), String(strings.Repeat("x", 51))}, "order:1:item:" + strings.Repeat("x", 51), 0, ""},
		{"too long in bytes", &orderItem, []Arg{Int(1), String(strings.Repeat("é", 26))}, "", ReasonTooLong, ""},
		{"too few", &orderItem, []Arg{Int(1)}, "", ReasonArity, ""},
		{"too many", &orderItem, []Arg{Int(1), Int(2), Int(3)}, "", ReasonArity, ""},
		{"kinds", &kinds, okKinds, "k:00ffAA:123e4567-e89b-12d3-a456-426614174000:110101:20240229:B_C", 0, ""},
		{"hex", &kinds, with(0, String("0g")), "", ReasonKind, "h"},
		{"uuid short", &kinds, with(1, String("123e4567-e89b-12d3-a456-42661417400")), "", ReasonKind, "u"},
		{"uuid dash", &kinds, with(1, String("123e4567e-89b-12d3-a456-426614174000")), "", ReasonKind, "u"},
		{"region zero", &kinds, with(2, String("010101")), "", ReasonKind, "r"},
		{"region long", &kinds, with(2, String("1101011")), "", ReasonKind, "r"},
		{"date month", &kinds, with(3, String("20241301")), "", ReasonKind, "d"},
		{"date day", &kinds, with(3, String("20240100")), "", ReasonKind, "d"},
		{"date 31", &kinds, with(3, String("20240131")), "k:00ffAA:123e4567-e89b-12d3-a456-426614174000:110101:20240131:B_C", 0, ""},
		{"enum case", &kinds, with(4, String("b_c")), "", ReasonKind, "e"},
		{"int into hex", &kinds, with(0, Int(5)), "", ReasonKind, "h"},
		{"hash", &hashed, []Arg{String("13800138000")}, "{rate}:login:" + HashValue("13800138000"), 0, ""},
		{"hash takes anything", &hashed, []Arg{String("a:b{c}\n")}, "{rate}:login:" + HashValue("a:b{c}\n"), 0, ""},
		{"hash of int", &hashed, []Arg{Int(42)}, "{rate}:login:" + HashValue("42"), 0, ""},
		{"hash empty", &hashed, []Arg{String("")}, "", ReasonEmpty, "phone"},
		{"hash bad utf8", &hashed, []Arg{String("\xc3")}, "", ReasonEncoding, "phone"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := Build(tt.spec, tt.args...)
			if tt.reason != 0 {
				var e *Error
				if !errors.As(err, &e) || e.Reason != tt.reason || e.Placeholder != tt.ph {
					t.Fatalf("Build = %q, %v; want %s error at {%s}", k, err, tt.reason, tt.ph)
				}
				if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.spec.Template) {
					t.Errorf("error %q: want ErrInvalid naming the template", err)
				}
				if !k.IsZero() {
					t.Errorf("key %q returned with an error", k)
				}
				return
			}
			if err != nil || k.String() != tt.want {
				t.Fatalf("Build = %q, %v; want %q", k, err, tt.want)
			}
			if k.Spec() != tt.spec || k.Template() != tt.spec.Template {
				t.Errorf("key carries %v, want its spec", k.Spec())
			}
		})
	}
}

func TestHashValue(t *testing.T) {
	// sha256("13800138000") = a6942f9771d67f34… (as printed by sha256sum).
	if got := HashValue("13800138000"); got != "a6942f9771d67f34" {
		t.Errorf("HashValue = %q", got)
	}
	if got := HashValue(""); got != "e3b0c44298fc1c14" {
		t.Errorf("HashValue(\"\") = %q", got)
	}
}

func TestErrorHidesHashedValue(t *testing.T) {
	_, err := Build(&hashed, String("\xff13800138000"))
	var e *Error
	if !errors.As(err, &e) || e.Value != "" || strings.Contains(err.Error(), "13800138000") {
		t.Errorf("error %v leaks the hashed value", err)
	}
}

func TestKeyPolicy(t *testing.T) {
	k, err := Build(&orderItem, Int(1), String("x"))
	if err != nil {
		t.Fatal(err)
	}
	if k.TTL() != time.Hour || k.Type() != "hash" || k.Owner() != "order-team" || k.Persistent() {
		t.Errorf("policy %v %v %v %v", k.TTL(), k.Type(), k.Owner(), k.Persistent())
	}
	for range 100 {
		if d := k.RandomTTL(); d < time.Hour || d > time.Hour+10*time.Minute || d%time.Millisecond != 0 {
			t.Fatalf("RandomTTL = %v, want within [1h, 1h10m] in whole ms", d)
		}
	}
	var zero Key
	if zero.TTL() != 0 || zero.RandomTTL() != 0 || zero.Template() != "" || !zero.IsZero() {
		t.Error("zero Key is not empty")
	}
}

func TestIntLen(t *testing.T) {
	for _, v := range []int64{0, 9, 10, -1, -10, 99, 100, 1<<63 - 1, -1 << 63} {
		if got, want := intLen(v), len(Int(v).text()); got != want {
			t.Errorf("intLen(%d) = %d, want %d", v, got, want)
		}
	}
}

func (a Arg) text() string {
	k, _ := Build(&Spec{Parts: []Part{{Name: "x"}}}, a)
	return k.String()
}

func TestOneAllocation(t *testing.T) {
	tests := []struct {
		name string
		spec *Spec
		args []Arg
	}{
		{"int and text", &orderItem, []Arg{Int(1234567890), String("sku-000123")}},
		{"kinds", &kinds, []Arg{String("00ffAA"), String("123e4567-e89b-12d3-a456-426614174000"), String("110101"), String("20240229"), String("B_C")}},
		{"hash", &hashed, []Arg{String("13800138000")}},
	}
	for _, tt := range tests {
		n := testing.AllocsPerRun(100, func() {
			if _, err := Build(tt.spec, tt.args...); err != nil {
				t.Fatal(err)
			}
		})
		if n != 1 {
			t.Errorf("%s: %v allocations per Build, want 1 (the key)", tt.name, n)
		}
	}
}

func FuzzBuild(f *testing.F) {
	f.Add("1001", "sku-9", int64(3))
	f.Add("", "a:b", int64(-1))
	f.Add("\xff", "{x}", int64(0))
	f.Fuzz(func(t *testing.T, a, b string, n int64) {
		for _, spec := range []*Spec{&orderItem, &kinds, &hashed} {
			args := []Arg{String(a), String(b), Int(n), String(a), String(b)}[:spec.Placeholders()]
			k, err := Build(spec, args...)
			if err != nil {
				var e *Error
				if !errors.As(err, &e) || e.Reason == 0 {
					t.Fatalf("untyped error %v", err)
				}
				_ = err.Error()
				continue
			}
			if len(k.String()) > spec.MaxKeyBytes {
				t.Fatalf("key %q over %d bytes", k, spec.MaxKeyBytes)
			}
			seps := 0
			for _, p := range spec.Parts {
				seps += strings.Count(p.Lit, ":")
			}
			if strings.Count(k.String(), ":") != seps {
				t.Fatalf("key %q has a different number of separators than %q", k, spec.Template)
			}
		}
	})
}
