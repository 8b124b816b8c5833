package migrate

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/keyguard/keyguard/internal/redistest"
)

// BenchmarkCopy copies b.N string keys on one server (COPY, in batches of
// 500) and reports keys per second.
func BenchmarkCopy(b *testing.B) {
	ctx := context.Background()
	srv := redistest.Start(b)
	rdb := srv.Client(b)
	p := plan(b, "old:string:{id}", "new:string:{id}")
	pipe := rdb.Pipeline()
	for i := range b.N {
		pipe.Set(ctx, fmt.Sprintf("old:string:%d", i), "v", time.Hour)
		if i%10000 == 9999 {
			if _, err := pipe.Exec(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	res, err := p.Copy(ctx, rdb, Options{})
	if err != nil || res.Counts.Copied != int64(b.N) {
		b.Fatalf("%+v %v", res, err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "keys/s")
}
