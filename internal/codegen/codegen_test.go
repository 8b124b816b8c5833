package codegen

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/keyguard/keyguard/keybuild"
	"github.com/keyguard/keyguard/registry"
)

func TestWords(t *testing.T) {
	tests := []struct {
		in                        string
		pascal, camel, snake, upp string
	}{
		{"VerifySMS", "VerifySMS", "verifySMS", "verify_sms", "VERIFY_SMS"},
		{"SMSCode", "SMSCode", "smsCode", "sms_code", "SMS_CODE"},
		{"promo-info", "PromoInfo", "promoInfo", "promo_info", "PROMO_INFO"},
		{"order_id", "OrderId", "orderId", "order_id", "ORDER_ID"},
		{"orderId", "OrderId", "orderId", "order_id", "ORDER_ID"},
		{"order2fa", "Order2fa", "order2fa", "order2fa", "ORDER2FA"},
		{"v2Key", "V2Key", "v2Key", "v2_key", "V2_KEY"},
		{"RESET_PWD", "RESETPWD", "resetPWD", "reset_pwd", "RESET_PWD"},
	}
	for _, tt := range tests {
		ws := words(tt.in)
		if got := [4]string{pascal(ws), camel(ws), snake(ws), upperSnake(ws)}; got != [4]string{tt.pascal, tt.camel, tt.snake, tt.upp} {
			t.Errorf("%q: got %q", tt.in, got)
		}
	}
	if got := title(words("RESET_PWD")); got != "ResetPwd" {
		t.Errorf("title = %q", got)
	}
}

func TestDerivedNames(t *testing.T) {
	reg := parseRegistry(t, `version: 1
env: prod
keys:
  - {key: "order:sku:{skuId:int}:settle-preview", ttl: 1m}
  - {key: "auth:session:u{userId:int}", ttl: 1m}
  - {key: "{id}:x", ttl: 1m}
  - {key: "{id}", ttl: 1m}
  - {key: "cache:{{tag}}:{k}", ttl: 1m}
`)
	m, err := buildModel(reg, Options{Lang: Go, Package: "keys"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"OrderSkuSettlePreview", "AuthSessionU", "X", "Key", "CacheTag"}
	for i, e := range m.Entries {
		if e.Name != want[i] {
			t.Errorf("entry %d: name %q, want %q", i, e.Name, want[i])
		}
	}
	// The env prefix is part of every key but not of the names.
	specs := Specs(reg)
	k, err := keybuild.Build(&specs[0], keybuild.Int(7))
	if err != nil || k.String() != "prod:order:sku:7:settle-preview" {
		t.Errorf("Build = %q, %v", k, err)
	}
	if specs[0].Name != "OrderSkuSettlePreview" {
		t.Errorf("spec name %q", specs[0].Name)
	}
}

func TestGenerateErrors(t *testing.T) {
	tests := []struct {
		name, yaml string
		opt        Options
		want       string
	}{
		{"derived collision", `version: 1
keys:
  - {key: "order:{id}:item", ttl: 1m}
  - {key: "order:item:{id}", ttl: 1m}
`, Options{Lang: Go, Package: "keys"}, `builder OrderItem of "order:item:{id}" collides with "order:{id}:item" (line 3)`},
		{"case collision", `version: 1
keys:
  - {key: "a:{id}", name: orderBase, ttl: 1m}
  - {key: "b:{id}", name: OrderBase, ttl: 1m}
`, Options{Lang: Python, Package: "keys"}, `builder order_base`},
		{"fixed name", `version: 1
keys:
  - {key: "a:{id}", name: Templates, ttl: 1m}
`, Options{Lang: Go, Package: "keys"}, "a name the generated Go code uses itself"},
		{"ttl constant", `version: 1
keys:
  - {key: "a:{id}", name: Order, ttl: 1m}
  - {key: "b:{id}", name: OrderTTL, ttl: 1m}
`, Options{Lang: Java, Package: "keys"}, "ORDER_TTL"},
		{"param collision", `version: 1
keys:
  - {key: "a:{orderId}:{order_id:int}", ttl: 1m}
`, Options{Lang: Java, Package: "keys"}, "parameter name orderId"},
		{"enum members", `version: 1
keys:
  - {key: "a:{s:enum(a-b,a_b)}", ttl: 1m}
`, Options{Lang: TypeScript, Package: "keys"}, "two members named A_B"},
		{"field constants", `version: 1
keys:
  - {key: "a:{id}", type: hash, ttl: 1m, fields: [userId, user_id]}
`, Options{Lang: Go, Package: "keys"}, `fields "userId" and "user_id" of "a:{id}" both give the Go constant AFieldUserId`},
		{"field constants upper", `version: 1
keys:
  - {key: "a:{id}", type: hash, ttl: 1m, fields: [userID, user_id]}
`, Options{Lang: Python, Package: "keys"}, `both give the Java, Python and TypeScript constant A_FIELD_USER_ID`},
		{"field list and builder", `version: 1
keys:
  - {key: "a:{id}", name: Order, type: hash, ttl: 1m, fields: [x]}
  - {key: "b:{id}", name: OrderFields, ttl: 1m}
`, Options{Lang: Go, Package: "keys"}, `builder OrderFields of "b:{id}" collides with "a:{id}" (line 3)`},
		{"field constant and TTL constant", `version: 1
keys:
  - {key: "a:{id}", name: Order, type: hash, ttl: 1m, fields: [ttl]}
  - {key: "b:{id}", name: OrderFieldTtl, ttl: 1m}
`, Options{Lang: Go, Package: "keys"}, `builder OrderFieldTtl of "b:{id}" collides with "a:{id}"`},
		{"bad package", `version: 1
keys: [{key: "a:{id}", ttl: 1m}]
`, Options{Lang: Go, Package: "func"}, "not a Go package name"},
		{"bad java package", `version: 1
keys: [{key: "a:{id}", ttl: 1m}]
`, Options{Lang: Java, Package: "com.class.x"}, "is a Java keyword"},
		{"bad lang", `version: 1
keys: [{key: "a:{id}", ttl: 1m}]
`, Options{Lang: "rust", Package: "keys"}, "unknown language"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Generate(parseRegistry(t, tt.yaml), tt.opt)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Generate error %v, want one containing %q", err, tt.want)
			}
			var pe *registry.ParseError
			if errors.As(err, &pe) && (pe.Pos.Line == 0 || pe.Hint == "") {
				t.Errorf("error %v has no line or no hint", err)
			}
		})
	}
}

