package keyshape

import (
	"strings"
	"testing"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/keytmpl"
	"github.com/keyguard/keyguard/registry"
)

func testClassifier(t testing.TB) *Classifier {
	t.Helper()
	reg, err := registry.Load("../scancode/testdata/keyguard.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return NewClassifier(reg)
}

func lit(s string) Shape        { return Lit(s) }
func hole(name string) Shape    { return Hole(keytmpl.Any, name, name) }
func intHole(name string) Shape { return Hole(keytmpl.Int, name, name) }
func cat(ss ...Shape) Shape     { return Concat(ss...) }
func keysOf(es []*registry.Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Key)
	}
	return out
}

func TestClassify(t *testing.T) {
	c := testClassifier(t)
	for _, tt := range []struct {
		name     string
		shape    Shape
		rule     string
		fits     string // entries, joined by " | "
		possible string
		opaque   bool
	}{
		{"exact literal key", lit("user:1001:info"), finding.RawKey, "user:{userId:int}:info", "", false},
		{"literal key of a literal template", lit("user:admin:settings"), finding.RawKey, "user:admin:settings", "", false},
		{"literal key, no template", lit("user:1001:avatar"), finding.UnregisteredCode, "", "", false},
		{"literal with a value the placeholder refuses", lit("user:abc:info"), finding.UnregisteredCode, "", "", false},
		{"text hole vs {id:int}", cat(lit("user:"), hole("id"), lit(":info")), finding.RawKey, "user:{userId:int}:info", "", false},
		{"int hole vs {id:int}", cat(lit("user:"), intHole("id"), lit(":info")), finding.RawKey, "user:{userId:int}:info", "", false},
		{"int hole never fits an enum", cat(lit("verify:sms:"), hole("phone"), lit(":"), intHole("n")), finding.UnregisteredCode, "", "", false},
		{"text hole fits hash and enum", cat(lit("verify:sms:"), hole("phone"), lit(":"), hole("scene")), finding.RawKey, "verify:sms:{phone:hash}:{scene:enum(LOGIN,RESET_PWD,BIND)}", "", false},
		{"hole where the template has literal text", cat(lit("user:"), hole("name"), lit(":settings")), finding.UnregisteredCode, "", "", false},
		{"hole spanning separators is not read so", cat(lit("order:"), hole("rest"), lit(":base")), finding.UnregisteredCode, "", "", false},
		{"hole sharing a segment with text", cat(lit("auth:session:u"), intHole("uid")), finding.RawKey, "auth:session:u{userId:int}", "", false},
		{"hole without the segment's text", cat(lit("auth:session:"), intHole("uid")), finding.UnregisteredCode, "", "", false},
		{"prefix-only constant + unknown suffix", cat(lit("user:"), hole("rest")), finding.RawKey, "", "user:{userId:int}:info | user:admin:settings", false},
		{"prefix-only constant + unknown int suffix", cat(lit("user:"), intHole("n")), finding.UnregisteredCode, "", "", false},
		{"unknown suffix after an unknown prefix", cat(lit("tmp:"), hole("rest")), finding.UnregisteredCode, "", "", false},
		{"hash tag", cat(lit("{order:"), intHole("id"), lit("}:items")), finding.RawKey, "{{order:{orderId:int}}}:items", "", false},
		{"opaque", hole("k"), finding.RawKey, "", "", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v := c.Classify(tt.shape)
			if v.Rule != tt.rule {
				t.Errorf("%s: rule %q, want %q", tt.shape, v.Rule, tt.rule)
			}
			if got := strings.Join(keysOf(v.Fits), " | "); got != tt.fits {
				t.Errorf("%s: fits %q, want %q", tt.shape, got, tt.fits)
			}
			if got := strings.Join(keysOf(v.Possible), " | "); got != tt.possible {
				t.Errorf("%s: possible %q, want %q", tt.shape, got, tt.possible)
			}
			if v.Opaque != tt.opaque {
				t.Errorf("%s: opaque %v", tt.shape, v.Opaque)
			}
		})
	}
}

