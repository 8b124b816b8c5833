#!/usr/bin/env bash
# issue28.sh — the speed table of issue 28 in one run: keyguard, the floors
# and the peers on one keyspace, each row's commands run in turns (a, b, c,
# a, b, c…) so the machine's load falls on each alike, then one table of
# medians, the ratios the issue asks for, and whether each is met.
#
#   bench/issue28.sh FILE.rdb REPS KEYGUARD [HDT3213]
#
# FILE.rdb is the keyspace (for example `MIX=audit bench/rdb-gen.sh
# /tmp/audit-1m.rdb 1000000`); KEYGUARD a built binary (copy it with cp
# before: a binary run from the file `go build -o` wrote reads ~9 MiB more
# peak RSS); HDT3213 the path of HDT3213/rdb's `rdb` (built outside this
# repository from github.com/HDT3213/rdb; its row is left out without it).
# The script starts its own servers on free loopback ports: one
# redis-server loaded from the file, and a 3-master Cluster the keys are
# copied to (`redis-cli --cluster import … --cluster-copy`). The peers are
# the machine's redis-cli and sha256sum; the floors are bench/auditbare
# (built here). MEMKEYS=0 leaves out `redis-cli --memkeys` (~30 s a run on
# 1M keys), CLUSTER=0 the Cluster, HOT=0 the hot keys rows. BEFORE=PATH runs
# an earlier keyguard build in the same turns too (rows rdb-before,
# audit-before, audit-cluster-before, hotkeys-before) and adds a table of
# KEYGUARD against it.
#
# Rows, all with the registry internal/audit/live/testdata/keyguard.yaml:
#   rdb                  keyguard rdb FILE --format json --out /dev/null
#   rdb --fields=false   the same without the value formats
#   rdb --top 100000     the same with 100,000 top keys (against rdb's 50)
#   hdt3213              rdb -c memory -o /dev/null FILE
#   sha256sum            sha256sum FILE (reading the file: the floor)
#   audit                keyguard audit of the server, JSON to /dev/null
#   auditbare            the probes of an audit and nothing else
#   auditbare -fields    with the value formats' field probes
#   memkeys              redis-cli --memkeys
#   audit --cluster      keyguard audit --cluster of the 3 masters
#   auditbare -cluster
#   hotkeys              keyguard hotkeys --sample 0 --rate 0 (allkeys-lfu)
#   redis-cli --hotkeys
#   audit --snapshot     keyguard audit --snapshot: the server's snapshot over
#                        the replication link, on the server's default
#                        configuration (diskless, repl-diskless-sync-delay 5)
#   … -delay0            the same with repl-diskless-sync-delay 0
#   … -disk              the same with repl-diskless-sync no (the server
#                        writes its snapshot file first)
#   … -saves             server defaults with Redis's default save rules
#                        (and a save to disk done): keyguard asks for the
#                        snapshot written to disk first (no
#                        repl-diskless-sync-delay wait)
#   audit --cluster --snapshot (-delay0)
#   hotkeys --snapshot   keyguard hotkeys --snapshot (LFU counters from the
#                        snapshot), server defaults; -delay0 with
#                        repl-diskless-sync-delay 0
# Server CPU counts the server's children too (the snapshot's fork), read
# once no child is left.
# SNAPSHOT=0 leaves out the --snapshot rows.
set -euo pipefail

file=${1:?usage: issue28.sh FILE.rdb REPS KEYGUARD [HDT3213]}
reps=${2:?repetitions}
kg=${3:?a keyguard binary}
hdt=${4:-}
root=$(cd "$(dirname "$0")/.." && pwd)
reg=$root/internal/audit/live/testdata/keyguard.yaml
for t in /usr/bin/time redis-server redis-cli sha256sum python3; do
	command -v "$t" >/dev/null || { echo "issue28.sh: $t not found" >&2; exit 2; }
