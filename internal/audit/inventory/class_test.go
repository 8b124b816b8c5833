package inventory

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/keyguard/keyguard/naming"
	"github.com/keyguard/keyguard/registry"
)

// The values Aggregator.Classify records for an unregistered key are the
// ones naming.InferValues hands over, slot by slot and in order, and
// only for the key it classified last: Add infers any other key again.
func TestClassifyKeepsInferredValues(t *testing.T) {
	for _, sep := range []string{":", "_", "|"} {
		reg, err := registry.Parse("", fmt.Appendf(nil, "version: 1\nseparator: %q\nkeys:\n  - {key: \"reg%sx%s{id:int}\", type: string, ttl: 1h}\n", sep, sep, sep))
		if err != nil {
			t.Fatal(err)
		}
		a := New(reg, Options{})
		keys := classTestKeys(sep[0])
		recorded := 0
		for _, key := range keys {
			cl := a.Classify(key)
			vals, ok := a.valuesOf(key)
			if cl.Entry != nil {
				if ok {
					t.Errorf("%q: a registered key has values", key)
				}
				continue
			}
			type val struct {
				slot int
				v    string
			}
			var want []val
			buf := naming.InferValues(nil, key, sep[0], func(slot int, v string) { want = append(want, val{slot, v}) })
			if cl.Family != string(buf) || cl.Family != reg.NewChecker().Infer(key) {
				t.Errorf("%q: family %q, InferValues %q", key, cl.Family, buf)
			}
			if !ok {
				t.Errorf("%q: %d values not recorded", key, len(want))
				continue
			}
			recorded++
			var got []val
			for _, s := range vals {
				got = append(got, val{s.slot, key[s.off : s.off+s.n]})
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%q: recorded %v, InferValues gives %v", key, got, want)
			}
			// The same bytes in another string are another key.
			if _, ok := a.valuesOf(strings.Clone(key)); ok && key != "" {
				t.Errorf("%q: values for a copy of the key", key)
			}
		}
		if recorded < len(keys)/2 {
			t.Errorf("sep %q: values recorded for %d of %d keys", sep, recorded, len(keys))
		}
	}
}

func classTestKeys(sep byte) []string {
	s := string(sep)
	keys := []string{
		"", s, s + s, "reg" + s + "x" + s + "12", "user" + s + "13812345678",
		"sess" + s + "a.b@example.com" + s + "x", "tel" + s + "+8613812345678",
		"card" + s + "6222020200112233445" + s + "x" + s + "13800000000" + s + "110101199003077777",
		"tmp_data_20240321153292_133292", "many" + s + "13811111111" + s + "13822222222" + s + "13833333333" + s + "13844444444" + s + "13855555555",
		"id" + s + "11010119900307777X", "x" + s + strings.Repeat("9", 70000),
		strings.Repeat("a", 70000) + s + "13812345678", "bin\xff\xfe" + s + "13812345678", "é" + s + "ü" + s + "12345678901",
	}
	rng := rand.New(rand.NewPCG(1, 2))
	parts := []string{"user", "13812345678", "+8613912345678", "a@b.cn", "42", "20240321", "x9", "deadbeefdeadbeef", "u1234567890123", "550e8400-e29b-41d4-a716-446655440000", "", "{", "}"}
	for range 3000 {
		var b strings.Builder
		for j := range 1 + rng.IntN(6) {
			if j > 0 {
				b.WriteByte(sep)
			}
			for range 1 + rng.IntN(2) {
				b.WriteString(parts[rng.IntN(len(parts))])
			}
		}
		keys = append(keys, b.String())
	}
	// Keys of a few shapes (IDs of 5-7 and 10 digits, one after a '+'),
	// which an inference by shape answers.
	for i := range 3000 {
		f := []string{"order", "sess", "v"}[i%3]
		keys = append(keys, fmt.Sprintf("%s%sitem%s%d", f, s, s, 10000+i*331), fmt.Sprintf("u%s%d%stok", s, 1700000000+i, s),
			fmt.Sprintf("tel%s+%d", s, 10000+i))
	}
	return keys
}

// A key slotsQuiet lets pass without splitting it has no placeholder
// value that seePII would weigh: none may be personal data (mayBePII)
// and naming.ValuePII finds neither a datum nor a near miss in any.
func TestSlotsQuietIsExact(t *testing.T) {
	reg, err := registry.Parse("", []byte(`version: 1
keys:
  - {key: "cache:product:detail:{productNo}", type: string, ttl: 1h}
  - {key: "u:{id:int}:{tag}", type: string, ttl: 1h}
  - {key: "x{n:int}y:{h:hex}", type: string, ttl: 1h}
  - {key: "{a}", type: string, ttl: 1h}
`))
	if err != nil {
		t.Fatal(err)
	}
	a := New(reg, Options{})
	chk := reg.NewChecker()
	rng := rand.New(rand.NewPCG(3, 4))
	alpha := "0123456789abcdef@+.x"
	quiet, checked := 0, 0
	for range 200000 {
		e := reg.Entries[rng.IntN(len(reg.Entries))]
		ex := e.Template.Example()
		// The example with its values' bytes changed and cut or grown.
		b := []byte(ex)
		for range 1 + rng.IntN(4) {
			i := rng.IntN(len(b) + 1)
			c := alpha[rng.IntN(len(alpha))]
			switch rng.IntN(3) {
			case 0:
				b = append(b[:i], append([]byte{c}, b[i:]...)...)
			case 1:
				if i < len(b) && b[i] != ':' {
					b = append(b[:i], b[i+1:]...)
				}
			default:
				if i < len(b) && b[i] != ':' {
					b[i] = c
				}
			}
		}
		key := string(b)
		if reg.Lookup(key) != e {
			continue
		}
		checked++
		if !a.slotsQuiet(key, e) {
			continue
		}
		quiet++
		chk.SlotValues(key, e, func(slot int, name, v string) {
			if hit, miss := naming.ValuePII(v); mayBePII(v) || hit != naming.NoPII || miss != 0 {
				t.Errorf("%s: key %q passed as quiet, but value %q of {%s}: mayBePII %v, ValuePII %v %v", e.Key, key, v, name, mayBePII(v), hit, miss)
			}
		})
	}
	if quiet < checked/10 || quiet == checked {
		t.Errorf("%d keys of %d quiet: the test does not test both sides", quiet, checked)
	}
}

