// Package gitignore holds scan-code's .gitignore matcher against git
// check-ignore (the reference) and go-git's matcher
// (github.com/go-git/go-git/v5/plumbing/format/gitignore) on real
// repository trees, for correctness and speed. It is a module of its own so
// that keyguard does not depend on go-git for a benchmark.
//
//	KEYGUARD_GITIGNORE_REPOS=/path/to/git.git,/path/to/gitignore.git go test -v -run Agree -bench . -count 5
//
// Each repository (a git directory) is checked out from HEAD into a
// temporary directory, and paths that its .gitignore files are about are
// added: for every pattern, a file and a directory it names, and common
// build outputs in every directory. A file named NAME.gitignore (a
// collection of templates) becomes the .gitignore of a directory NAME.
package gitignore

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	ggi "github.com/go-git/go-git/v5/plumbing/format/gitignore"

	"github.com/keyguard/keyguard/internal/scancode"
)

// entry is one path of the tree, relative, with slashes.
type entry struct {
	rel   string
	isDir bool
}

type tree struct {
	name    string
	root    string
	entries []entry           // every file and directory, parents first
	ignores map[string][]byte // .gitignore contents by directory ("" the root)
	dirs    []string          // directories holding a .gitignore, parents first
}

func repos(tb testing.TB) []string {
	env := os.Getenv("KEYGUARD_GITIGNORE_REPOS")
	if env == "" {
		tb.Fatal("set KEYGUARD_GITIGNORE_REPOS to a comma-separated list of git directories (bare or .git) to check out")
	}
	return strings.Split(env, ",")
}

var (
	treesOnce sync.Once
	trees     []*tree
	treesErr  error
	treesBase string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if treesBase != "" {
		os.RemoveAll(treesBase)
	}
	os.Exit(code)
}

func loadTrees(tb testing.TB) []*tree {
	list := repos(tb)
	treesOnce.Do(func() {
		base, err := os.MkdirTemp("", "gitignore-bench")
		if err != nil {
			treesErr = err
			return
		}
		treesBase = base
		for i, g := range list {
			t, err := checkout(g, filepath.Join(base, fmt.Sprint(i)))
			if err != nil {
				treesErr = fmt.Errorf("%s: %w", g, err)
				return
			}
			trees = append(trees, t)
		}
	})
	if treesErr != nil {
		tb.Fatal(treesErr)
	}
	return trees
}

func run(dir string, stdin []byte, name string, args ...string) ([]byte, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(stdin)
	// No global or system excludes: only the tree's .gitignore files count.
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "XDG_CONFIG_HOME="+dir)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil && !(name == "git" && args[0] == "check-ignore" && cmd.ProcessState.ExitCode() == 1) {
		return out, fmt.Errorf("%s %v: %v: %s", name, args, err, errb.String())
	}
	return out, nil
}

func checkout(gitDir, dir string) (*tree, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	archive, err := run(dir, nil, "git", "--git-dir="+gitDir, "archive", "--format=tar", "HEAD")
	if err != nil {
		return nil, err
	}
	if _, err := run(dir, archive, "tar", "-x"); err != nil {
		return nil, err
	}
	if _, err := run(dir, nil, "git", "init", "-q", "."); err != nil {
		return nil, err
	}
	// Template collections: NAME.gitignore is the .gitignore of NAME/.
	var templates []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(d.Name(), ".gitignore") && d.Name() != ".gitignore" {
			templates = append(templates, p)
		}
		if d != nil && d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		return nil
	})
	for _, p := range templates {
		sub := strings.TrimSuffix(p, ".gitignore")
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		if os.MkdirAll(sub, 0o755) == nil {
			os.WriteFile(filepath.Join(sub, ".gitignore"), data, 0o644)
		}
	}
	name := filepath.Base(gitDir)
	if name == "repo" || name == ".git" {
		name = filepath.Base(filepath.Dir(gitDir))
	}
	t := &tree{name: name, root: dir}
	if err := t.scan(); err != nil {
		return nil, err
	}
	t.addCandidates()
	return t, t.scan()
}

// scan reads the tree as it is on disk.
func (t *tree) scan() error {
	t.entries, t.ignores, t.dirs = nil, map[string][]byte{}, nil
	return filepath.WalkDir(t.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(t.root, p)
		rel = filepath.ToSlash(rel)
		if rel == ".git" {
			return filepath.SkipDir
		}
		if rel == "." {
			rel = ""
		} else {
			t.entries = append(t.entries, entry{rel, d.IsDir()})
		}
		if d.IsDir() {
			if data, err := os.ReadFile(filepath.Join(p, ".gitignore")); err == nil {
				t.ignores[rel] = data
				t.dirs = append(t.dirs, rel)
			}
		}
		return nil
	})
}

