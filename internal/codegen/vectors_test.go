package codegen

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/keyguard/keyguard/keybuild"
)

// A call is one builder invocation in a harness program. Each harness
// prints one line per call: "ID PATH ok HEX(key)" or "ID PATH err REASON
// PLACEHOLDER" (- for none), and the test compares the lines with what
// the vectors say.
type call struct {
	id     string // "v12" for vector 12, "rt3" for the round trip of entry 3, "x1" for extras
	path   string // typed: the generated builder; runtime: the generic build
	e      *entry
	values []string // in placeholder order
	want   string   // "ok HEX" or "err REASON PLACEHOLDER"; "fields HEX open|closed" for field calls
	lit    []string // extras: argument literals written as they are
	fields bool     // a field call: print the entry's declared fields instead of building a key
}

func (c call) label() string { return c.id + " " + c.path }

func wantOf(v vector) string {
	if v.Error != "" {
		ph := v.Placeholder
		if ph == "" {
			ph = "-"
		}
		return "err " + v.Error + " " + ph
	}
	return "ok " + hex.EncodeToString([]byte(v.Key))
}

// canonicalInt reports whether s is an int64 written the way every
// language prints it, so a typed builder given the number builds s.
func canonicalInt(s string) (int64, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && strconv.FormatInt(n, 10) == s
}

// vectorCalls turns the shared vectors into calls: the runtime path for
// each, and the typed path when the values can be passed to the typed
// builder (an int placeholder needs a canonical int64; Java enums need a
// listed value).
func vectorCalls(t *testing.T, m *model, vs []vector) []call {
	t.Helper()
	var out []call
	for _, v := range vs {
		var e *entry
		for _, x := range m.Entries {
			if x.Template == v.Template {
				e = x
			}
		}
		if e == nil {
			t.Fatalf("vector %d: template %q is not in testdata/keyguard.yaml", v.ID, v.Template)
		}
		if len(v.Values) != len(e.Params) {
			t.Fatalf("vector %d: %d values for %d placeholders", v.ID, len(v.Values), len(e.Params))
		}
		var vals []string
		for _, p := range e.Params {
			val, ok := v.Values[p.Name]
			if !ok {
				t.Fatalf("vector %d: no value for {%s}", v.ID, p.Name)
			}
			vals = append(vals, val)
		}
		id := "v" + strconv.Itoa(v.ID)
		out = append(out, call{id: id, path: "runtime", e: e, values: vals, want: wantOf(v)})
		out = append(out, call{id: id, path: "typed", e: e, values: vals, want: wantOf(v)})
	}
	return out
}

// roundTripCalls build a key of every template with typical values.
func roundTripCalls(m *model) []call {
	var out []call
	for _, e := range m.Entries {
		var vals []string
		for _, p := range e.Params {
			vals = append(vals, p.example())
		}
		out = append(out, call{id: "rt" + strconv.Itoa(e.Index), path: "typed", e: e, values: vals, want: "ok " + hex.EncodeToString([]byte(e.ExampleKey()))})
	}
	return out
}

// fieldCalls read the declared fields of the templates: through the list
// constant ("typed"), through the constant of each field ("const"), and
// from the template table ("runtime", every template: an undeclared set is
// empty). Each prints "fields HEX open|closed", HEX the field names joined
// by newlines (- for none).
func fieldCalls(m *model, runtime bool) []call {
	var out []call
	for _, e := range m.Entries {
		want := "fields " + fieldsHex(e.FieldNames()) + " closed"
		if e.FieldsExtra {
			want = "fields " + fieldsHex(e.FieldNames()) + " open"
		}
		id := "f" + strconv.Itoa(e.Index)
		if len(e.Fields) > 0 {
			out = append(out, call{id: id, path: "typed", e: e, want: want, fields: true},
				call{id: id, path: "const", e: e, want: want, fields: true})
		}
		if runtime {
			out = append(out, call{id: id, path: "runtime", e: e, want: want, fields: true})
		}
	}
	return out
}

