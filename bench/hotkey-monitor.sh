#!/bin/sh
# What MONITOR costs a busy server, as 'keyguard hotkeys --monitor' measures
# and prints it: a redis-server on a free loopback port, redis-benchmark
# keeping it busy with GETs of one hot key and a tail (-r), and
# 'keyguard hotkeys --monitor' listening while it runs. Prints the command's
# report (the cost line is "cost on ADDR: … ops/s before, … during") and
# redis-benchmark's own throughput with and without a MONITOR client.
#
#   bench/hotkey-monitor.sh [SECONDS]      (default 5; needs redis-server, redis-benchmark)
set -eu
secs=${1:-5}
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cleanup() {
	[ -n "${bench:-}" ] && kill "$bench" 2>/dev/null || true
	[ -n "${mon:-}" ] && kill "$mon" 2>/dev/null || true
	redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
printf 'port %s\nsave ""\nappendonly no\ndir %s\n' "$port" "$tmp" | redis-server - >"$tmp/redis.log" 2>&1 &
until redis-cli -p "$port" ping >/dev/null 2>&1; do sleep 0.1; done

cd "$here"
go build -o "$tmp/keyguard" ./cmd/keyguard

rps() { redis-benchmark -p "$port" -c 50 -n 200000 -q -t get 2>&1 | tr '\r' '\n' | grep 'requests per second'; }
echo "== redis-benchmark alone (GET, 50 clients)"
rps
echo "== redis-benchmark with one MONITOR client (redis-cli monitor) reading everything"
redis-cli -p "$port" monitor >/dev/null &
mon=$!
sleep 0.5
rps
kill "$mon"; mon=

echo "== keyguard hotkeys --monitor ${secs}s while redis-benchmark runs"
# redis-benchmark's GETs all read key:000000000000: one hot (unregistered) key.
redis-benchmark -p "$port" -c 50 -n 100000000 -q -t get >/dev/null 2>&1 &
bench=$!
sleep 1
"$tmp/keyguard" hotkeys --redis "redis://127.0.0.1:$port" --registry "$here/hotkey/testdata/keyguard.yaml" \
	--no-lfu --monitor "${secs}s" --min-rate 1000 --top 5 || true
