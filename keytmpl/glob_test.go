package keytmpl

import "testing"

func TestGlob(t *testing.T) {
	for _, tt := range []struct{ tmpl, want string }{
		{"order:order:{orderId:int}:base", "order:order:*:base"},
		{"auth:session:u{userId}", "auth:session:u*"},
		{"a:{x:date}{y}:b", "a:*:b"},
		{"seq:order:no", "seq:order:no"},
		{"{{order:{id}}}:items", "{order:*}:items"},
		{`lit:a*b?c[d]e\f:{id}`, `lit:a\*b\?c\[d\]e\\f:*`},
		{`a:x*{id}`, `a:x\**`},
		{"verify:sms:{phone:hash}:{scene:enum(LOGIN,RESET_PWD)}", "verify:sms:*:*"},
	} {
		tm, err := Parse(tt.tmpl, ':')
		if err != nil {
			t.Fatalf("%s: %v", tt.tmpl, err)
		}
		if got := tm.Glob(); got != tt.want {
			t.Errorf("Glob(%s) = %s, want %s", tt.tmpl, got, tt.want)
		}
	}
}
