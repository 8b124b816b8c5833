package scancode

import (
	"context"
	"errors"
	"fmt"
	"go/token"
	"go/types"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/packages"

	"github.com/keyguard/keyguard/analyzer"
	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/human"
	"github.com/keyguard/keyguard/internal/keyshape"
)

// loadMode loads the scanned packages from source with types; what they
// import comes from the go command's export data, so nothing outside the
// scanned tree is type-checked from source.
const loadMode = packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes |
	packages.NeedTypesInfo | packages.NeedTypesSizes | packages.NeedImports

// scanGo runs the analyzer over the packages that hold files, module by
// module, in dependency order, carrying its facts (functions that pass a
// parameter to Redis as a key) from package to package. It returns the
// number of files scanned.
func scanGo(ctx context.Context, files []string, tests bool, c *keyshape.Classifier, emit func([]Finding), issue func(FileIssue)) (int, error) {
	shown := map[string]string{} // absolute path → the path as the walk found it
	dirs := map[string]map[string]bool{}
	roots := map[string]string{}
	for _, f := range files {
		abs, err := filepath.Abs(f)
		if err != nil {
			return 0, err
		}
		shown[abs] = filepath.ToSlash(f)
		dir := filepath.Dir(abs)
		root, ok := roots[dir]
		if !ok {
			root = moduleRoot(dir)
			roots[dir] = root
		}
		if root == "" {
			return 0, fmt.Errorf("%s is in no Go module (no go.mod in its directory or above)\n\tTry: scan from inside the module, or --lang to leave Go out", f)
		}
		if dirs[root] == nil {
			dirs[root] = map[string]bool{}
		}
		dirs[root][dir] = true
	}
	mods := make([]string, 0, len(dirs))
	for root := range dirs {
		mods = append(mods, root)
	}
	slices.Sort(mods)
	for _, root := range mods {
		if err := scanModule(ctx, root, dirs[root], tests, shown, c, emit, issue); err != nil {
			return 0, err
		}
	}
	return len(files), nil
}

func moduleRoot(dir string) string {
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			return ""
		}
		dir = up
	}
}

// scanModule loads and checks the packages of one module. A package that
// does not load or type-check is not analysed: its files are reported to
// issue with the go command's reasons, never passed as clean.
func scanModule(ctx context.Context, root string, dirs map[string]bool, tests bool, shown map[string]string, c *keyshape.Classifier, emit func([]Finding), issue func(FileIssue)) error {
	var patterns []string
	for d := range dirs {
		rel, _ := filepath.Rel(root, d)
		patterns = append(patterns, "./"+filepath.ToSlash(rel))
	}
	slices.Sort(patterns)
	inModule := func(why string) {
		for abs, file := range shown {
			if dirs[filepath.Dir(abs)] {
				issue(FileIssue{File: file, Lang: keyshape.Go, Reason: why})
			}
		}
	}
	cfg := &packages.Config{Context: ctx, Dir: root, Mode: loadMode, Tests: tests}
	pkgs, err := packages.Load(cfg, patterns...)
	if modStale(err, pkgs) && ctx.Err() == nil {
		// An older project whose go.mod or go.sum the go command would
		// update first: load it through an updated copy of them, the
		// project's own left as they are.
		if p2, err2 := loadModCopy(cfg, root, patterns); err2 == nil && len(p2) > 0 && len(p2) >= len(pkgs) {
			pkgs, err = p2, nil // (a go command that fails outright gives no package and no error)
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		inModule(fmt.Sprintf("the go command cannot load the packages of %s: %v (go build ./... there shows what it needs)", root, oneLine(err.Error())))
		return nil
	}
	inScan := map[*packages.Package]bool{}
	for _, p := range pkgs {
		inScan[p] = true
	}
	facts := map[types.Object]*analyzer.KeyParams{}
	shapes := map[types.Object]*analyzer.KeyShape{}
	seen := map[string]bool{} // a file in several package variants (tests) is reported once
	bad := map[string]bool{}
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		if !inScan[p] || len(p.Syntax) == 0 && len(p.Errors) == 0 {
			return // every file excluded by build constraints: nothing to check
		}
		if len(p.Errors) > 0 || p.Types == nil || p.TypesInfo == nil {
			why := "Go package " + p.PkgPath + " does not load"
			if len(p.Errors) > 0 {
				// the go command's own error (here or in an import: a
				// missing go.sum entry) says the cause; type errors follow
				first := p.Errors[0]
				found := false
				packages.Visit([]*packages.Package{p}, func(q *packages.Package) bool { return !found }, func(q *packages.Package) {
					for _, e := range q.Errors {
						if e.Kind == packages.ListError && !found {
							first, found = e, true
						}
					}
				})
				why += ": " + oneLine(first.Error())
				if len(p.Errors) > 1 {
					why += fmt.Sprintf(" (and %d more errors)", len(p.Errors)-1)
				}
			}
			why += " (go build " + p.PkgPath + " shows what it needs)"
			files := append(slices.Clone(p.GoFiles), p.CompiledGoFiles...)
			for _, abs := range files {
				if file, ok := shown[abs]; ok && !bad[abs] {
					bad[abs] = true
					issue(FileIssue{File: file, Lang: keyshape.Go, Reason: why})
				}
			}
			if len(files) == 0 {
				for abs, file := range shown {
					if p.Dir != "" && filepath.Dir(abs) == p.Dir {
						if !bad[abs] {
							bad[abs] = true
							issue(FileIssue{File: file, Lang: keyshape.Go, Reason: why})
						}
					}
				}
			}
			return
		}
		emit(checkPackage(p, c, facts, shapes, shown, seen))
	})
	return nil
}

