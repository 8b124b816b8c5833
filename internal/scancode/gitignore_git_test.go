package scancode

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestIgnoreAgreesWithGit: on a tree of nested .gitignore files using
// every feature (negation, anchors, **, directory-only patterns, escapes,
// classes, trailing spaces, CRLF, names that are not UTF-8), the walk's rules decide every file and
// directory as git check-ignore does. bench/gitignore does the same on
// real repositories, and against go-git's matcher.
func TestIgnoreAgreesWithGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("KEYGUARD_REQUIRE_TOOLCHAINS") == "1" {
			t.Fatal("git is not on PATH")
		}
		t.Skip("git is not on PATH")
	}
	root := t.TempDir()
	ignores := map[string]string{
		"":           "*.log\n!keep.log\n/top\nbuild/\na/**/z\n**/deep\n\\#hash\ntrailing   \nescaped\\ \n[Bb]in/\n*.py[cod]\nfoo/*\n!foo/bar\nlogs/**\n!logs/keep/\ncrlf\r\n[!a]x\n\\!bang\nmid/dle/\ncaf\xe9\n*.\xff\n",
		"sub":        "!*.log\n/only-here\nnested/\n*.tmp\n",
		"sub/deeper": "*.log\n!important.tmp\n",
		"a":          "!z\nb/\n",
	}
	names := []string{"x.log", "keep.log", "top", "build", "z", "deep", "#hash", "trailing", "escaped ", "bin", "Bin", "m.pyc", "m.py",
		"bar", "keep", "crlf", "ax", "bx", "!bang", "only-here", "nested", "t.tmp", "important.tmp", "plain.go", "dle", "caf\xe9", "x.\xff", "x.\xfe"}
	dirs := []string{"", "a", "a/b", "sub", "sub/deeper", "foo", "logs", "logs/keep", "x/y", "mid", "mid/dle", "sub/nested"}
	write := func(rel string, data string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	join := func(dir, name string) string {
		if dir == "" {
			return name
		}
		return dir + "/" + name
	}
	for dir, text := range ignores {
		write(join(dir, ".gitignore"), text)
	}
	for _, dir := range dirs {
		for _, n := range names {
			if !slices.Contains(dirs, join(dir, n)) {
				write(join(dir, n), "") // n as a file
			}
			write(join(dir, "d/"+n+"/f"), "") // and as a directory
		}
	}
	git := func(stdin []byte, args ...string) []byte {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		cmd.Stdin = bytes.NewReader(stdin)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+root, "XDG_CONFIG_HOME="+root)
		out, err := cmd.Output()
		if err != nil && cmd.ProcessState.ExitCode() != 1 { // 1: nothing ignored
			t.Fatalf("git %v: %v", args, err)
		}
		return out
	}
	git(nil, "init", "-q", ".")

	type entry struct {
		rel   string
		isDir bool
	}
	var entries []entry // parents first
	sets := map[string]*IgnoreSet{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if rel == ".git" {
			return filepath.SkipDir
		}
		if rel == "." {
			rel = ""
		} else {
			entries = append(entries, entry{rel, d.IsDir()})
		}
		if d.IsDir() {
			set := sets[parentDir(rel)]
			if data, err := os.ReadFile(filepath.Join(p, ".gitignore")); err == nil {
				set = NewIgnoreSet(set, rel, data)
			}
			sets[rel] = set
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var in bytes.Buffer
	for _, e := range entries {
		in.WriteString(e.rel + "\x00")
	}
	byGit := map[string]bool{}
	for _, p := range strings.Split(string(git(in.Bytes(), "check-ignore", "--no-index", "--stdin", "-z")), "\x00") {
		byGit[p] = true
	}
	// A path inside an ignored directory is ignored: neither git nor the
	// walk looks inside it.
	gitSays, weSay := map[string]bool{}, map[string]bool{}
	ignored, differ := 0, 0
	for _, e := range entries {
		parent := parentDir(e.rel)
		gitSays[e.rel] = gitSays[parent] || byGit[e.rel]
		weSay[e.rel] = weSay[parent] || sets[parent].Ignored(e.rel, e.isDir)
		if gitSays[e.rel] {
			ignored++
		}
		if gitSays[e.rel] != weSay[e.rel] {
			if differ++; differ <= 20 {
				t.Errorf("%q (directory: %v): ignored %v, git says %v", e.rel, e.isDir, weSay[e.rel], gitSays[e.rel])
			}
		}
	}
	if ignored == 0 || ignored == len(entries) {
		t.Fatalf("git ignores %d of %d paths: the tree tells nothing", ignored, len(entries))
	}
	t.Logf("%d paths, %d ignored by git, %d decided otherwise", len(entries), ignored, differ)
}

func parentDir(rel string) string {
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		return rel[:i]
	}
	return ""
}
