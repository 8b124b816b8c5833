package codegen

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The generated literals read back as the script, in each language's
// syntax (Go's strconv.Unquote reads the escapes the three use), for the
// guard script's kind of text and for awkward bytes.
func TestClientFilesRoundTrip(t *testing.T) {
	for _, script := range []string{
		"-- keyguard 写法一\nlocal s = '\"\\\\' -- quotes\n\treturn 1\n",
		"a\r\nb\x00c\x7fd\u2028e\u0085f\\g\"h",
		"no final newline",
	} {
		files := ClientFiles(script, "1.2.3")
		if len(files) != 3 {
			t.Fatalf("%d files", len(files))
		}
		for _, f := range files {
			var lits []string
			switch {
			case strings.HasSuffix(f.Name, ".py"):
				lits = literals(t, f, `(?m)^    ("(?:[^"\\]|\\.)*")$`)
			case strings.HasSuffix(f.Name, ".ts"):
				lits = literals(t, f, `(?m)^  ("(?:[^"\\]|\\.)*")(?: \+|;)$`)
			case strings.HasSuffix(f.Name, ".java"):
				for _, b := range f.Data {
					if b >= 0x80 {
						t.Fatalf("%s: a non-ASCII byte", f.Name)
					}
				}
				lits = literals(t, f, `(?m)^            ("(?:[^"\\]|\\.)*")(?: \+|;)$`)
			}
			var got strings.Builder
			for _, l := range lits {
				s, err := strconv.Unquote(l)
				if err != nil {
					t.Fatalf("%s: literal %s: %v", f.Name, l, err)
				}
				got.WriteString(s)
			}
			if got.String() != script {
				t.Errorf("%s reads back as %q, want %q", f.Name, got.String(), script)
			}
			if !bytes.Contains(f.Data, []byte(`"1.2.3"`)) {
				t.Errorf("%s does not carry the version", f.Name)
			}
		}
	}
}

func literals(t *testing.T, f ClientFile, re string) []string {
	t.Helper()
	var out []string
	for _, m := range regexp.MustCompile(re).FindAllSubmatch(f.Data, -1) {
		out = append(out, string(m[1]))
	}
	if len(out) == 0 {
		t.Fatalf("%s: no literal lines\n%s", f.Name, f.Data)
	}
	return out
}

func TestClientManifests(t *testing.T) {
	files := map[string]string{
		"python/pyproject.toml":        "[project]\nname = \"keyguard\"\nversion = \"0.0.1\"\n",
		"typescript/package.json":      "{\n  \"name\": \"@keyguard/runtime\",\n  \"version\": \"0.0.1\",\n  \"x\": {\"version\": \"9\"}\n}\n",
		"typescript/package-lock.json": "{\n  \"name\": \"@keyguard/runtime\",\n  \"version\": \"0.0.1\",\n  \"packages\": {\n    \"\": {\n      \"name\": \"@keyguard/runtime\",\n      \"version\": \"0.0.1\"\n    },\n    \"node_modules/x\": {\"version\": \"9\"}\n  }\n}\n",
		"java/pom.xml":                 "<project>\n  <artifactId>keyguard-runtime</artifactId>\n  <version>0.0.1</version>\n  <dependency><version>9</version></dependency>\n</project>\n",
		"java/build.gradle":            "group = 'io.keyguard'\nversion = '0.0.1'\n",
	}
	read := func(p string) ([]byte, error) { return []byte(files[p]), nil }
	out, err := ClientManifests(read, "2.0.0")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range out {
		s := string(f.Data)
		if strings.Contains(s, "0.0.1") || !strings.Contains(s, "2.0.0") {
			t.Errorf("%s/%s: %s", f.Dir, f.Name, s)
		}
		if strings.Count(s, "9") != strings.Count(files[f.Dir+"/"+f.Name], "9") {
			t.Errorf("%s/%s: a dependency's version changed: %s", f.Dir, f.Name, s)
		}
	}
	files["java/pom.xml"] = "<project/>"
	if _, err := ClientManifests(read, "2.0.0"); err == nil || !strings.Contains(err.Error(), "java/pom.xml") {
		t.Errorf("a manifest without its version field: %v; want an error naming it", err)
	}
}