// common are names worth asking about in every directory: build outputs,
// editor files, names with spaces, brackets and backslashes.
var common = []string{"x.log", "build/", "node_modules/", ".env", "a.pyc", "__pycache__/", "dist/", "target/",
	"out.o", "tmp/", ".DS_Store", "x~", ".x.swp", "Thumbs.db", "a b.txt", "[x].txt", `back\slash`, "#x#", "!bang", "x.class", "vendor/", "coverage/"}

// addCandidates creates, beside each .gitignore, a file and a directory
// for each of its patterns, and the common names in every directory.
func (t *tree) addCandidates() {
	create := func(rel string, dir bool) {
		p := filepath.Join(t.root, filepath.FromSlash(rel))
		if _, err := os.Lstat(p); err == nil || strings.Contains(rel, "\x00") || len(rel) > 200 {
			return
		}
		if dir {
			if os.MkdirAll(p, 0o755) == nil {
				os.WriteFile(filepath.Join(p, "f"), nil, 0o644)
			}
			return
		}
		if os.MkdirAll(filepath.Dir(p), 0o755) == nil {
			os.WriteFile(p, nil, 0o644)
		}
	}
	join := func(dir, name string) string {
		if dir == "" {
			return name
		}
		return dir + "/" + name
	}
	for _, dir := range t.dirs {
		for _, line := range strings.Split(string(t.ignores[dir]), "\n") {
			line = strings.TrimRight(line, "\r")
			if strings.TrimSpace(line) == "" || line[0] == '#' {
				continue
			}
			for _, name := range instances(line) {
				create(join(dir, name), false)
				create(join(dir, "sub/"+name+"d"), true)
				if !strings.Contains(name, "/") {
					create(join(dir, "sub/"+name), false)
				}
			}
		}
	}
	var dirs []string
	for _, e := range t.entries {
		if e.isDir {
			dirs = append(dirs, e.rel)
		}
	}
	dirs = append(dirs, "")
	for _, dir := range dirs {
		for _, c := range common {
			create(join(dir, strings.TrimSuffix(c, "/")), strings.HasSuffix(c, "/"))
		}
	}
}

// instances are names a pattern matches (or nearly does): wildcards filled
// in, escapes and anchors dropped.
func instances(pattern string) []string {
	p := strings.TrimPrefix(pattern, "!")
	p = strings.TrimPrefix(strings.TrimSpace(p), "/")
	p = strings.TrimSuffix(p, "/")
	if p == "" {
		return nil
	}
	var outs []string
	for _, fill := range []struct{ starstar, star, q string }{{"", "x", "q"}, {"d1/d2/", "", "_"}} {
		var b strings.Builder
		for i := 0; i < len(p); i++ {
			switch c := p[i]; {
			case strings.HasPrefix(p[i:], "**/"):
				b.WriteString(fill.starstar)
				i += 2
			case strings.HasPrefix(p[i:], "**"):
				b.WriteString("z")
				i++
			case c == '*':
				b.WriteString(fill.star)
			case c == '?':
				b.WriteString(fill.q)
			case c == '[':
				j := strings.IndexByte(p[i+1:], ']')
				if j < 1 {
					b.WriteByte(c)
					continue
				}
				class := p[i+1 : i+1+j]
				if class[0] == '!' || class[0] == '^' {
					b.WriteByte('z')
				} else {
					b.WriteByte(class[0])
				}
				i += j + 1
			case c == '\\' && i+1 < len(p):
				i++
				b.WriteByte(p[i])
			default:
				b.WriteByte(c)
			}
		}
		s := strings.Trim(path.Clean(b.String()), "/")
		if s != "" && s != "." && !strings.HasPrefix(s, "..") && !slices.Contains(outs, s) {
			outs = append(outs, s)
		}
	}
	return outs
}

// raw decisions, one per entry, before parents are taken into account.
func gitRaw(t *tree) ([]bool, error) {
	var in bytes.Buffer
	for _, e := range t.entries {
		in.WriteString(e.rel)
		in.WriteByte(0)
	}
	out, err := run(t.root, in.Bytes(), "git", "check-ignore", "--no-index", "--stdin", "-z")
	if err != nil {
		return nil, err
	}
	ignored := map[string]bool{}
	for _, p := range strings.Split(string(out), "\x00") {
		ignored[p] = true
	}
	res := make([]bool, len(t.entries))
	for i, e := range t.entries {
		res[i] = ignored[e.rel]
	}
	return res, nil
}

// oursSets builds scan-code's rules per directory as its walk does.
func oursSets(t *tree) map[string]*scancode.IgnoreSet {
	sets := map[string]*scancode.IgnoreSet{}
	sets[""] = nil
	if data, ok := t.ignores[""]; ok {
		sets[""] = scancode.NewIgnoreSet(nil, "", data)
	}
	for _, e := range t.entries {
		if !e.isDir {
			continue
		}
		set := sets[parentOf(e.rel)]
		if data, ok := t.ignores[e.rel]; ok {
			set = scancode.NewIgnoreSet(set, e.rel, data)
		}
		sets[e.rel] = set
	}
	return sets
}

