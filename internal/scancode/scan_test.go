package scancode

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/keyguard/keyguard/internal/keyshape"
	"github.com/keyguard/keyguard/registry"
)

func testRegistry(t testing.TB) *registry.Registry {
	t.Helper()
	reg, err := registry.Load("testdata/keyguard.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// wantRE reads the expectations written in the fixtures: a comment
// "want RULE TEMPLATE" on the line of the key.
var wantRE = regexp.MustCompile(`(?://|#) want (\S+) (\S+)`)

func wants(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(data), "\n") {
			for _, m := range wantRE.FindAllStringSubmatch(line, -1) {
				out = append(out, fmt.Sprintf("%s:%d %s %s", filepath.ToSlash(path), i+1, m[1], m[2]))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func got(res *Result) []string {
	var out []string
	for _, f := range res.Findings {
		out = append(out, fmt.Sprintf("%s:%d %s %s", f.File, f.Line, f.Rule, f.Template))
	}
	slices.Sort(out)
	return out
}

// Each fixture is a small service with raw keys (registered and not,
// concatenated over lines, behind constants) and keys from the generated
// builder; the comments say what the scan must find.
func TestFixtures(t *testing.T) {
	reg := testRegistry(t)
	for _, dir := range []string{"testdata/src/java", "testdata/src/python", "testdata/src/ts"} {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			res, err := Scan(context.Background(), []string{dir}, Options{Registry: reg})
			if err != nil {
				t.Fatal(err)
			}
			want, have := wants(t, dir), got(res)
			if !slices.Equal(want, have) {
				t.Errorf("findings differ\n--- got\n%s\n--- want\n%s", strings.Join(have, "\n"), strings.Join(want, "\n"))
			}
			for _, f := range res.Findings {
				if f.Message == "" || f.Severity.String() == "" || f.Column < 1 {
					t.Errorf("incomplete finding %+v", f)
				}
			}
		})
	}
}

// scan-code's Go driver (packages from export data, facts carried between
// them) finds what keylint's analysistest expects in the same sources.
func TestScanGo(t *testing.T) {
	mod := goTestModule(t, "../../analyzer/testdata")
	res, err := Scan(context.Background(), []string{mod}, Options{Registry: testRegistry(t), Langs: []keyshape.Lang{keyshape.Go}})
	if err != nil {
		t.Fatal(err)
	}
	goWant := regexp.MustCompile("`([a-z-]+):")
	var want []string
	for _, rel := range []string{"svc/svc.go", "store/store.go", "fix/a.go", "fix/b.go", "rue/rue.go", "redi/redi.go", "redi/fields.go", "redi/scripts.go"} {
		path := filepath.ToSlash(filepath.Join(mod, rel))
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(data), "\n") {
			if _, rest, ok := strings.Cut(line, "// want "); ok {
				for _, m := range goWant.FindAllStringSubmatch(rest, -1) { // one line may expect several
					want = append(want, fmt.Sprintf("%s:%d %s", path, i+1, m[1]))
				}
			}
		}
	}
	var have []string
	for _, f := range res.Findings {
		have = append(have, fmt.Sprintf("%s:%d %s", f.File, f.Line, f.Rule))
	}
	slices.Sort(want)
	slices.Sort(have)
	if !slices.Equal(have, want) {
		t.Errorf("findings differ\n--- got\n%s\n--- want\n%s", strings.Join(have, "\n"), strings.Join(want, "\n"))
	}
	vias := map[string]int{}
	for _, f := range res.Findings {
		vias[f.Via]++
	}
	if vias["store.RunScript"] != 2 || vias["svc.helper"] != 1 || vias["rue.get"] != 1 || vias["redi.get"] != 1 {
		t.Errorf("findings through the project's functions: %v", vias)
	}
	// rueidis's command is the builder's first method, redigo's the
	// constant command name.
	commands := map[string]string{}
	for _, f := range res.Findings {
		if dir := filepath.Base(filepath.Dir(f.File)); dir == "rue" || dir == "redi" {
			commands[dir+" "+f.Template] = f.Command
		}
	}
	for tmpl, cmd := range map[string]string{"rue tmp:rue:get": "get", "rue user:{id:int}:info": "hset", "rue tmp:rue:{name}": "set", "rue tmp:rue:new": "rename", "rue tmp:rue:object": "object",
		"rue tmp:compat:a": "del", "rue user:{uid:int}:info": "hgetall", "rue seq:order:no": "get", "redi tmp:redigo:{name}": "set", "redi user:{id:int}:info": "get", "redi tmp:redigo:a": "del",
		"redi seq:order:no": "incr", "redi tmp:redigo:new": "rename", "redi tmp:redigo:script:{name}": "evalsha"} {
		if commands[tmpl] != cmd {
			t.Errorf("command of %s: %q, want %q (all: %v)", tmpl, commands[tmpl], cmd, commands)
		}
	}
	if res.Files[keyshape.Go] != 8 || res.Skipped != 1 { // svc, store, fix/a, fix/b, rue, redi, redi/fields, redi/scripts; keys/keyguard_gen.go is generated
		t.Errorf("files %v, skipped %d", res.Files, res.Skipped)
	}
}

func testRegistryErr() (*registry.Registry, error) { return registry.Load("testdata/keyguard.yaml") }

func parseRegistry(y string) (*registry.Registry, error) {
	return registry.Parse("suggested.yaml", []byte(y))
}

// goTestModule copies keylint's test services' module to a temporary
// directory, its replace directive made absolute, and lets the go command
// complete its go.sum there (GOFLAGS=-mod=mod), so that a move of
// keyguard's own requirements does not break the test and nothing is
// written into the checkout.
func goTestModule(t *testing.T, testdata string) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join(testdata, "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(testdata)); err != nil {
		t.Fatal(err)
	}
	gomod := filepath.Join(dir, "go.mod")
	data, err := os.ReadFile(gomod)
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.Replace(data, []byte("=> ../.."), []byte("=> "+root), 1)
	if err := os.WriteFile(gomod, data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOFLAGS", "-mod=mod")
	return dir
}

// An older project whose go.sum is behind (go mod tidy would update it)
// is analysed through an updated copy, its own files left as they were:
// the same findings as with a complete go.sum, none of its files not
// analysed.
func TestScanGoStaleModule(t *testing.T) {
	mod := goTestModule(t, "../../analyzer/testdata")
	t.Setenv("GOFLAGS", "") // the go command as a user's: it refuses to update go.sum itself
	complete, err := Scan(context.Background(), []string{mod}, Options{Registry: testRegistry(t), Langs: []keyshape.Lang{keyshape.Go}})
	if err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join(mod, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mod, "go.sum"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Scan(context.Background(), []string{mod}, Options{Registry: testRegistry(t), Langs: []keyshape.Lang{keyshape.Go}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.NotAnalysed) > 0 {
		t.Fatalf("not analysed: %v", res.NotAnalysed)
	}
	if len(res.Findings) == 0 || len(res.Findings) != len(complete.Findings) {
		t.Errorf("%d findings with an empty go.sum, %d with the complete one", len(res.Findings), len(complete.Findings))
	}
	after, err := os.ReadFile(filepath.Join(mod, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(mod, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(after, gomod) || len(sum) != 0 {
		t.Errorf("the project's go.mod or go.sum was written (go.sum now %d bytes)", len(sum))
	}
}
