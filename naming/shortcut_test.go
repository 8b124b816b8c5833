package naming

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unsafe"

	"github.com/keyguard/keyguard/finding"
)

// inferBoth infers one segment with inferSeg's shortcuts and without them
// (inferShaped), each with a fresh count of names, with the values each
// hands over.
func inferBoth(seg string, domain bool) (short, long string, shortVals, longVals []string) {
	run := func(f func([]byte, string, *names) []byte) (string, []string) {
		var vals []string
		used := names{domain: domain, fn: func(slot int, v string) { vals = append(vals, v) }}
		return string(f(nil, seg, &used)), vals
	}
	short, shortVals = run(inferSeg)
	long, longVals = run(inferShaped)
	return
}

// shortcutSegments are segments at the edges of inferSeg's shortcuts.
var shortcutSegments = []string{
	"order", "ORDER", "Order_Info-x.y", "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", "AAAAAAAA-BBBB-CCCC-DDDD-EEEEEEEEEEEE",
	"abcdefabcdefabcdefab", "aGVsbG8gV29ybGQhISEh", "a{b}c", "{x}", "a{b", "a}b", "a@b.cn", "@", "\xff\xfe", "abcdefghijklmnopqrstuvwxyz0123456789",
	"12345678", "20240321", "20240321150322", "13812345678", "8613812345678", "008613812345678", "110105194912310021",
	"1234567890123456789012345678901234567890", "123456789012345678901234567890123456", "0", "42", "007",
	"2fa", "v2", "md5", "u123", "zadd17", "abc123xyz", "deadbeef12345678", "2024-03-21", "+8613812345678",
}

func TestInferShortcuts(t *testing.T) {
	for _, seg := range shortcutSegments {
		for _, domain := range []bool{false, true} {
			short, long, sv, lv := inferBoth(seg, domain)
			if short != long || strings.Join(sv, "\x00") != strings.Join(lv, "\x00") {
				t.Errorf("segment %q (domain %v): shortcut %q %q, the long way %q %q", seg, domain, short, sv, long, lv)
			}
		}
	}
}

// FuzzInferShortcuts: a segment inferred with the shortcuts is inferred
// as without them, values and all.
func FuzzInferShortcuts(f *testing.F) {
	for _, s := range shortcutSegments {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, seg string, domain bool) {
		if seg == "" {
			return // inferShaped is not for the empty segment
		}
		short, long, sv, lv := inferBoth(seg, domain)
		if short != long || strings.Join(sv, "\x00") != strings.Join(lv, "\x00") {
			t.Fatalf("segment %q (domain %v): shortcut %q %q, the long way %q %q", seg, domain, short, sv, long, lv)
		}
	})
}

// textShortcutKeys are keys at the edges of textMayBreak.
var textShortcutKeys = []string{
	"", "user:1:base", "User:1", "a b", "{tag}:x", "a/b", "\xff", "tmp_data_20240321", "x:1234567:y", "x:12345678:y",
	"x:1700000000123", "20240321150322", "a-b.c_d:e", "UPPER", "x:2024032", "1234567a12345678",
}

// checkTextShortcut fails when textMayBreak says a rule cannot break
// that Text or FindTimestamp finds broken.
func checkTextShortcut(t *testing.T, key string) {
	t.Helper()
	text, stamp := textMayBreak(key)
	n := 0
	Rules{Sep: ':'}.Text(key, func(string, finding.Severity, string, string) { n++ })
	if n > 0 && !text {
		t.Fatalf("textMayBreak(%q): text false, Text finds %d", key, n)
	}
	if _, ok := FindTimestamp(key); ok && !stamp {
		t.Fatalf("textMayBreak(%q): timestamp false, FindTimestamp finds one", key)
	}
}

func TestTextMayBreak(t *testing.T) {
	for _, k := range textShortcutKeys {
		checkTextShortcut(t, k)
	}
	for _, c := range []struct {
		key         string
		text, stamp bool
	}{{"user:1:base", false, false}, {"User:1", true, false}, {"x:12345678", false, true}, {"X:1234567", true, false}} {
		if text, stamp := textMayBreak(c.key); text != c.text || stamp != c.stamp {
			t.Errorf("textMayBreak(%q) = %v, %v; want %v, %v", c.key, text, stamp, c.text, c.stamp)
		}
	}
}

func FuzzTextMayBreak(f *testing.F) {
	for _, k := range textShortcutKeys {
		f.Add(k)
	}
	f.Fuzz(checkTextShortcut)
}

// digitRunByRule is digitRun reading every byte.
func digitRunByRule(s string, n int) (i, j int, ok bool) {
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		if j-i >= n {
			return i, j, true
		}
		i = max(j, i+1)
	}
	return 0, 0, false
}

// mayHoldValuePIIByRule is MayHoldValuePII as its comment states it.
func mayHoldValuePIIByRule(key string) bool {
	if strings.IndexByte(key, '@') >= 0 {
		return true
	}
	for i := 0; i < len(key); {
		j := i
		for j < len(key) && isDigit(key[j]) {
			j++
		}
		if j-i >= 11 || j-i >= 8 && i > 0 && key[i-1] == '+' {
			return true
		}
		i = max(j, i+1)
	}
	return false
}

