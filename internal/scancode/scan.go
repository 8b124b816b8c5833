package scancode

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"

	sitter "github.com/smacker/go-tree-sitter"
	"golang.org/x/sync/errgroup"

	"github.com/keyguard/keyguard/internal/keyshape"
	"github.com/keyguard/keyguard/registry"
)

// Options say what to scan.
type Options struct {
	Registry *registry.Registry
	// Langs limits the scan to these languages (nil: all). JavaScript
	// counts as keyshape.TypeScript.
	Langs []keyshape.Lang
	// Tests also scans test files (_test.go, src/test/, test_*.py,
	// *.test.ts…), which usually hold concrete keys on purpose.
	Tests bool
	// Workers parse files in parallel (0: GOMAXPROCS).
	Workers int
	// MaxFileBytes is the size over which a file is left out and listed
	// (0: DefaultMaxFileBytes).
	MaxFileBytes int64
}

// DefaultMaxFileBytes: larger source files are bundles or generated data.
const DefaultMaxFileBytes = 2 << 20

// FileIssue is a file the scan did not analyse, and why.
type FileIssue struct {
	File   string        `json:"file"`
	Lang   keyshape.Lang `json:"lang,omitempty"`
	Reason string        `json:"reason"`
}

// Result is what a scan found.
type Result struct {
	Findings []Finding             // by file, line, column
	Files    map[keyshape.Lang]int // files scanned per language
	Skipped  int                   // files left out: ignored, vendored, generated, minified, too large
	// NotAnalysed are the files the scan could not analyse: a Go package
	// that did not load or type-check, a file that did not parse, a
	// language whose grammar is missing. A gate must not pass them.
	NotAnalysed []FileIssue
	// TooLarge are the files left out for their size (Options.MaxFileBytes).
	TooLarge []FileIssue
}

// ParseLangs reads a comma-separated language list (go, java, python, ts;
// js, javascript and typescript name ts).
func ParseLangs(list string) ([]keyshape.Lang, error) {
	var out []keyshape.Lang
	for _, l := range strings.Split(list, ",") {
		switch l = strings.TrimSpace(l); l {
		case "":
		case "go", "java", "python", "ts":
			out = append(out, keyshape.Lang(l))
		case "js", "javascript", "typescript":
			out = append(out, keyshape.TypeScript)
		default:
			return nil, fmt.Errorf("language %q: use go, java, python or ts", l)
		}
	}
	return out, nil
}

// skipDirs are vendored, generated or tool directories, never scanned.
var skipDirs = map[string]bool{"vendor": true, "node_modules": true, "testdata": true, "__pycache__": true,
	"venv": true, "site-packages": true, "bower_components": true}

// generated matches the "Code generated … DO NOT EDIT." header of any
// comment style.
var generated = regexp.MustCompile(`(?m)^\s*(?://|#|/?\*+|--)\s*Code generated .*DO NOT EDIT\.?`)

