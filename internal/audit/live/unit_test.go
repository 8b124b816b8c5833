package live

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseClusterNodes(t *testing.T) {
	text := `07c37dfeb235213a872192d90877d0cd55635b91 127.0.0.1:30004@31004,host4 slave e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 0 1426238317239 4 connected
67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 127.0.0.1:30002@31002 master - 0 1426238316232 2 connected 5461-10922
292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f 127.0.0.1:30003@31003 master - 0 1426238318243 3 connected 10923-16383 [123->-67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1]
6ec23923021cf3ffec47632106199cb7f496ce01 127.0.0.1:30005@31005 slave,fail 67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 0 1426238316232 5 connected
e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca :30001@31001 myself,master - 0 0 1 connected 0-5460
aaaa ::1:7000@17000 master,fail - 0 0 1 disconnected 7 9-10
garbage line
`
	nodes := parseClusterNodes(text, "10.0.0.9")
	if len(nodes) != 6 {
		t.Fatalf("%d nodes", len(nodes))
	}
	want := []struct {
		addr, master string
		slots        int
		usable       bool
	}{
		{"127.0.0.1:30004", "e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca", 0, true},
		{"127.0.0.1:30002", "", 5462, true},
		{"127.0.0.1:30003", "", 5461, true},
		{"127.0.0.1:30005", "67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1", 0, false},
		{"10.0.0.9:30001", "", 5461, true},
		{"[::1]:7000", "", 3, false},
	}
	for i, w := range want {
		n := nodes[i]
		if n.Addr != w.addr || n.Master != w.master || len(n.Owned) != w.slots || n.Usable() != w.usable {
			t.Errorf("node %d: %+v usable %v; want %+v", i, n, n.Usable(), w)
		}
	}
	if !slices.Equal(nodes[2].Migrating, []int{123}) || len(nodes[5].Owned) != 3 || nodes[4].Owned[5460] != 5460 {
		t.Errorf("migrating %v, owned %v", nodes[2].Migrating, nodes[5].Owned)
	}
	var slots []int
	for _, n := range nodes {
		if n.Has("master") {
			slots = append(slots, n.Owned...)
		}
	}
	r := &run{opts: Options{Replicas: true, ReplicasPrefer: true}}
	plans, left := r.assign(slots, nodes)
	var addrs []string
	for _, p := range plans {
		addrs = append(addrs, fmt.Sprintf("%s %s %d", p.addr, p.role, len(p.slotList)))
	}
	slices.Sort(addrs)
	// 30001 has a healthy replica (30004); 30002's replica failed; 30003 has none.
	if want := []string{"127.0.0.1:30002 master 5462", "127.0.0.1:30003 master 5461", "127.0.0.1:30004 replica 5458"}; !slices.Equal(addrs, want) {
		t.Errorf("replica plan %q, want %q", addrs, want)
	}
	if len(left) != 1 || !strings.Contains(left[0].reason, "[::1]:7000") || !slices.Equal(left[0].slots, []int{7, 9, 10}) {
		t.Errorf("failed master's slots: %+v", left)
	}
	// (30001's slots 7, 9 and 10 are claimed by the failed master, listed
	// last.) Without prefer, a master without a replica leaves its slots.
	r = &run{opts: Options{Replicas: true}}
	_, left = r.assign(slots, nodes)
	var why []string
	for _, l := range left {
		why = append(why, fmt.Sprintf("%d %s", len(l.slots), l.reason[:min(len(l.reason), 20)]))
	}
	slices.Sort(why)
	if want := []string{"3 [::1]:7000: the clus", "5461 --replicas: master 1", "5462 --replicas: master 1"}; !slices.Equal(why, want) {
		t.Errorf("without prefer: %q, want %q", why, want)
	}
}

func TestParseInfo(t *testing.T) {
	in := parseInfo("# Server\r\nredis_version:7.2.4\r\nrun_id:abc\r\n# Memory\r\nmaxmemory_policy:volatile-lfu\r\n# Replication\r\nrole:master\r\nslave0:ip=10.0.0.2,port=6380,state=wait_bgsave,offset=0,lag=0\r\nslave1:ip=10.0.0.3,port=6381,state=online,offset=1,lag=0\r\n# Keyspace\r\ndb0:keys=12,expires=3,avg_ttl=0\r\ndb3:keys=7,expires=0,avg_ttl=0\r\n")
	if in.version() != 702 || !in.lfu() || in.keys(0) != 12 || in.keys(3) != 7 || in.keys(1) != 0 || !slices.Equal(in.replicas(), []string{"10.0.0.3:6381"}) || in["run_id"] != "abc" {
		t.Errorf("%v: version %d lfu %v keys %d/%d replicas %q", in, in.version(), in.lfu(), in.keys(0), in.keys(3), in.replicas())
	}
}

// The rate itself is internal/pace's (tested there); the audit sizes its
// pipelines to the burst.
func TestLimiterBatches(t *testing.T) {
	if got := newLimiter(1000).batchKeys(1000, 4, 3); got != 20 {
		t.Errorf("batchKeys = %d, want 250/(4*3) = 20", got)
	}
	if got := newLimiter(10).batchKeys(1000, 4, 3); got != 1 {
		t.Errorf("batchKeys at --rate 10 = %d, want 1 (never 0)", got)
	}
	if got := newLimiter(0).batchKeys(1000, 4, 3); got != 1000 {
		t.Errorf("unlimited batchKeys = %d", got)
	}
	if err := (*limiter)(nil).wait(context.Background(), 5); err != nil {
		t.Error(err)
	}
}

