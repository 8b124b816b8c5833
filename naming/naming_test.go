package naming

import (
	"strings"
	"testing"

	"github.com/keyguard/keyguard/keytmpl"
)

func TestInfer(t *testing.T) {
	for _, tt := range []struct{ key, want string }{
		{"user_1024_token", "user_{id:int}_token"},
		{"tmp_data_20240321150322", "tmp_data_{date:date}{time:int}"},
		{"login:count:189023847", "login:count:{id:int}"},
		{"order_info_20240321_8899123:status:new", "order_info_{date:date}_{id:int}:status:new"},
		{"session:abc123xyz", "session:{token}"},
		{"cache:order123", "cache:order{n:int}"},
		{"zadd17", "zadd{n:int}"},
		{"zadd0:zadd99", "zadd{n:int}:zadd{n2:int}"},
		{"rate:login:18812345678", "rate:login:{phone:hash}"},
		{"rate:login:+8613812345678", "rate:login:{phone:hash}"},
		{"rate:login:+14155552671", "rate:login:{phone:hash}"},
		{"rate:login:tel008613812345678", "rate:login:tel{phone:hash}"},
		{"sess:user:user17@example.com", "sess:user:{email:hash}"},
		{"sess:user:mail=a.b+c@mail.example.co.uk", "sess:user:mail={email:hash}"},
		{"kyc:11010519491231002X:doc", "kyc:{idcard:hash}:doc"},
		{"kyc:110105194912310021:doc", "kyc:{id:int}:doc"}, // check digit wrong: an ID, not an ID card
		{"tok:dGhpcyBpcyBhIHRva2VuIQ==", "tok:{token}"},
		{"tok:Zm9vYmFyLWJhel9xdXV4LTE", "tok:{token}"},
		{"day:2024-03-21:pv", "day:{date}:pv"},
		{"cache:k8s:sha256:utf8:ipv4:v12", "cache:k8s:sha256:utf8:ipv4:v12"},
		{"x:123e4567-e89b-12d3-a456-426614174000", "x:{uuid:uuid}"},
		{"x:65f1a2b3c4d5e6f708192a3b", "x:{hex:hex}"},
		{"a:1:2", "a:{id:int}:{id2:int}"},
		{"{order:1}:items", "{{order:{id:int}}}:items"},
		{"a::b", "a:{empty}:b"},
		{"cache:v2:md5", "cache:v2:md5"},
		// A domain opening with digits is a word; a number after letters
		// counts, in the domain or not.
		{"2fa:code:123", "2fa:code:{id:int}"},
		{"3des:key:7", "3des:key:{id:int}"},
		{"2fa", "2fa"},
		{"2fa17", "2fa{n:int}"},
		{"zadd99", "zadd{n:int}"},
		{"rank:7d:1", "rank:{id:int}d:{id2:int}"}, // past the domain: rank:30d is the same family
		{"123abc:x", "{id:int}abc:x"},
		{"7:x", "{id:int}:x"},
	} {
		got := Infer(tt.key, ':')
		if got != tt.want {
			t.Errorf("Infer(%q) = %q, want %q", tt.key, got, tt.want)
			continue
		}
		if _, err := keytmpl.Parse(got, ':'); err != nil {
			t.Errorf("Infer(%q) = %q does not parse: %v", tt.key, got, err)
			continue
		}
		if !matchesUnhashed(got, tt.key) && !containsEmptySegment(tt.key) {
			t.Errorf("Infer(%q) = %q does not match the key", tt.key, got)
		}
	}
}

func FuzzInfer(f *testing.F) {
	for _, k := range []string{"user_1024_token", "a::b", "{x}", "\x00:\xff", "sess:user:u1@example.com", "tel:+8613812345678", "zadd17", "kyc:11010519491231002X"} {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, key string) {
		got := Infer(key, ':')
		if _, err := keytmpl.Parse(got, ':'); err != nil {
			if key == "" {
				return
			}
			t.Fatalf("Infer(%q) = %q: %v", key, got, err)
		}
		if key != "" && !matchesUnhashed(got, key) && !containsEmptySegment(key) {
			t.Fatalf("Infer(%q) = %q does not match the key", key, got)
		}
		if what, ok := FindPII(got); ok {
			t.Fatalf("Infer(%q) = %q keeps a %s", key, got, what)
		}
	})
}

// matchesUnhashed reports whether the inferred template matches key once
// its hash placeholders, which stand for the personal data of the key,
// take any value.
func matchesUnhashed(tmpl, key string) bool {
	tpl, err := keytmpl.Parse(strings.ReplaceAll(tmpl, ":hash}", "}"), ':')
	return err == nil && tpl.Matches(key)
}

func containsEmptySegment(key string) bool {
	prev := byte(':')
	for i := 0; i < len(key); i++ {
		if key[i] == ':' && prev == ':' {
			return true
		}
		prev = key[i]
	}
	return prev == ':'
}

func TestFindPII(t *testing.T) {
	for _, tt := range []struct {
		s    string
		want bool
	}{
		{"rate:login:18812345678", true},
		{"rate:login:8618812345678", true},
		{"x:12812345678", false},
		{"x:188123456789", false},
		{"verify:email:test@example.com:BIND", true},
		{"x:a@b", false},
		{"id:11010519491231002X", true},
		{"id:110105194912310021", false},
		{"order:1234567890123456789", false},
	} {
		if _, got := FindPII(tt.s); got != tt.want {
			t.Errorf("FindPII(%q) = %v, want %v", tt.s, got, tt.want)
		}
	}
}

func TestFindTimestamp(t *testing.T) {
	for _, tt := range []struct {
		s    string
		want bool
	}{
		{"tmp_data_20240321150322", true},
		{"rate:login:x:2024032115", true},
		{"cache:daily:report:20240321", true},
		{"order:1001", false},
		{"x:20241399", false},
		{"x:1711000000000", true},
		{"x:1234567890", false},
	} {
		if _, got := FindTimestamp(tt.s); got != tt.want {
			t.Errorf("FindTimestamp(%q) = %v, want %v", tt.s, got, tt.want)
		}
	}
}