func fieldsHex(names []string) string {
	if len(names) == 0 {
		return "-"
	}
	return hex.EncodeToString([]byte(strings.Join(names, "\n")))
}

// typedOK reports whether the typed builder can take the call's values.
func typedOK(c call, javaEnums bool) bool {
	for i, p := range c.e.Params {
		switch {
		case p.Kind == keybuild.KindInt:
			if _, ok := canonicalInt(c.values[i]); !ok {
				return false
			}
		case p.Enum != nil && javaEnums:
			if !slices.Contains(p.Enum.Strings(), c.values[i]) {
				return false
			}
		}
	}
	return true
}

func enumMember(p *param, v string) (string, bool) {
	for _, ev := range p.Enum.Values {
		if ev.Value == v {
			return ev.Upper, true
		}
	}
	return "", false
}

// emitted is the calls a harness makes: all but the typed calls whose
// values the typed builder cannot take.
func emitted(calls []call, javaEnums bool) []call {
	var out []call
	for _, c := range calls {
		if c.fields || c.path != "typed" || typedOK(c, javaEnums) {
			out = append(out, c)
		}
	}
	return out
}

// compare checks a harness's output against the calls it made: one line
// each, no more, no fewer.
func compare(t *testing.T, lang, out string, calls []call) {
	t.Helper()
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.SplitN(line, " ", 3)
		if len(f) != 3 {
			t.Errorf("%s: bad output line %q", lang, line)
			continue
		}
		got[f[0]+" "+f[1]] = f[2]
	}
	for _, c := range calls {
		g, ok := got[c.label()]
		if !ok {
			t.Errorf("%s: no result for %s %s(%q)", lang, c.label(), c.e.Name, c.values)
			continue
		}
		delete(got, c.label())
		if g != c.want {
			t.Errorf("%s %s %s(%q): got %s, want %s", lang, c.label(), c.e.Name, c.values, decodeOK(g), decodeOK(c.want))
		}
	}
	for l, g := range got {
		t.Errorf("%s: unexpected result %s %s", lang, l, g)
	}
	if len(calls) < 100 {
		t.Errorf("%s: only %d calls", lang, len(calls))
	}
	if n := countFields(calls); n < 6 {
		t.Errorf("%s: only %d field calls", lang, n)
	}
}

func countFields(calls []call) int {
	n := 0
	for _, c := range calls {
		if c.fields {
			n++
		}
	}
	return n
}

func decodeOK(s string) string {
	if h, ok := strings.CutPrefix(s, "ok "); ok {
		b, _ := hex.DecodeString(h)
		return "ok " + strconv.Quote(string(b))
	}
	return s
}

func TestVectorsRuntime(t *testing.T) {
	reg := testRegistry(t)
	specs := Specs(reg)
	for _, v := range loadVectors(t) {
		var spec *keybuild.Spec
		for i := range specs {
			if specs[i].Template == v.Template {
				spec = &specs[i]
			}
		}
		if spec == nil {
			t.Fatalf("vector %d: no template %q", v.ID, v.Template)
		}
		var args []keybuild.Arg
		for _, p := range spec.Parts {
			if p.Name != "" {
				args = append(args, keybuild.String(v.Values[p.Name]))
			}
		}
		k, err := keybuild.Build(spec, args...)
		got := "ok " + hex.EncodeToString([]byte(k.String()))
		var e *keybuild.Error
		if errors.As(err, &e) {
			ph := e.Placeholder
			if ph == "" {
				ph = "-"
			}
			got = "err " + e.Reason.String() + " " + ph
		} else if err != nil {
			t.Fatalf("vector %d: untyped error %v", v.ID, err)
		}
		if want := wantOf(v); got != want {
			t.Errorf("vector %d (%s): got %s, want %s", v.ID, v.Note, decodeOK(got), decodeOK(want))
		}
	}
}

