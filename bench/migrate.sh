#!/usr/bin/env bash
# migrate.sh — copy throughput of keyguard migrate copy against a plain
# redis-cli pipeline, on one redis-server and on a 3-master Cluster.
#
#   bench/migrate.sh                   # 1,000,000 keys, standalone then cluster
#   N=100000 bench/migrate.sh          # a quick run
#   CLUSTER=0 bench/migrate.sh
#
# Keys are strings of 100 bytes with a TTL of one hour (SET … PX), loaded
# with redis-cli --pipe into throwaway servers on free loopback ports (for
# the Cluster, one file per master's slot range, written by a few lines of
# Python that compute each key's slot). Every measurement starts from a
# fresh load (FLUSHALL, load), so each copy sees the same keyspace. Each is
# run once: wall time and peak RSS of the client (/usr/bin/time -v) and the
# CPU seconds the server(s) spent (INFO cpu).
#
#   standalone:
#     (a) redis-cli --scan --pattern 'bench:old:*' | awk '{…"COPY" old new}' | redis-cli --pipe
#     (b) keyguard migrate copy --from 'bench:old:{id:int}' --to 'bench:new:{id:int}'
#     (c) keyguard migrate verify, then (d) keyguard migrate cleanup --confirm, of (b)'s copy
#   cluster:
#     (e) redis-cli --scan | awk COPY | redis-cli --pipe, per master, all at once, on
#         keys whose old and new names share a hash tag (COPY refuses two slots)
#     (f) keyguard migrate copy of the same keys (one slot: COPY)
#     (g) keyguard migrate copy of keys whose new names are in other slots
#         (DUMP, PEXPIRETIME, RESTORE … ABSTTL), which (e) cannot do
set -euo pipefail

N=${N:-1000000}
CLUSTER=${CLUSTER:-1}
root=$(cd "$(dirname "$0")/.." && pwd)
for b in redis-server redis-cli go python3 bc; do
	command -v $b >/dev/null || { echo "migrate.sh: $b not found" >&2; exit 2; }
done
[ -x /usr/bin/time ] || { echo "migrate.sh: /usr/bin/time not found (apt-get install time)" >&2; exit 2; }

work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT

echo "building..." >&2
(cd "$root" && go build -o "$work/keyguard" ./cmd/keyguard)
cat >"$work/keyguard.yaml" <<'EOF'
version: 1
separator: ":"
domains:
  bench: {owner: bench-team}
keys:
  - {key: "bench:old:{id:int}", type: string, ttl: 1h}
  - {key: "bench:new:{id:int}", type: string, ttl: 1h}
  - {key: "bench:{{t{id:int}}}:old", type: string, ttl: 1h}
  - {key: "bench:{{t{id:int}}}:new", type: string, ttl: 1h}
EOF

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

