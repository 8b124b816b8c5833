package naming

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"testing"
)

// piiRecall are keys that hold personal data the way real keys do: after
// a separator, with a country prefix, after a word, as an ID card with X.
var piiRecall = []string{
	"rate:login:18812345678",
	"verify:sms:18812345678:LOGIN",
	"user:+8618812345678",
	"user:+86-18812345678",
	"user:0086-18812345678",
	"user:008618812345678",
	"user:8613912345678:profile",
	"sms_code_15912345678",
	"login.count.17712345678",
	"auth:u18812345678",
	"cache:tel18812345678",
	"cache:mobile13800138000",
	"user:phone=13800138000",
	"id:11010519491231002X",
	"idcard_11010519491231002x",
	"user:11010519491231002X:info",
	"verify:email:test@example.com:BIND",
	"user:Zhang.San+tag@corp.example.cn",
	"u:a_b-c@mail.qq.com:x",
}

// piiQuiet are identifiers that contain a phone-shaped run of digits.
var piiQuiet = []string{
	"token:a3f18812345678bcde0123456789abcd", // md5 hex with a 1[3-9]x{9} run inside
	"token:18812345678abcdef0123456789abcde",
	"token:abcdef0123456789abcde18812345678",
	"sess:ab18812345678",        // hex letters before: the head of a hex string
	"x:18812345678abc",          // letters after
	"x:12812345678",             // not a mobile prefix
	"x:188123456789",            // 12 digits
	"order:1234567890123456789", // too long for anything
	"id:110105194912310021",     // bad check digit
	"id:a11010519491231002X",
	"x:a@b",
	"uuid:123e4567-e89b-12d3-a456-418812345678", // 12-digit group
}

func TestFindPIIRecall(t *testing.T) {
	for _, s := range piiRecall {
		if what, ok := FindPII(s); !ok {
			t.Errorf("FindPII(%q) found nothing", s)
		} else if len(what) == 0 {
			t.Errorf("FindPII(%q): no description", s)
		}
	}
	for _, s := range piiQuiet {
		if what, ok := FindPII(s); ok {
			t.Errorf("FindPII(%q) = %s, want nothing", s, what)
		}
	}
}

// randomIDs returns n md5 hex strings and n random UUIDs, the tokens
// that filled 10,000-key keyspaces with mobile-number findings.
func randomIDs(n int) []string {
	rng := rand.New(rand.NewPCG(11, 2026))
	out := make([]string, 0, 2*n)
	var b [16]byte
	for i := 0; i < n; i++ {
		for j := range b {
			b[j] = byte(rng.Uint32())
		}
		sum := md5.Sum(b[:])
		out = append(out, hex.EncodeToString(sum[:]))
		for j := range b {
			b[j] = byte(rng.Uint32())
		}
		b[6] = b[6]&0x0f | 0x40
		b[8] = b[8]&0x3f | 0x80
		h := hex.EncodeToString(b[:])
		out = append(out, fmt.Sprintf("%s-%s-%s-%s-%s", h[:8], h[8:12], h[12:16], h[16:20], h[20:]))
	}
	return out
}

func TestFindPIIRandomIDs(t *testing.T) {
	ids := randomIDs(10000)
	runs := 0 // tokens holding a mobile-shaped run: the test means something
	for _, id := range ids {
		for _, key := range []string{id, "token:" + id, "sess:" + id + ":data"} {
			if what, ok := FindPII(key); ok {
				t.Errorf("FindPII(%q) = %s", key, what)
			}
		}
		if hasMobileRun(id) {
			runs++
		}
	}
	if runs == 0 {
		t.Fatal("no random token holds a mobile-shaped run; the sample proves nothing")
	}
	t.Logf("%d of %d tokens hold a mobile-shaped run of digits", runs, len(ids))
}

func hasMobileRun(s string) bool {
	for i := 0; i+11 <= len(s); i++ {
		if isMobile(s[i:i+11]) && allDigits(s[i:i+11]) {
			return true
		}
	}
	return false
}

func FuzzFindPII(f *testing.F) {
	for _, s := range append(append([]string{}, piiRecall...), piiQuiet...) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		what, ok := FindPII(s)
		if ok != (what != "") {
			t.Fatalf("FindPII(%q) = %q, %v", s, what, ok)
		}
		// A finding never repeats eleven digits of the key in clear.
		if ok {
			for i := 0; i+11 <= len(what); i++ {
				if allDigits(what[i : i+11]) {
					t.Fatalf("FindPII(%q) = %q shows the number", s, what)
				}
			}
		}
		// Wrapping the key in separators finds what the key alone has.
		if ok {
			if _, again := FindPII(":" + s + ":"); !again {
				t.Fatalf("FindPII(%q) finds, FindPII(:%q:) does not", s, s)
			}
		}
	})
}

// BenchmarkFindPII: FindPII over a keyspace mix: md5 and UUID tokens,
// numeric IDs, phone numbers, e-mail addresses.
func BenchmarkFindPII(b *testing.B) {
	ids := randomIDs(500)
	keys := make([]string, 0, 2000)
	for i, id := range ids {
		keys = append(keys, "token:"+id, fmt.Sprintf("order:order:%d:base", 1000000+i))
	}
	keys = append(keys, piiRecall...)
	bytes := 0
	for _, k := range keys {
		bytes += len(k)
	}
	b.SetBytes(int64(bytes))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, k := range keys {
			FindPII(k)
		}
	}
}

func TestPIINameNoAlloc(t *testing.T) {
	for _, tt := range []struct{ name, want string }{
		{"phone", "phone number"}, {"Mobile_No", "phone number"}, {"telNo", "phone number"}, {"user_email", "e-mail address"},
		{"ID_Card", "ID number"}, {"passportNo", "ID number"}, {"orderId", ""}, {"token", ""}, {"hotel", ""},
	} {
		if got, _ := PIIName(tt.name); got != tt.want {
			t.Errorf("PIIName(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { PIIName("orderId_Long_Name") }); n != 0 {
		t.Errorf("PIIName allocates %v times", n)
	}
}