func genModel(t *testing.T, l Lang) *model {
	t.Helper()
	m, err := buildModel(testRegistry(t), Options{Lang: l, Package: goldenPackage(l)})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func writeGenerated(t *testing.T, l Lang, pkg, dir string) {
	t.Helper()
	f, err := Generate(testRegistry(t), Options{Lang: l, Package: pkg})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Write(dir); err != nil {
		t.Fatal(err)
	}
}

// goHarness is a main package calling the generated package "keys".
func goHarness(calls []call) string {
	var b strings.Builder
	b.WriteString(`package main

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/keyguard/keyguard/keybuild"
	"keygentest/keys"
)

func report(id string, k keybuild.Key, err error) {
	var e *keybuild.Error
	switch {
	case err == nil:
		fmt.Println(id, "ok", hex.EncodeToString([]byte(k.String())))
	case errors.As(err, &e):
		ph := e.Placeholder
		if ph == "" {
			ph = "-"
		}
		fmt.Println(id, "err", e.Reason, ph)
	default:
		fmt.Println(id, "fail", err)
	}
}

func fields(id string, fs []string, extra bool) {
	h := "-"
	if len(fs) > 0 {
		h = hex.EncodeToString([]byte(strings.Join(fs, "\n")))
	}
	set := "closed"
	if extra {
		set = "open"
	}
	fmt.Println(id, "fields", h, set)
}

func main() {
	specs := keys.Templates()
	_ = specs
`)
	for _, c := range calls {
		var args []string
		if c.fields {
			switch c.path {
			case "typed":
				fmt.Fprintf(&b, "\tfields(%q, keys.%sFields(), keys.%[2]sFieldsExtra)\n", c.label(), c.e.Name)
			case "const":
				list := "[]string{" + strings.Join(prefixEach("keys.", goFieldIDs(c.e)), ", ") + "}"
				fmt.Fprintf(&b, "\tfields(%q, %s, keys.%sFieldsExtra)\n", c.label(), list, c.e.Name)
			default: // the template table, as the runtime hook reads it
				fmt.Fprintf(&b, "\tfields(%q, specs[%d].Fields, specs[%[2]d].FieldsExtra)\n", c.label(), c.e.Index)
			}
			continue
		}
		if c.path == "runtime" {
			for _, v := range c.values {
				args = append(args, "keybuild.String("+strconv.Quote(v)+")")
			}
			fmt.Fprintf(&b, "\t{\n\t\tk, err := keybuild.Build(&specs[%d]%s)\n\t\treport(%q, k, err)\n\t}\n", c.e.Index, prefixAll(", ", args), c.label())
			continue
		}
		if !typedOK(c, false) {
			continue
		}
		for i, p := range c.e.Params {
			switch {
			case p.Kind == keybuild.KindInt:
				args = append(args, c.values[i])
			case p.Enum != nil:
				args = append(args, "keys."+p.Enum.Type+"("+strconv.Quote(c.values[i])+")")
			default:
				args = append(args, strconv.Quote(c.values[i]))
			}
		}
		if c.e.Infallible {
			fmt.Fprintf(&b, "\treport(%q, keys.%s(%s), nil)\n", c.label(), c.e.Name, strings.Join(args, ", "))
		} else {
			fmt.Fprintf(&b, "\t{\n\t\tk, err := keys.%s(%s)\n\t\treport(%q, k, err)\n\t}\n", c.e.Name, strings.Join(args, ", "), c.label())
		}
	}
	b.WriteString("}\n")
	return b.String()
}

func prefixEach(p string, ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = p + s
	}
	return out
}

func goFieldIDs(e *entry) []string {
	out := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		out[i] = f.Go
	}
	return out
}

func prefixAll(p string, ss []string) string {
	var b strings.Builder
	for _, s := range ss {
		b.WriteString(p + s)
	}
	return b.String()
}

