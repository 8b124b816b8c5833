#!/usr/bin/env bash
# audit.sh — wall time, peak RSS and server CPU of three ways to walk a
# keyspace, on one redis-server and on a 3-master Cluster:
#
#   (a) redis-cli --memkeys          (the tool shipped with Redis; per node)
#   (b) bench/auditbare              (pipelined SCAN+TYPE+PTTL+MEMORY USAGE, no classification: the floor)
#   (c) keyguard audit --format json (everything: classification, findings, report)
#
#   bench/audit.sh                   # 1,000,000 keys, 3 repetitions, standalone then cluster
#   N=100000 REPS=1 bench/audit.sh   # a quick run
#   N=5000000 REPS=1 CLUSTER=0 bench/audit.sh
#
# Keys: bench/auditgen's mix (internal/audit/live/testdata/keyguard.yaml templates: 30%
# hashes, 10% guarded hashes, 25% JSON strings, 10% sessions, lists, sets,
# sorted sets, streams, and 10% that break a rule), loaded with
# redis-cli --pipe into throwaway servers on free loopback ports (for the
# Cluster, one file per master's slot range). Each repetition runs a, b, c
# back to back; the table gives the median and the best wall time, the
# largest peak RSS (/usr/bin/time -v; for the Cluster, (a) is run twice:
# three redis-cli one after the other, and three in parallel) and the
# median CPU seconds the
# server(s) spent (INFO cpu), which does not depend on what else the
# machine is doing.
set -euo pipefail

N=${N:-1000000}
REPS=${REPS:-3}
CLUSTER=${CLUSTER:-1}
root=$(cd "$(dirname "$0")/.." && pwd)
for b in redis-server redis-cli go bc; do
	command -v $b >/dev/null || { echo "audit.sh: $b not found" >&2; exit 2; }
done
[ -x /usr/bin/time ] || { echo "audit.sh: /usr/bin/time not found (apt-get install time)" >&2; exit 2; }

work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT

echo "building..." >&2
(cd "$root" && go build -o "$work/keyguard" ./cmd/keyguard && go build -o "$work/auditgen" ./bench/auditgen && go build -o "$work/auditbare" ./bench/auditbare)

