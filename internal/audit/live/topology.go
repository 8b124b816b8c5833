package live

import (
	"net"
	"slices"
	"strconv"
	"strings"
)

// clusterNode is one line of CLUSTER NODES.
type clusterNode struct {
	id     string
	addr   string // host:port, "" when the node has no address
	master string // the master's id for a replica, "" for a master
	flags  []string
	slots  int // slots served (ranges counted; importing/migrating markers ignored)
	owned  []int
	// migrating are the slots this node is moving away ([slot->-id]),
	// as only the node itself knows them (the "myself" line).
	migrating []int
	linked    bool
}

func (n *clusterNode) has(flag string) bool {
	for _, f := range n.flags {
		if f == flag {
			return true
		}
	}
	return false
}

// usable is a node the cluster does not consider failed and that has an
// address.
func (n *clusterNode) usable() bool {
	return n.addr != "" && !n.has("fail") && !n.has("noaddr") && !n.has("handshake")
}

// parseClusterNodes parses the reply of CLUSTER NODES. seedHost replaces
// an empty host (a node that does not know its own address yet). Lines it
// cannot read are skipped: the caller checks that masters were found.
func parseClusterNodes(text, seedHost string) []clusterNode {
	var out []clusterNode
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 8 {
			continue
		}
		n := clusterNode{id: f[0], flags: strings.Split(f[2], ","), linked: f[7] == "connected"}
		if f[3] != "-" {
			n.master = f[3]
		}
		// ip:port@cport[,hostname]
		a, _, _ := strings.Cut(f[1], "@")
		a, _, _ = strings.Cut(a, ",")
		if i := strings.LastIndexByte(a, ':'); i >= 0 {
			host, port := a[:i], a[i+1:]
			host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
			if p, err := strconv.Atoi(port); err == nil && p > 0 && p < 65536 {
				if host == "" {
					host = seedHost
				}
				n.addr = net.JoinHostPort(host, port)
			}
		}
		for _, s := range f[8:] {
			if strings.HasPrefix(s, "[") { // [slot->-id] migrating / [slot-<-id] importing
				if slot, _, ok := strings.Cut(s[1:], "->-"); ok {
					if x, err := strconv.Atoi(slot); err == nil {
						n.migrating = append(n.migrating, x)
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
			if err1 == nil && err2 == nil && b >= a && a >= 0 && b < slotCount {
				n.slots += b - a + 1
				for x := a; x <= b; x++ {
					n.owned = append(n.owned, x)
				}
			}
		}
		out = append(out, n)
	}
	return out
}

// slotCount is the number of hash slots of a Cluster.
const slotCount = 16384

// info is the parsed reply of INFO: "field:value" lines.
type info map[string]string

func parseInfo(text string) info {
	m := info{}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, "\r")
		if line == "" || line[0] == '#' {
			continue
		}
		if k, v, ok := strings.Cut(line, ":"); ok {
			m[k] = v
		}
	}
	return m
}

// keys is the number of keys in db from the keyspace section
// ("db0:keys=12,expires=3,avg_ttl=0"); 0 when the db is empty.
func (in info) keys(db int) int64 {
	v := in["db"+strconv.Itoa(db)]
	for _, kv := range strings.Split(v, ",") {
		if k, n, ok := strings.Cut(kv, "="); ok && k == "keys" {
			x, _ := strconv.ParseInt(n, 10, 64)
			return x
		}
	}
	return 0
}

// dbs are the databases that hold keys, from the keyspace section, in
// order.
func (in info) dbs() []int {
	var out []int
	for k := range in {
		n, ok := strings.CutPrefix(k, "db")
		if !ok {
			continue
		}
		db, err := strconv.Atoi(n)
		if err == nil && db >= 0 && in.keys(db) > 0 {
			out = append(out, db)
		}
	}
	slices.Sort(out)
	return out
}

// version is redis_version as major*100+minor (7.2 → 702); 0 unknown.
func (in info) version() int {
	parts := strings.Split(in["redis_version"], ".")
	if len(parts) < 2 {
		return 0
	}
	ma, err1 := strconv.Atoi(parts[0])
	mi, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return 0
	}
	return ma*100 + mi
}

// lfu reports whether the eviction policy keeps LFU counters.
func (in info) lfu() bool { return strings.Contains(in["maxmemory_policy"], "lfu") }

// replica returns the address of the first online replica listed in the
// replication section ("slave0:ip=10.0.0.2,port=6380,state=online,…").
func (in info) replica() string {
	for i := 0; ; i++ {
		v, ok := in["slave"+strconv.Itoa(i)]
		if !ok {
			return ""
		}
		var ip, port, state string
		for _, kv := range strings.Split(v, ",") {
			k, x, _ := strings.Cut(kv, "=")
			switch k {
			case "ip":
				ip = x
			case "port":
				port = x
			case "state":
				state = x
			}
		}
		if ip != "" && port != "" && state == "online" {
			return net.JoinHostPort(ip, port)
		}
	}
}
