package redistest

import (
	"os"
	"path/filepath"
	"testing"
)

// RDBFixtures finds the real RDB files other projects ship with their
// test suites: shared/rdb-fixtures in a directory above the working
// directory (CI lays shared/ beside the checkout), or
// KEYGUARD_RDB_FIXTURES. They are read in place, never copied into the
// repository. Without them the test skips, and fails under
// KEYGUARD_REQUIRE_TOOLCHAINS=1.
func RDBFixtures(t testing.TB) string {
	t.Helper()
	if d := os.Getenv("KEYGUARD_RDB_FIXTURES"); d != "" {
		return d
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		cand := filepath.Join(d, "shared", "rdb-fixtures")
		if st, err := os.Stat(cand); err == nil && st.IsDir() {
			return cand
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	msg := "no shared/rdb-fixtures directory above " + wd + " (set KEYGUARD_RDB_FIXTURES to the directory of real RDB files)"
	if os.Getenv("KEYGUARD_REQUIRE_TOOLCHAINS") == "1" {
		t.Fatal(msg + " (required: KEYGUARD_REQUIRE_TOOLCHAINS=1)")
	}
	t.Skip(msg)
	return ""
}

// RDBFixture is one file of RDBFixtures; a missing file is handled as a
// missing directory is.
func RDBFixture(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(RDBFixtures(t), name)
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("KEYGUARD_REQUIRE_TOOLCHAINS") == "1" {
			t.Fatalf("%v (required: KEYGUARD_REQUIRE_TOOLCHAINS=1)", err)
		}
		t.Skip(err)
	}
	return p
}