// TestGeneratedGo compiles the generated package in a throwaway module
// that replaces github.com/keyguard/keyguard with this repository, vets
// it, runs the vectors through it, and checks that the key it builds for
// every template is classified back to that template with the same
// captures.
func TestGeneratedGo(t *testing.T) {
	goBin := needTool(t, "go")
	root := repoRoot(t)
	dir := t.TempDir()
	writeGenerated(t, Go, "keys", filepath.Join(dir, "keys"))
	gomod := fmt.Sprintf("module keygentest\n\ngo 1.26\n\nrequire github.com/keyguard/keyguard v0.0.0-00010101000000-000000000000\n\nreplace github.com/keyguard/keyguard => %s\n", root)
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644); err != nil {
		t.Fatal(err)
	}
	if sum, err := os.ReadFile(filepath.Join(root, "go.sum")); err == nil {
		if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m := genModel(t, Go)
	calls := append(vectorCalls(t, m, loadVectors(t)), roundTripCalls(m)...)
	calls = append(calls, fieldCalls(m, true)...)
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(goHarness(calls)), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"GOFLAGS=-mod=mod", "GOPROXY=off", "GOSUMDB=off", "GOWORK=off", "GOTOOLCHAIN=local"}
	run(t, dir, env, goBin, "vet", "./...")
	out := run(t, dir, env, goBin, "run", ".")
	compare(t, "go", out, emitted(calls, false))

	// Round trip: the matcher classifies each key to its own template with
	// the values it was built from (hashed where the template hashes).
	reg := testRegistry(t)
	lines := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) == 4 && strings.HasPrefix(f[0], "rt") && f[2] == "ok" {
			lines[f[0]] = f[3]
		}
	}
	for _, c := range roundTripCalls(m) {
		h, ok := lines[c.id]
		if !ok {
			t.Errorf("%s: no key built for %q", c.id, c.e.Template)
			continue
		}
		raw, _ := hex.DecodeString(h)
		key := string(raw)
		e, caps := reg.Classify(key)
		if e == nil || e.Index != c.e.Index {
			t.Errorf("key %q of %q classified as %v", key, c.e.Template, e)
			continue
		}
		if len(caps) != len(c.values) {
			t.Fatalf("key %q: %d captures for %d values", key, len(caps), len(c.values))
		}
		for i, p := range c.e.Params {
			want := c.values[i]
			if p.Kind == keybuild.KindHash {
				want = keybuild.HashValue(want)
			}
			if caps[i].Name != p.Name || caps[i].Value != want {
				t.Errorf("key %q: capture %d = %v, want {%s %s}", key, i, caps[i], p.Name, want)
			}
		}
	}
}

