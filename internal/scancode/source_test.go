package scancode

import (
	"bytes"
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	sitter "github.com/smacker/go-tree-sitter"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/keyshape"
)

func scanString(t testing.TB, ext, src string) []Finding {
	t.Helper()
	ls := newLanguages()
	fs, err := scanSource(context.Background(), "x"+ext, []byte(src), ls[ext], keyshape.NewClassifier(testRegistry(t)))
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// Constructions one per case, with the template each must give.
func TestSourceShapes(t *testing.T) {
	for _, tt := range []struct {
		ext, src, want string
	}{
		{".java", `class A { void f(Jedis j, int n) { j.get("user:" + n + ":info"); } }`, "user:{n:int}:info"},
		{".java", `class A { static final String P = "tmp:"; void f(Jedis j) { j.get(A.P + "x"); } }`, "tmp:x"},
		{".java", `class A { void f(Jedis j, String s) { String k = "tmp:%s".formatted(s); j.get(k); } }`, "tmp:{s}"},
		{".java", `class A { void f(Jedis j, String s) { j.get(String.format("%2$s:%1$s", s, "tmp")); } }`, "tmp:{s}"},
		{".java", `class A { void f(Jedis j) { String k = "a"; k = "b"; j.get(k); } }`, "{k}"},
		{".java", "class A { void f(Jedis j) { j.get(\"tmp:\\u0041\\n\"); } }", "tmp:A\n"},
		{".py", "import redis\nr = redis.Redis()\nr.get(rb'tmp:\\x')\n", `tmp:\x`},
		{".py", "import redis\nr = redis.Redis()\ndef f(a, b):\n    r.get('tmp:%s:%d' % (a, b))\n", "tmp:{a}:{b:int}"},
		{".py", "import redis\nr = redis.Redis()\ndef f(a):\n    r.get(f'tmp:{{x}}:{a!r}')\n", "tmp:{{x}}:{}"},
		{".py", "import redis\nr = redis.Redis()\ndef f(a):\n    r.get('tmp:{u}'.format(u=a))\n", "tmp:{a}"},
		{".py", "import redis\ndef f(client: redis.Redis, a):\n    client.get('tmp:' + a)\n", "tmp:{a}"},
		{".py", "def f(redis_conn: 'Redis', a):\n    redis_conn.set(name='tmp:' + a, value=1)\n", "tmp:{a}"},
		{".ts", "const r = new Redis(); function f(a: number) { r.get(`tmp:${a}`); }", "tmp:{a:int}"},
		{".ts", "class S { constructor(private c: RedisClientType) {} f(a: string) { this.c.hGet('tmp:' + a, 'x'); } }", "tmp:{a}"},
		{".ts", "const c = await createClient().connect(); c.set('tmp:' + 'x' as string, '1');", "tmp:x"},
		{".js", "const r = new Redis(); const p = 'tmp:'; r.multi().set(p + 'y', 1).exec();", "tmp:y"},
	} {
		fs := scanString(t, tt.ext, tt.src)
		if len(fs) != 1 || fs[0].Template != tt.want {
			var got []string
			for _, f := range fs {
				got = append(got, f.Template)
			}
			t.Errorf("%s %q: templates %q, want [%q]", tt.ext, tt.src, got, tt.want)
		}
	}
}

// Calls that are not Redis calls give nothing.
func TestSourceNotRedis(t *testing.T) {
	for ext, src := range map[string]string{
		".java": `class A { void f(java.util.Map<String,String> m, Cache c) { m.get("tmp:x"); c.get("tmp:y"); } }`,
		".py":   "d = {}\nd.get('tmp:x')\nrequests.get('tmp:y')\n",
		".ts":   "const m = new Map(); m.get('tmp:x'); fetch('tmp:y'); axios.get('tmp:z');",
	} {
		if fs := scanString(t, ext, src); len(fs) != 0 {
			t.Errorf("%s: %+v", ext, fs)
		}
	}
}

// FuzzScanSource: no source text, however broken, makes a scanner panic
// (tree-sitter leaves fields out of code it cannot parse).
func FuzzScanSource(f *testing.F) {
	for _, path := range []string{"testdata/src/java/OrderService.java", "testdata/src/python/cart.py", "testdata/src/ts/session.ts", "testdata/src/ts/legacy.js"} {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		ext := path[strings.LastIndexByte(path, '.'):]
		f.Add(ext, data)
		// cut in the middle of a call
		f.Add(ext, data[:bytes.Index(data, []byte("get("))+6])
	}
	for ext, src := range map[string]string{ // small seeds minimize fast
		".java": `class A { void f(Jedis j, long n) { j.get(String.format("user:%d:info", n)); } }`,
		".py":   "import redis\nr = redis.Redis()\nr.get(f'user:{n}:info' % x)\n",
		".ts":   "const r = new Redis(); r.get(`user:${n}:info`);",
		".js":   "const r = new Redis(); r.eval('s', 1, 'k' + n);",
	} {
		f.Add(ext, []byte(src))
	}
	ls := newLanguages()
	reg, err := testRegistryErr()
	if err != nil {
		f.Fatal(err)
	}
	c := keyshape.NewClassifier(reg)
	f.Fuzz(func(t *testing.T, ext string, src []byte) {
		lang := ls[ext]
		if lang == nil {
			return
		}
		fs, err := scanSource(context.Background(), "f"+ext, src, lang, c)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range fs {
			if x.Rule != finding.RawKey && x.Rule != finding.UnregisteredCode || x.Line < 1 || x.Column < 1 {
				t.Fatalf("bad finding %+v", x)
			}
		}
	})
}

func TestUnescape(t *testing.T) {
	for in, want := range map[string]string{`a\nb`: "a\nb", `\u0041\x42`: "AB", `\q`: "q", `\`: `\`, `\u12`: "u12", "a\\\nb": "ab"} {
		if got := unescape(in); got != want {
			t.Errorf("unescape(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSourceMapArgumentsLeftOut(t *testing.T) {
	for ext, src := range map[string]string{
		".py": "import redis\nr = redis.Redis()\nr.mset({'tmp:a': 1})\n",
		".ts": "const r = createClient(); r.mSet({'tmp:a': '1'});",
	} {
		if fs := scanString(t, ext, src); len(fs) != 0 {
			t.Errorf("%s: %+v", ext, fs)
		}
	}
}

// A grammar whose query does not compile makes its language broken (its
// files are then listed as not analysed), never a panic.
func TestLanguageBroken(t *testing.T) {
	l := (&language{name: "x", grammar: pythonLanguage().grammar, bindTypes: []string{"nope"}, callTypes: []string{"nope"}, declTypes: []string{"nope"}}).compile()
	if l.broken == nil || l.query != nil || !strings.Contains(l.broken.Error(), "grammar does not load") {
		t.Fatalf("broken %v", l.broken)
	}
	for _, l := range newLanguages() {
		if l.broken != nil {
			t.Errorf("%s: %v", l.name, l.broken)
		}
	}
}

// A grammar's regular symbols are node types a query of one type
// compiles for, and knows tells of every type what compiling its query
// tells.
func TestNamedTypesAsQueries(t *testing.T) {
	for ext, l := range newLanguages() {
		named := namedTypes(l.grammar)
		types := append(append(append([]string{"nope", "identifier", "_expression", "expression", "ERROR", "string", "comment"},
			l.bindTypes...), l.callTypes...), l.declTypes...)
		for _, typ := range types {
			q, err := sitter.NewQuery([]byte("("+typ+")"), l.grammar)
			if err == nil {
				q.Close()
			}
			if named[typ] && err != nil {
				t.Errorf("%s: %q is a regular symbol, but its query does not compile: %v", ext, typ, err)
			}
			if got := knows(l.grammar, named, typ); got != (err == nil) {
				t.Errorf("%s: knows %q = %v, but its query compiles: %v", ext, typ, got, err == nil)
			}
		}
	}
}

// Only the grammars of the files present are built.
func TestLanguagesForExtensionsPresent(t *testing.T) {
	ls := languagesFor(func(ext string) bool { return ext == ".mjs" || ext == ".py" })
	var got []string
	for ext := range ls {
		got = append(got, ext)
	}
	slices.Sort(got)
	want := []string{".cjs", ".js", ".jsx", ".mjs", ".py", ".pyi"}
	if !slices.Equal(got, want) {
		t.Fatalf("languagesFor(.mjs, .py) = %v, want %v", got, want)
	}
	if ls[".js"] != ls[".mjs"] || ls[".py"] != ls[".pyi"] {
		t.Fatal("one grammar's extensions got grammars of their own")
	}
	if len(languagesFor(func(string) bool { return false })) != 0 {
		t.Fatal("grammars built for no extension")
	}
}
