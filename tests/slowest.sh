#!/usr/bin/env bash
# Per-test wall times of one test binary, and its N slowest tests (issue 49, "CI stays fast").
#
#   tests/slowest.sh [--json FILE] [--top N] [--test BIN] [-- FILTER...]
#
# Builds `cargo test -p iomatrix --test BIN` (default cli), runs it as CI does (CI=true, the Open MPI
# root variables) with libtest's --report-time in JSON (RUSTC_BOOTSTRAP=1 unlocks -Z unstable-options
# at run time: libtest reads it, the build does not change), keeps the JSON in FILE and prints the N
# slowest tests with their seconds, the binary's total wall time and the load average before and after.
# `tests/slowest.sh --from FILE` only prints the table of a JSON kept earlier.
set -euo pipefail
cd "$(dirname "$0")/.."

json="" top=20 bin=cli from=""
while [ $# -gt 0 ]; do
  case "$1" in
    --json) json="$2"; shift 2 ;;
    --top) top="$2"; shift 2 ;;
    --test) bin="$2"; shift 2 ;;
    --from) from="$2"; shift 2 ;;
    --) shift; break ;;
    *) echo "usage: tests/slowest.sh [--json FILE] [--top N] [--test BIN] [--from FILE] [-- FILTER...]" >&2; exit 2 ;;
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

if [ -n "$from" ]; then table "$from"; exit 0; fi

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