// Scan scans files and directory trees: Go through the go/analysis
// analyzer (packages loaded with the go command), Java, Python,
// TypeScript and JavaScript through tree-sitter. Directories honour
// .gitignore files and skip vendored, generated and minified code.
func Scan(ctx context.Context, paths []string, opt Options) (*Result, error) {
	c := keyshape.NewClassifier(opt.Registry)
	if opt.MaxFileBytes <= 0 {
		opt.MaxFileBytes = DefaultMaxFileBytes
	}
	w := &walker{opt: opt, files: map[keyshape.Lang][]string{}}
	for _, p := range paths {
		if err := w.add(p); err != nil {
			return nil, err
		}
	}
	res := &Result{Files: map[keyshape.Lang]int{}, Skipped: w.skipped, TooLarge: w.tooLarge, NotAnalysed: w.unread}
	var mu sync.Mutex
	emit := func(fs []Finding) {
		mu.Lock()
		res.Findings = append(res.Findings, fs...)
		mu.Unlock()
	}
	issue := func(fi FileIssue) {
		mu.Lock()
		res.NotAnalysed = append(res.NotAnalysed, fi)
		mu.Unlock()
	}
	if goFiles := w.files[keyshape.Go]; len(goFiles) > 0 {
		n, err := scanGo(ctx, goFiles, opt.Tests, c, emit, issue)
		if err != nil {
			return nil, err
		}
		res.Files[keyshape.Go] = n
	}
	var conf *springConfig
	if len(w.files[keyshape.Java]) > 0 {
		conf = loadSpringConfig(w.springConf, opt.MaxFileBytes)
	}
	if err := scanSources(ctx, w.files, opt.Workers, c, conf, emit, issue); err != nil {
		return nil, err
	}
	for l, fs := range w.files {
		if l != keyshape.Go {
			res.Files[l] = len(fs)
		}
	}
	slices.SortFunc(res.Findings, func(a, b Finding) int {
		if c := strings.Compare(a.File, b.File); c != 0 {
			return c
		}
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		if a.Column != b.Column {
			return a.Column - b.Column
		}
		return strings.Compare(a.Rule, b.Rule)
	})
	byFile := func(a, b FileIssue) int { return strings.Compare(a.File, b.File) }
	slices.SortFunc(res.NotAnalysed, byFile)
	slices.SortFunc(res.TooLarge, byFile)
	return res, nil
}