// A Classifier given the next keys ahead (Ahead, in windows of any size)
// classifies each as it would key by key: the same template or family
// (the same string content), guard probe and field decision; a key that
// is not the next one of the window (the caller dropped some) is
// classified on its own and the window dropped.
func TestClassifierAheadEqualsOneByOne(t *testing.T) {
	for _, sep := range []string{":", "_", "|"} {
		reg, err := registry.Parse("", fmt.Appendf(nil, "version: 1\nseparator: %q\nkeys:\n  - {key: \"reg%sx%s{id:int}\", type: hash, ttl: 1h, guard: true}\n", sep, sep, sep))
		if err != nil {
			t.Fatal(err)
		}
		keys := classTestKeys(sep[0])
		one := NewClassifier(reg)
		var want []Class
		for _, k := range keys {
			want = append(want, one.Classify(k))
		}
		rng := rand.New(rand.NewPCG(3, 4))
		ahead := NewClassifier(reg)
		windowed := 0
		for i := 0; i < len(keys); {
			n := 1 + rng.IntN(40)
			win := keys[i:min(i+n, len(keys))]
			got := ahead.Ahead(win)
			if len(got) != len(win) {
				t.Fatalf("Ahead of %d keys gave %d classes", len(win), len(got))
			}
			skip := -1
			if rng.IntN(4) == 0 {
				skip = rng.IntN(len(win)) // the caller drops this key: the rest are classified one by one
			}
			for j, k := range win {
				if j == skip {
					continue
				}
				if ahead.winNext > 0 && skip < 0 {
					windowed++
				}
				if g := ahead.Classify(k); g != want[i+j] {
					t.Fatalf("sep %q, %q: ahead %+v, one by one %+v", sep, k, g, want[i+j])
				}
			}
			i += len(win)
		}
		if windowed < len(keys)/2 {
			t.Errorf("sep %q: %d of %d keys taken from a window: the test tests less than it says", sep, windowed, len(keys))
		}
	}
}

// A family answered by its key's shape is the one inferring the key
// gives, and its record the one interned now: past a clearing of the
// interned families (more than maxInterned, or groups folded away) a
// shape's old record is not used.
func TestInferByShape(t *testing.T) {
	reg, err := registry.Parse("", []byte("version: 1\nkeys:\n  - {key: \"reg:x:{id:int}\", type: string, ttl: 1h}\n"))
	if err != nil {
		t.Fatal(err)
	}
	word := func(i int) string { // a family name of letters, one per i
		b := []byte("w")
		for ; i > 0; i /= 26 {
			b = append(b, byte('a'+i%26))
		}
		return string(b)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	a := New(reg, Options{MaxGroups: 5000})
	n := 0
	for round := range 2 {
		for fam := range maxInterned + 3000 {
			for k := range 8 {
				id := 1000000 + rng.IntN(9000000) // seven digits: a shape
				key := fmt.Sprintf("%s:obj:%d:v%d", word(fam), id, rng.IntN(2)*round)
				switch {
				case k >= 6: // a few families met all along: their shapes outlive a clearing
					key = fmt.Sprintf("hot:%s:%d", word(fam%4), id)
				case k >= 4: // ten digits standing alone: a value handed over, at one offset in the shape
					key = fmt.Sprintf("%s:acct:%d", word(fam), 1000000000+id)
				case rng.IntN(50) == 0:
					key = fmt.Sprintf("%s:obj:%d", word(fam), 10000000+id) // eight: a date's length, kept
				}
				cl := a.Classify(key)
				if want := naming.Infer(key, ':'); cl.Family != want {
					t.Fatalf("round %d: %q: family %q, Infer %q", round, key, cl.Family, want)
				}
				if f := a.inferred.fam; f != a.inferred.interned[cl.Family] {
					t.Fatalf("round %d: %q: a record not the interned one", round, key)
				}
				var want, got []string
				naming.InferValues(nil, key, ':', func(slot int, v string) { want = append(want, fmt.Sprint(slot, v)) })
				vals, ok := a.valuesOf(key)
				for _, v := range vals {
					got = append(got, fmt.Sprint(v.slot, key[v.off:v.off+v.n]))
				}
				if !ok || fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("%q: values %v, %v; InferValues hands over %v", key, got, ok, want)
				}
				a.Add(&Record{Key: key, Type: "string", Bytes: 50, TTL: -1}, cl)
				n++
			}
		}
	}
	if found := a.inferred.shapes.Found(); found < int64(n)/3 {
		t.Errorf("%d of %d keys answered by their shape", found, n)
	}
	if a.inferred.gen < 2 {
		t.Errorf("interned families cleared %d times: the test does not reach it", a.inferred.gen)
	}

}