func TestLimiterHonoursCancel(t *testing.T) {
	l := newLimiter(1) // one command per second, burst 8
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := l.wait(ctx, 100); err == nil {
		t.Error("wait for 100 tokens at 1/s with a cancelled context returned nil")
	}
}

func TestShrinkWatch(t *testing.T) {
	var s shrinkWatch
	// A table of 2^16 buckets: cursors below 2^16, half with the top bit.
	for i := range 200 {
		v := uint64(i*7919) % (1 << 15)
		if i%2 == 0 {
			v |= 1 << 15
		}
		if s.see(strconv.FormatUint(v, 10)) {
			t.Fatalf("shrink reported at cursor %d of a stable table", i)
		}
	}
	shrunk := false
	for i := range 40 { // the table shrank to 2^12
		shrunk = s.see(strconv.Itoa(i*31%(1<<12))) || shrunk
	}
	if !shrunk {
		t.Error("a shrink from 2^16 to 2^12 buckets went unnoticed")
	}
}

func TestProgressETA(t *testing.T) {
	p := Progress{Scanned: 250, Total: 1000, Elapsed: 5 * time.Second}
	if eta, ok := p.ETA(); !ok || eta != 15*time.Second || p.Rate() != 50 {
		t.Errorf("eta %v %v rate %v", eta, ok, p.Rate())
	}
	if _, ok := (Progress{Scanned: 10}).ETA(); ok {
		t.Error("ETA without a total")
	}
}

// A listing drops the keys of the slots given, in place, and keeps the
// others whole and in order, empty keys and keys of any bytes included.
func TestListingDrop(t *testing.T) {
	keys := []string{"a:1", "", "b\x00\r\n", "c:3", "dd", "", "e:5:long-key"}
	slots := []int{7, 7, 9, 3, 9, 3, 7}
	var l listing
	for i, k := range keys {
		l.add([]byte(k), slots[i])
	}
	l.drop(func(s int) bool { return s == 7 })
	var got []string
	start := 0
	for i, end := range l.end {
		got = append(got, fmt.Sprintf("%q@%d", l.buf[start:end], l.slot[i]))
		start = end
	}
	want := []string{`"b\x00\r\n"@9`, `"c:3"@3`, `"dd"@9`, `""@3`}
	if !slices.Equal(got, want) || len(l.buf) != start {
		t.Fatalf("after dropping slot 7: %v (%d bytes), want %v", got, len(l.buf), want)
	}
	l.drop(func(int) bool { return true })
	if len(l.end) != 0 || len(l.buf) != 0 || len(l.slot) != 0 {
		t.Fatalf("after dropping all: %d keys, %d bytes", len(l.end), len(l.buf))
	}
}

// ChildAtWork names the child a server runs, from INFO persistence.
func TestChildAtWork(t *testing.T) {
	for _, tc := range []struct{ info, kind, since string }{
		{"# Persistence\r\nrdb_bgsave_in_progress:0\r\naof_rewrite_in_progress:0\r\nmodule_fork_in_progress:0\r\n", "", ""},
		{"rdb_bgsave_in_progress:1\r\nrdb_current_bgsave_time_sec:12\r\nrdb_last_bgsave_time_sec:97\r\n", "a save or a replica's sync", "begun 12s ago, the last took 1m37s"},
		{"rdb_bgsave_in_progress:1\r\nrdb_current_bgsave_time_sec:0\r\nrdb_last_bgsave_time_sec:-1\r\n", "a save or a replica's sync", "begun 0s ago"},
		{"rdb_bgsave_in_progress:0\r\naof_rewrite_in_progress:1\r\naof_current_rewrite_time_sec:3\r\naof_last_rewrite_time_sec:-1\r\n", "an append-only file rewrite", "begun 3s ago"},
		{"module_fork_in_progress:1\r\n", "a module's child process", ""},
	} {
		if kind, since := ChildAtWork(tc.info); kind != tc.kind || since != tc.since {
			t.Errorf("ChildAtWork(%q) = %q, %q; want %q, %q", tc.info, kind, since, tc.kind, tc.since)
		}
	}
}

// stale names a replica whose keys may be older than its master's.
func TestStaleInfo(t *testing.T) {
	for _, tc := range []struct{ info, want string }{
		{"role:master\r\n", ""},
		{"role:slave\r\nmaster_host:10.0.0.1\r\nmaster_port:6379\r\nmaster_link_status:up\r\nmaster_sync_in_progress:0\r\n", ""},
		{"role:slave\r\nmaster_host:10.0.0.1\r\nmaster_port:6379\r\nmaster_link_status:down\r\nmaster_sync_in_progress:0\r\nmaster_link_down_since_seconds:75\r\n", "r:6380 is a replica whose link to its master 10.0.0.1:6379 was down for 1m15s: it answered"},
		{"role:slave\r\nmaster_host:::1\r\nmaster_port:6379\r\nmaster_link_status:down\r\nmaster_link_down_since_seconds:-1\r\n", "r:6380 is a replica whose link to its master [::1]:6379 was down: it answered"},
		{"role:slave\r\nmaster_host:10.0.0.1\r\nmaster_port:6379\r\nmaster_link_status:down\r\nmaster_sync_in_progress:1\r\n", "r:6380 is a replica in the middle of a full sync from its master 10.0.0.1:6379"},
	} {
		got := parseInfo(tc.info).stale("r:6380")
		if tc.want == "" && got != "" || !strings.HasPrefix(got, tc.want) {
			t.Errorf("stale(%q) = %q; want %q…", tc.info, got, tc.want)
		}
	}
}
