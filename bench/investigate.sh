#!/usr/bin/env bash
# What a MONITOR capture costs a busy server: redis-benchmark's throughput
# alone, then with `keyguard investigate --monitor` capturing; and the cost
# keyguard itself measured and printed in its report.
#
#   bench/investigate.sh [requests] [clients] [pipeline] [rounds]
#
# Defaults: 300,000 requests of SET then GET, 50 clients, no pipelining,
# 3 rounds. Each round runs the benchmark alone, then again with keyguard
# started during its SET test (so that keyguard's one-second reading before
# MONITOR sees the load) and capturing until the benchmark ends: the GET
# test runs entirely under MONITOR. Rounds alternate so that a machine whose
# load drifts weighs on both sides. Needs redis-server, redis-benchmark,
# python3 and go on the PATH; starts its own server on a free loopback port
# and stops it at the end.
set -euo pipefail
cd "$(dirname "$0")/.."

N=${1:-300000}
C=${2:-50}
P=${3:-1}
R=${4:-3}
tmp=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
go build -o "$tmp/keyguard" ./cmd/keyguard
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --daemonize no >"$tmp/redis.log" 2>&1 &
srv=$!
trap 'kill $srv 2>/dev/null; wait $srv 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done

cat >"$tmp/keyguard.yaml" <<'YAML'
version: 1
domains:
  promo: {owner: promo-team}
keys:
  - key: "promo:sku:{skuId:int}"
    type: hash
    ttl: 10m
YAML
redis-cli -p "$port" hset promo:sku:1001 activityId 1 >/dev/null
redis-cli -p "$port" expire promo:sku:1001 600 >/dev/null

bench() { redis-benchmark -p "$port" -t set,get -n "$N" -c "$C" -P "$P" -q 2>/dev/null | tr '\r' '\n' | grep 'requests per second'; }
info() { redis-cli -p "$port" info >"$1"; }

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
for r in $(seq "$R"); do
  echo "== round $r: redis-benchmark alone (n=$N c=$C P=$P)"
  info "$tmp/alone.$r.info0"
  bench | tee "$tmp/alone.$r.txt"
  info "$tmp/alone.$r.info1"
  echo "== round $r: redis-benchmark with keyguard investigate --monitor"
  bench >"$tmp/with.$r.txt" &
  b=$!
  sleep 1.5
  "$tmp/keyguard" investigate --redis "redis://127.0.0.1:$port" --registry "$tmp/keyguard.yaml" --key promo:sku:1001 \
    --watch 0 --monitor 10m --max-lines 1000000000 --max-bytes 64GiB --format json --out "$tmp/report.$r.json" 2>/dev/null &
  kg=$!
  for _ in $(seq 200); do
    redis-cli -p "$port" client list | grep -q 'flags=O' && break
    sleep 0.02
  done
  info "$tmp/with.$r.info0"
  wait $b
  info "$tmp/with.$r.info1"
  cat "$tmp/with.$r.txt"
  echo "keyguard max RSS: $(grep VmHWM /proc/$kg/status | awk '{print $2, $3}')"
  kill -INT $kg # Ctrl-C: the capture ends and the report is written
  wait $kg || true
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$tmp" "$R" <<'PY'
import json, re, statistics, sys
tmp, rounds = sys.argv[1], int(sys.argv[2])
def rps(path):
    out = {}
    for line in open(path):
        m = re.match(r'(SET|GET): ([\d.]+) requests per second', line)
        if m:
            out[m.group(1)] = float(m.group(2))
    return out
def info(path):
    d = dict(l.strip().split(":", 1) for l in open(path) if ":" in l and not l.startswith("#"))
    cpu = float(d["used_cpu_sys_main_thread"]) + float(d["used_cpu_user_main_thread"])
    return cpu, int(d["total_commands_processed"])
def us_per_cmd(a, b):
    (c0, n0), (c1, n1) = info(a), info(b)
    return 1e6 * (c1 - c0) / (n1 - n0)
falls, cpus = [], []
for r in range(1, rounds + 1):
    a, w = rps(f"{tmp}/alone.{r}.txt"), rps(f"{tmp}/with.{r}.txt")
    fall = 100 * (a["GET"] - w["GET"]) / a["GET"]
    ua, uw = us_per_cmd(f"{tmp}/alone.{r}.info0", f"{tmp}/alone.{r}.info1"), us_per_cmd(f"{tmp}/with.{r}.info0", f"{tmp}/with.{r}.info1")
    cpu = 100 * (1 - ua / uw)
    falls.append(fall)
    cpus.append(cpu)
    rep = json.load(open(f"{tmp}/report.{r}.json"))
    n = rep["capture"]["nodes"][0]
    c = n["cost"]
    print(f"round {r}: GET {a['GET']:,.0f} -> {w['GET']:,.0f} requests/s under MONITOR ({fall:.0f}% lower); "
          f"server CPU per command {ua:.2f} -> {uw:.2f} us (a saturated server loses {cpu:.0f}%)")
    print(f"  keyguard measured {c['commands_per_sec_before']:,.0f} -> {c['commands_per_sec_during']:,.0f} commands/s "
          f"({c['fell_percent']:.0f}% lower, measured={c['measured']}), CPU per command {c['cpu_us_per_command_before']:.2f} -> "
          f"{c['cpu_us_per_command_during']:.2f} us ({c['saturated_fell_percent']:.0f}%); {n['lines']:,} lines, "
          f"{n['bytes']/1e6:,.1f} MB in {n['duration_ms']/1000:.1f} s, stopped: {n['stopped']}")
    for s in rep["conclusion"]:
        if s.startswith("MONITOR cost"):
            print("  report says:", s)
print(f"median over {rounds} rounds: GET throughput {statistics.median(falls):.0f}% lower under MONITOR; "
      f"server CPU per command says a saturated server loses {statistics.median(cpus):.0f}%")
PY
