package naming

import (
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
		{"cache:order123", "cache:order{id:int}"},
		{"rate:login:18812345678", "rate:login:{phone}"},
		{"x:123e4567-e89b-12d3-a456-426614174000", "x:{uuid:uuid}"},
		{"x:65f1a2b3c4d5e6f708192a3b", "x:{hex:hex}"},
		{"a:1:2", "a:{id:int}:{id2:int}"},
		{"{order:1}:items", "{{order:{id:int}}}:items"},
		{"a::b", "a:{empty}:b"},
		{"cache:v2:md5", "cache:v2:md5"},
	} {
		got := Infer(tt.key, ':')
		if got != tt.want {
			t.Errorf("Infer(%q) = %q, want %q", tt.key, got, tt.want)
			continue
		}
		tpl, err := keytmpl.Parse(got, ':')
		if err != nil {
			t.Errorf("Infer(%q) = %q does not parse: %v", tt.key, got, err)
			continue
		}
		if !tpl.Matches(tt.key) && !containsEmptySegment(tt.key) {
			t.Errorf("Infer(%q) = %q does not match the key", tt.key, got)
		}
	}
}

func FuzzInfer(f *testing.F) {
	for _, k := range []string{"user_1024_token", "a::b", "{x}", "\x00:\xff"} {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, key string) {
		got := Infer(key, ':')
		tpl, err := keytmpl.Parse(got, ':')
		if err != nil {
			if key == "" {
				return
			}
			t.Fatalf("Infer(%q) = %q: %v", key, got, err)
		}
		if key != "" && !tpl.Matches(key) && !containsEmptySegment(key) {
			t.Fatalf("Infer(%q) = %q does not match the key", key, got)
		}
	})
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
