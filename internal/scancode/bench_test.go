package scancode

import (
	"context"
	"os"
	"testing"

	"github.com/keyguard/keyguard/registry"
)

// BenchmarkScanTree scans the tree named by KEYGUARD_BENCH_TREE (a module
// source, e.g. go-redis from the module cache) against the demo registry;
// KEYGUARD_BENCH_TESTS=1 scans test files too. bench/scancode.sh runs it.
func BenchmarkScanTree(b *testing.B) {
	dir := os.Getenv("KEYGUARD_BENCH_TREE")
	if dir == "" {
		b.Skip("set KEYGUARD_BENCH_TREE to a source tree (bench/scancode.sh does)")
	}
	reg, err := registry.Load("../demodata/keyguard.yaml")
	if err != nil {
		b.Fatal(err)
	}
	tests := os.Getenv("KEYGUARD_BENCH_TESTS") == "1"
	var files, findings int
	for b.Loop() {
		res, err := Scan(context.Background(), []string{dir}, Options{Registry: reg, Tests: tests})
		if err != nil {
			b.Fatal(err)
		}
		files, findings = 0, len(res.Findings)
		for _, n := range res.Files {
			files += n
		}
	}
	b.ReportMetric(float64(files)*float64(b.N)/b.Elapsed().Seconds(), "files/s")
	b.ReportMetric(float64(findings), "findings")
}