func TestKeywordParams(t *testing.T) {
	reg := parseRegistry(t, `version: 1
keys:
  - {key: "a:{type}:{class}:{k:int}:{keybuild}:{def}", ttl: 1m}
`)
	m, err := buildModel(reg, Options{Lang: Go, Package: "keys"})
	if err != nil {
		t.Fatal(err)
	}
	var goNames, javaNames, pyNames []string
	for _, p := range m.Entries[0].Params {
		goNames, javaNames, pyNames = append(goNames, p.Go), append(javaNames, p.Camel), append(pyNames, p.Snake)
	}
	if got := strings.Join(goNames, " "); got != "type_ class k_ keybuild_ def" {
		t.Errorf("Go params %q", got)
	}
	if got := strings.Join(javaNames, " "); got != "type class_ k keybuild def" {
		t.Errorf("Java params %q", got)
	}
	if got := strings.Join(pyNames, " "); got != "type class_ k keybuild def_" {
		t.Errorf("Python params %q", got)
	}
}

func TestFieldNames(t *testing.T) {
	reg := parseRegistry(t, `version: 1
keys:
  - {key: "promo:sku:{skuId:int}", type: hash, ttl: 1m, fields: [activityId, discount_type, 2nd, 名称, "a b", __ns]}
  - {key: "promo:rule:{id}", type: string, ttl: 1m, fields: [x], fields_extra: allow}
  - {key: "promo:flag:{id}", type: string, ttl: 1m}
`)
	m, err := buildModel(reg, Options{Lang: Go, Package: "keys"})
	if err != nil {
		t.Fatal(err)
	}
	var goIDs, upper []string
	for _, f := range m.Entries[0].Fields {
		goIDs, upper = append(goIDs, f.Go), append(upper, f.Upper)
	}
	if got := strings.Join(goIDs, " "); got != "PromoSkuFieldActivityId PromoSkuFieldDiscountType PromoSkuField2nd PromoSkuField3 PromoSkuFieldAB PromoSkuFieldNs" {
		t.Errorf("Go constants %q", got)
	}
	if got := strings.Join(upper, " "); got != "PROMO_SKU_FIELD_ACTIVITY_ID PROMO_SKU_FIELD_DISCOUNT_TYPE PROMO_SKU_FIELD_2ND PROMO_SKU_FIELD_3 PROMO_SKU_FIELD_A_B PROMO_SKU_FIELD_NS" {
		t.Errorf("constants %q", got)
	}
	if m.Entries[0].FieldsExtra || !m.Entries[1].FieldsExtra || len(m.Entries[2].Fields) != 0 {
		t.Errorf("fields_extra or undeclared fields wrong: %v %v %v", m.Entries[0].FieldsExtra, m.Entries[1].FieldsExtra, m.Entries[2].Fields)
	}
	if m.FieldsExample != m.Entries[0] {
		t.Error("the package doc's example is not the first entry with fields")
	}
	// Every language compiles the constants in (the vector tests run them);
	// here: a registry without fields generates none of it.
	noFields := parseRegistry(t, "version: 1\nkeys: [{key: \"a:{id}\", ttl: 1m}]\n")
	for _, l := range Langs() {
		f, err := Generate(noFields, Options{Lang: l, Package: goldenPackage(l)})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(f.Data), "FIELD_") || strings.Contains(string(f.Data), "AFields") {
			t.Errorf("%s: field constants for a template without fields", l)
		}
	}
}

