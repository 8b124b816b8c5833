package topology

import (
	"slices"
	"strings"
	"testing"
)

const reply = `07c37dfeb235213a872192d90877d0cd55635b91 127.0.0.1:30004@31004,host4 slave e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 0 1426238317239 4 connected
67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 127.0.0.1:30002@31002 master - 0 1426238316232 2 connected 5461-10922
292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f 127.0.0.1:30003@31003 master,fail - 0 1426238318243 3 disconnected 10923-16383
6ec23923021cf3ffec47632106199cb7f496ce01 127.0.0.1:30005@31005 slave,fail? 67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 0 1426238316232 5 connected
e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca :30001@31001 myself,master - 0 0 1 connected 0-5460 16384 [5460->-67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1] [77-<-292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f]
garbage line
`

func TestParse(t *testing.T) {
	ns := Parse(reply, "10.0.0.9")
	if len(ns) != 5 {
		t.Fatalf("%d nodes, want 5 (the garbage line skipped)", len(ns))
	}
	rep, m2, m3, rep5, me := &ns[0], &ns[1], &ns[2], &ns[3], &ns[4]
	if rep.Addr != "127.0.0.1:30004" || rep.IsMaster() || rep.Master != me.ID || !rep.Usable() || rep.Failed() {
		t.Errorf("replica: %+v", rep)
	}
	if !m2.IsMaster() || len(m2.Owned) != 5462 || !m2.Serves(5461) || m2.Serves(5460) || m2.SlotText() != "5461-10922" {
		t.Errorf("master 2: %s", m2.SlotText())
	}
	if m3.Usable() || !m3.Failed() {
		t.Errorf("a master flagged fail is usable or not failed: %+v", m3.Flags)
	}
	if !rep5.Usable() || !rep5.Failed() {
		t.Errorf("fail? (suspected only): usable for a walk, failed for diagnosis; got usable %v failed %v", rep5.Usable(), rep5.Failed())
	}
	if me.Addr != "10.0.0.9:30001" || !me.Has("myself") || me.Failed() || !slices.Equal(me.Migrating, []int{5460}) || !slices.Equal(me.Importing, []int{77}) || me.SlotText() != "0-5460" {
		t.Errorf("myself: addr %q migrating %v importing %v slots %s", me.Addr, me.Migrating, me.Importing, me.SlotText())
	}
	if (&Node{}).SlotText() != "none" || Ranges([]int{7, 1, 2, 3, 3}) != "1-3,7" || Ranges(nil) != "" {
		t.Errorf("ranges: %q %q", Ranges([]int{7, 1, 2, 3, 3}), Ranges(nil))
	}
}

func FuzzParse(f *testing.F) {
	f.Add(reply, "h")
	f.Add("x 1.2.3.4:5@6 master - 0 0 1 connected 9-3 a-b [1-<-x] 7\n\n", "")
	f.Fuzz(func(t *testing.T, text, seed string) {
		for _, n := range Parse(text, seed) {
			if strings.Contains(n.Addr, "@") {
				t.Fatalf("addr %q keeps the cluster bus port", n.Addr)
			}
			if !slices.IsSorted(n.Owned) {
				t.Fatalf("slots out of order: %v", n.Owned)
			}
			for _, s := range n.Owned {
				if s < 0 || s >= 16384 || !n.Serves(s) {
					t.Fatalf("slot %d", s)
				}
			}
			if got := Ranges(n.Owned); len(n.Owned) > 0 && got == "" {
				t.Fatal("no ranges for owned slots")
			}
		}
	})
}

func TestMine(t *testing.T) {
	me, master := Mine(reply)
	if me == nil || master != me || me.SlotText() != "0-5460" || !slices.Equal(me.Migrating, []int{5460}) {
		t.Fatalf("a master's own lines: %+v %+v", me, master)
	}
	// The replica 30004 seen from itself: its master's line decides.
	asReplica := strings.Replace(strings.Replace(reply, "myself,master", "master", 1), "127.0.0.1:30004@31004,host4 slave", "127.0.0.1:30004@31004,host4 myself,slave", 1)
	me, master = Mine(asReplica)
	if me == nil || me.Addr != "127.0.0.1:30004" || master == nil || master.SlotText() != "0-5460" {
		t.Fatalf("a replica's own lines: %+v %+v", me, master)
	}
	if me, _ := Mine("x y z"); me != nil {
		t.Fatal("no myself line: a node")
	}
}

func TestAlone(t *testing.T) {
	ns := Parse(reply, "10.0.0.9")
	if masters, owned, ok := Alone(ns); !ok || masters != 3 || Ranges(owned) != "0-5460" {
		t.Errorf("a master: %d masters, slots %s, ok %v", masters, Ranges(owned), ok)
	}
	// The same Cluster seen from the replica of 127.0.0.1:30001.
	asReplica := strings.Replace(strings.Replace(reply, "slave e7d1", "myself,slave e7d1", 1), "myself,master", "master", 1)
	if masters, owned, ok := Alone(Parse(asReplica, "")); !ok || masters != 3 || Ranges(owned) != "0-5460" {
		t.Errorf("a replica: %d masters, slots %s, ok %v; want its master's", masters, Ranges(owned), ok)
	}
	// Its master not listed: it serves nothing.
	orphan := strings.Replace(asReplica, "e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca :30001", "0000000000000000000000000000000000000000 :30001", 1)
	if _, owned, ok := Alone(Parse(orphan, "")); !ok || owned != nil {
		t.Errorf("a replica of an unlisted master: slots %v ok %v", owned, ok)
	}
	if _, _, ok := Alone(Parse(strings.Replace(reply, "myself,", "", 1), "")); ok {
		t.Error("no line marked myself: ok")
	}
}
