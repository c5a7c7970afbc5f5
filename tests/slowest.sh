#!/usr/bin/env bash
# Per-test wall times of one test binary, and its N slowest tests (issue 49, "CI stays fast").
#
#   tests/slowest.sh [--json FILE] [--top N] [--test BIN] [-- FILTER...]
#
# Builds `cargo test -p iomatrix --test BIN` (default cli), runs it as CI does (CI=true, the Open MPI
# root variables) with libtest's --report-time in JSON (RUSTC_BOOTSTRAP=1 unlocks -Z unstable-options
# at run time: libtest reads it, the build does not change), keeps the JSON in FILE and prints the N
# slowest tests with their seconds, the binary's total wall time and the load average before and after.
# `tests/slowest.sh --from FILE` only prints the table of a JSON kept earlier; `--compare BEFORE AFTER`
# prints the N slowest of each with the other's time beside it (the issue's closing note).
set -euo pipefail
cd "$(dirname "$0")/.."

json="" top=20 bin=cli from="" compare=()
while [ $# -gt 0 ]; do
  case "$1" in
    --json) json="$2"; shift 2 ;;
    --top) top="$2"; shift 2 ;;
    --test) bin="$2"; shift 2 ;;
    --from) from="$2"; shift 2 ;;
    --compare) compare=("$2" "$3"); shift 3 ;;
    --) shift; break ;;
    *) echo "usage: tests/slowest.sh [--json FILE] [--top N] [--test BIN] [--from FILE] [--compare BEFORE AFTER] [-- FILTER...]" >&2; exit 2 ;;
  esac
done

table() {
  # One line per finished test: seconds, outcome, name; slowest first.
  python3 - "$1" "$top" <<'PY'
import json, sys
rows, suite = [], None
for line in open(sys.argv[1]):
    line = line.strip()
    if not line.startswith("{"):
        continue
    try:
        ev = json.loads(line)
    except ValueError:
        continue
    if ev.get("type") == "test" and ev.get("event") in ("ok", "failed", "ignored") and "exec_time" in ev:
        rows.append((ev["exec_time"], ev["event"], ev["name"]))
    if ev.get("type") == "suite" and ev.get("event") in ("ok", "failed"):
        suite = ev
rows.sort(reverse=True)
top = int(sys.argv[2])
print(f"{'seconds':>9}  {'result':<6}  test")
for secs, outcome, name in rows[:top]:
    print(f"{secs:9.1f}  {outcome:<6}  {name}")
total = sum(r[0] for r in rows)
print(f"{len(rows)} tests; sum of test times {total:.0f} s; top {top} sum {sum(r[0] for r in rows[:top]):.0f} s")
if suite:
    print(f"binary: {suite['event']}, passed {suite.get('passed')}, failed {suite.get('failed')}, "
          f"wall {suite.get('exec_time', 0):.0f} s")
PY
}

compare() {
  python3 - "$1" "$2" "$top" <<'PY'
import json, sys
def times(path):
    t, wall = {}, None
    for line in open(path):
        try:
            ev = json.loads(line)
        except ValueError:
            continue
        if ev.get("type") == "test" and "exec_time" in ev:
            t[ev["name"]] = (ev["exec_time"], ev["event"])
        if ev.get("type") == "suite" and "exec_time" in ev:
            wall = ev["exec_time"]
    return t, wall
(before, bwall), (after, awall) = times(sys.argv[1]), times(sys.argv[2])
top = int(sys.argv[3])
def show(title, first, second, names):
    print(f"{title}\n{'first':>8} {'second':>8}  test")
    for n in names:
        a = f"{first[n][0]:8.1f}"
        b = f"{second[n][0]:8.1f}" if n in second else f"{'-':>8}"
        mark = "" if first[n][1] == "ok" and (n not in second or second[n][1] == "ok") else "  (failed in one)"
        print(f"{a} {b}  {n}{mark}")
slow_before = sorted(before, key=lambda n: -before[n][0])[:top]
slow_after = sorted(after, key=lambda n: -after[n][0])[:top]
show(f"the {top} slowest before (first: before, second: after)", before, after, slow_before)
print()
show(f"the {top} slowest after (first: after, second: before)", after, before, slow_after)
both = set(before) & set(after)
print(f"\ntests in both: {len(both)}; sum of their times: before {sum(before[n][0] for n in both):.0f} s, "
      f"after {sum(after[n][0] for n in both):.0f} s")
print(f"binary wall: before {bwall if bwall is None else round(bwall)} s, after {awall if awall is None else round(awall)} s")
PY
}

if [ -n "$from" ]; then table "$from"; exit 0; fi
if [ "${#compare[@]}" = 2 ]; then compare "${compare[@]}"; exit 0; fi

exe=$(cargo test -p iomatrix --test "$bin" --no-run --message-format json 2>/dev/null \
  | python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == sys.argv[1]:
        print(m["executable"])' "$bin" | tail -1)
[ -n "$exe" ] || { echo "slowest.sh: cargo built no test binary named $bin" >&2; exit 1; }
[ -n "$json" ] || json=$(mktemp --suffix=.json)
echo "binary: $exe" >&2
echo "load before: $(uptime)" >&2
start=$(date +%s)
status=0
CI=true RUSTC_BOOTSTRAP=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
  "$exe" -Z unstable-options --report-time --format json "$@" >"$json" || status=$?
echo "load after:  $(uptime)" >&2
echo "wall: $(( $(date +%s) - start )) s, exit $status, JSON in $json" >&2
table "$json"
exit "$status"