start_redis() { # DIR PORT [ARGS...]
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

# gen FORMAT [SLOTS]: RESP SET commands for N keys named printf(FORMAT, i);
# with SLOTS ("0-5460,5461-10922,10923-16383") one file per range,
# $work/keys.0 …, else stdout.
gen() {
	python3 - "$N" "$1" "${2:-}" "$work/keys" <<'PY'
import sys
n, fmt, slots, out = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
tab = []
for i in range(256):
    c = i << 8
    for _ in range(8):
        c = ((c << 1) ^ 0x1021) if c & 0x8000 else (c << 1)
    tab.append(c & 0xFFFF)
def slot(k):
    s = k.find(b"{")
    if s >= 0:
        e = k.find(b"}", s + 1)
        if e > s + 1:
            k = k[s + 1:e]
    c = 0
    for b in k:
        c = ((c << 8) & 0xFFFF) ^ tab[(c >> 8) ^ b]
    return c & 16383
ranges = [tuple(map(int, r.split("-"))) for r in slots.split(",")] if slots else []
files = [open(f"{out}.{i}", "wb") for i in range(len(ranges))] or [sys.stdout.buffer]
val = b"v" * 100
for i in range(n):
    k = (fmt % i).encode()
    cmd = b"*5\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$100\r\n%s\r\n$2\r\nPX\r\n$7\r\n3600000\r\n" % (len(k), k, val)
    if ranges:
        s = slot(k)
        files[next(j for j, (a, b) in enumerate(ranges) if a <= s <= b)].write(cmd)
    else:
        files[0].write(cmd)
for f in files:
    f.flush()
PY
}

server_cpu() { # used_cpu_user + used_cpu_sys summed over the ports
	local s=0 p
	for p in "$@"; do
		s=$(redis-cli -p "$p" info cpu | awk -F: -v s="$s" '/^used_cpu_(user|sys):/{s+=$2} END{print s}')
	done
	echo "$s"
}

# measure LABEL PORTS CMD...: one timed run; prints a markdown row.
measure() {
	local label=$1 ports=$2
	shift 2
	local before after
	before=$(server_cpu $ports)
	/usr/bin/time -v -o "$work/time.txt" "$@" >"$work/out.txt" 2>"$work/err.txt" || {
		if ! grep -q "exit status 1" "$work/time.txt"; then # verify/cleanup exit 1 on mismatches
			echo "migrate.sh: $label failed:" >&2
			cat "$work/err.txt" >&2
			exit 1
		fi
	}
	after=$(server_cpu $ports)
	local wall rss
	wall=$(awk -F': ' '/Elapsed \(wall clock\)/{n=split($2,t,":"); s=0; for(i=1;i<=n;i++) s=s*60+t[i]; print s}' "$work/time.txt")
	rss=$(awk -F': ' '/Maximum resident set size/{print $2}' "$work/time.txt")
	printf "| %s | %.2f s | %s keys/s | %.1f MB | %.2f s |\n" "$label" "$wall" \
		"$(printf "%.0f" "$(echo "$N / $wall" | bc -l)" | sed ':a;s/\B[0-9]\{3\}\>/,&/;ta')" \
		"$(echo "$rss / 1024" | bc -l)" "$(echo "$after - $before" | bc -l)"
}

header() {
	echo
	echo "### $1, $N keys"
	echo
	echo "| run | wall | keys/s | client peak RSS | server CPU |"
	echo "|---|---|---|---|---|"
}

count() { # PATTERN PORTS...: keys matching PATTERN on the ports
	local pat=$1 total=0 p
	shift
	for p in "$@"; do
		total=$((total + $(redis-cli -p "$p" --scan --pattern "$pat" | wc -l)))
	done
	echo "$total"
}

kg=("$work/keyguard" migrate) # then STEP … and the flags below
kgflags=(--registry "$work/keyguard.yaml" --progress never)

# --- standalone -----------------------------------------------------------
port=$(free_port)
start_redis "$work/single" "$port"
load_single() {
	redis-cli -p "$port" flushall >/dev/null
	gen 'bench:old:%d' | redis-cli -p "$port" --pipe >/dev/null
	echo "dbsize $(redis-cli -p "$port" dbsize)" >&2
}
url="redis://127.0.0.1:$port"
header "Standalone redis-server"
load_single
measure "(a) redis-cli --scan \\| awk COPY \\| redis-cli --pipe" "$port" bash -c \
	"redis-cli -p $port --scan --pattern 'bench:old:*' | awk '{k=\$0; sub(/^bench:old:/, \"bench:new:\", k); printf \"COPY %s %s\\r\\n\", \$0, k}' | redis-cli -p $port --pipe"
echo "  (a) copied: $(count 'bench:new:*' "$port")" >&2
load_single
measure "(b) keyguard migrate copy" "$port" "${kg[@]}" copy "${kgflags[@]}" --from 'bench:old:{id:int}' --to 'bench:new:{id:int}' --redis "$url"
echo "  (b) copied: $(count 'bench:new:*' "$port")" >&2
measure "(c) keyguard migrate verify" "$port" "${kg[@]}" verify "${kgflags[@]}" --from 'bench:old:{id:int}' --to 'bench:new:{id:int}' --redis "$url"
grep -h "verified" "$work/out.txt" >&2 || true
measure "(d) keyguard migrate cleanup --confirm" "$port" "${kg[@]}" cleanup "${kgflags[@]}" --confirm --from 'bench:old:{id:int}' --to 'bench:new:{id:int}' --redis "$url"
echo "  (d) old keys left: $(count 'bench:old:*' "$port")" >&2
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
slots=""
for p in "${cports[@]}"; do
	r=$(redis-cli -p "$p" cluster nodes | awk '/myself/{print $9}')
	slots="$slots${slots:+,}$r"
done
load_cluster() { # FORMAT
	for p in "${cports[@]}"; do redis-cli -p "$p" flushall >/dev/null; done
	gen "$1" "$slots"
	for i in 0 1 2; do redis-cli -p "${cports[$i]}" --pipe <"$work/keys.$i" >/dev/null & done
	wait
	rm -f "$work"/keys.*
	echo "cluster keys $(for p in "${cports[@]}"; do redis-cli -p "$p" dbsize; done | paste -sd+ | bc)" >&2
}
curl="redis://127.0.0.1:${cports[0]}"
header "3-master Cluster"
load_cluster 'bench:{t%d}:old'
measure "(e) per master: redis-cli --scan \\| awk COPY \\| redis-cli --pipe, in parallel (one slot)" "${cports[*]}" bash -c \
	"for p in ${cports[*]}; do redis-cli -p \$p --scan --pattern 'bench:{t*}:old' | awk '{k=\$0; sub(/:old\$/, \":new\", k); printf \"COPY %s %s\\r\\n\", \$0, k}' | redis-cli -p \$p --pipe >/dev/null & done; wait"
echo "  (e) copied: $(count 'bench:{t*}:new' "${cports[@]}")" >&2
load_cluster 'bench:{t%d}:old'
measure "(f) keyguard migrate copy (one slot: COPY)" "${cports[*]}" "${kg[@]}" copy "${kgflags[@]}" --cluster --redis "$curl" --from 'bench:{{t{id:int}}}:old' --to 'bench:{{t{id:int}}}:new'
echo "  (f) copied: $(count 'bench:{t*}:new' "${cports[@]}")" >&2
load_cluster 'bench:old:%d'
measure "(g) keyguard migrate copy (two slots: DUMP + RESTORE ABSTTL)" "${cports[*]}" "${kg[@]}" copy "${kgflags[@]}" --cluster --redis "$curl" --from 'bench:old:{id:int}' --to 'bench:new:{id:int}'
echo "  (g) copied: $(count 'bench:new:*' "${cports[@]}")" >&2
