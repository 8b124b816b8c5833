#!/bin/sh
# keyguard hotkeys with its defaults (OBJECT FREQ of every key) against
# redis-cli --hotkeys on one server under allkeys-lfu: KEYS keys (DEBUG
# POPULATE), one of them read READS times (redis-benchmark, pipelined), 50
# read twice. For each tool, alternating, RUNS times: its wall and CPU time
# (/usr/bin/time -v), the server's CPU during it (INFO cpu, user + sys)
# and the top key it names, with the load average at its start. In the
# same turns bench/hotkeysbare reads the counters the other ways measured
# against keyguard's walk: SCAN alone (what listing the keys costs), a
# read-only script per batch that SCANs and reads OBJECT FREQ inside the
# server (lua), and one that is given the batch's keys (argv); BARE=0
# leaves them out. BEFORE=/path/to/keyguard runs an earlier build in the
# same turns too (keyguard-before).
#
#   bench/hotkeys-lfu.sh [KEYS] [READS] [RUNS]   (default 1000000 200000 3)
set -eu
keys=${1:-1000000}
reads=${2:-200000}
runs=${3:-3}
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cleanup() {
	redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
printf 'port %s\nsave ""\nappendonly no\ndir %s\nmaxmemory-policy allkeys-lfu\nenable-debug-command yes\n' "$port" "$tmp" |
	redis-server - >"$tmp/redis.log" 2>&1 &
until redis-cli -p "$port" ping >/dev/null 2>&1; do sleep 0.1; done

cd "$here"
go build -o "$tmp/keyguard" ./cmd/keyguard
go build -o "$tmp/hotkeysbare" ./bench/hotkeysbare

redis-cli -p "$port" debug populate "$keys" key 16 >/dev/null
hot=key:$((keys * 42 / 100))
redis-benchmark -p "$port" -n "$reads" -P 100 -q GET "$hot" >/dev/null 2>&1
i=0
while [ $i -lt 50 ]; do
	redis-cli -p "$port" get key:$((i * 997)) >/dev/null
	redis-cli -p "$port" get key:$((i * 997)) >/dev/null
	i=$((i + 1))
done
echo "server: $(redis-cli -p "$port" dbsize) keys, $hot read $reads times (OBJECT FREQ $(redis-cli -p "$port" object freq "$hot"))"

cpu() { redis-cli -p "$port" info cpu | tr -d '\r' | awk -F: '/^used_cpu_(user|sys):/ { s += $2 } END { printf "%.2f", s }'; }
measure() { # name, command...
	name=$1
	shift
	load=$(cut -d' ' -f1 /proc/loadavg)
	before=$(cpu)
	/usr/bin/time -v "$@" >"$tmp/out" 2>"$tmp/time" || true
	after=$(cpu)
	wall=$(awk -F': ' '/Elapsed \(wall clock\)/ { print $2 }' "$tmp/time")
	ucpu=$(awk -F': ' '/User time/ { u = $2 } /System time/ { s = $2 } END { printf "%.2f", u + s }' "$tmp/time")
	case $name in
	redis-cli) top=$(grep 'hot key found with counter' "$tmp/out" | head -1 | sed 's/.*counter: *\([0-9]*\).*keyname: *\(.*\)/\2 (counter \1)/') ;;
	bare-*) top=$(sed 's/.*: //' "$tmp/out") ;;
	*) top=$(awk '/sdk ops\/s/ { getline; sub(/^\*/, ""); print $4 " (counter " $3 ")" }' "$tmp/out") ;;
	esac
	echo "$name (load $load): wall $wall, client CPU ${ucpu}s, server CPU $(echo "$after $before" | awk '{ printf "%.2f", $1 - $2 }')s, top $top"
}
r=0
while [ $r -lt "$runs" ]; do
	measure redis-cli redis-cli -p "$port" --hotkeys
	measure keyguard "$tmp/keyguard" hotkeys --redis "redis://127.0.0.1:$port" --registry "$here/hotkey/testdata/keyguard.yaml" --top 5
	if [ -n "${BEFORE:-}" ]; then
		measure keyguard-before "$BEFORE" hotkeys --redis "redis://127.0.0.1:$port" --registry "$here/hotkey/testdata/keyguard.yaml" --top 5
	fi
	if [ "${BARE:-1}" != 0 ]; then
		for mode in scan lua argv; do
			measure bare-$mode "$tmp/hotkeysbare" -addr "127.0.0.1:$port" -mode $mode
		done
	fi
	r=$((r + 1))
done
echo "== keyguard's report of the last run"
cat "$tmp/out"