done
[ -x "$kg" ] || { echo "issue28.sh: $kg is not an executable" >&2; exit 2; }
kg=$(cd "$(dirname "$kg")" && pwd)/$(basename "$kg")
before=${BEFORE:-}
if [ -n "$before" ]; then
	[ -x "$before" ] || { echo "issue28.sh: BEFORE=$before is not an executable" >&2; exit 2; }
	before=$(cd "$(dirname "$before")" && pwd)/$(basename "$before")
fi
file=$(cd "$(dirname "$file")" && pwd)/$(basename "$file")

work=$(mktemp -d)
ports=()
cleanup() {
	for p in "${ports[@]}"; do redis-cli -p "$p" shutdown nosave >/dev/null 2>&1 || true; done
	rm -rf "$work"
}
trap cleanup EXIT INT TERM
# freeport prints a free loopback port; with "bus", one whose Cluster bus
# port (port + 10000) is free too.
freeport() {
	python3 - "${1:-}" <<'PY'
import socket, sys
while True:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    if sys.argv[1] != "bus":
        break
    if p + 10000 < 65536:
        b = socket.socket()
        try:
            b.bind(("127.0.0.1", p + 10000))
            break
        except OSError:
            pass
        finally:
            b.close()
    s.close()
print(p)
PY
}
# up PORT DIR waits for the server on PORT (started with its pid file and
# log in DIR) to answer, loading done; it stops the run with the end of the
# log if the server exits or has not answered in 10 minutes.
up() {
	for _ in $(seq 3000); do
		[ "$(redis-cli -p "$1" ping 2>/dev/null)" = PONG ] && return 0
		if [ -s "$2/pid" ] && ! kill -0 "$(cat "$2/pid")" 2>/dev/null; then
			break
		fi
		sleep 0.2
	done
	echo "issue28.sh: the server on port $1 did not start: $(tail -3 "$2/log" 2>/dev/null)" >&2
	exit 1
}
go build -o "$work/auditbare" "$root/bench/auditbare"

# runs holds one line per run: row, wall ms, user s, system s, peak RSS
# KiB, server CPU s (live rows: the servers walked, INFO cpu user + sys,
# their children's too), the servers' main processes' CPU s (without the
# children: what the thread that serves clients paid).
runs=$work/runs
: >"$runs"
srvcpu() {
	local s=0 m=0 p
	for p in "$@"; do
		# A snapshot's child counts once the server has reaped it.
		for _ in $(seq 100); do
			redis-cli -p "$p" info persistence | grep -q '^rdb_bgsave_in_progress:0' && break
			sleep 0.05
		done
		s=$(redis-cli -p "$p" info cpu | awk -F: -v s="$s" '/^used_cpu_(sys|user)(_children)?:/ { s += $2 } END { printf "%.3f", s }')
		m=$(redis-cli -p "$p" info cpu | awk -F: -v s="$m" '/^used_cpu_(sys|user):/ { s += $2 } END { printf "%.3f", s }')
	done
	echo "$s $m"
}
# timed ROW "SERVER PORTS" COMMAND... runs the command once and records it.
timed() {
	local row=$1 sp=$2 c0= c1= t0 t1
	shift 2
	if [ -n "$sp" ]; then c0=$(srvcpu $sp); fi
	t0=$(date +%s%N)
	/usr/bin/time -f '%U %S %M' -o "$work/time" "$@" >/dev/null 2>"$work/err" || {
		# every command here exits 0 (keyguard with --fail-on never): a failure stops the run
		echo "issue28.sh: $row failed: $(tail -3 "$work/err")" >&2
		exit 1
	}
	t1=$(date +%s%N)
	local srv="- -"
	if [ -n "$sp" ]; then
		c1=$(srvcpu $sp)
		srv=$(awk -v a="$c1" -v b="$c0" 'BEGIN { split(a, x, " "); split(b, y, " "); printf "%.3f %.3f", x[1] - y[1], x[2] - y[2] }')
	fi
	echo "$row $(((t1 - t0) / 1000000)) $(tail -1 "$work/time") $srv" | tee -a "$runs"
}

echo "# $(date -u +%FT%TZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $file ($(du -m "$file" | cut -f1) MB)"