var digitRunKeys = []string{
	"", "1", "12345678", "1234567", "a12345678", "1234567a1234567", "x:1234567:y:12345678", "1234567:1234567:123456789",
	"tel:13812345678", "tel:1381234567", "tel:+12345678", "tel:+1234567", "+x12345678", "+1234567a8", "12345+678901234",
	"++12345678", "+:12345678", "x+1234567:12345678", "a@b", "@", "0000000000000000000000000000000",
}

func checkDigitRun(t *testing.T, s string) {
	t.Helper()
	for n := 1; n <= 12; n++ {
		i, j, ok := digitRun(s, n)
		wi, wj, wok := digitRunByRule(s, n)
		if i != wi || j != wj || ok != wok {
			t.Fatalf("digitRun(%q, %d) = %d, %d, %v; want %d, %d, %v", s, n, i, j, ok, wi, wj, wok)
		}
	}
	if got, want := MayHoldValuePII(s), mayHoldValuePIIByRule(s); got != want {
		t.Fatalf("MayHoldValuePII(%q) = %v, want %v", s, got, want)
	}
}

func TestDigitRun(t *testing.T) {
	for _, s := range digitRunKeys {
		checkDigitRun(t, s)
	}
	// Every string of up to 12 bytes of 'a', '1' and '+' (797,161).
	b := make([]byte, 0, 12)
	var all func()
	all = func() {
		checkDigitRun(t, string(b))
		if len(b) == cap(b) {
			return
		}
		for _, c := range []byte("a1+") {
			b = append(b, c)
			all()
			b = b[:len(b)-1]
		}
	}
	all()
	for _, c := range []struct {
		key  string
		want bool
	}{{"user:1:base", false}, {"tel:13812345678", true}, {"tel:1381234567", false}, {"tel:+12345678", true}, {"x+1234567:12345678", false}, {"a@b", true}} {
		if got := MayHoldValuePII(c.key); got != c.want {
			t.Errorf("MayHoldValuePII(%q) = %v, want %v", c.key, got, c.want)
		}
	}
}

func FuzzDigitRun(f *testing.F) {
	for _, s := range digitRunKeys {
		f.Add(s)
	}
	f.Fuzz(checkDigitRun)
}

// shapeKeys are keys around AppendInferShape's rules.
var shapeKeys = []string{
	"order:order:1234567:base", "order:order:12345:base", "order:order:1234:base", "order:order:12345678:base",
	"cache:v12345:x", "cache:V1234567", "cache:xv12345", "u12345", "p1234567x", "12345", "a12345b", "2fa12345",
	"12345-12345", "1234-12345-12", "2024-03-21", "x_12345_y", "a@b.cn:12345", "+1234567", "+12345678",
	"deadbeef12345cafe12345", "123e4567-e89b-12d3-a456-426614174000", "abc12345xyz", "zadd12345", "md12345",
	"{12345}", "x:{12345}:y", "\xff12345\xfe", "12345::67890", "sha12345", "k12345s",
	"u:123456789", "u:1234567890", "u:123456789012", "u:1234567890123456", "u:1734567890123456789", "x123456789y",
	"+123456789", "v1234567890", "a:1234567890:b:123456789012:c", "13812345678", "8613812345678", "110105194912310021",
}

// redraw replaces the digits AppendInferShape writes as zeros with
// random ones.
func redraw(r *rand.Rand, key string) string {
	b := []byte(key)
	for i := range b {
		if shapeZeroed(key, i) {
			b[i] = byte('0' + r.IntN(10))
		}
	}
	return string(b)
}

// shapeZeroed reports whether key[i] is in a run AppendInferShape zeros,
// by its rule written out.
func shapeZeroed(key string, i int) bool {
	if !isDigit(key[i]) {
		return false
	}
	s, e := i, i
	for s > 0 && isDigit(key[s-1]) {
		s--
	}
	for e < len(key) && isDigit(key[e]) {
		e++
	}
	n := e - s
	return (n >= 5 && n <= 7 || n == 9 || n == 10 || n == 12 || n == 16 || n >= 19) &&
		(s == 0 || key[s-1]|0x20 != 'v' && key[s-1] != '+')
}