// scanSources parses the tree-sitter languages' files on a pool, indexes
// each language family's files as one project (a wrapper, a helper or a
// constant in one file serves the others), then checks every file.
func scanSources(ctx context.Context, files map[keyshape.Lang][]string, workers int, c *keyshape.Classifier, conf *springConfig, emit func([]Finding), issue func(FileIssue)) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	exts := map[string]bool{}
	for l, paths := range files {
		if l != keyshape.Go {
			for _, p := range paths {
				exts[filepath.Ext(p)] = true
			}
		}
	}
	ls := languagesFor(func(ext string) bool { return exts[ext] })
	for l, paths := range files {
		if l == keyshape.Go {
			continue
		}
		parsed := make([]*srcFile, len(paths))
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(workers)
		for i, path := range paths {
			g.Go(func() error {
				if err := gctx.Err(); err != nil {
					return err
				}
				lang := ls.of(path)
				if lang == nil || lang.broken != nil {
					why := "no grammar for this file"
					if lang != nil {
						why = lang.broken.Error()
					}
					issue(FileIssue{File: filepath.ToSlash(path), Lang: l, Reason: why})
					return nil
				}
				src, err := os.ReadFile(path)
				if err != nil {
					issue(FileIssue{File: filepath.ToSlash(path), Lang: l, Reason: "not readable: " + err.Error()})
					return nil
				}
				f, err := parseSource(gctx, path, src, lang, c)
				if err != nil {
					return err
				}
				if why := f.parseError(); why != "" {
					issue(FileIssue{File: f.path, Lang: l, Reason: why})
				}
				parsed[i] = f
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			closeAll(parsed)
			return err
		}
		p := newProject()
		if l == keyshape.Java {
			p.conf = conf
		}
		for _, f := range parsed {
			if f != nil {
				p.add(f)
			}
		}
		for _, f := range p.files {
			if err := ctx.Err(); err != nil {
				closeAll(parsed)
				return err
			}
			f.scan()
			emit(f.out)
		}
		if l == keyshape.Java {
			for _, f := range p.files {
				emit(f.springCacheKeys())
			}
		}
		closeAll(parsed)
	}
	return nil
}

func closeAll(fs []*srcFile) {
	for _, f := range fs {
		if f != nil && f.tree != nil {
			f.tree.Close()
			f.tree = nil
		}
	}
}

// parseSource parses one file and collects its bindings, calls and
// declarations; the caller closes f.tree.
func parseSource(ctx context.Context, path string, src []byte, lang *language, c *keyshape.Classifier) (*srcFile, error) {
	p := sitter.NewParser()
	defer p.Close()
	p.SetLanguage(lang.grammar)
	tree, err := p.ParseCtx(ctx, nil, src)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	f := &srcFile{path: filepath.ToSlash(path), src: src, lang: lang, c: c, binds: map[string][]binding{}, tree: tree}
	f.collect(tree.RootNode())
	return f, nil
}

// scanSource scans one file on its own (a project of one file).
func scanSource(ctx context.Context, path string, src []byte, lang *language, c *keyshape.Classifier) ([]Finding, error) {
	f, err := parseSource(ctx, path, src, lang, c)
	if err != nil {
		return nil, err
	}
	defer closeAll([]*srcFile{f})
	newProject().add(f)
	f.scan()
	if lang.name == keyshape.Java {
		f.out = append(f.out, f.springCacheKeys()...)
	}
	return f.out, nil
}

// parseError says where the file does not parse, "" when it does.
func (f *srcFile) parseError() string {
	root := f.tree.RootNode()
	if !root.HasError() {
		return ""
	}
	n := firstError(root)
	if n == nil {
		return "does not parse"
	}
	p := n.StartPoint()
	return fmt.Sprintf("does not parse at line %d, column %d", p.Row+1, p.Column+1)
}

// firstError is the first ERROR or MISSING node under n.
func firstError(n *sitter.Node) *sitter.Node {
	if n.IsError() || n.IsMissing() {
		return n
	}
	for i := 0; i < int(n.ChildCount()); i++ {
		if c := n.Child(i); c.HasError() || c.IsMissing() {
			if e := firstError(c); e != nil {
				return e
			}
		}
	}
	return nil
}

// languages maps file extensions to the tree-sitter languages; built once
// per scan and read-only after.
type languages map[string]*language

// grammars are the tree-sitter grammars by the file names they read.
var grammars = []struct {
	exts  []string
	build func() *language
}{
	{[]string{".java"}, javaLanguage},
	{[]string{".py", ".pyi"}, pythonLanguage},
	{[]string{".ts", ".mts", ".cts"}, typeScript},
	{[]string{".tsx"}, tsxLanguage},
	{[]string{".js", ".mjs", ".cjs", ".jsx"}, jsLanguage},
}

// newLanguages builds every grammar.
func newLanguages() languages { return languagesFor(func(string) bool { return true }) }

// languagesFor builds the grammars of the extensions want takes: a
// grammar's query takes 2–20 ms to build, spent only where files need it
// (a Go or a Java project needs no TypeScript).
func languagesFor(want func(ext string) bool) languages {
	ls := languages{}
	for _, g := range grammars {
		if slices.ContainsFunc(g.exts, want) {
			l := g.build()
			for _, e := range g.exts {
				ls[e] = l
			}
		}
	}
	return ls
}

// of picks the grammar by file name; nil for files not scanned.
func (ls languages) of(path string) *language { return ls[filepath.Ext(path)] }

// extLang is the language a file name says, without its grammar.
var extLang = map[string]keyshape.Lang{".go": keyshape.Go, ".java": keyshape.Java, ".py": keyshape.Python, ".pyi": keyshape.Python,
	".ts": keyshape.TypeScript, ".mts": keyshape.TypeScript, ".cts": keyshape.TypeScript, ".tsx": keyshape.TypeScript,
	".js": keyshape.TypeScript, ".mjs": keyshape.TypeScript, ".cjs": keyshape.TypeScript, ".jsx": keyshape.TypeScript}

func langOf(path string) (keyshape.Lang, bool) {
	l, ok := extLang[filepath.Ext(path)]
	return l, ok
}

// walker collects the files to scan.
type walker struct {
	opt      Options
	files    map[keyshape.Lang][]string
	skipped  int
	tooLarge []FileIssue
	unread   []FileIssue // files and directories the walk could not read
	// springConf are the Spring configuration files (application.yml…)
	// beside the Java sources, tests' own left out.
	springConf []string
}

func (w *walker) wanted(l keyshape.Lang) bool {
	return len(w.opt.Langs) == 0 || slices.Contains(w.opt.Langs, l)
}

func (w *walker) add(root string) error {
	fi, err := os.Stat(root)
	if err != nil {
		return fmt.Errorf("%w\n\tTry: pass the files or directories to scan (default: .)", err)
	}
	if !fi.IsDir() {
		if l, ok := langOf(root); ok && w.wanted(l) {
			if fi.Size() > w.opt.MaxFileBytes {
				w.large(root, l, fi.Size())
				return nil
			}
			w.files[l] = append(w.files[l], root)
		}
		return nil
	}
	sets := map[string]*IgnoreSet{}
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrPermission) {
				w.unread = append(w.unread, FileIssue{File: filepath.ToSlash(path), Reason: "not readable: " + err.Error()})
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		dir := filepath.ToSlash(filepath.Dir(rel))
		if dir == "." {
			dir = ""
		}
		parent := sets[dir]
		if d.IsDir() {
			if rel != "." && (skipDirs[d.Name()] || strings.HasPrefix(d.Name(), ".") || parent.Ignored(rel, true)) {
				return filepath.SkipDir
			}
			set := parent
			if data, err := os.ReadFile(filepath.Join(path, ".gitignore")); err == nil {
				key := rel
				if key == "." {
					key = ""
				}
				set = NewIgnoreSet(parent, key, data)
			}
			if rel == "." {
				rel = ""
			}
			sets[rel] = set
			return nil
		}
		if springConfigFile(d.Name()) {
			if w.wanted(keyshape.Java) && d.Type().IsRegular() && !parent.Ignored(rel, false) && (w.opt.Tests || !strings.Contains("/"+rel, "/src/test/")) {
				w.springConf = append(w.springConf, path)
			}
			return nil
		}
		l, ok := langOf(path)
		if !ok || !w.wanted(l) || !d.Type().IsRegular() {
			return nil
		}
		if parent.Ignored(rel, false) || !w.opt.Tests && isTest(rel) || w.skip(path, l) {
			w.skipped++
			return nil
		}
		w.files[l] = append(w.files[l], path)
		return nil
	})
}