func TestWrapComment(t *testing.T) {
	got := wrapComment("// ", strings.Repeat("word ", 20)+strings.Repeat("x", 90))
	for _, line := range strings.Split(got, "\n") {
		if !strings.HasPrefix(line, "// ") || len(line) > 76 && strings.Contains(line[3:], " ") {
			t.Errorf("line %q", line)
		}
	}
	if !strings.HasSuffix(got, "\n// "+strings.Repeat("x", 90)) {
		t.Errorf("long word not on its own line:\n%s", got)
	}
}

func TestInfallible(t *testing.T) {
	reg := parseRegistry(t, `version: 1
policy: {max_key_bytes: 30}
keys:
  - {key: "a:{x:int}:{y:int}", ttl: 1m}
  - {key: "ab:{x:int}:{y:int}", ttl: 1m}
  - {key: "c:{x}", ttl: 1m}
  - {key: "d:e", ttl: 1m}
`)
	m, err := buildModel(reg, Options{Lang: Go, Package: "keys"})
	if err != nil {
		t.Fatal(err)
	}
	// "a:" + 20 + ":" + 20 = 43 > 30: even two ints can fail here.
	for i, want := range []bool{false, false, false, true} {
		if m.Entries[i].Infallible != want {
			t.Errorf("%s: infallible %v, want %v", m.Entries[i].Template, !want, want)
		}
	}
	reg = parseRegistry(t, `version: 1
policy: {max_key_bytes: 43}
keys:
  - {key: "a:{x:int}:{y:int}", ttl: 1m}
`)
	m, _ = buildModel(reg, Options{Lang: Go, Package: "keys"})
	if !m.Entries[0].Infallible {
		t.Error("43 bytes fit max_key_bytes 43")
	}
}

func TestOtherSeparator(t *testing.T) {
	reg := parseRegistry(t, `version: 1
separator: "/"
keys:
  - {key: "order/{id}/items", ttl: 1m}
`)
	specs := Specs(reg)
	if _, err := keybuild.Build(&specs[0], keybuild.String("a:b")); err != nil {
		t.Errorf("':' is not the separator here: %v", err)
	}
	_, err := keybuild.Build(&specs[0], keybuild.String("a/b"))
	var e *keybuild.Error
	if !errors.As(err, &e) || e.Reason != keybuild.ReasonSeparator {
		t.Errorf("'/' accepted: %v", err)
	}
	for _, l := range Langs() {
		f, err := Generate(reg, Options{Lang: l, Package: goldenPackage(l)})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(f.Data), `= "/"`) {
			t.Errorf("%s: separator not written", l)
		}
	}
}