func oursRaw(t *tree, sets map[string]*scancode.IgnoreSet, res []bool) {
	for i, e := range t.entries {
		res[i] = sets[parentOf(e.rel)].Ignored(e.rel, e.isDir)
	}
}

// goGitMatcher reads the patterns as go-git's ReadPatterns does: comments
// and blank lines skipped, each directory's after its parent's.
func goGitMatcher(t *tree) ggi.Matcher {
	var ps []ggi.Pattern
	for _, dir := range t.dirs {
		var domain []string
		if dir != "" {
			domain = strings.Split(dir, "/")
		}
		sc := bufio.NewScanner(bytes.NewReader(t.ignores[dir])) // as ReadPatterns: a line's \r is dropped
		for sc.Scan() {
			if line := sc.Text(); !strings.HasPrefix(line, "#") && len(strings.TrimSpace(line)) > 0 {
				ps = append(ps, ggi.ParsePattern(line, domain))
			}
		}
	}
	return ggi.NewMatcher(ps)
}

func goGitRaw(t *tree, m ggi.Matcher, parts [][]string, res []bool) {
	for i, e := range t.entries {
		res[i] = m.Match(parts[i], e.isDir)
	}
}

func splitAll(t *tree) [][]string {
	parts := make([][]string, len(t.entries))
	for i, e := range t.entries {
		parts[i] = strings.Split(e.rel, "/")
	}
	return parts
}

func parentOf(rel string) string {
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		return rel[:i]
	}
	return ""
}

// closure: a path inside an ignored directory is ignored (git does not
// look inside it, and neither does scan-code's walk). entries list parents
// first.
func closure(t *tree, raw []bool) []bool {
	idx := map[string]int{}
	out := make([]bool, len(raw))
	for i, e := range t.entries {
		idx[e.rel] = i
		out[i] = raw[i]
		if p := parentOf(e.rel); p != "" && out[idx[p]] {
			out[i] = true
		}
	}
	return out
}

// TestAgreeWithGit counts, per tree, the paths on which each matcher
// differs from git check-ignore. scan-code's must not differ at all.
func TestAgreeWithGit(t *testing.T) {
	for _, tr := range loadTrees(t) {
		g, err := gitRaw(tr)
		if err != nil {
			t.Fatal(err)
		}
		want := closure(tr, g)
		ours := make([]bool, len(tr.entries))
		oursRaw(tr, oursSets(tr), ours)
		ours = closure(tr, ours)
		gg := make([]bool, len(tr.entries))
		goGitRaw(tr, goGitMatcher(tr), splitAll(tr), gg)
		gg = closure(tr, gg)
		nIgnored, oursWrong, ggWrong := 0, 0, 0
		for i, e := range tr.entries {
			if want[i] {
				nIgnored++
			}
			if ours[i] != want[i] {
				if oursWrong++; oursWrong <= 10 {
					t.Errorf("%s: scan-code says ignored=%v for %q (dir %v), git %v", tr.name, ours[i], e.rel, e.isDir, want[i])
				}
			}
			if gg[i] != want[i] {
				if ggWrong++; ggWrong <= 10 {
					t.Logf("%s: go-git says ignored=%v for %q (dir %v), git %v", tr.name, gg[i], e.rel, e.isDir, want[i])
				}
			}
		}
		t.Logf("%s: %d .gitignore files, %d paths, %d ignored by git; differ from git: scan-code %d, go-git %d",
			tr.name, len(tr.dirs), len(tr.entries), nIgnored, oursWrong, ggWrong)
	}
}

// BenchmarkParse reads every .gitignore of a tree.
func BenchmarkParse(b *testing.B) {
	for _, tr := range loadTrees(b) {
		b.Run(tr.name+"/scancode", func(b *testing.B) {
			for b.Loop() {
				for _, dir := range tr.dirs {
					scancode.NewIgnoreSet(nil, dir, tr.ignores[dir])
				}
			}
		})
		b.Run(tr.name+"/go-git", func(b *testing.B) {
			for b.Loop() {
				goGitMatcher(tr)
			}
		})
	}
}

// BenchmarkMatch decides every path of a tree, the rules read once;
// ns/path is the time per path.
func BenchmarkMatch(b *testing.B) {
	for _, tr := range loadTrees(b) {
		n := float64(len(tr.entries))
		res := make([]bool, len(tr.entries))
		b.Run(tr.name+"/scancode", func(b *testing.B) {
			sets := oursSets(tr)
			for b.Loop() {
				oursRaw(tr, sets, res)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/path")
		})
		b.Run(tr.name+"/go-git", func(b *testing.B) {
			m, parts := goGitMatcher(tr), splitAll(tr)
			for b.Loop() {
				goGitRaw(tr, m, parts, res)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/path")
		})
	}
}