// checkShape: keys of one shape infer one template and hand over no
// value; the shape is the key with exactly the runs its rule names zeroed.
func checkShape(t *testing.T, r *rand.Rand, key string, sep byte) {
	t.Helper()
	shape, ok := AppendInferShape([]byte("x"), key, sep)
	if !ok {
		if string(shape) != "x" {
			t.Fatalf("AppendInferShape(%q) not ok but appended %q", key, shape)
		}
		return
	}
	shape = shape[1:]
	if len(shape) != len(key) {
		t.Fatalf("shape %q of %q: another length", shape, key)
	}
	for i := range key {
		want := key[i]
		if shapeZeroed(key, i) {
			want = '0'
		}
		if shape[i] != want {
			t.Fatalf("shape %q of %q: byte %d is %q, want %q", shape, key, i, shape[i], want)
		}
	}
	// The values as slot, offset and length: the same for every key of
	// the shape.
	valsOf := func(key string) (string, string) {
		var vals []string
		tmpl := InferValues(nil, key, sep, func(slot int, v string) {
			off := int(uintptr(unsafe.Pointer(unsafe.StringData(v))) - uintptr(unsafe.Pointer(unsafe.StringData(key))))
			vals = append(vals, fmt.Sprintf("%d@%d+%d", slot, off, len(v)))
		})
		return string(tmpl), strings.Join(vals, " ")
	}
	tmpl, vals := valsOf(key)
	for range 4 {
		other := redraw(r, key)
		if got, gotVals := valsOf(other); got != tmpl || gotVals != vals {
			t.Fatalf("keys %q and %q, one shape %q: templates %q and %q, values %s and %s", key, other, shape, tmpl, got, vals, gotVals)
		}
		if s2, _ := AppendInferShape(nil, other, sep); string(s2) != string(shape) {
			t.Fatalf("keys %q and %q: shapes %q and %q", key, other, shape, s2)
		}
	}
}

func TestInferShape(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, k := range shapeKeys {
		for _, sep := range []byte{':', '_', 0xb7} {
			checkShape(t, r, k, sep)
		}
	}
	for _, c := range []struct {
		key, shape string
		ok         bool
	}{
		{"order:order:1234567:base", "order:order:0000000:base", true},
		{"order:order:1234:base", "order:order:1234:base", true},
		{"cache:v12345:x", "cache:v12345:x", true},
		{"order:order:12345678:base", "order:order:12345678:base", true},
		{"order:1734567890123456789:x", "order:0000000000000000000:x", true},
		{"t:+1234567890", "t:+1234567890", true},
		{"a@b:12345", "", false},
	} {
		if got, ok := AppendInferShape(nil, c.key, ':'); string(got) != c.shape || ok != c.ok {
			t.Errorf("AppendInferShape(%q) = %q, %v; want %q, %v", c.key, got, ok, c.shape, c.ok)
		}
	}
	if _, ok := AppendInferShape(nil, "a:12345", '1'); ok {
		t.Error("a digit separator: a shape")
	}
}

func FuzzInferShape(f *testing.F) {
	for _, k := range shapeKeys {
		f.Add(k, byte(':'), uint64(1))
	}
	f.Fuzz(func(t *testing.T, key string, sep byte, seed uint64) {
		checkShape(t, rand.New(rand.NewPCG(seed, 1)), key, sep)
	})
}

// TestShapeCache: keys of one shape get the value put for it; a round of
// keys whose shapes do not repeat sets the cache aside (keys then go
// without a lookup), and it comes back once they pass.
func TestShapeCache(t *testing.T) {
	var c ShapeCache[string]
	for i := range 3000 {
		key := fmt.Sprintf("order:%d:base", 1000000+i*7)
		v, ok, shaped := c.Get(key, ':')
		if !shaped {
			t.Fatalf("%q: no shape", key)
		}
		if i > 0 && (!ok || v != "order:{id:int}:base") {
			t.Fatalf("%q: %q, %v", key, v, ok)
		}
		if !ok {
			c.Put(Infer(key, ':'))
		}
	}
	if c.Found() != 2999 {
		t.Errorf("found %d", c.Found())
	}
	if _, _, shaped := c.Get("a@b.cn:12345", ':'); shaped {
		t.Error("an e-mail address: a shape")
	}
	long := "order:" + strings.Repeat("x", maxShapeKey) + ":1234567"
	c.PutFor(long, ':', "long")
	if _, ok, shaped := c.Get(long, ':'); ok || shaped {
		t.Errorf("a key of %d bytes: kept %v, shaped %v", len(long), ok, shaped)
	}
	if len(c.m) > 1 {
		t.Errorf("%d shapes kept", len(c.m))
	}
	c.Reset()
	if _, ok, _ := c.Get("order:7654321:base", ':'); ok {
		t.Error("a value after Reset")
	}
	c.PutFor("cart:1234567:items", ':', "cart:{id:int}:items") // a key not Get just before
	if v, ok, _ := c.Get("cart:7654321:items", ':'); !ok || v != "cart:{id:int}:items" {
		t.Errorf("after PutFor: %q, %v", v, ok)
	}
	r := rand.New(rand.NewPCG(1, 1))
	for range 2 * shapeRound {
		if _, ok, shaped := c.Get(fmt.Sprintf("img:%016x", r.Uint64()), ':'); shaped && !ok {
			c.Put("img")
		}
	}
	if c.skip < shapesAside-shapeRound {
		t.Fatalf("after a round of misses: %d keys set aside", c.skip)
	}
	c.PutFor("aside:1234567", ':', "kept while aside")
	for range c.skip {
		if _, ok, shaped := c.Get("aside:1234567", ':'); ok || shaped {
			t.Fatal("a lookup while set aside")
		}
	}
	if v, ok, _ := c.Get("aside:7654321", ':'); ok {
		t.Errorf("PutFor kept %q while set aside", v)
	}
	if _, _, shaped := c.Get("order:1234567:base", ':'); !shaped {
		t.Error("still set aside")
	}
}
