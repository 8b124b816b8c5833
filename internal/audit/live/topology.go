package live

import (
	"cmp"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/keyguard/keyguard/internal/human"
	"github.com/keyguard/keyguard/internal/keyslot"
	"github.com/keyguard/keyguard/internal/topology"
)

// clusterNode is one line of CLUSTER NODES.
type clusterNode = topology.Node

func parseClusterNodes(text, seedHost string) []clusterNode { return topology.Parse(text, seedHost) }

// slotCount is the number of hash slots of a Cluster.
const slotCount = keyslot.Slots

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

// Replication reads the text of INFO (or INFO replication): the node's
// role ("master" or "slave") and the addresses of its online replicas, in
// the order it lists them (none when it has none).
func Replication(text string) (role string, replicas []string) {
	in := parseInfo(text)
	return in["role"], in.replicas()
}

// InfoField reads one field of the text of INFO ("" when absent):
// InfoField(text, "maxmemory_policy").
func InfoField(text, name string) string { return parseInfo(text)[name] }

// ChildAtWork reads the text of INFO (or INFO persistence): what the
// server's child process is doing, for people ("a save or a
// replica's sync"), and since when ("begun 12s ago, the last
// took 1m37s"); "" when it has none. A server forks one child at a time:
// a replica's sync (or keyguard audit --snapshot) asked for meanwhile
// waits for it to end.
func ChildAtWork(text string) (kind, since string) {
	in := parseInfo(text)
	times := func(now, last string) string {
		var s []string
		if n, err := strconv.Atoi(in[now]); err == nil && n >= 0 {
			s = append(s, "begun "+human.Duration(time.Duration(n)*time.Second)+" ago")
		}
		if n, err := strconv.Atoi(in[last]); err == nil && n >= 0 {
			s = append(s, "the last took "+human.Duration(time.Duration(n)*time.Second))
		}
		return strings.Join(s, ", ")
	}
	switch {
	case in["rdb_bgsave_in_progress"] == "1":
		// A BGSAVE, or the snapshot of a replica's sync.
		return "a save or a replica's sync", times("rdb_current_bgsave_time_sec", "rdb_last_bgsave_time_sec")
	case in["aof_rewrite_in_progress"] == "1":
		return "an append-only file rewrite", times("aof_current_rewrite_time_sec", "aof_last_rewrite_time_sec")
	case in["module_fork_in_progress"] == "1":
		return "a module's child process", ""
	}
	return "", ""
}

// stale says why what a replica answers may be older than its master's
// keys (its link to the master is down, or it is loading a full sync), or
// "" for a master or a replica in sync. Such a replica still answers
// reads (replica-serve-stale-data, the default) with what it held.
func (in info) stale(addr string) string {
	if in["role"] != "slave" {
		return ""
	}
	master := net.JoinHostPort(in["master_host"], in["master_port"])
	switch {
	case in["master_sync_in_progress"] == "1":
		return fmt.Sprintf("%s is a replica in the middle of a full sync from its master %s: it answered with the keys it held before, which may be older than the master's", addr, master)
	case in["master_link_status"] == "down":
		since := ""
		if n, err := strconv.Atoi(in["master_link_down_since_seconds"]); err == nil && n >= 0 {
			since = " for " + human.Duration(time.Duration(n)*time.Second)
		}
		return fmt.Sprintf("%s is a replica whose link to its master %s was down%s: it answered with the keys it held then, which may be older than the master's", addr, master, since)
	}
	return ""
}

// replicas returns the addresses of the online replicas listed in the
// replication section ("slave0:ip=10.0.0.2,port=6380,state=online,…"), in
// its order: where the master sees each connect from, and the port it
// announces.
func (in info) replicas() []string {
	var out []string
	for i := 0; ; i++ {
		v, ok := in["slave"+strconv.Itoa(i)]
		if !ok {
			return out
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
			out = append(out, net.JoinHostPort(ip, port))
		}
	}
}

// notItsReplica says why a server reached at a replica's listed address
// (its INFO in) is not a replica of the master whose INFO is master, or
// "" when it is one: a replica in sync shares its master's replication
// ID. A listed address can lead elsewhere (another network's address, a
// port forwarded to another server); walking what answers there would
// report another server's keys as the master's.
func notItsReplica(master, in info) string {
	switch {
	case in["role"] != "slave":
		return "it answers as a " + cmp.Or(in["role"], "server") + ", not as a replica"
	case master["master_replid"] != "" && in["master_replid"] != master["master_replid"]:
		return "it is a replica of another master (replication ID " + short(in["master_replid"]) + ", the master's " + short(master["master_replid"]) + ")"
	}
	return ""
}
