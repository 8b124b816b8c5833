#!/usr/bin/env bash
# rdb.sh — speed and peak memory of `keyguard rdb` on a 1,000,000-key RDB,
# beside `cat FILE > /dev/null` (the read floor), in one run.
#
#   bench/rdb.sh                   # 1,000,000 keys
#   bench/rdb.sh 1000000 3000000   # one line per file size: peak RSS stays flat
#   REPEAT=5 bench/rdb.sh
#
# The files are the audit benchmark's key mix (MIX=audit bench/rdb-gen.sh,
# about 103 bytes of RDB per key) and the registry is the one bench/audit.sh
# uses (internal/audit/live/testdata/keyguard.yaml); they are written once to $DIR
# (default /tmp/keyguard-bench-rdb) and reused. Every command runs under
# /usr/bin/time -v (apt-get install time) after a cat that puts the file in
# the page cache, REPEAT times (default 3); each run is one table row:
#   cat                     the read floor
#   keyguard P=1            GOMAXPROCS=1: everything on one core
#   keyguard                default GOMAXPROCS: decoder and aggregator in parallel
#   keyguard P=1 --max-findings 100   the same with 100 listed findings per rule
#                           instead of 10,000: what memory the report takes
# with wall time (date, in ns, around /usr/bin/time), MB/s and MiB/s
# (file bytes / wall), user+sys CPU and peak RSS.
set -euo pipefail

cd "$(dirname "$0")/.."
dir=${DIR:-/tmp/keyguard-bench-rdb}
repeat=${REPEAT:-3}
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1000000)
reg=internal/audit/live/testdata/keyguard.yaml

[ -x /usr/bin/time ] || { echo "rdb.sh: /usr/bin/time not found (apt-get install time)" >&2; exit 2; }
mkdir -p "$dir"
go build -o "$dir/keyguard" ./cmd/keyguard

# measure LABEL FILE CMD... prints one markdown row.
measure() {
	local label=$1 file=$2
	shift 2
	local log t0 t1
	log=$(mktemp)
	t0=$(date +%s%N)
	/usr/bin/time -v "$@" 2>"$log" >/dev/null || {
		echo "rdb.sh: $label failed:" >&2
		cat "$log" >&2
		exit 2
	}
	t1=$(date +%s%N)
	# Wall time from date (ns; /usr/bin/time rounds to 10 ms), the rest
	# from /usr/bin/time.
	awk -v label="$label" -v bytes="$(stat -c %s "$file")" -v ns="$((t1 - t0))" -F': ' '
		/User time/ { user = $2 }
		/System time/ { sys = $2 }
		/Maximum resident set size/ { rss = $2 }
		END {
			wall = ns / 1e9
			printf "| %s | %.3f | %.0f | %.0f | %.2f | %.1f |\n", label, wall, bytes / 1e6 / wall, bytes / 1048576 / wall, user + sys, rss / 1024
		}' "$log"
	rm -f "$log"
}

echo "# keyguard rdb: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(go version | cut -d' ' -f3)"
for n in "${sizes[@]}"; do
	file="$dir/audit-$n.rdb"
	[ -s "$file" ] || MIX=audit bench/rdb-gen.sh "$file" "$n" >&2
	bytes=$(stat -c %s "$file")
	echo
	echo "## $n keys, $bytes bytes ($((bytes / 1048576)) MiB): $file"
	echo
	echo "| command | wall s | MB/s (10⁶ B) | MiB/s | CPU s | peak RSS MiB |"
	echo "|---|---|---|---|---|---|"
	cat "$file" >/dev/null
	for _ in $(seq "$repeat"); do
		measure "cat" "$file" cat "$file"
		measure "keyguard P=1" "$file" env GOMAXPROCS=1 "$dir/keyguard" rdb --registry "$reg" --format json --fail-on never --out /dev/null "$file"
		measure "keyguard" "$file" "$dir/keyguard" rdb --registry "$reg" --format json --fail-on never --out /dev/null "$file"
		measure "keyguard P=1 --max-findings 100" "$file" env GOMAXPROCS=1 "$dir/keyguard" rdb --registry "$reg" --format json --fail-on never --max-findings 100 --out /dev/null "$file"
	done
done