// modStale reports whether a load failed because the module's go.mod or
// go.sum is behind its imports (go mod tidy would fix it).
func modStale(err error, pkgs []*packages.Package) bool {
	stale := func(msg string) bool {
		return strings.Contains(msg, "updates to go.mod needed") || strings.Contains(msg, "missing go.sum entry")
	}
	if err != nil {
		return stale(err.Error())
	}
	found := false
	packages.Visit(pkgs, func(*packages.Package) bool { return !found }, func(p *packages.Package) {
		for _, e := range p.Errors {
			found = found || stale(e.Msg)
		}
	})
	return found
}

// loadModCopy loads patterns as cfg does, with the go command reading and
// updating a copy of root's go.mod and go.sum in a temporary directory
// (-mod=mod -modfile): what go mod tidy would add, without writing into
// the project. It may download the modules the copy adds.
func loadModCopy(cfg *packages.Config, root string, patterns []string) ([]*packages.Package, error) {
	tmp, err := os.MkdirTemp("", "keyguard-gomod-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	for _, name := range []string{"go.mod", "go.sum"} {
		data, err := os.ReadFile(filepath.Join(root, name))
		if err != nil && !(name == "go.sum" && errors.Is(err, fs.ErrNotExist)) {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(tmp, name), data, 0o600); err != nil {
			return nil, err
		}
	}
	c := *cfg
	c.BuildFlags = append(slices.Clone(cfg.BuildFlags), "-mod=mod", "-modfile="+filepath.Join(tmp, "go.mod"))
	pkgs, err := packages.Load(&c, patterns...)
	if err == nil && modStale(nil, pkgs) {
		err = errors.New("the updated copy of go.mod is still behind")
	}
	return pkgs, err
}

// oneLine is the go command's message on one line: its lines joined (the
// command it suggests is on the next one: "to update it:\n\tgo mod tidy"),
// at most 400 bytes.
func oneLine(s string) string {
	s = human.OneLine(s)
	if len(s) > 400 {
		s = strings.ToValidUTF8(s[:400], "") + "…"
	}
	return s
}

// checkPackage runs the analyzer on one package outside a go/analysis
// driver, facts kept in a map.
func checkPackage(p *packages.Package, c *keyshape.Classifier, facts map[types.Object]*analyzer.KeyParams, shapes map[types.Object]*analyzer.KeyShape, shown map[string]string, seen map[string]bool) []Finding {
	var out []Finding
	pass := &analysis.Pass{
		Fset: p.Fset, Files: p.Syntax, Pkg: p.Types, TypesInfo: p.TypesInfo, TypesSizes: p.TypesSizes,
		ImportObjectFact: func(obj types.Object, fact analysis.Fact) bool {
			switch fact := fact.(type) {
			case *analyzer.KeyParams:
				kp, ok := facts[obj]
				if ok {
					*fact = *kp
				}
				return ok
			case *analyzer.KeyShape:
				ks, ok := shapes[obj]
				if ok {
					*fact = *ks
				}
				return ok
			}
			return false
		},
		ExportObjectFact: func(obj types.Object, fact analysis.Fact) {
			switch fact := fact.(type) {
			case *analyzer.KeyParams:
				facts[obj] = fact
			case *analyzer.KeyShape:
				shapes[obj] = fact
			}
		},
		Report: func(analysis.Diagnostic) {},
	}
	analyzer.Check(pass, c, func(pos token.Pos, f finding.Finding, command string) {
		at := p.Fset.Position(pos)
		file, ok := shown[at.Filename]
		key := fmt.Sprintf("%s:%d:%d", at.Filename, at.Line, at.Column)
		if !ok || seen[key] {
			return // a file the walk left out (generated, ignored), or seen in another variant
		}
		seen[key] = true
		f.File, f.Line, f.Column = file, at.Line, at.Column
		via := ""
		if i := strings.LastIndex(f.Message, " (via "); i >= 0 && strings.HasSuffix(f.Message, ")") {
			via = f.Message[i+len(" (via ") : len(f.Message)-1] // the analyzer names the project's function
		}
		out = append(out, Finding{Finding: f, Lang: keyshape.Go, Command: strings.ToLower(command), Via: via})
	})
	return out
}