func TestOverlapNote(t *testing.T) {
	reg := parseRegistry(t, `version: 1
keys:
  - {key: "promo:sku:{skuId:int}", ttl: 1m, owner: promo-team}
  - {key: "promo:{scope}:{id}", ttl: 1m, owner: order-team}
`)
	f, err := Generate(reg, Options{Lang: Go, Package: "keys"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(f.Data), `// Overlap: some keys of this template are also keys of "promo:{scope}:{id}" (owner order-team)`) {
		t.Errorf("no overlap note:\n%s", f.Data)
	}
}

func TestWriteAndDiff(t *testing.T) {
	reg := testRegistry(t)
	f, err := Generate(reg, Options{Lang: Go, Package: "keys"})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "out")
	d, err := f.Diff(dir)
	if err != nil || d == nil {
		t.Fatalf("missing file: diff %q, %v", d, err)
	}
	if err := f.Write(dir); err != nil {
		t.Fatal(err)
	}
	if d, err := f.Diff(dir); err != nil || d != nil {
		t.Fatalf("fresh file: diff %q, %v", d, err)
	}
	path := filepath.Join(dir, f.Name)
	stale := strings.Replace(string(f.Data), "TTL:   time.Hour,", "TTL:   2 * time.Hour,", 1)
	if stale == string(f.Data) {
		t.Fatal("test edit did not apply")
	}
	if err := os.WriteFile(path, []byte(stale), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err = f.Diff(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := "-\tTTL:   2 * time.Hour,\n+\tTTL:   time.Hour,\n"
	if !strings.Contains(string(d), want) || !strings.HasPrefix(string(d), "--- "+path+"\n+++ ") {
		t.Errorf("diff:\n%s\nwant it to contain\n%s", d, want)
	}
	if n := strings.Count(string(d), "\n@@ "); n != 1 {
		t.Errorf("%d hunks, want 1:\n%s", n, d)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("Write left temporary files: %v", entries)
	}
}

func TestUnified(t *testing.T) {
	a := []byte("a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n")
	b := []byte("a\nB\nc\nd\ne\nf\ng\nh\ni\nj\nk\n")
	got := string(unified("x", "y", a, b))
	want := "--- x\n+++ y\n@@ -1,5 +1,5 @@\n a\n-b\n+B\n c\n d\n e\n@@ -8,3 +8,4 @@\n h\n i\n j\n+k\n"
	if got != want {
		t.Errorf("unified:\n%s\nwant\n%s", got, want)
	}
}

// TestFuncName: FuncName gives, entry by entry, the builder each language's
// generated file declares, named or derived, with and without an env.
func TestFuncName(t *testing.T) {
	decl := map[Lang]*regexp.Regexp{
		Go:         regexp.MustCompile(`(?m)^func (\w+)\(.*\) (?:keybuild\.Key|\(keybuild\.Key, error\)) \{`),
		Java:       regexp.MustCompile(`(?m)^    public static Key (\w+)\(.*\) \{`),
		Python:     regexp.MustCompile(`(?m)^def (\w+)\(.*\) -> Key:`),
		TypeScript: regexp.MustCompile(`(?m)^export function (\w+)\(.*\): Key \{`),
	}
	runtime := map[string]bool{"build": true} // the runtime's build(t Template, ...)
	env := parseRegistry(t, `version: 1
env: prod
keys:
  - {key: "order:sku:{skuId:int}:settle-preview", ttl: 1m}
  - {key: "{id}", ttl: 1m}
  - {key: "cache:{{tag}}:{k}", ttl: 1m, name: CacheTagged}
`)
	for _, reg := range []*registry.Registry{testRegistry(t), env} {
		for _, lang := range Langs() {
			pkg := "keys"
			if lang == Java {
				pkg = "com.example.keys"
			}
			f, err := Generate(reg, Options{Lang: lang, Package: pkg})
			if err != nil {
				t.Fatal(err)
			}
			var declared []string
			for _, m := range decl[lang].FindAllStringSubmatch(string(f.Data), -1) {
				if !runtime[m[1]] {
					declared = append(declared, m[1])
				}
			}
			var want []string
			for _, e := range reg.Entries {
				want = append(want, FuncName(lang, e))
			}
			if !slices.Equal(declared, want) {
				t.Errorf("%s (%s): FuncName gives\n%q\nthe file declares\n%q", reg.File, lang, want, declared)
			}
		}
	}
}

// TestSpecsFields: the template table carries each template's declared
// fields, as the generated Templates() does (TestGeneratedGo).
func TestSpecsFields(t *testing.T) {
	reg := testRegistry(t)
	declared := 0
	for i, s := range Specs(reg) {
		e := reg.Entries[i]
		if !slices.Equal(s.Fields, e.Fields) || s.FieldsExtra != e.FieldsExtra {
			t.Errorf("%s: spec fields %q extra %v, registry %q extra %v", e.Key, s.Fields, s.FieldsExtra, e.Fields, e.FieldsExtra)
		}
		if len(s.Fields) > 0 {
			declared++
		}
	}
	if declared < 2 {
		t.Errorf("only %d templates declare fields in testdata/keyguard.yaml", declared)
	}
}