# --- RDB ---------------------------------------------------------------
cat "$file" >/dev/null
kgrdb=("$kg" rdb --registry "$reg" --format json --fail-on never --out /dev/null)
for _ in $(seq "$reps"); do
	timed rdb "" "${kgrdb[@]}" "$file"
	timed rdb-nofields "" "${kgrdb[@]}" --fields=false "$file"
	timed rdb-top100000 "" "${kgrdb[@]}" --top 100000 "$file"
	if [ -n "$before" ]; then timed rdb-before "" "$before" "${kgrdb[@]:1}" "$file"; fi
	timed sha256sum "" sha256sum "$file"
	if [ -n "$hdt" ]; then timed hdt3213 "" "$hdt" -c memory -o /dev/null "$file"; fi
done

# --- one server --------------------------------------------------------
sp=$(freeport)
ports+=("$sp")
mkdir "$work/s"
cp "$file" "$work/s/dump.rdb"
redis-server --port "$sp" --bind 127.0.0.1 --dir "$work/s" --dbfilename dump.rdb --save '' \
	--appendonly no --daemonize yes --logfile "$work/s/log" --pidfile "$work/s/pid" >/dev/null
up "$sp" "$work/s"
echo "# server :$sp, $(redis-cli -p "$sp" dbsize) keys"
for _ in $(seq "$reps"); do
	timed auditbare "$sp" "$work/auditbare" -addr "127.0.0.1:$sp"
	timed auditbare-fields "$sp" "$work/auditbare" -fields -addr "127.0.0.1:$sp"
	timed audit "$sp" "$kg" audit --redis "redis://127.0.0.1:$sp" --registry "$reg" --format json --fail-on never --out /dev/null
	if [ -n "$before" ]; then
		timed audit-before "$sp" "$before" audit --redis "redis://127.0.0.1:$sp" --registry "$reg" --format json --fail-on never --out /dev/null
	fi
	[ "${MEMKEYS:-1}" = 0 ] || timed memkeys "$sp" redis-cli -p "$sp" --memkeys
done
if [ "${SNAPSHOT:-1}" != 0 ]; then
	kgsnap=("$kg" audit --snapshot --redis "redis://127.0.0.1:$sp" --registry "$reg" --format json --fail-on never --out /dev/null)
	for _ in $(seq "$reps"); do
		timed audit-snapshot "$sp" "${kgsnap[@]}"
		redis-cli -p "$sp" config set repl-diskless-sync-delay 0 >/dev/null
		timed audit-snapshot-delay0 "$sp" "${kgsnap[@]}"
		redis-cli -p "$sp" config set repl-diskless-sync no >/dev/null
		timed audit-snapshot-disk "$sp" "${kgsnap[@]}"
		redis-cli -p "$sp" config set repl-diskless-sync yes >/dev/null
		redis-cli -p "$sp" config set repl-diskless-sync-delay 5 >/dev/null
		# Redis's default save rules; the -disk row's save showed that its
		# saves to disk work, which keyguard asks before it asks for one
		redis-cli -p "$sp" config set save "3600 1 300 100 60 10000" >/dev/null
		timed audit-snapshot-saves "$sp" "${kgsnap[@]}"
		redis-cli -p "$sp" config set save "" >/dev/null
	done
fi
if [ "${HOT:-1}" != 0 ]; then
	redis-cli -p "$sp" config set maxmemory-policy allkeys-lfu >/dev/null
	for _ in $(seq "$reps"); do
		timed hotkeys "$sp" "$kg" hotkeys --redis "redis://127.0.0.1:$sp" --registry "$reg" --sample 0 --rate 0 --format json --fail-on never --out /dev/null
		if [ -n "$before" ]; then
			timed hotkeys-before "$sp" "$before" hotkeys --redis "redis://127.0.0.1:$sp" --registry "$reg" --sample 0 --rate 0 --format json --fail-on never --out /dev/null
		fi
		timed redis-cli-hotkeys "$sp" redis-cli -p "$sp" --hotkeys
		if [ "${SNAPSHOT:-1}" != 0 ]; then
			timed hotkeys-snapshot "$sp" "$kg" hotkeys --snapshot --redis "redis://127.0.0.1:$sp" --registry "$reg" --format json --fail-on never --out /dev/null
			redis-cli -p "$sp" config set repl-diskless-sync-delay 0 >/dev/null
			timed hotkeys-snapshot-delay0 "$sp" "$kg" hotkeys --snapshot --redis "redis://127.0.0.1:$sp" --registry "$reg" --format json --fail-on never --out /dev/null
			redis-cli -p "$sp" config set repl-diskless-sync-delay 5 >/dev/null
		fi
	done
	redis-cli -p "$sp" config set maxmemory-policy noeviction >/dev/null
