#!/usr/bin/env bash
# versus.sh — keyguard builds side by side, run in turns (a, b, c, a, b, c…)
# so that the machine's load falls on each alike: the snapshot audit of one
# RDB file on one core, or the live audit of one running server beside the
# bare probe floors (bench/auditbare: the probes of an audit; with
# -probes-first the same probes sent before the next SCAN, as keyguard
# sends them; with -fields also the value formats' field probes).
#
#   bench/versus.sh rdb FILE.rdb REPS BIN...     # GOMAXPROCS=1; P=2 for two cores
#   bench/versus.sh live PORT REPS BIN...        # a server already loaded on PORT
#
# In rdb mode the peers run in the same turns: a path ending in sha256sum
# hashes the file (the read floor), and hdt3213:PATH runs HDT3213/rdb's
# `rdb -c memory` (built outside the repository from github.com/HDT3213/rdb).
#
# Build the binaries from the commits to compare, for example:
#
#   git worktree add /tmp/kg-before f5b9646 && (cd /tmp/kg-before && go build -o /tmp/kg-before.bin ./cmd/keyguard)
#   go build -o /tmp/kg-after.bin ./cmd/keyguard
#   MIX=audit bench/rdb-gen.sh /tmp/audit-1m.rdb 1000000
#   bench/versus.sh rdb /tmp/audit-1m.rdb 10 /tmp/kg-before.bin /tmp/kg-after.bin
#
# For the live audit, load a server from the same file
# (redis-server --port P --dir DIR --dbfilename audit-1m.rdb --save '').
#
# One line per run: binary, wall ms (date, ns), user CPU s, system CPU s and
# peak RSS KiB (/usr/bin/time), and for the live audit the CPU seconds the
# server spent (INFO cpu, user + sys) and, when the server runs on this
# machine, the milliseconds its main thread sat idle waiting for commands
# (wall time less its time on a CPU and waiting for one, from
# /proc/PID/task/PID/schedstat): the time the walker kept it waiting, which
# the machine's other load does not add to. Then, per binary, the minimum
# and the median. The registry is internal/audit/live/testdata/keyguard.yaml (the one
# bench/audit.sh and bench/rdb.sh use).
set -euo pipefail

mode=${1:?mode: rdb or live}
target=${2:?an RDB file or a port}
reps=${3:?repetitions}
shift 3
[ $# -gt 0 ] || { echo "versus.sh: name at least one keyguard binary" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
reg=$root/internal/audit/live/testdata/keyguard.yaml
[ -x /usr/bin/time ] || { echo "versus.sh: /usr/bin/time not found (apt-get install time)" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bins=("$@")
if [ "$mode" = live ]; then
	go build -o "$work/auditbare" "$root/bench/auditbare"
	printf '#!/bin/sh\nexec "%s" -fields "$@"\n' "$work/auditbare" >"$work/auditbare-fields"
	printf '#!/bin/sh\nexec "%s" -probes-first "$@"\n' "$work/auditbare" >"$work/auditbare-first"
	chmod +x "$work/auditbare-fields" "$work/auditbare-first"
	bins=("$work/auditbare" "$work/auditbare-first" "$work/auditbare-fields" "${bins[@]}")
fi

servercpu() {
	redis-cli -p "$target" info cpu | awk -F: '/^used_cpu_(sys|user):/ { s += $2 } END { printf "%.3f", s }'
}

# schedns prints the server main thread's nanoseconds on a CPU plus waiting
# for one, or nothing when the server is not a process of this machine.
spid=
if [ "$mode" = live ]; then
	spid=$(redis-cli -p "$target" info server | awk -F: '/^process_id:/ { print $2 + 0 }')
	[ -r "/proc/$spid/task/$spid/schedstat" ] || spid=
fi
schedns() {
	if [ -n "$spid" ]; then awk '{ printf "%.0f", $1 + $2 }' "/proc/$spid/task/$spid/schedstat"; fi
}

run() {
	local bin=$1
	case $mode in
	rdb)
		case $bin in
		*sha256sum)
			/usr/bin/time -f '%U %S %M' "$bin" "$target" 2>"$work/time" >/dev/null
			return
			;;
		hdt3213:*)
			# HDT3213/rdb's memory report, GOMAXPROCS as keyguard's.
			GOMAXPROCS=${P:-1} /usr/bin/time -f '%U %S %M' "${bin#hdt3213:}" -c memory -o /dev/null "$target" 2>"$work/time" >/dev/null
			return
			;;
		esac
		GOMAXPROCS=${P:-1} /usr/bin/time -f '%U %S %M' "$bin" rdb --registry "$reg" --format json \
			--fail-on never --out /dev/null "$target" 2>"$work/time" >/dev/null
		;;
	live)
		if [[ $(basename "$bin") == auditbare* ]]; then
			/usr/bin/time -f '%U %S %M' "$bin" -addr "127.0.0.1:$target" 2>"$work/time" >/dev/null
		else
			/usr/bin/time -f '%U %S %M' "$bin" audit --redis "redis://127.0.0.1:$target" --registry "$reg" \
				--format json --fail-on never --out /dev/null 2>"$work/time" >/dev/null
		fi
		;;
	*)
		echo "versus.sh: mode is rdb or live, not $mode" >&2
		exit 2
		;;
	esac
}

[ "$mode" = rdb ] && cat "$target" >/dev/null
echo "# $mode $target: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for _ in $(seq "$reps"); do
	for bin in "${bins[@]}"; do
		c0=0 s0=
		[ "$mode" = live ] && c0=$(servercpu) && s0=$(schedns)
		t0=$(date +%s%N)
		run "$bin"
		t1=$(date +%s%N)
		srv= idle=
		if [ "$mode" = live ]; then
			s1=$(schedns)
			srv=$(awk -v a="$(servercpu)" -v b="$c0" 'BEGIN { printf "%.3f", a - b }')
			[ -n "$s0" ] && idle=$(((t1 - t0 - (s1 - s0)) / 1000000))
		fi
		echo "$bin $(((t1 - t0) / 1000000)) $(tail -1 "$work/time") $srv $idle"
	done
done | tee "$work/runs"
echo
echo "| binary | runs | wall ms min | wall ms median | user s median | peak RSS MiB | server CPU s median | server idle ms median |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for bin in "${bins[@]}"; do
	awk -v b="$bin" '$1 == b' "$work/runs" | sort -k2,2n | awk -v b="$bin" '
		{ w[NR] = $2; u[NR] = $3; if ($5 > rss) rss = $5; s[NR] = $6; i[NR] = $7 }
		END {
			m = int((NR + 1) / 2)
			n = asorti_free_median(u, NR); v = asorti_free_median(s, NR); d = asorti_free_median(i, NR)
			printf "| %s | %d | %d | %d | %.2f | %.1f | %s | %s |\n", b, NR, w[1], w[m], n, rss / 1024, v == "" ? "–" : v, d == "" ? "–" : d
		}
		function asorti_free_median(a, n,    i, j, t, c) {
			for (i = 1; i <= n; i++) c[i] = a[i]
			for (i = 2; i <= n; i++) for (j = i; j > 1 && c[j - 1] + 0 > c[j] + 0; j--) { t = c[j]; c[j] = c[j - 1]; c[j - 1] = t }
			return c[int((n + 1) / 2)]
		}'
done
