// Package topology reads a Redis Cluster's CLUSTER NODES reply: the one
// parser of it for every walker (the live audit plans its slots with it)
// and for connection diagnosis (which master is down, and does it serve
// the key's slot).
//
//	nodes := topology.Parse(reply, "10.0.0.1")
//	for _, n := range nodes { if n.IsMaster() && n.Usable() { ... n.Owned ... } }
//
// It imports only internal/keyslot and sends no command: callers read the
// reply.
package topology

import (
	"slices"
	"strconv"
	"strings"

	"github.com/keyguard/keyguard/internal/keyslot"
)

// Node is one line of CLUSTER NODES.
type Node struct {
	ID     string
	Addr   string // host:port; "" when the node has no address
	Master string // the master's ID for a replica; "" for a master
	Flags  []string
	// Owned are the slots the node serves, ascending (importing and
	// migrating markers left out).
	Owned []int
	// Migrating are the slots this node is moving away ([slot->-id]), as
	// only the node itself lists them (on its "myself" line).
	Migrating []int
	// Importing are the slots this node is taking in ([slot-<-id]), on
	// its "myself" line too.
	Importing []int
	Linked    bool // the link to the node is connected
}

// Has reports whether the node carries flag (myself, master, slave, fail,
// fail?, noaddr, handshake, …).
func (n *Node) Has(flag string) bool { return slices.Contains(n.Flags, flag) }

// IsMaster reports whether the node is a master.
func (n *Node) IsMaster() bool { return n.Has("master") }

// Usable is a node with an address that the cluster has not agreed to be
// failed: a walker may plan work on it. A node only suspected by one peer
// (fail?) is still usable; the walk finds out.
func (n *Node) Usable() bool {
	return n.Addr != "" && !n.Has("fail") && !n.Has("noaddr") && !n.Has("handshake")
}

// Failed is a node the reply gives any reason to distrust: agreed or
// suspected failed (fail, fail?), or its link down as seen from the node
// that answered. Diagnosis names such nodes.
func (n *Node) Failed() bool {
	return n.Has("fail") || n.Has("fail?") || (!n.Linked && !n.Has("myself"))
}

// Serves reports whether the node serves slot.
func (n *Node) Serves(slot int) bool {
	_, ok := slices.BinarySearch(n.Owned, slot)
	return ok
}

// SlotText writes the served slots as ranges: "0-5460", "1-3,7", "none".
func (n *Node) SlotText() string {
	if len(n.Owned) == 0 {
		return "none"
	}
	return Ranges(n.Owned)
}

// Ranges writes slots (any order, repeats allowed) as ascending ranges:
// "0-5460,5462"; "" for none.
func Ranges(slots []int) string {
	s := slices.Compact(slices.Sorted(slices.Values(slots)))
	var b strings.Builder
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] == s[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(s[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(s[j]))
		}
		i = j + 1
	}
	return b.String()
}

// Parse parses the reply of CLUSTER NODES: id addr flags master ping pong
// epoch link slot…, addr being ip:port@cport[,hostname]. seedHost replaces
// an empty host (a node that does not know its own address yet). Lines it
// cannot read are skipped: the caller checks that masters were found.
func Parse(text, seedHost string) []Node {
	var out []Node
	for line := range strings.Lines(text) {
		if f := strings.Fields(line); len(f) >= 8 {
			out = append(out, parseLine(f, seedHost))
		}
	}
	return out
}

// Mine parses only the lines a node needs to check itself after every
// batch of a walk: its own ("myself") and, when it is a replica, its
// master's. me is nil when no line is marked myself; master is me for a
// master, and nil for a replica whose master is not listed.
func Mine(text string) (me, master *Node) {
	for line := range strings.Lines(text) {
		if f := strings.Fields(line); len(f) >= 8 && slices.Contains(strings.Split(f[2], ","), "myself") {
			n := parseLine(f, "")
			me = &n
			break
		}
	}
	if me == nil || me.Master == "" {
		return me, me
	}
	for line := range strings.Lines(text) {
		if f := strings.Fields(line); len(f) >= 8 && f[0] == me.Master {
			n := parseLine(f, "")
			return me, &n
		}
	}
	return me, nil
}

// Alone is what one node, audited without the rest of its Cluster,
// covers of it: the masters that serve slots, and the slots of the
// node's shard (its own, or its master's for a replica; none when that
// master is not listed). ok is false when no line is marked myself.
func Alone(nodes []Node) (masters int, owned []int, ok bool) {
	var me *Node
	for i := range nodes {
		if nodes[i].Has("myself") {
			me = &nodes[i]
		}
		if nodes[i].IsMaster() && len(nodes[i].Owned) > 0 {
			masters++
		}
	}
	if me == nil {
		return masters, nil, false
	}
	if me.Master == "" {
		return masters, me.Owned, true
	}
	for _, n := range nodes {
		if n.ID == me.Master {
			return masters, n.Owned, true
		}
	}
	return masters, nil, true
}

// parseLine reads the fields of one line of CLUSTER NODES.
func parseLine(f []string, seedHost string) Node {
	n := Node{ID: f[0], Flags: strings.Split(f[2], ","), Linked: f[7] == "connected"}
	if f[3] != "-" {
		n.Master = f[3]
	}
	a, _, _ := strings.Cut(f[1], "@")
	a, _, _ = strings.Cut(a, ",")
	if i := strings.LastIndexByte(a, ':'); i >= 0 {
		host, port := a[:i], a[i+1:]
		host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
		if p, err := strconv.Atoi(port); err == nil && p > 0 && p < 65536 {
			if host == "" {
				host = seedHost
			}
			n.Addr = joinHostPort(host, port)
		}
	}
	for _, s := range f[8:] {
		if strings.HasPrefix(s, "[") { // [slot->-id] migrating, [slot-<-id] importing
			if slot, _, ok := strings.Cut(s[1:], "->-"); ok {
				if x, err := strconv.Atoi(slot); err == nil {
					n.Migrating = append(n.Migrating, x)
				}
			} else if slot, _, ok := strings.Cut(s[1:], "-<-"); ok {
				if x, err := strconv.Atoi(slot); err == nil {
					n.Importing = append(n.Importing, x)
				}
			}
			continue
		}
		lo, hi, isRange := strings.Cut(s, "-")
		a, err1 := strconv.Atoi(lo)
		b := a
		var err2 error
		if isRange {
			b, err2 = strconv.Atoi(hi)
		}
		if err1 == nil && err2 == nil && b >= a && a >= 0 && b < keyslot.Slots {
			for x := a; x <= b; x++ {
				n.Owned = append(n.Owned, x)
			}
		}
	}
	slices.Sort(n.Owned)
	return n
}

// joinHostPort is net.JoinHostPort without the net package (this package
// stays pure): an IPv6 host in brackets.
func joinHostPort(host, port string) string {
	if strings.Contains(host, ":") {
		return "[" + host + "]:" + port
	}
	return host + ":" + port
}
