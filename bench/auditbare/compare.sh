#!/usr/bin/env bash
# compare.sh OLD NEW — wall time, CPU and peak RSS of two auditbare binaries on
# one throwaway redis-server loaded with bench/auditgen's key mix, run
# alternately (old, new, old, new…) so that the machine's load changes
# fall on both.
#
#   git archive BASE | tar -x -C /tmp/base && (cd /tmp/base && go build -o /tmp/auditbare-old ./bench/auditbare)
#   go build -o /tmp/auditbare-new ./bench/auditbare
#   N=200000 REPS=5 bench/auditbare/compare.sh /tmp/auditbare-old /tmp/auditbare-new
set -euo pipefail

old=$1 new=$2
N=${N:-200000}
REPS=${REPS:-5}
root=$(cd "$(dirname "$0")/../.." && pwd)
for b in redis-server redis-cli go; do
	command -v $b >/dev/null || { echo "compare.sh: $b not found" >&2; exit 2; }
done
[ -x /usr/bin/time ] || { echo "compare.sh: /usr/bin/time not found (apt-get install time)" >&2; exit 2; }

work=$(mktemp -d)
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

(cd "$root" && go build -o "$work/auditgen" ./bench/auditgen)
port=$((20000 + RANDOM % 40000))
redis-server --port "$port" --bind 127.0.0.1 --dir "$work" --save '' --appendonly no \
	--daemonize yes --logfile "$work/redis.log" --pidfile "$work/redis.pid"
for _ in $(seq 100); do
	redis-cli -p "$port" ping >/dev/null 2>&1 && break
	sleep 0.1
done
pid=$(cat "$work/redis.pid")
"$work/auditgen" -n "$N" | redis-cli -p "$port" --pipe >/dev/null
echo "dbsize $(redis-cli -p "$port" dbsize)"
server_cpu() { redis-cli -p "$port" info cpu | awk -F: '/^used_cpu_(user|sys):/{s+=$2} END{print s}'; }

echo "| run | binary | wall s | client CPU s (user+sys) | server CPU s | peak RSS KB | output |"
echo "|---|---|---|---|---|---|---|"
for i in $(seq "$REPS"); do
	for which in old new; do
		bin=$old
		[ $which = new ] && bin=$new
		before=$(server_cpu)
		/usr/bin/time -v -o "$work/time.txt" "$bin" -addr "127.0.0.1:$port" >"$work/out.txt"
		after=$(server_cpu)
		wall=$(awk -F': ' '/Elapsed \(wall clock\)/{n=split($2,t,":"); s=0; for(i=1;i<=n;i++) s=s*60+t[i]; print s}' "$work/time.txt")
		rss=$(awk -F': ' '/Maximum resident set size/{print $2}' "$work/time.txt")
		cpu=$(awk -F': ' '/(User|System) time \(seconds\)/{s+=$2} END{printf "%.2f", s}' "$work/time.txt")
		echo "| $i | $which | $wall | $cpu | $(awk -v a="$after" -v b="$before" 'BEGIN{printf "%.2f", a-b}') | $rss | $(cat "$work/out.txt") |"
	done
done
