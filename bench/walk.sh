#!/usr/bin/env bash
# walk.sh — the key walks of `keyguard investigate` (its key search) and
# `keyguard migrate copy --dry-run` (its walk of the old template's keys),
# two builds side by side, on one redis-server and on a 3-master Cluster.
#
#   bench/walk.sh BEFORE AFTER [rounds]
#
# BEFORE and AFTER are keyguard binaries (build them yourself, e.g. from
# `git archive <commit> | tar -x` and `go build ./cmd/keyguard`). N keys of
# the template (old:string:<i>, TTL 1h) and N keys of no template
# (other:<i>) are loaded once (N=100000 by default: 200,000 keys) by
# bench/walkload.
# The runs alternate BEFORE, AFTER for `rounds` rounds (default 3); each
# prints wall time, user CPU and peak RSS (/usr/bin/time).
set -euo pipefail
before=$1
after=$2
rounds=${3:-3}
N=${N:-100000}
root=$(cd "$(dirname "$0")/.." && pwd)
reg=$root/internal/migrate/testdata/keyguard.yaml
work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
(cd "$root" && go build -o "$work/walkload" ./bench/walkload)
LOADER=$work/walkload
freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
start() { # port [cluster]
	local dir=$work/$1
	mkdir -p "$dir"
	local extra=()
	[ "${2:-}" = cluster ] && extra=(--cluster-enabled yes --cluster-config-file "$dir/nodes.conf" --cluster-port "$(freeport)")
	redis-server --port "$1" --bind 127.0.0.1 --save '' --appendonly no --dir "$dir" "${extra[@]}" >"$dir/log" 2>&1 &
	pids+=($!)
	for _ in $(seq 50); do redis-cli -p "$1" ping >/dev/null 2>&1 && return; sleep 0.1; done
	echo "walk.sh: redis-server on $1 did not start" >&2
	exit 2
}
measure() { # label url [--cluster]
	local label=$1 url=$2
	shift 2
	for r in $(seq "$rounds"); do
		for b in "$before" "$after"; do
			name=before
			[ "$b" = "$after" ] && name=after
			/usr/bin/time -f "$label $name investigate: %e s wall %U s user %M KB" "$b" investigate --registry "$reg" --redis "$url" "$@" \
				--match 'old:string:1*' --max-keys 10 --watch 0 --format json --out /dev/null || true
			/usr/bin/time -f "$label $name migrate-copy-dry-run: %e s wall %U s user %M KB" "$b" migrate copy --registry "$reg" --redis "$url" "$@" \
				--from 'old:string:{id}' --to 'new:string:{id}' --dry-run --format json --out /dev/null || true
		done
	done
}

p=$(freeport)
start "$p"
"$LOADER" "127.0.0.1:$p" "$N"
measure standalone "redis://127.0.0.1:$p"

ports=()
for _ in 1 2 3; do
	q=$(freeport)
	start "$q" cluster
	ports+=("$q")
done
redis-cli --cluster create "127.0.0.1:${ports[0]}" "127.0.0.1:${ports[1]}" "127.0.0.1:${ports[2]}" --cluster-yes >/dev/null
for _ in $(seq 100); do
	redis-cli -p "${ports[0]}" cluster info | grep -q 'cluster_state:ok' && break
	sleep 0.2
done
sleep 1
"$LOADER" "127.0.0.1:${ports[0]},127.0.0.1:${ports[1]},127.0.0.1:${ports[2]}" "$N"
measure cluster "redis://127.0.0.1:${ports[0]},127.0.0.1:${ports[1]}" --cluster