func javaHarness(pkg string, calls []call) string {
	var b strings.Builder
	fmt.Fprintf(&b, `package %s;

public final class Harness {
    interface Build {
        Keys.Key get();
    }

    static void report(String id, Build f) {
        try {
            Keys.Key k = f.get();
            StringBuilder h = new StringBuilder();
            for (byte x : k.key().getBytes(java.nio.charset.StandardCharsets.UTF_8)) {
                h.append(String.format("%%02x", x));
            }
            System.out.println(id + " ok " + h);
        } catch (Keys.KeyBuildException e) {
            System.out.println(id + " err " + e.reason + " " + (e.placeholder.isEmpty() ? "-" : e.placeholder));
        }
    }

    static void fields(String id, java.util.List<String> fs, boolean extra) {
        StringBuilder h = new StringBuilder();
        for (byte x : String.join("\n", fs).getBytes(java.nio.charset.StandardCharsets.UTF_8)) {
            h.append(String.format("%%02x", x));
        }
        System.out.println(id + " fields " + (fs.isEmpty() ? "-" : h) + " " + (extra ? "open" : "closed"));
    }

    @SuppressWarnings("deprecation") // the deprecated builders are tested too
    public static void main(String[] args) {
`, pkg)
	for _, c := range calls {
		var args []string
		switch {
		case c.fields:
			switch c.path {
			case "typed":
				fmt.Fprintf(&b, "        fields(%q, Keys.%s_FIELDS, Keys.%[2]s_FIELDS_EXTRA);\n", c.label(), c.e.Upper)
			case "const":
				fmt.Fprintf(&b, "        fields(%q, java.util.List.of(%s), Keys.%s_FIELDS_EXTRA);\n", c.label(), strings.Join(prefixEach("Keys.", c.e.FieldIDs()), ", "), c.e.Upper)
			default:
				fmt.Fprintf(&b, "        fields(%q, Keys.TEMPLATES.get(%d).fields, Keys.TEMPLATES.get(%[2]d).fieldsExtra);\n", c.label(), c.e.Index)
			}
			continue
		case c.lit != nil:
			args = c.lit
			fmt.Fprintf(&b, "        report(%q, () -> Keys.build(Keys.%s%s));\n", c.label(), c.e.Upper, prefixAll(", ", args))
			continue
		case c.path == "runtime":
			for _, v := range c.values {
				args = append(args, javaQuote(v))
			}
			fmt.Fprintf(&b, "        report(%q, () -> Keys.build(Keys.%s%s));\n", c.label(), c.e.Upper, prefixAll(", ", args))
			continue
		case !typedOK(c, true):
			continue
		}
		for i, p := range c.e.Params {
			switch {
			case p.Kind == keybuild.KindInt:
				args = append(args, c.values[i]+"L")
			case p.Enum != nil:
				m, _ := enumMember(p, c.values[i])
				args = append(args, "Keys."+p.Enum.Type+"."+m)
			default:
				args = append(args, javaQuote(c.values[i]))
			}
		}
		fmt.Fprintf(&b, "        report(%q, () -> Keys.%s(%s));\n", c.label(), c.e.Camel, strings.Join(args, ", "))
	}
	b.WriteString("    }\n}\n")
	return string(javaASCII([]byte(b.String())))
}

func pyHarness(calls []call) string {
	var b strings.Builder
	b.WriteString(`import keys


def report(id, f):
    try:
        k = f()
        assert isinstance(k, str) and isinstance(k, keys.Key)
        print(id, "ok", k.encode("utf-8").hex())
    except keys.KeyBuildError as e:
        print(id, "err", e.reason, e.placeholder or "-")


def fields(id, fs, extra):
    assert isinstance(fs, tuple)
    print(id, "fields", "\n".join(fs).encode("utf-8").hex() or "-", "open" if extra else "closed")


`)
	for _, c := range calls {
		var args []string
		switch {
		case c.fields:
			switch c.path {
			case "typed":
				fmt.Fprintf(&b, "fields(%q, keys.%s_FIELDS, keys.%[2]s_FIELDS_EXTRA)\n", c.label(), c.e.Upper)
			case "const":
				fmt.Fprintf(&b, "fields(%q, (%s,), keys.%s_FIELDS_EXTRA)\n", c.label(), strings.Join(prefixEach("keys.", c.e.FieldIDs()), ", "), c.e.Upper)
			default:
				fmt.Fprintf(&b, "fields(%q, keys.TEMPLATES[%d].fields, keys.TEMPLATES[%[2]d].fields_extra)\n", c.label(), c.e.Index)
			}
			continue
		case c.lit != nil:
			fmt.Fprintf(&b, "report(%q, lambda: keys.build(keys.%s%s))\n", c.label(), c.e.Upper, prefixAll(", ", c.lit))
			continue
		case c.path == "runtime":
			for _, v := range c.values {
				args = append(args, pyQuote(v))
			}
			fmt.Fprintf(&b, "report(%q, lambda: keys.build(keys.%s%s))\n", c.label(), c.e.Upper, prefixAll(", ", args))
			continue
		case !typedOK(c, false):
			continue
		}
		for i, p := range c.e.Params {
			switch {
			case p.Kind == keybuild.KindInt:
				args = append(args, c.values[i])
			case p.Enum != nil:
				if m, ok := enumMember(p, c.values[i]); ok {
					args = append(args, "keys."+p.Enum.Type+"."+m)
				} else {
					args = append(args, pyQuote(c.values[i]))
				}
			default:
				args = append(args, pyQuote(c.values[i]))
			}
		}
		fmt.Fprintf(&b, "report(%q, lambda: keys.%s(%s))\n", c.label(), c.e.Snake, strings.Join(args, ", "))
	}
	return b.String()
}

