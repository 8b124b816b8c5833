#!/usr/bin/env bash
# scan-code's speed and peak memory: the go-redis module from the module
# cache (Go, through the go command and the analyzer), then each language's
# fixture service copied N times (tree-sitter). Prints one line per run:
# scan-code's summary, then wall time, CPU and peak RSS from /usr/bin/time.
#   bench/scancode.sh            # N=2000
#   N=500 bench/scancode.sh
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-2000}
bin=$(mktemp -d)/keyguard
work=$(mktemp -d)
trap 'rm -rf "$work" "$(dirname "$bin")"' EXIT
go build -o "$bin" ./cmd/keyguard
reg=internal/demodata/keyguard.yaml
goredis=$(go env GOMODCACHE)/github.com/redis/go-redis/v9@v9.23.0
[ -d "$goredis" ] || go mod download github.com/redis/go-redis/v9@v9.23.0

run() {
	local label=$1
	shift
	echo "== $label"
	/usr/bin/time -f "wall %e s, user %U s, sys %S s, peak RSS %M KiB" \
		"$bin" scan-code --registry "$reg" --fail-on never "$@" | tail -n 1
}

# Warm the go command's build cache once, so the runs time the scan.
"$bin" scan-code --registry "$reg" --fail-on never "$goredis" >/dev/null
run "go-redis v9.23.0, non-test files" "$goredis"
run "go-redis v9.23.0, test files too (--tests)" --tests "$goredis"
for lang in java python ts; do
	mkdir -p "$work/$lang"
	for i in $(seq 1 "$N"); do
		for f in scancode/testdata/src/$lang/*; do
			cp "$f" "$work/$lang/$i-$(basename "$f")"
		done
	done
	run "$lang fixtures x$N" "$work/$lang"
done