fi

# --- 3-master Cluster --------------------------------------------------
if [ "${CLUSTER:-1}" != 0 ]; then
	cps=()
	for i in 1 2 3; do
		p=$(freeport bus)
		ports+=("$p")
		cps+=("$p")
		mkdir "$work/c$i"
		redis-server --port "$p" --bind 127.0.0.1 --dir "$work/c$i" --cluster-enabled yes --cluster-config-file nodes.conf \
			--save '' --appendonly no --daemonize yes --logfile "$work/c$i/log" --pidfile "$work/c$i/pid" >/dev/null
	done
	for i in 1 2 3; do up "${cps[i - 1]}" "$work/c$i"; done
	redis-cli --cluster create "127.0.0.1:${cps[0]}" "127.0.0.1:${cps[1]}" "127.0.0.1:${cps[2]}" \
		--cluster-replicas 0 --cluster-yes >"$work/create.log" 2>&1 ||
		{ echo "issue28.sh: redis-cli --cluster create failed: $(tail -3 "$work/create.log")" >&2; exit 1; }
	for i in $(seq 300); do
		ok=0
		for p in "${cps[@]}"; do
			if redis-cli -p "$p" cluster info | grep -q 'cluster_state:ok'; then ok=$((ok + 1)); fi
		done
		[ "$ok" = 3 ] && break
		[ "$i" -lt 300 ] || { echo "issue28.sh: the Cluster is not ok after 60 s" >&2; exit 1; }
		sleep 0.2
	done
	redis-cli --cluster import "127.0.0.1:${cps[0]}" --cluster-from "127.0.0.1:$sp" --cluster-copy >"$work/import.log" 2>&1 ||
		{ echo "issue28.sh: redis-cli --cluster import failed: $(tail -3 "$work/import.log")" >&2; exit 1; }
	n=0
	for p in "${cps[@]}"; do n=$((n + $(redis-cli -p "$p" dbsize))); done
	echo "# cluster :${cps[*]}, $n keys"
	[ "$n" = "$(redis-cli -p "$sp" dbsize)" ] || echo "# the Cluster holds $n keys, the server $(redis-cli -p "$sp" dbsize)" >&2
	for _ in $(seq "$reps"); do
		timed auditbare-cluster "${cps[*]}" "$work/auditbare" -cluster -addr "127.0.0.1:${cps[0]}"
		timed audit-cluster "${cps[*]}" "$kg" audit --cluster --redis "redis://127.0.0.1:${cps[0]}" --registry "$reg" --format json --fail-on never --out /dev/null
		if [ -n "$before" ]; then
			timed audit-cluster-before "${cps[*]}" "$before" audit --cluster --redis "redis://127.0.0.1:${cps[0]}" --registry "$reg" --format json --fail-on never --out /dev/null
		fi
	done
	if [ "${SNAPSHOT:-1}" != 0 ]; then
		kgcsnap=("$kg" audit --cluster --snapshot --redis "redis://127.0.0.1:${cps[0]}" --registry "$reg" --format json --fail-on never --out /dev/null)
		for _ in $(seq "$reps"); do
			timed audit-cluster-snapshot "${cps[*]}" "${kgcsnap[@]}"
			for p in "${cps[@]}"; do redis-cli -p "$p" config set repl-diskless-sync-delay 0 >/dev/null; done
			timed audit-cluster-snapshot-delay0 "${cps[*]}" "${kgcsnap[@]}"
			for p in "${cps[@]}"; do redis-cli -p "$p" config set repl-diskless-sync-delay 5 >/dev/null; done
		done
	fi
