package layers

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The command line stays thin: each command parses its flags and calls one
// function of a library package, where the work and the printing live.
const (
	maxCmdLines  = 2500 // non-test lines of cmd/keyguard
	maxFuncLines = 80   // lines of a function anywhere under cmd/
)

// cmdFiles parses the non-test Go files under cmd/ (of the module root,
// two directories up), keyed by their path from the root.
func cmdFiles(t *testing.T) (*token.FileSet, map[string]*ast.File, map[string]int) {
	t.Helper()
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	files, lines := map[string]*ast.File{}, map[string]int{}
	err := filepath.WalkDir(filepath.Join(root, "cmd"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		files[rel], lines[rel] = f, strings.Count(string(src), "\n")
		return nil
	})
	if err != nil {
		t.Fatalf("read cmd/: %v", err)
	}
	if len(files) == 0 {
		t.Fatal("no Go files under cmd/: the test looks in the wrong place")
	}
	return fset, files, lines
}

func TestCmdKeyguardIsThin(t *testing.T) {
	_, _, lines := cmdFiles(t)
	total := 0
	for path, n := range lines {
		if filepath.Dir(path) == filepath.Join("cmd", "keyguard") {
			total += n
		}
	}
	if total == 0 {
		t.Fatal("cmd/keyguard has no lines: the test looks in the wrong place")
	}
	if total >= maxCmdLines {
		t.Errorf("cmd/keyguard has %d non-test lines, at most %d allowed: move the work and the printing into the package the command calls", total, maxCmdLines-1)
	}
	t.Logf("cmd/keyguard: %d non-test lines", total)
}

// A function under cmd/ longer than maxFuncLines must say why in its doc
// comment, with the words "is long" ("It is long for its flags alone").
func TestCmdFunctionsAreShort(t *testing.T) {
	fset, files, _ := cmdFiles(t)
	longest := 0
	for path, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
			longest = max(longest, n)
			if n > maxFuncLines && !strings.Contains(fd.Doc.Text(), "is long") {
				t.Errorf("%s: %s is %d lines (at most %d): split it, move its work into a library package, or say in its doc comment why it is long", path, fd.Name.Name, n, maxFuncLines)
			}
		}
	}
	if longest == 0 {
		t.Fatal("no function measured: the test is blind")
	}
}

// The measure itself: a function of known length is counted right.
func TestFunctionLengthIsMeasured(t *testing.T) {
	src := "package p\n\n// f is long: a test.\nfunc f() {\n" + strings.Repeat("\t_ = 1\n", 85) + "}\n"
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	fd := f.Decls[0].(*ast.FuncDecl)
	if n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1; n != 87 {
		t.Errorf("measured %d lines, want 87", n)
	}
	if !strings.Contains(fd.Doc.Text(), "is long") {
		t.Error("the doc comment's reason is not read")
	}
}
