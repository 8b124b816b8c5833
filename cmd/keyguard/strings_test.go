package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// notYetClean are files of this package whose texts still cite documents
// users do not have; remove a file from here once it is clean.
var notYetClean = map[string]bool{}

// userTexts returns the string literals of the non-test Go files in dir,
// with their positions: the messages, hints and help a user reads.
func userTexts(t *testing.T, dir string) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || notYetClean[filepath.Base(name)] && dir == "." {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil {
					out[fset.Position(lit.Pos()).String()] = s
				}
			}
			return true
		})
	}
	return out
}

// TestUserTextsNameWhatUsersHave: messages, hints and help cite no source
// document or specification section a user does not have, and name only
// commands that exist. Rule docs are in docs/rules.md.
func TestUserTextsNameWhatUsersHave(t *testing.T) {
	cited := regexp.MustCompile(`(?i)\bseed \d|\bSPEC\b|§`)
	cmdRef := regexp.MustCompile(`\bkeyguard ([a-z][a-z-]+)`)
	texts := map[string]string{}
	for _, dir := range []string{".", "../../naming", "../../finding", "../../registry"} {
		for pos, s := range userTexts(t, dir) {
			texts[pos] = s
		}
	}
	for _, doc := range []string{"../../docs/rules.md", "../../docs/init.md"} {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		texts[doc] = string(b)
	}
	isCommand := map[string]bool{}
	for _, c := range commands() {
		isCommand[c.name] = true
	}
	built := map[string]bool{}
	for pos, s := range texts {
		if m := cited.FindString(s); m != "" {
			t.Errorf("%s: %q cites %q", pos, textHead(s), m)
		}
		for _, m := range cmdRef.FindAllStringSubmatch(s, -1) {
			name := m[1]
			if !isCommand[name] {
				continue // prose: "keyguard reads…"
			}
			ok, known := built[name]
			if !known {
				code, _, _ := runCLI(t, "", name, "-h")
				ok, built[name] = code == 0, code == 0
			}
			if !ok {
				t.Errorf("%s: %q points to keyguard %s, which is not built", pos, textHead(s), name)
			}
		}
	}
}

func textHead(s string) string {
	if len(s) > 100 {
		return s[:100] + "…"
	}
	return s
}