fi

# --- the table ---------------------------------------------------------
# med ROW COLUMN: the median of a column (2 wall, 3 user, 4 sys, 5 RSS, 6
# server CPU, 7 user + sys, 8 server main process CPU) over the row's
# runs; empty without runs.
med() {
	awk -v r="$1" -v c="$2" '$1 == r { v[++n] = (c == 7 ? $3 + $4 : c == 8 ? $7 : $c) }
		END {
			if (n == 0) exit
			for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
			print v[int((n + 1) / 2)]
		}' "$runs"
}
maxcol() { awk -v r="$1" -v c="$2" '$1 == r && $c > m { m = $c } END { if (m != "") print m }' "$runs"; }
# ratio NAME A B TARGET: prints a row of A/B against a target such as ">= 8"
# or "<= 1.0"; a missing side prints "–".
ratio() {
	local name=$1 a=$2 b=$3 target=$4
	if [ -z "$a" ] || [ -z "$b" ]; then
		printf '| %s | – | – | – | %s | – |\n' "$name" "$target"
		return
	fi
	awk -v n="$name" -v a="$a" -v b="$b" -v t="$target" 'BEGIN {
		r = a / b; split(t, p, " ")
		met = (p[1] == ">=" ? r >= p[2] : r <= p[2]) ? "met" : "not met"
		if (t == "") met = "–"
		printf "| %s | %s | %s | %.2f× | %s | %s |\n", n, a, b, r, t, met
	}'
}
echo
echo "| row | runs | wall ms median | CPU s median (user + sys) | peak RSS MiB | server CPU s median | server main process CPU s median |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for row in rdb rdb-before rdb-nofields rdb-top100000 sha256sum hdt3213 audit audit-before auditbare auditbare-fields memkeys \
	audit-snapshot audit-snapshot-delay0 audit-snapshot-disk audit-snapshot-saves \
	audit-cluster audit-cluster-before auditbare-cluster audit-cluster-snapshot audit-cluster-snapshot-delay0 \
	hotkeys hotkeys-before redis-cli-hotkeys hotkeys-snapshot hotkeys-snapshot-delay0; do
	n=$(awk -v r="$row" '$1 == r' "$runs" | wc -l)
	[ "$n" -gt 0 ] || continue
	printf '| %s | %d | %s | %.2f | %.1f | %s | %s |\n' "$row" "$n" "$(med "$row" 2)" "$(med "$row" 7)" \
		"$(awk -v k="$(maxcol "$row" 5)" 'BEGIN { print k / 1024 }')" "$(med "$row" 6)" "$(med "$row" 8)"