func TestShapeString(t *testing.T) {
	for _, tt := range []struct {
		s    Shape
		want string
	}{
		{cat(lit("user:"), hole("id"), lit(":info")), "user:{id}:info"},
		{cat(lit("user:"), intHole("id"), lit(":info")), "user:{id:int}:info"},
		{cat(lit("a:"), Hole(keytmpl.Any, "", "f()"), lit(":b")), "a:{}:b"},
		{cat(lit("a:"), Hole(keytmpl.Int, "", "f()")), "a:{v:int}"},
		{cat(lit("{order:"), intHole("id"), lit("}")), "{{order:{id:int}}}"},
		{cat(lit("a"), lit(""), lit("b")), "ab"},
	} {
		if got := tt.s.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

func TestCall(t *testing.T) {
	c := testClassifier(t)
	reg := c.Registry()
	userInfo := reg.EntryByKey("user:{userId:int}:info")
	verify := reg.EntryByKey("verify:sms:{phone:hash}:{scene:enum(LOGIN,RESET_PWD,BIND)}")
	for _, tt := range []struct {
		lang Lang
		s    Shape
		e    *registry.Entry
		want string
	}{
		{Go, cat(lit("user:"), intHole("id"), lit(":info")), userInfo, "keys.UserInfo(id).String()"},
		{Go, lit("user:42:info"), userInfo, "keys.UserInfo(42).String()"},
		{Java, cat(lit("user:"), hole("userId"), lit(":info")), userInfo, "Keys.userInfo(userId).key()"},
		{Java, lit("user:42:info"), userInfo, "Keys.userInfo(42L).key()"},
		{Python, cat(lit("user:"), hole("uid"), lit(":info")), userInfo, "keys.user_info(uid)"},
		{TypeScript, cat(lit("user:"), hole("uid"), lit(":info")), userInfo, "keys.userInfo(uid).key"},
		{Go, cat(lit("verify:sms:"), hole("phone"), lit(":LOGIN")), verify, `keys.VerifySms(phone, "LOGIN")`},
		{Python, cat(lit("verify:sms:"), hole("phone"), lit(":LOGIN")), verify, `keys.verify_sms(phone, 'LOGIN')`},
		// literal text in a {x:hash} placeholder is the hash, not the value
		{Go, lit("verify:sms:0123456789abcdef:LOGIN"), verify, ""},
		// one placeholder holding a hole and text: no call lines up
		{Go, cat(lit("user:1"), intHole("id"), lit(":info")), userInfo, ""},
	} {
		if got := c.Call(tt.lang, tt.s, tt.e); got != tt.want {
			t.Errorf("Call(%s, %s) = %q, want %q", tt.lang, tt.s, got, tt.want)
		}
	}
}

func TestFinding(t *testing.T) {
	c := testClassifier(t)
	f := c.Finding(Go, cat(lit("user:"), intHole("id"), lit(":info")))
	if f.Rule != finding.RawKey || f.Severity != finding.Warning || f.Owner != "user-team" || f.Template != "user:{id:int}:info" {
		t.Errorf("raw-key finding: %+v", f)
	}
	if !strings.Contains(f.Hint, "keys.UserInfo(id).String()") {
		t.Errorf("hint %q does not name the builder call", f.Hint)
	}
	f = c.Finding(Java, lit("tmp:cache"))
	if f.Rule != finding.UnregisteredCode || f.Severity != finding.Error || !strings.Contains(f.Message, `"tmp:cache"`) {
		t.Errorf("unregistered finding: %+v", f)
	}
	f = c.Finding(Python, Hole(keytmpl.Any, "", "self.key"))
	if f.Rule != finding.RawKey || !strings.Contains(f.Message, "self.key") {
		t.Errorf("opaque finding: %+v", f)
	}
	f = c.Finding(TypeScript, cat(lit("user:"), hole("rest")))
	if !strings.Contains(f.Message, "may be a key of") {
		t.Errorf("possible finding: %+v", f)
	}
}

func TestBuilderNames(t *testing.T) {
	c := testClassifier(t)
	e := c.Registry().EntryByKey("verify:sms:{phone:hash}:{scene:enum(LOGIN,RESET_PWD,BIND)}")
	for lang, want := range map[Lang]string{Go: "VerifySms", Java: "verifySms", Python: "verify_sms", TypeScript: "verifySms"} {
		if got := c.BuilderName(lang, e); got != want {
			t.Errorf("%s: %q, want %q", lang, got, want)
		}
	}
	if !c.IsBuilder(Python, "user_info", 1) || c.IsBuilder(Python, "user_info", 2) || c.IsBuilder(Python, "get", 1) {
		t.Error("IsBuilder")
	}
}