func jsHarness(calls []call) string {
	var b strings.Builder
	b.WriteString(`import * as keys from "./keys.js";

function report(id, f) {
  try {
    const k = f();
    if (!(k instanceof keys.Key)) throw new Error("not a Key");
    console.log(id, "ok", Buffer.from(k.key, "utf8").toString("hex"));
  } catch (e) {
    if (!(e instanceof keys.KeyBuildError)) throw e;
    console.log(id, "err", e.reason, e.placeholder || "-");
  }
}

function fields(id, fs, extra) {
  if (!Array.isArray(fs) || typeof extra !== "boolean") throw new Error("bad fields");
  console.log(id, "fields", Buffer.from(fs.join("\n"), "utf8").toString("hex") || "-", extra ? "open" : "closed");
}

`)
	for _, c := range calls {
		var args []string
		switch {
		case c.fields:
			switch c.path {
			case "typed":
				fmt.Fprintf(&b, "fields(%q, keys.%s_FIELDS, keys.%[2]s_FIELDS_EXTRA);\n", c.label(), c.e.Upper)
			case "const":
				fmt.Fprintf(&b, "fields(%q, [%s], keys.%s_FIELDS_EXTRA);\n", c.label(), strings.Join(prefixEach("keys.", c.e.FieldIDs()), ", "), c.e.Upper)
			default:
				fmt.Fprintf(&b, "fields(%q, keys.TEMPLATES[%d].fields, keys.TEMPLATES[%[2]d].fieldsExtra);\n", c.label(), c.e.Index)
			}
			continue
		case c.lit != nil:
			fmt.Fprintf(&b, "report(%q, () => keys.build(keys.%s%s));\n", c.label(), c.e.Upper, prefixAll(", ", c.lit))
			continue
		case c.path == "runtime":
			for _, v := range c.values {
				args = append(args, tsQuote(v))
			}
			fmt.Fprintf(&b, "report(%q, () => keys.build(keys.%s%s));\n", c.label(), c.e.Upper, prefixAll(", ", args))
			continue
		case !typedOK(c, false):
			continue
		}
		for i, p := range c.e.Params {
			if p.Kind == keybuild.KindInt {
				n, _ := canonicalInt(c.values[i])
				if n > 1<<53-1 || n < -(1<<53-1) {
					args = append(args, c.values[i]+"n")
				} else {
					args = append(args, c.values[i])
				}
				continue
			}
			args = append(args, tsQuote(c.values[i]))
		}
		fmt.Fprintf(&b, "report(%q, () => keys.%s(%s));\n", c.label(), c.e.Camel, strings.Join(args, ", "))
	}
	return b.String()
}

