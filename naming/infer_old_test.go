package naming

import (
	"strconv"
	"strings"
	"testing"
)

// oldInfer is Infer as it was before it built into a byte buffer and
// counted names in an array (2026-11-29), kept to check that the faster
// one gives the same templates.
func oldInfer(key string, sep byte) string {
	var b strings.Builder
	used := map[string]int{}
	name := func(base string) string {
		used[base]++
		if n := used[base]; n > 1 {
			return base + strconv.Itoa(n)
		}
		return base
	}
	for i, seg := range strings.Split(key, string(sep)) {
		if i > 0 {
			b.WriteByte(sep)
		}
		if seg == "" {
			b.WriteString("{" + name("empty") + "}")
			continue
		}
		switch {
		case len(seg) == 36 && strings.Count(seg, "-") == 4 && isHexDash(seg):
			b.WriteString("{" + name("uuid") + ":uuid}")
			continue
		case len(seg) >= 16 && isHex(seg) && !allDigits(seg) && strings.ContainsAny(seg, "0123456789"):
			b.WriteString("{" + name("hex") + ":hex}")
			continue
		}
		if isToken(seg) {
			b.WriteString("{" + name("token") + "}")
			continue
		}
		oldInferSegment(&b, seg, name)
	}
	return b.String()
}

func oldInferSegment(b *strings.Builder, seg string, name func(string) string) {
	for i := 0; i < len(seg); {
		c := seg[i]
		if !isDigit(c) {
			switch c {
			case '{':
				b.WriteString("{{")
			case '}':
				b.WriteString("}}")
			default:
				b.WriteByte(c)
			}
			i++
			continue
		}
		j := i
		for j < len(seg) && isDigit(seg[j]) {
			j++
		}
		run := seg[i:j]
		wordy := i > 0 && isAlnum(seg[i-1]) && len(run) < 3
		switch {
		case wordy:
			b.WriteString(run)
		case len(run) == 14 && isTimestamp(run):
			b.WriteString("{" + name("date") + ":date}{" + name("time") + ":int}")
		case len(run) == 8 && validDate(run, 2000, 2099):
			b.WriteString("{" + name("date") + ":date}")
		case isMobile(run):
			b.WriteString("{" + name("phone") + "}")
		default:
			b.WriteString("{" + name("id") + ":int}")
		}
		i = j
	}
}

var inferSeeds = []string{
	"", ":", "::", "a::b", "{x}", "\x00:\xff", "user_1024_token", "tmp_data_20240321150322",
	"order_info_20240321_8899123:status:new", "session:abc123xyz", "rate:login:18812345678",
	"x:123e4567-e89b-12d3-a456-426614174000", "x:65f1a2b3c4d5e6f708192a3b",
	"a:1:2:3:4:5:6:7:8:9:10:11:12", "20240321:20240322:20240321150322:20240321150323",
	":::::::::::::", "abc123xyz:def456uvw:ghi789rst", "{{}}:}{:1{2}3",
	"123e4567-e89b-12d3-a456-426614174000:123e4567-e89b-12d3-a456-426614174001",
	"a/1/b/2", "k\xff1\xfe22\xfd333",
}

func TestInferSameAsOld(t *testing.T) {
	long := strings.Repeat("1:", 300) + strings.Repeat("x", 200)
	for _, sep := range []byte{':', '/', '_', 0} {
		for _, k := range append(inferSeeds, long) {
			if got, want := Infer(k, sep), oldInfer(k, sep); got != want {
				t.Errorf("Infer(%q, %q) = %q, old %q", k, sep, got, want)
			}
			buf := []byte("prefix")
			if got, want := string(AppendInfer(buf, k, sep)), "prefix"+oldInfer(k, sep); got != want {
				t.Errorf("AppendInfer(%q, %q) = %q, want %q", k, sep, got, want)
			}
		}
	}
}

func FuzzInferSameAsOld(f *testing.F) {
	for _, k := range inferSeeds {
		f.Add(k, byte(':'))
	}
	f.Add("a/1/b", byte('/'))
	f.Add("\xfe:\xc3\xbe1", byte(0xfe)) // split at the rune U+00FE, joined with the byte
	f.Fuzz(func(t *testing.T, key string, sep byte) {
		if got, want := Infer(key, sep), oldInfer(key, sep); got != want {
			t.Fatalf("Infer(%q, %q) = %q, old %q", key, sep, got, want)
		}
	})
}

// BenchmarkInfer compares Infer with the implementation it replaced, on
// the kind of keys an audit finds unregistered.
func BenchmarkInfer(b *testing.B) {
	keys := []string{
		"legacy:cart:1024:items", "tmp_data_20240321150322", "order_info_20240321_8899123:status:new",
		"session:abc123xyz", "rate:login:18812345678", "x:123e4567-e89b-12d3-a456-426614174000",
		"a:1:2:3", "cache:v2:md5",
	}
	for _, bb := range []struct {
		name  string
		infer func(string, byte) string
	}{{"new", Infer}, {"old", oldInfer}} {
		b.Run(bb.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				bb.infer(keys[i%len(keys)], ':')
			}
		})
	}
}
