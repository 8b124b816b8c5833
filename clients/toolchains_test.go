package clients

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/keyguard/keyguard/internal/codegen"
	"github.com/keyguard/keyguard/registry"
)

// The toolchains the tests drive. A missing one skips its tests, unless
// KEYGUARD_REQUIRE_TOOLCHAINS is set (CI), where it fails them.

var work struct {
	once sync.Once
	dir  string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if work.dir != "" {
		os.RemoveAll(work.dir)
	}
	os.Exit(code)
}

// workDir is a directory shared by the tests of one run: the compiled
// TypeScript and Java, the generated key builders.
func workDir(t testing.TB) string {
	work.once.Do(func() { work.dir, work.err = os.MkdirTemp("", "keyguard-clients-") })
	if work.err != nil {
		t.Fatal(work.err)
	}
	return work.dir
}

func missing(t testing.TB, format string, a ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, a...)
	if os.Getenv("KEYGUARD_REQUIRE_TOOLCHAINS") != "" {
		t.Fatalf("%s (KEYGUARD_REQUIRE_TOOLCHAINS is set; .ci/run installs it)", msg)
	}
	t.Skipf("%s; set KEYGUARD_REQUIRE_TOOLCHAINS=1 to make this a failure", msg)
}

type built struct {
	once sync.Once
	val  string
	err  string // what is missing, for missing()
	fail error  // a real failure
}

func (b *built) get(t testing.TB, f func(t testing.TB) (string, string, error)) string {
	t.Helper()
	b.once.Do(func() { b.val, b.err, b.fail = f(t) })
	if b.fail != nil {
		t.Fatal(b.fail)
	}
	if b.err != "" {
		missing(t, "%s", b.err)
	}
	return b.val
}

var pythonBuilt, tsBuilt, javaBuilt built

// python returns an interpreter that imports redis and prometheus_client:
// $KEYGUARD_PYTHON, python3 or /usr/bin/python3 (Debian's, where the
// python3-redis package installs).
func python(t testing.TB) string {
	return pythonBuilt.get(t, func(t testing.TB) (string, string, error) {
		cands := []string{os.Getenv("KEYGUARD_PYTHON"), "python3", "/usr/bin/python3"}
		tried := ""
		for _, c := range cands {
			if c == "" {
				continue
			}
			p, err := exec.LookPath(c)
			if err != nil {
				continue
			}
			out, err := exec.Command(p, "-c", "import redis, prometheus_client; print(redis.__version__)").CombinedOutput()
			if err == nil {
				return p, "", nil
			}
			tried += fmt.Sprintf("\n%s: %s", p, bytes.TrimSpace(out))
		}
		return "", "no Python 3 with redis-py and prometheus_client (Debian: python3-redis python3-prometheus-client)" + tried, nil
	})
}

// typescript compiles clients/typescript into the work directory and
// returns the directory of its index.js.
func typescript(t testing.TB) string {
	return tsBuilt.get(t, func(t testing.TB) (string, string, error) {
		if _, err := exec.LookPath("node"); err != nil {
			return "", "node not found (Debian: nodejs)", nil
		}
		tsc := filepath.Join("typescript", "node_modules", "typescript", "bin", "tsc")
		if _, err := os.Stat(tsc); err != nil {
			return "", "clients/typescript/node_modules is missing: run npm ci in clients/typescript", nil
		}
		out := filepath.Join(workDir(t), "ts-dist")
		cmd := exec.Command("node", tsc, "-p", filepath.Join("typescript", "tsconfig.json"), "--outDir", out)
		if b, err := cmd.CombinedOutput(); err != nil {
			return "", "", fmt.Errorf("tsc: %v\n%s", err, b)
		}
		return out, "", nil
	})
}

// javaClasses compiles the Java package (without the adapters, whose
// libraries are tested apart) and its test driver; it returns the class path.
func javaClasses(t testing.TB) string {
	return javaBuilt.get(t, func(t testing.TB) (string, string, error) {
		for _, tool := range []string{"java", "javac"} {
			if _, err := exec.LookPath(tool); err != nil {
				return "", tool + " not found (Debian: default-jdk-headless)", nil
			}
		}
		srcs, _ := filepath.Glob(filepath.Join("java", "src", "main", "java", "io", "keyguard", "runtime", "*.java"))
		tests, _ := filepath.Glob(filepath.Join("java", "src", "test", "java", "io", "keyguard", "runtime", "*.java"))
		out := filepath.Join(workDir(t), "java-classes")
		args := append([]string{"--release", "11", "-Xlint:all", "-Werror", "-d", out}, append(srcs, tests...)...)
		if b, err := exec.Command("javac", args...).CombinedOutput(); err != nil {
			return "", "", fmt.Errorf("javac: %v\n%s", err, b)
		}
		return out, "", nil
	})
}

// genKeys generates the key builders of testdata/keyguard.yaml in Python
// and TypeScript (compiled to JavaScript), as a service would; lang is
// codegen.Python or codegen.TypeScript, and the result the module's path.
func genKeys(t testing.TB, lang codegen.Lang) string {
	if lang == codegen.Python {
		return keysPy.get(t, func(t testing.TB) (string, string, error) { return generate(t, lang) })
	}
	typescript(t) // skips when the toolchain is missing
	return keysJS.get(t, func(t testing.TB) (string, string, error) {
		src, _, err := generate(t, lang)
		if err != nil {
			return "", "", err
		}
		dir := filepath.Dir(src)
		tsc := filepath.Join("typescript", "node_modules", "typescript", "bin", "tsc")
		types, _ := filepath.Abs(filepath.Join("typescript", "node_modules", "@types"))
		cmd := exec.Command("node", tsc, "--outDir", filepath.Join(dir, "js"), "--module", "commonjs", "--target", "ES2020",
			"--strict", "--skipLibCheck", "--typeRoots", types, "--types", "node", src)
		if b, err := cmd.CombinedOutput(); err != nil {
			return "", "", fmt.Errorf("tsc testkeys.ts: %v\n%s", err, b)
		}
		return filepath.Join(dir, "js", "testkeys.js"), "", nil
	})
}

var keysPy, keysJS built

func generate(t testing.TB, lang codegen.Lang) (string, string, error) {
	reg, err := registry.Load(filepath.Join("testdata", "keyguard.yaml"))
	if err != nil {
		return "", "", err
	}
	f, err := codegen.Generate(reg, codegen.Options{Lang: lang, Package: "testkeys", Source: "keyguard.yaml"})
	if err != nil {
		return "", "", err
	}
	dir := filepath.Join(workDir(t), "keys")
	if err := f.Write(dir); err != nil {
		return "", "", err
	}
	return filepath.Join(dir, f.Name), "", nil
}
