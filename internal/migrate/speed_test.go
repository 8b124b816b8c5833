package migrate

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/keyguard/keyguard/internal/human"
	"github.com/keyguard/keyguard/internal/redistest"
)

// TestResumedSpeed: a resumed copy counts the earlier run's keys in its
// totals, but its speed (text and progress) is this run's keys over this
// run's time.
func TestResumedSpeed(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	fill(t, ctx, rdb, "string", 2000)
	p := plan(t, "old:string:{id}", "new:string:{id}")
	cursor := filepath.Join(t.TempDir(), "c.json")
	first, err := p.Copy(ctx, rdb, Options{CursorFile: cursor, MaxKeys: 1500, Batch: 100})
	if err != nil || first.Complete || first.RunKeys != first.Counts.Keys || first.RunKeys < 1500 {
		t.Fatalf("first run: %+v %v", first, err)
	}
	var last Progress
	res, err := p.Copy(ctx, rdb, Options{CursorFile: cursor, Batch: 100, Progress: func(pr Progress) { last = pr }})
	if err != nil || !res.Complete {
		t.Fatalf("resumed run: %+v %v", res, err)
	}
	if res.Counts.Keys != 2000 || res.RunKeys != 2000-first.Counts.Keys || res.RunKeys <= 0 {
		t.Fatalf("resumed run: %d keys in all, %d in this run; the first run had %d", res.Counts.Keys, res.RunKeys, first.Counts.Keys)
	}
	if !last.Final || last.RunKeys != res.RunKeys || last.Counts.Keys != 2000 {
		t.Errorf("final progress: %+v, want this run's %d keys of 2000", last, res.RunKeys)
	}
	var text strings.Builder
	if err := res.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	want := human.Count(int64(float64(res.RunKeys)/res.Duration.Seconds())) + " keys/s"
	all := human.Count(int64(float64(res.Counts.Keys)/res.Duration.Seconds())) + " keys/s"
	if !strings.Contains(text.String(), ", "+want) || strings.Contains(text.String(), ", "+all) {
		t.Errorf("speed: want %s (this run's keys), not %s (all keys):\n%s", want, all, text.String())
	}
	if !strings.Contains(text.String(), "resumed from "+cursor+": "+human.Plural(res.RunKeys, "key")+" in this run, "+human.Count(first.Counts.Keys)+" before it") {
		t.Errorf("no resumed line:\n%s", text.String())
	}
}
