package investigate

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/redistest"
	"github.com/keyguard/keyguard/registry"
)

// TestKeysTheUserMayNotRead: keys an ACL user may list (SCAN) but not read
// (its key patterns) are said to be so, not "gone", and are left out of
// the TTL watch and the conclusion's "nothing suspicious": before, each
// was listed as gone, and the conclusion found nothing suspicious in
// values it had not read.
func TestKeysTheUserMayNotRead(t *testing.T) {
	reg, err := registry.Parse("keyguard.yaml", []byte(storyRegistry))
	if err != nil {
		t.Fatal(err)
	}
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := context.Background()
	for _, k := range []string{"promo:sku:1001", "promo:sku:1002", "order:sku:1001:settle-preview"} {
		admin.HSet(ctx, k, "f", "1")
		admin.Expire(ctx, k, time.Hour)
	}
	if err := admin.Do(ctx, "ACL", "SETUSER", "team-order", "on", ">pw", "%R~order:*", "+@all").Err(); err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: "team-order", Password: "pw"})
	defer c.Close()
	opts := Options{Target: Target{Match: "promo:sku:*"}, Watch: 200 * time.Millisecond, WatchEvery: 50 * time.Millisecond}
	rep, err := Run(ctx, reg, c, opts)
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	rep.WriteText(&text)
	out := text.String()
	for _, want := range []string{"Keys (2 found, 2 of them not readable by the ACL user", `"promo:sku:1001"  not readable by the ACL user (NOPERM)`, "the ACL user may read none of the 2 keys found"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	for _, bad := range []string{"gone", "nothing suspicious", "does not exist"} {
		if strings.Contains(out, bad) {
			t.Errorf("%q in\n%s", bad, out)
		}
	}
	if len(rep.Keys) != 2 || !rep.Keys[0].Unreadable || rep.Watch != nil && len(rep.Watch.Keys) != 0 {
		t.Errorf("keys %+v, watch %+v", rep.Keys, rep.Watch)
	}

	// --id 1001: one key it may read, one it may not.
	opts.Target = Target{ID: "1001"}
	if rep, err = Run(ctx, reg, c, opts); err != nil {
		t.Fatal(err)
	}
	text.Reset()
	rep.WriteText(&text)
	out = text.String()
	for _, want := range []string{"Keys (2 found, 1 of them not readable by the ACL user", "; of the 1 key the ACL user may not read nothing is known", `"order:sku:1001:settle-preview"  hash`} {
		if !strings.Contains(out, want) {
			t.Errorf("--id: no %q in\n%s", want, out)
		}
	}
}
