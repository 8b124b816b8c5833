package layers

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// homes are helpers that have one definition in the module: the pattern may
// appear in non-test Go code only under home. A second copy elsewhere is a
// second behaviour to keep in step; call the home instead.
var homes = []struct {
	what, home string
	pattern    *regexp.Regexp
}{
	{"writing a file whole (temp file, sync, rename)", "internal/atomicfile/", regexp.MustCompile(`os\.Rename\(`)},
	{"the SARIF writer", "internal/sarif/", regexp.MustCompile(`sarif-2\.1\.0\.json`)},
	{"edit distance", "internal/human/", regexp.MustCompile(`func \w*[eE]ditDistance\(`)},
	{"byte sizes for people", "internal/human/", regexp.MustCompile(`"KiB", "MiB"|\{"KiB", |%\.1f (KiB|MiB)`)},
	{"thousands separators", "internal/human/", regexp.MustCompile(`%3 == 0 \{`)},
	{"a dash for an empty value", "internal/human/", regexp.MustCompile(`func \w*[oO]rDash\(`)},
	{"white space made one space (a message as one line)", "internal/human/", regexp.MustCompile(`strings\.Join\(strings\.Fields\(`)},
	{"a rate limiter", "internal/pace/", regexp.MustCompile(`rate\.NewLimiter\(|\.next\.Add\(|tokens\s+float64|float64\(\w+\) / float64\(\w+\.Rate\)`)},
	{"a progress ticker", "internal/progress/", regexp.MustCompile(`(?s)NewTicker\([^)]*[Pp]rogress`)},
	{"a CLUSTER NODES parser", "internal/topology/", regexp.MustCompile(`strings\.Cut\(\w+\[1\], "@"\)|"->-"`)},
	{"the JSON output set-up", "internal/jsonout/", regexp.MustCompile(`enc\.SetIndent\("", "  "\)`)},
	{"the squarified treemap layout", "internal/treemap/", regexp.MustCompile(`func \w*[wW]orst\w*\(|worst := func`)},
	{"a registry YAML writer", "registry/", regexp.MustCompile(`"\s*-?\s*(key|ttl|type|owner|desc|fields): %|\{owner: %`)},
}

func TestOneHome(t *testing.T) {
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == "testdata" || n == "node_modules" || (strings.HasPrefix(n, ".") && n != "." && n != "..") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, h := range homes {
			if !strings.HasPrefix(rel, h.home) && h.pattern.Match(src) {
				t.Errorf("%s has its own %s (%q): call %s instead", rel, h.what, h.pattern.Find(src), strings.TrimSuffix(h.home, "/"))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