// extraCalls are checks the shared file cannot hold: UTF-16 lone
// surrogates (JSON decoding replaces them), and non-string values of the
// dynamic languages. lit holds argument literals valid in Java, Python and
// JavaScript alike, unless filtered by the caller.
func extraCalls(m *model, lang string) []call {
	byName := map[string]*entry{}
	for _, e := range m.Entries {
		byName[e.Name] = e
	}
	xs := []call{
		{id: "x1", e: byName["ProductDetail"], lit: []string{`"a\uD800b"`}, want: "err encoding productNo"},
		{id: "x2", e: byName["RateLogin"], lit: []string{`"\uDC00"`}, want: "err encoding phone"},
		{id: "x3", e: byName["ProductDetail"], lit: []string{`"\uD83D\uDE00"`}, want: "ok " + hex.EncodeToString([]byte("cache:product:detail:😀"))},
	}
	switch lang {
	case "python":
		// Python strings are code points: an escaped surrogate pair stays two lone surrogates.
		xs[2].lit = []string{`"\U0001F600"`}
		xs = append(xs,
			call{id: "x11", e: byName["ProductDetail"], lit: []string{`"\uD83D\uDE00"`}, want: "err encoding productNo"},
			call{id: "x4", e: byName["OrderBase"], lit: []string{"None"}, want: "err empty orderId"},
			call{id: "x5", e: byName["OrderBase"], lit: []string{"True"}, want: "err kind orderId"},
			call{id: "x6", e: byName["OrderBase"], lit: []string{"1 << 63"}, want: "err kind orderId"},
			call{id: "x7", e: byName["OrderBase"], lit: []string{"-(1 << 63)"}, want: "ok " + hex.EncodeToString([]byte("order:order:-9223372036854775808:base"))},
			call{id: "x8", e: byName["OrderBase"], lit: []string{"1.0"}, want: "err kind orderId"},
			call{id: "x9", e: byName["Blob"], lit: []string{"15"}, want: "err kind digest"},
			call{id: "x10", e: byName["OrderBase"], lit: []string{}, want: "err arity -"},
		)
	case "js":
		xs = append(xs,
			call{id: "x4", e: byName["OrderBase"], lit: []string{"null"}, want: "err empty orderId"},
			call{id: "x5", e: byName["OrderBase"], lit: []string{"undefined"}, want: "err empty orderId"},
			call{id: "x6", e: byName["OrderBase"], lit: []string{"1.5"}, want: "err kind orderId"},
			call{id: "x7", e: byName["OrderBase"], lit: []string{"2 ** 53"}, want: "err kind orderId"},
			call{id: "x8", e: byName["OrderBase"], lit: []string{"1n << 63n"}, want: "err kind orderId"},
			call{id: "x9", e: byName["OrderBase"], lit: []string{"-(1n << 63n)"}, want: "ok " + hex.EncodeToString([]byte("order:order:-9223372036854775808:base"))},
			call{id: "x10", e: byName["OrderBase"], lit: []string{"NaN"}, want: "err kind orderId"},
			call{id: "x11", e: byName["Blob"], lit: []string{"15"}, want: "err kind digest"},
			call{id: "x12", e: byName["OrderBase"], lit: []string{}, want: "err arity -"},
		)
	case "java":
		xs = append(xs,
			call{id: "x4", e: byName["OrderBase"], lit: []string{"(String) null"}, want: "err empty orderId"},
			call{id: "x5", e: byName["OrderBase"], lit: []string{}, want: "err arity -"},
		)
	}
	for i := range xs {
		xs[i].path = "extra"
	}
	return xs
}

func TestGeneratedJava(t *testing.T) {
	javac, java := needTool(t, "javac"), needTool(t, "java")
	dir := t.TempDir()
	src := filepath.Join(dir, "src", "com", "example", "keys")
	writeGenerated(t, Java, "com.example.keys", src)
	m := genModel(t, Java)
	calls := append(vectorCalls(t, m, loadVectors(t)), roundTripCalls(m)...)
	calls = append(calls, extraCalls(m, "java")...)
	calls = append(calls, fieldCalls(m, true)...)
	if err := os.WriteFile(filepath.Join(src, "Harness.java"), []byte(javaHarness("com.example.keys", calls)), 0o644); err != nil {
		t.Fatal(err)
	}
	// -encoding US-ASCII proves the generated file is ASCII: javac reads it
	// the same under any locale.
	run(t, dir, nil, javac, "-encoding", "US-ASCII", "-Xlint:all", "-Xdoclint:all,-missing", "-Werror", "-d", "classes", filepath.Join(src, "Keys.java"), filepath.Join(src, "Harness.java"))
	out := run(t, dir, nil, java, "-cp", "classes", "com.example.keys.Harness")
	compare(t, "java", out, emitted(calls, true))
}

