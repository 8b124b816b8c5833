package acl

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/redistest"
	"github.com/keyguard/keyguard/registry"
)

func testUsers(t *testing.T) []User {
	t.Helper()
	reg, err := registry.Load("testdata/keyguard.yaml")
	if err != nil {
		t.Fatal(err)
	}
	users, err := Users(reg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return users
}

func TestUsers(t *testing.T) {
	var b bytes.Buffer
	if err := WriteCommands(&b, testUsers(t), Options{}); err != nil {
		t.Fatal(err)
	}
	want := `# keyguard acl: one Redis 7 user per service, generated from the key registry.
# Key patterns are globs: '*' stands for a placeholder and also matches the separator, so a pattern admits more keys than its template.
# Passwords are not set here: give each user one, e.g. ACL SETUSER order-team >secret (or #<sha256> in an ACL file).
# Commands: +@all -@dangerous. Disable the default user once the services log in as these users.
# auth-team: writes verify:sms:{phone}:{scene}; keyguard writer records
ACL SETUSER auth-team on resetkeys resetchannels nocommands +@all -@dangerous %RW~verify:sms:*:* %RW~keyguard:{writers}:*
# order-team: writes order:cache:{id}; order:order:{orderId:int}:base; order:{{hot}}:x*y:{d:date}{sub}; seq:order:no; keyguard writer records; reads promo:sku:{skuId:int}
ACL SETUSER order-team on resetkeys resetchannels nocommands +@all -@dangerous %RW~order:cache:* %RW~order:order:*:base %RW~order:{hot}:x\*y:* %RW~seq:order:no %RW~keyguard:{writers}:* %R~promo:sku:*
# promo-team: writes promo:flag:{skuId:int}; promo:sku:{skuId:int}; keyguard writer records
ACL SETUSER promo-team on resetkeys resetchannels nocommands +@all -@dangerous %RW~promo:flag:* %RW~promo:sku:* %RW~keyguard:{writers}:*
# sms-service: writes verify:sms:{phone}:{scene}; keyguard writer records
ACL SETUSER sms-service on resetkeys resetchannels nocommands +@all -@dangerous %RW~verify:sms:*:* %RW~keyguard:{writers}:*
`
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

// TestRulesOnServer loads the generated rules into a real Redis 7 and logs
// in as the services: promo-team gets NOPERM writing an order key and
// writes its own; order-team may read promo:sku but not write it.
func TestRulesOnServer(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	admin := srv.Client(t)
	for _, u := range testUsers(t) {
		args := []any{"acl", "setuser", u.Name}
		for _, r := range u.Rules(Options{}) {
			args = append(args, r)
		}
		args = append(args, ">pw-"+u.Name)
		if err := admin.Do(ctx, args...).Err(); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	login := func(user string) *redis.Client {
		c := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: user, Password: "pw-" + user})
		t.Cleanup(func() { c.Close() })
		return c
	}
	promo, order := login("promo-team"), login("order-team")
	expectNoPerm(t, promo.HSet(ctx, "order:order:1001:base", "amount", 1).Err(), "promo-team HSET order key")
	if err := promo.HSet(ctx, "promo:sku:1001", "activityId", 12345).Err(); err != nil {
		t.Fatalf("promo-team HSET own key: %v", err)
	}
	expectNoPerm(t, promo.HGet(ctx, "order:order:1001:base", "amount").Err(), "promo-team HGET order key")
	if err := order.HGet(ctx, "promo:sku:1001", "activityId").Err(); err != nil {
		t.Fatalf("order-team reads promo:sku (readers): %v", err)
	}
	expectNoPerm(t, order.HSet(ctx, "promo:sku:1001", "couponAmount", 10).Err(), "order-team HSET promo key")
	expectNoPerm(t, order.Keys(ctx, "*").Err(), "KEYS")
	expectNoPerm(t, order.FlushAll(ctx).Err(), "FLUSHALL")
	if err := order.ZAdd(ctx, "keyguard:{writers}:t:0011223344556677", redis.Z{Score: 1, Member: "order-team"}).Err(); err != nil {
		t.Fatalf("writer records: %v", err)
	}
	if err := order.Set(ctx, `order:{hot}:x*y:1`, "v", 0).Err(); err != nil {
		t.Fatalf("escaped literal: %v", err)
	}
	expectNoPerm(t, order.Set(ctx, `order:{hot}:xzy:1`, "v", 0).Err(), "the escaped '*' is literal")
	if v := admin.HGet(ctx, "promo:sku:1001", "couponAmount").Val(); v != "" {
		t.Fatal("a refused write went through")
	}
}

// TestACLFileOnServer starts a server with the generated ACL file.
func TestACLFileOnServer(t *testing.T) {
	ctx := context.Background()
	var b, notes bytes.Buffer
	if err := WriteFile(&b, &notes, testUsers(t), Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(notes.String(), "matches the separator") {
		t.Errorf("notes: %s", notes.String())
	}
	// An ACL file holds passwords: add them the way an operator would.
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		name := strings.Fields(l)[1]
		lines = append(lines, l+" >pw-"+name)
	}
	path := filepath.Join(t.TempDir(), "users.acl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := redistest.Start(t, "aclfile "+path)
	promo := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: "promo-team", Password: "pw-promo-team"})
	defer promo.Close()
	expectNoPerm(t, promo.Set(ctx, "order:cache:1", "v", 0).Err(), "promo-team SET order key")
	if err := promo.Set(ctx, "promo:flag:1", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
}

func TestRejects(t *testing.T) {
	reg, err := registry.Parse("x.yaml", []byte("version: 1\ndomains:\n  a: {owner: \"team a\"}\nkeys:\n  - key: \"a:b\"\n    type: string\n    ttl: 1m\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Users(reg, Options{}); err == nil {
		t.Fatal("a user name with a space was accepted")
	}
	u := User{Name: "x", Write: []Pattern{{Glob: "a b"}}}
	if err := WriteFile(&bytes.Buffer{}, nil, []User{u}, Options{}); err == nil {
		t.Fatal("a pattern with a space went into an ACL file")
	}
	var b bytes.Buffer
	if err := WriteCommands(&b, []User{u}, Options{NoRecords: true, Commands: "+@read"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"%RW~a b"`) || !strings.Contains(b.String(), "nocommands +@read \"%RW~a b\"") {
		t.Fatalf("got %s", b.String())
	}
}

func expectNoPerm(t *testing.T, err error, what string) {
	t.Helper()
	if err == nil || !strings.HasPrefix(err.Error(), "NOPERM") {
		t.Errorf("%s: got %v, want NOPERM", what, err)
	}
}
