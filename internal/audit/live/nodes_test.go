package live

import (
	"reflect"
	"strings"
	"testing"

	"github.com/keyguard/keyguard/internal/topology"
)

const nodesReply = `7fe20069308c4f8ea0301ba676dffb7ef1acf295 127.0.0.1:31996@41996 master - 0 1796175307901 2 connected 5461-10922
f3e532d31d2410dba180b165e63ed73f6dd2eb78 127.0.0.1:31995@41995 myself,master - 0 1796175306000 1 connected 0-5460 [77->-7fe20069308c4f8ea0301ba676dffb7ef1acf295]
e0425563f0bbd53032f3f9930debdaec4d4171fa 127.0.0.1:31997@41997 master - 0 1796175307000 3 connected 10923-16383
07c37dfeb235213a872192d90877d0cd55635b91 127.0.0.1:30004@31004,host4 slave f3e532d31d2410dba180b165e63ed73f6dd2eb78 0 1426238317239 4 connected
`

// replaceField returns text with field f (from 0) of line l replaced.
func replaceField(text string, l, f int, v string) string {
	lines := strings.Split(text, "\n")
	fs := strings.Fields(lines[l])
	fs[f] = v
	lines[l] = strings.Join(fs, " ")
	return strings.Join(lines, "\n")
}

// The reply after a gossip round differs in ping and pong times and the
// config epoch only: the same; a change to any field Mine reads is not.
func TestSameNodes(t *testing.T) {
	if !sameNodes([]byte(nodesReply), []byte(nodesReply)) {
		t.Fatal("a reply differs from itself")
	}
	for l := range 4 {
		for f := range 9 {
			if l == 3 && f == 8 {
				continue // a replica's line has 8 fields
			}
			changed := replaceField(nodesReply, l, f, "x1")
			if got, want := sameNodes([]byte(nodesReply), []byte(changed)), f >= 4 && f <= 6; got != want {
				t.Errorf("line %d field %d changed: same %v, want %v", l, f, got, want)
			}
		}
	}
	for _, other := range []string{
		nodesReply[:len(nodesReply)-1],                // no last newline: Mine reads the same
		strings.ReplaceAll(nodesReply, " ", "  "),     // runs of spaces
		strings.ReplaceAll(nodesReply, "\n", " \r\n"), // CRLF
	} {
		if !sameNodes([]byte(nodesReply), []byte(other)) {
			t.Errorf("same fields, split otherwise, differ:\n%q", other)
		}
	}
	for _, other := range []string{
		nodesReply + "f00 127.0.0.1:1@2 master - 0 0 9 connected\n", // a line more
		strings.Replace(nodesReply, "0-5460", "0-5459", 1),
		strings.Replace(nodesReply, " [77->-7fe20069308c4f8ea0301ba676dffb7ef1acf295]", "", 1),
		strings.Replace(nodesReply, "myself,master", "myself,slave", 1),
		strings.Replace(nodesReply, "connected 0-5460", "connected\u00a00-5460", 1), // a space to Fields, not ASCII
	} {
		if sameNodes([]byte(nodesReply), []byte(other)) {
			t.Errorf("a change Mine reads is the same:\n%q", other)
		}
	}
}

// FuzzSameNodes: two replies sameNodes calls the same are the same to
// topology.Mine, the parser whose work it saves.
func FuzzSameNodes(f *testing.F) {
	f.Add(nodesReply, replaceField(nodesReply, 1, 5, "1796175307999"))
	f.Add(nodesReply, replaceField(nodesReply, 1, 8, "0-5461"))
	f.Add("a b myself,master - 0 0 1 connected 1-2\n", "a b myself,master - 1 1 1 connected 1-2")
	f.Add("a b\vmyself,master - 0 0 1 connected 1-2", "a b\vmyself,master - 0 0 1 disconnected 1-2")
	f.Fuzz(func(t *testing.T, a, b string) {
		if !sameNodes([]byte(a), []byte(b)) {
			return
		}
		meA, masterA := topology.Mine(a)
		meB, masterB := topology.Mine(b)
		if !reflect.DeepEqual(meA, meB) || !reflect.DeepEqual(masterA, masterB) {
			t.Fatalf("same to sameNodes, not to Mine:\n%q\n%q", a, b)
		}
	})
}

// A walker's CLUSTER NODES memory answers as a parse of each reply does.
func TestNodesSeenAgrees(t *testing.T) {
	p := &nodePlan{}
	var ns nodesSeen
	chunk := []int{0, 77, 5460, 5461}
	for i, text := range []string{
		nodesReply,
		replaceField(nodesReply, 1, 5, "1796175309999"),
		strings.Replace(nodesReply, " [77->-7fe20069308c4f8ea0301ba676dffb7ef1acf295]", "", 1),
		strings.Replace(nodesReply, "0-5460", "0-5461", 1),
		strings.Replace(nodesReply, "myself,master", "myself,slave", 1),
		nodesReply,
	} {
		bad, lost := ns.notServed([]byte(text), chunk, p)
		me, master := topology.Mine(text)
		wantBad, wantLost := served(me, master, chunk, p)
		if !reflect.DeepEqual(bad, wantBad) || lost != wantLost {
			t.Errorf("reply %d: bad %v lost %v, a parse says %v %v", i, bad, lost, wantBad, wantLost)
		}
	}
}
