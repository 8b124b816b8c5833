#!/usr/bin/env bash
# scancode-real.sh — scan-code on real open-source projects, scored against
# hand-made labels: recall (labelled keys found), shapes right (found with
# the labelled shape, placeholders' names aside, of the keys labelled with
# one), precision (findings that
# are keys), wall time and peak memory per project.
#
#   bench/scancode-real.sh DIR                 # every project of bench/scancode-real/
#   bench/scancode-real.sh DIR arq huey        # some of them
#
# DIR holds one checkout per project, named as its label file
# (DIR/ruoyi-vue for bench/scancode-real/ruoyi-vue.json), at the commit the
# label file gives (checked when the checkout is a git work tree). The
# projects' code is never part of this repository: lay the checkouts out
# yourself, e.g.
#
#   git clone https://github.com/python-arq/arq DIR/arq
#   git -C DIR/arq checkout 3914e48c530f0e5acf02cb340b1f8f3e201ba895
#
# KEYGUARD=path uses that build instead of building this tree;
# SCAN_FLAGS replaces the default --allow-partial; VERBOSE=1 lists the
# labelled keys missed and the findings that are not keys.
#
# Go projects are loaded with the go command: their modules must download
# (GOPROXY) or be in the module cache.
#
# Each label file lists, by file and line, the calls that hand Redis a key
# the project builds ("keys": recall counts them; "alt" lines are where the
# same key may be reported, such as the line of a list's element) and the
# calls that hand Redis a key the project does not build there ("other": a
# finding there is a key, so it does not count against precision). A
# finding anywhere else is not a key. "files" limits a project to some of
# its files. Findings are compared by file and line. A key's "shape" is
# the template it has; "shapes" lists several, for a call in a method of a
# base class whose key each subclass that runs it sets apart (right when
# each is found there, and no other).
set -euo pipefail

dir=${1:?usage: bench/scancode-real.sh DIR [PROJECT...]}
shift
dir=$(cd "$dir" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
for b in go python3 /usr/bin/time; do
	command -v "$b" >/dev/null || { echo "scancode-real.sh: $b is needed" >&2; exit 2; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
kg=${KEYGUARD:-}
if [ -z "$kg" ]; then
	(cd "$root" && go build -o "$tmp/keyguard" ./cmd/keyguard)
	kg=$tmp/keyguard
fi
printf 'version: 1\nkeys: []\n' >"$tmp/empty.yaml"

projects=("$@")
if [ ${#projects[@]} -eq 0 ]; then
	for f in "$root"/bench/scancode-real/*.json; do projects+=("$(basename "$f" .json)"); done
fi

printf '| project | language | files | labelled keys | found | recall | shape right | findings | keys among them | precision | via named | wall s | peak RSS MiB |\n'
printf '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n'
for p in "${projects[@]}"; do
	labels="$root/bench/scancode-real/$p.json"
	co="$dir/$p"
	[ -d "$co" ] || { echo "scancode-real.sh: no checkout $co" >&2; exit 2; }
	want=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["commit"])' "$labels")
	if have=$(git -C "$co" rev-parse HEAD 2>/dev/null) && [ "$have" != "$want" ]; then
		echo "scancode-real.sh: $co is at $have, the labels are of $want" >&2
		exit 2
	fi
	rc=0
	(cd "$co" && /usr/bin/time -v -o "$tmp/$p.time" "$kg" scan-code --registry "$tmp/empty.yaml" \
		${SCAN_FLAGS---allow-partial} --fail-on never --format json --out "$tmp/$p.json" 2>"$tmp/$p.err") || rc=$?
	if [ "$rc" -ne 0 ]; then
		echo "scancode-real.sh: scan-code on $p exited $rc:" >&2
		cat "$tmp/$p.err" >&2
		exit 2
	fi
	python3 - "$labels" "$tmp/$p.json" "$tmp/$p.time" "$p" <<'PY'
import json, sys, re
labels, rep, tm, name = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), open(sys.argv[3]).read(), sys.argv[4]
scope = set(labels.get("files", []))
def where(l): return {(l["file"], n) for n in [l["line"]] + l.get("alt", [])}
findings = [f for f in rep["findings"] if not scope or f["file"] in scope]
at = {}
for f in findings: at.setdefault((f["file"], f["line"]), []).append(f)
keys = labels["keys"]
# A shape is right when it is the label's but for the placeholders' names.
def norm(s): return re.sub(r"\{[^{}]*\}", "{}", s or "")
# A key of several shapes (a method of a base class that each subclass
# runs with its own key) lists them in "shapes": right when each is found
# there and the line has no key of a shape no label there gives.
def shapes_of(k): return [norm(s) for s in k.get("shapes", [])] or ([norm(k["shape"])] if k.get("shape") else [])
allowed = {}
for k in keys:
    for w in where(k): allowed.setdefault(w, set()).update(shapes_of(k))
def right(k, hits):
    want = shapes_of(k)
    if not want: return False
    got = {norm(f.get("template")) for f in hits}
    if len(want) == 1 and "shapes" not in k: return want[0] in got
    extra = {norm(f.get("template")) for f in hits if f.get("rule") != "raw-key"} - set().union(*(allowed.get(w, set()) for w in where(k)))
    return set(want) <= got and not extra
found, shaped, via_want, via_ok = 0, 0, 0, 0
for k in keys:
    hits = [f for w in where(k) for f in at.get(w, [])]
    if hits: found += 1
    if right(k, hits): shaped += 1
    if "via" in k:
        via_want += 1
        if any(k["via"] in f.get("message", "") for f in hits): via_ok += 1
known = set()
for l in keys + labels.get("other", []): known |= where(l)
good = sum(1 for f in findings if (f["file"], f["line"]) in known)
wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", tm)
secs = (int(wall.group(1) or 0) * 60 + int(wall.group(2))) * 60 + float(wall.group(3)) if wall.group(1) else int(wall.group(2)) * 60 + float(wall.group(3))
rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", tm).group(1)) / 1024
files = sum(rep["files"].values())
rec = found / len(keys) if keys else 1.0
prec = good / len(findings) if findings else 1.0
via = f"{via_ok}/{via_want}" if via_want else "-"
shapes = sum(1 for k in keys if shapes_of(k))
print(f"| {name} | {labels['language']} | {files} | {len(keys)} | {found} | {rec:.2f} | {shaped}/{shapes} | {len(findings)} | {good} | {prec:.2f} | {via} | {secs:.2f} | {rss:.0f} |")
if "-v" in sys.argv or __import__("os").environ.get("VERBOSE"):
    for k in keys:
        hits = [f for w in where(k) for f in at.get(w, [])]
        if not hits: print(f"  missed {k['file']}:{k['line']} {k.get('shape','')}", file=sys.stderr)
        elif shapes_of(k) and not right(k, hits):
            print(f"  shape {k['file']}:{k['line']} {[f.get('template') for f in hits]}, labelled {k.get('shapes') or k.get('shape','')}", file=sys.stderr)
    for f in findings:
        if (f["file"], f["line"]) not in known: print(f"  not a key {f['file']}:{f['line']} {f.get('template','')}", file=sys.stderr)
PY
done