free_port() {
	local p
	while :; do
		p=$((20000 + RANDOM % 40000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null && ! (exec 3<>"/dev/tcp/127.0.0.1/$((p + 10000))") 2>/dev/null; then
			echo "$p"
			return
		fi
	done
}

# start_redis DIR PORT [ARGS...]: a server in DIR; its pid goes in pids.
start_redis() {
	local dir=$1 port=$2
	shift 2
	mkdir -p "$dir"
	redis-server --port "$port" --bind 127.0.0.1 --dir "$dir" --save '' --appendonly no \
		--daemonize yes --logfile "$dir/redis.log" --pidfile "$dir/redis.pid" "$@"
	for _ in $(seq 100); do
		redis-cli -p "$port" ping >/dev/null 2>&1 && break
		sleep 0.1
	done
	pids+=("$(cat "$dir/redis.pid")")
}

server_cpu() { # sum of used_cpu_user + used_cpu_sys over the ports
	local s=0 p
	for p in "$@"; do
		s=$(redis-cli -p "$p" info cpu | awk -F: -v s="$s" '/^used_cpu_(user|sys):/{s+=$2} END{print s}')
	done
	echo "$s"
}

# measure NAME PORTS CMD...: one timed run; appends "wall rss cpu" to $work/NAME.
measure() {
	local name=$1 ports=$2
	shift 2
	local before after
	before=$(server_cpu $ports)
	/usr/bin/time -v -o "$work/time.txt" "$@" >"$work/$name.out" 2>"$work/$name.err" || {
		echo "audit.sh: $name failed:" >&2
		cat "$work/$name.err" >&2
		exit 1
	}
	after=$(server_cpu $ports)
	local wall rss
	wall=$(awk -F': ' '/Elapsed \(wall clock\)/{n=split($2,t,":"); s=0; for(i=1;i<=n;i++) s=s*60+t[i]; print s}' "$work/time.txt")
	rss=$(awk -F': ' '/Maximum resident set size/{print $2}' "$work/time.txt")
	echo "$wall $rss $(echo "$after - $before" | bc -l)" >>"$work/$name"
}

# row NAME LABEL BASE: a markdown row from the runs of NAME; BASE is the
# median wall time of (b), for the ratio column.
median() { sort -n | awk '{a[NR]=$1} END{if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
row() {
	local name=$1 label=$2 base=$3
	local med best rss cpu
	med=$(awk '{print $1}' "$work/$name" | median)
	best=$(awk '{print $1}' "$work/$name" | sort -n | head -1)
	rss=$(awk '{print $2}' "$work/$name" | sort -n | tail -1)
	cpu=$(awk '{print $3}' "$work/$name" | median)
	printf "| %s | %.2f s | %.2f s | %.2f× | %.1f MB | %.2f s |\n" "$label" "$med" "$best" "$(echo "$med / $base" | bc -l)" "$(echo "$rss / 1024" | bc -l)" "$cpu"
}

table() { # KIND PORTS...
	local kind=$1
	echo
	echo "### $kind, $N keys, $REPS repetition(s)"
	echo
	echo "| walker | wall (median) | wall (best) | vs (b) | peak RSS | server CPU |"
	echo "|---|---|---|---|---|---|"
	local base
	base=$(awk '{print $1}' "$work/b" | median)
	if [ -s "$work/s" ]; then
		row s "(a) redis-cli --memkeys, node after node" "$base"
		row a "(a) redis-cli --memkeys, all nodes in parallel" "$base"
	else
		row a "(a) redis-cli --memkeys" "$base"
	fi
	row b "(b) bare pipelined SCAN+TYPE+PTTL+MEMORY USAGE" "$base"
	row c "(c) keyguard audit --format json" "$base"
	echo
	echo "keys seen: (b) $(awk '{print $4}' "$work/b.out"), (c) $(awk -F'"keys": ' '/"summary"/{f=1} f&&/"keys"/{print $2; exit}' "$work/c.json" | tr -d ,)"
}

registry="$root/internal/audit/live/testdata/keyguard.yaml"

# --- standalone -----------------------------------------------------------
port=$(free_port)
start_redis "$work/single" "$port"
echo "loading $N keys into 127.0.0.1:$port..." >&2
"$work/auditgen" -n "$N" | redis-cli -p "$port" --pipe >/dev/null
echo "dbsize $(redis-cli -p "$port" dbsize)" >&2
rm -f "$work/a" "$work/b" "$work/c"
for i in $(seq "$REPS"); do
	echo "standalone repetition $i/$REPS..." >&2
	measure a "$port" redis-cli -p "$port" --memkeys
	measure b "$port" "$work/auditbare" -addr "127.0.0.1:$port"
	measure c "$port" "$work/keyguard" audit --registry "$registry" --redis "redis://127.0.0.1:$port" --format json --out "$work/c.json" --fail-on never
done
table "Standalone redis-server" "$port"
redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true

[ "$CLUSTER" = 1 ] || exit 0

# --- 3-master Cluster -----------------------------------------------------
cports=()
for i in 0 1 2; do
	p=$(free_port)
	cports+=("$p")
	start_redis "$work/node$i" "$p" --cluster-enabled yes --cluster-config-file nodes.conf --cluster-node-timeout 5000
done
redis-cli --cluster create "127.0.0.1:${cports[0]}" "127.0.0.1:${cports[1]}" "127.0.0.1:${cports[2]}" --cluster-replicas 0 --cluster-yes >/dev/null
for _ in $(seq 100); do
	ok=0
	for p in "${cports[@]}"; do
		redis-cli -p "$p" cluster info | grep -q 'cluster_state:ok' && ok=$((ok + 1))
	done
	[ $ok = 3 ] && break
	sleep 0.2
done
# One slot range per master, in the order of cports.
slots=""
for p in "${cports[@]}"; do
	r=$(redis-cli -p "$p" cluster nodes | awk '/myself/{print $9}')
	slots="$slots${slots:+,}$r"
done
echo "loading $N keys into the cluster ($slots)..." >&2
"$work/auditgen" -n "$N" -slots "$slots" -out "$work/keys"
for i in 0 1 2; do
	redis-cli -p "${cports[$i]}" --pipe <"$work/keys.$i" >/dev/null &
done
wait
rm -f "$work"/keys.*
total=0
for p in "${cports[@]}"; do total=$((total + $(redis-cli -p "$p" dbsize))); done
echo "cluster dbsize $total" >&2
rm -f "$work/a" "$work/b" "$work/c" "$work/s"
for i in $(seq "$REPS"); do
	echo "cluster repetition $i/$REPS..." >&2
	# redis-cli --memkeys walks one node: a Cluster takes one run per
	# master, one after the other (what one redis-cli does) or all at once.
	measure s "${cports[*]}" bash -c "for p in ${cports[*]}; do redis-cli -p \$p --memkeys >/dev/null; done"
	measure a "${cports[*]}" bash -c "for p in ${cports[*]}; do redis-cli -p \$p --memkeys >/dev/null & done; wait"
	measure b "${cports[*]}" "$work/auditbare" -cluster -addr "127.0.0.1:${cports[0]}"
	measure c "${cports[*]}" "$work/keyguard" audit --registry "$registry" --cluster --redis "redis://127.0.0.1:${cports[0]}" --format json --out "$work/c.json" --fail-on never
done
table "3-master Cluster" "${cports[@]}"