func TestGeneratedPython(t *testing.T) {
	py := needTool(t, "python3")
	dir := t.TempDir()
	writeGenerated(t, Python, "keys", dir)
	m := genModel(t, Python)
	calls := append(vectorCalls(t, m, loadVectors(t)), roundTripCalls(m)...)
	calls = append(calls, extraCalls(m, "python")...)
	calls = append(calls, fieldCalls(m, true)...)
	if err := os.WriteFile(filepath.Join(dir, "harness.py"), []byte(pyHarness(calls)), 0o644); err != nil {
		t.Fatal(err)
	}
	out := run(t, dir, []string{"PYTHONIOENCODING=utf-8", "PYTHONDONTWRITEBYTECODE=1"}, py, "-W", "error", "harness.py")
	compare(t, "python", out, emitted(calls, false))
}

// nodeCryptoShim declares the one Node API the generated module uses, so
// tsc type-checks it without @types/node.
const nodeCryptoShim = `declare module "node:crypto" {
  interface Hash {
    update(data: string, encoding: "utf8"): Hash;
    digest(encoding: "hex"): string;
  }
  export function createHash(algorithm: string): Hash;
}
`

func TestGeneratedTypeScript(t *testing.T) {
	tsc, node := needTool(t, "tsc"), needTool(t, "node")
	dir := t.TempDir()
	writeGenerated(t, TypeScript, "keys", dir)
	m := genModel(t, TypeScript)
	calls := append(vectorCalls(t, m, loadVectors(t)), roundTripCalls(m)...)
	calls = append(calls, extraCalls(m, "js")...)
	calls = append(calls, fieldCalls(m, true)...)
	files := map[string]string{
		"node-crypto.d.ts": nodeCryptoShim,
		"out/package.json": `{"type": "module"}`,
		"out/harness.js":   jsHarness(calls),
		"typecheck.ts":     typecheckTS,
		"out/.placeholder": "",
	}
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run(t, dir, nil, tsc, "--strict", "--noUnusedLocals", "--noUnusedParameters", "--noImplicitReturns",
		"--target", "es2020", "--module", "es2020", "--moduleResolution", "node", "--outDir", "out",
		"keys.ts", "typecheck.ts", "node-crypto.d.ts")
	out := run(t, dir, nil, node, "out/harness.js")
	compare(t, "typescript", out, emitted(calls, false))
}

// typecheckTS must compile: the typed API accepts what it should.
const typecheckTS = `import { orderBase, verifySMS, VerifySMSScene, feedV2, FeedV2Class, Key, TEMPLATES, Template,
  ORDER_BASE_FIELDS, ORDER_BASE_FIELD_AMOUNT, AUTH_SESSION_FIELDS_EXTRA } from "./keys.js";

const a: Key = orderBase(1001);
const b: Key = orderBase(9007199254740993n);
const c: Key = verifySMS("13800138000", VerifySMSScene.LOGIN);
const d: Key = verifySMS("13800138000", "BIND");
const e: Key = feedV2("news", FeedV2Class.V_1X);
const all: readonly Template[] = TEMPLATES;
// The list keeps its literal types: a field constant is one of them.
type OrderBaseField = (typeof ORDER_BASE_FIELDS)[number];
const f: OrderBaseField = ORDER_BASE_FIELD_AMOUNT;
const g: readonly string[] = TEMPLATES[0].fields;
const h: boolean = AUTH_SESSION_FIELDS_EXTRA || TEMPLATES[0].fieldsExtra;
export const used = [a, b, c, d, e, all, f, g, h];
`

func TestIntBounds(t *testing.T) {
	// The generator's infallibility rule assumes 20 bytes for an int64.
	if got := len(strconv.FormatInt(math.MinInt64, 10)); got != maxIntLen {
		t.Fatalf("longest int64 is %d bytes, maxIntLen says %d", got, maxIntLen)
	}
}
