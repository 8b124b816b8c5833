package scancode

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// viaRE reads the expectations of the idiom fixtures: "want RULE
// TEMPLATE" and, when the key goes through the project's own function,
// "via NAME".
var viaRE = regexp.MustCompile(`(?://|#|\|) want (\S+) (\S+)(?: via (\S+))?`)

// Each idiom real projects use has its own small project under
// testdata/src/idioms/LANG/IDIOM, scanned on its own: wrappers around the
// client (the finding on the caller's line, naming the wrapper), helpers
// that return keys, constants of other files, clients known by their
// type, construction, annotation, getter or await (and names that only
// look like clients), Spring Cache keys. Every finding is asserted by
// file, line, rule, shape and wrapper, and nothing else may be found.
// The idioms under testdata/idioms/LANG/IDIOM (keys written into a
// strings.Builder, a bytes.Buffer, a StringBuilder) are checked the same
// way; they stand outside testdata/src, whose scan as a whole other tests
// count.
func TestIdioms(t *testing.T) {
	reg := testRegistry(t)
	dirs, err := filepath.Glob("testdata/src/idioms/*/*")
	more, err2 := filepath.Glob("testdata/idioms/*/*")
	if err != nil || err2 != nil || len(dirs) < 10 || len(more) < 2 {
		t.Fatalf("idiom fixtures: %v %v %v %v", dirs, more, err, err2)
	}
	for _, dir := range append(dirs, more...) {
		t.Run(strings.TrimPrefix(strings.TrimPrefix(dir, "testdata/src/idioms/"), "testdata/idioms/"), func(t *testing.T) {
			res, err := Scan(context.Background(), []string{dir}, Options{Registry: reg})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.NotAnalysed) > 0 {
				t.Errorf("not analysed: %+v", res.NotAnalysed)
			}
			var want, have []string
			err = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				data, err := os.ReadFile(path)
				if err != nil {
					return err
				}
				for i, line := range strings.Split(string(data), "\n") {
					for _, m := range viaRE.FindAllStringSubmatch(line, -1) {
						want = append(want, fmt.Sprintf("%s:%d %s %s via=%s", filepath.ToSlash(path), i+1, m[1], m[2], m[3]))
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range res.Findings {
				have = append(have, fmt.Sprintf("%s:%d %s %s via=%s", f.File, f.Line, f.Rule, f.Template, f.Via))
				if f.Via != "" && !strings.Contains(f.Message, "via "+f.Via) {
					t.Errorf("%s:%d: message %q does not name %s", f.File, f.Line, f.Message, f.Via)
				}
			}
			slices.Sort(want)
			slices.Sort(have)
			if len(want) == 0 || !slices.Equal(want, have) {
				t.Errorf("findings differ\n--- got\n%s\n--- want\n%s", strings.Join(have, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}