done
echo
echo "| issue 28 asks | a | b | a / b | target | |"
echo "|---|---:|---:|---:|---|---|"
ratio "rdb: HDT3213 wall / keyguard wall" "$(med hdt3213 2)" "$(med rdb 2)" ">= 8"
ratio "rdb: sha256sum wall / keyguard wall" "$(med sha256sum 2)" "$(med rdb 2)" ">= 2"
ratio "rdb: keyguard peak RSS MiB / 48" "$(awk -v k="$(maxcol rdb 5)" 'BEGIN { if (k != "") printf "%.1f", k / 1024 }')" 48 "<= 1.0"
ratio "rdb: CPU with value formats / --fields=false" "$(med rdb 7)" "$(med rdb-nofields 7)" "<= 1.0"
ratio "rdb: CPU --top 100000 / --top 50" "$(med rdb-top100000 7)" "$(med rdb 7)" "<= 1.1"
ratio "audit: wall / auditbare wall" "$(med audit 2)" "$(med auditbare 2)" "<= 1.0"
ratio "audit: server CPU / auditbare's" "$(med audit 6)" "$(med auditbare 6)" "<= 1.0"
ratio "audit: keyguard CPU / auditbare's" "$(med audit 7)" "$(med auditbare 7)" "<= 2.0"
ratio "audit: memkeys wall / keyguard wall" "$(med memkeys 2)" "$(med audit 2)" ">= 8"
ratio "audit --cluster: wall / auditbare -cluster" "$(med audit-cluster 2)" "$(med auditbare-cluster 2)" "<= 1.0"
ratio "audit --cluster: server CPU / auditbare's" "$(med audit-cluster 6)" "$(med auditbare-cluster 6)" "<= 1.0"
ratio "audit --cluster: keyguard CPU / auditbare's" "$(med audit-cluster 7)" "$(med auditbare-cluster 7)" "<= 2.0"
ratio "hotkeys: redis-cli --hotkeys wall / keyguard wall" "$(med redis-cli-hotkeys 2)" "$(med hotkeys 2)" ">= 4"
if [ "${SNAPSHOT:-1}" != 0 ]; then
	echo
	echo "| audit --snapshot (one fork per node, no command per key) | a | b | a / b | target | |"
	echo "|---|---:|---:|---:|---|---|"
	for v in "" -delay0 -disk -saves; do
		ratio "audit --snapshot$v: wall / auditbare wall" "$(med "audit-snapshot$v" 2)" "$(med auditbare 2)" "<= 1.0"
		ratio "audit --snapshot$v: server CPU (children too) / auditbare's" "$(med "audit-snapshot$v" 6)" "$(med auditbare 6)" "<= 1.0"
		ratio "audit --snapshot$v: keyguard CPU / auditbare's" "$(med "audit-snapshot$v" 7)" "$(med auditbare 7)" "<= 2.0"
		ratio "audit --snapshot$v: server main process CPU / auditbare's" "$(med "audit-snapshot$v" 8)" "$(med auditbare 8)" ""
		ratio "audit --snapshot$v: memkeys wall / keyguard wall" "$(med memkeys 2)" "$(med "audit-snapshot$v" 2)" ">= 8"
	done
	if [ "${HOT:-1}" != 0 ]; then
		ratio "hotkeys --snapshot (server defaults): redis-cli --hotkeys wall / keyguard wall" "$(med redis-cli-hotkeys 2)" "$(med hotkeys-snapshot 2)" ">= 4"
		ratio "hotkeys --snapshot -delay0: redis-cli --hotkeys wall / keyguard wall" "$(med redis-cli-hotkeys 2)" "$(med hotkeys-snapshot-delay0 2)" ">= 4"
		ratio "hotkeys --snapshot -delay0: server CPU (children too) / the OBJECT FREQ walk's" "$(med hotkeys-snapshot-delay0 6)" "$(med hotkeys 6)" ""
		ratio "hotkeys --snapshot -delay0: server main process CPU / the OBJECT FREQ walk's" "$(med hotkeys-snapshot-delay0 8)" "$(med hotkeys 8)" ""
	fi
	for v in "" -delay0; do
		ratio "audit --cluster --snapshot$v: wall / auditbare -cluster" "$(med "audit-cluster-snapshot$v" 2)" "$(med auditbare-cluster 2)" "<= 1.0"
		ratio "audit --cluster --snapshot$v: server CPU / auditbare's" "$(med "audit-cluster-snapshot$v" 6)" "$(med auditbare-cluster 6)" "<= 1.0"
	done
fi
if [ -n "$before" ]; then
	echo
	echo "| KEYGUARD against BEFORE ($before) | a | b | a / b | |"
	echo "|---|---:|---:|---:|---|"
	for r in rdb audit audit-cluster hotkeys; do
		for c in 2 7; do
			a=$(med "$r" "$c") b=$(med "$r-before" "$c")
			[ -n "$a" ] && [ -n "$b" ] || continue
			awk -v n="$r $([ "$c" = 2 ] && echo 'wall ms' || echo 'CPU s')" -v a="$a" -v b="$b" \
				'BEGIN { printf "| %s | %s | %s | %.2f× | |\n", n, a, b, a / b }'
		done
	done
fi
