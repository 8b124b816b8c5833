package codegen

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// goldenPackage is the package name of the golden files: a Java package
// for Java, a module name for the others.
func goldenPackage(l Lang) string {
	if l == Java {
		return "com.example.keys"
	}
	return "keys"
}

func TestGolden(t *testing.T) {
	reg := testRegistry(t)
	for _, l := range Langs() {
		t.Run(string(l), func(t *testing.T) {
			f, err := Generate(reg, Options{Lang: l, Package: goldenPackage(l), Source: "testdata/keyguard.yaml"})
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", "golden", f.Name+".golden")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, f.Data, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./codegen -run TestGolden -update)", err)
			}
			if !bytes.Equal(f.Data, want) {
				t.Errorf("generated %s differs from %s (go test ./codegen -run TestGolden -update rewrites it):\n%s", l, path, unified(path, "generated", want, f.Data))
			}
			if !bytes.HasPrefix(f.Data, []byte("// "+Header+"\n")) && !bytes.HasPrefix(f.Data, []byte("# "+Header+"\n")) {
				t.Errorf("%s: no canonical header", l)
			}
		})
	}
}

// TestDeterministic generates twice: map order must not leak into output.
func TestDeterministic(t *testing.T) {
	reg := testRegistry(t)
	for _, l := range Langs() {
		a, err := Generate(reg, Options{Lang: l, Package: goldenPackage(l)})
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			b, _ := Generate(reg, Options{Lang: l, Package: goldenPackage(l)})
			if !bytes.Equal(a.Data, b.Data) {
				t.Fatalf("%s: two runs differ", l)
			}
		}
	}
}