// large lists a file left out for its size.
func (w *walker) large(path string, l keyshape.Lang, size int64) {
	w.tooLarge = append(w.tooLarge, FileIssue{File: filepath.ToSlash(path), Lang: l,
		Reason: fmt.Sprintf("%d bytes, over the limit of %d (--max-file-bytes)", size, w.opt.MaxFileBytes)})
}

// skip reports generated, minified and oversized files (the oversized
// ones listed).
func (w *walker) skip(path string, l keyshape.Lang) bool {
	if strings.HasSuffix(path, ".min.js") {
		return true
	}
	f, err := os.Open(path)
	if err == nil {
		defer f.Close()
	}
	var fi os.FileInfo
	if err == nil {
		fi, err = f.Stat()
	}
	if err != nil {
		w.unread = append(w.unread, FileIssue{File: filepath.ToSlash(path), Lang: l, Reason: "not readable: " + err.Error()})
		return true
	}
	if fi.Size() > w.opt.MaxFileBytes {
		w.large(path, l, fi.Size())
		return true
	}
	head := make([]byte, 4096)
	n, _ := f.Read(head)
	head = head[:n]
	if i := bytes.Index(head, []byte("\npackage ")); i >= 0 && strings.HasSuffix(path, ".go") {
		head = head[:i] // Go: the header comes before the package clause
	}
	return generated.Match(head)
}

// isTest reports test files by the conventions of each language.
func isTest(rel string) bool {
	base := rel[strings.LastIndexByte(rel, '/')+1:]
	switch {
	case strings.HasSuffix(base, "_test.go"):
		return true
	case strings.HasSuffix(base, ".java"):
		return strings.Contains("/"+rel, "/src/test/") || strings.HasSuffix(base, "Test.java") || strings.HasSuffix(base, "Tests.java")
	case strings.HasSuffix(base, ".py"):
		return strings.HasPrefix(base, "test_") || strings.HasSuffix(base, "_test.py") || base == "conftest.py"
	}
	return strings.Contains(base, ".test.") || strings.Contains(base, ".spec.") || strings.Contains("/"+rel, "/__tests__/")
}
