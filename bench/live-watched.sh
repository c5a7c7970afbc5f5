#!/usr/bin/env bash
# live-watched.sh: what watching a run costs it (issue 53). The same access run, 4 KiB random
# reads at queue depth 1 on tmpfs for a few seconds, run in alternating pairs: once watched (a
# watcher process following it from its start to its end: `iomatrix watch RUN` by default, the
# viewer's live page's event stream with --watcher) and once alone. Prints the median IOPS of
# each, the paired ratio watched/alone with its intervals, and whether the 95% interval lies
# inside 0.97-1.03 (the goal: watching has no effect on the run's figures).
#
# Usage: bench/live-watched.sh [--pairs 7] [--duration 3s] [--file-size 64m] [--target DIR]
#            [--watcher CMD]
#
# WHAT IT RUNS (each pair: both, the first of the pair alternating)
#   alone     iomatrix run access --bs 4k --read 100 --random 100 --qd 1 --duration D
#             --file-size F --target T --json
#   watched   the same, and once the run has published its live state (<db>.live/RUN.json,
#             written by the run whatever watches it), CMD started beside it, to its end.
#   The run publishes its live state in both: the bench measures the watcher, the run's own cost
#   of publishing (one small file a second) is in both sides. One run before the pairs is not
#   counted (the first run of a fresh database and binary). The watchers' CPU time is printed.
#
# --watcher CMD: a bash command line, run with RUN (the run's id), IOMATRIX_DB (the database) and
#   IOMATRIX (the binary) in its environment; it should end when the run ends. Default:
#   '"$IOMATRIX" watch "$RUN"'. For the viewer (the lead's `iomatrix serve`), e.g.
#   --watcher 'curl -sN "$VIEWER/events/$RUN"' with VIEWER set to the address serve printed.
#
# WHERE
#   --target DIR: a fresh folder inside DIR; default (root): a fresh tmpfs, so the storage adds no
#   noise of its own; without root, /dev/shm. Everything is removed at the end, also on failure
#   or Ctrl-C.
#
# ENVIRONMENT
#   IOMATRIX_BIN=path (default: target/release/iomatrix of this workspace; the figures recorded
#   in bench/runs/live-watched-2026-12-07 are of target/debug/iomatrix, as they say).
set -euo pipefail

PROG="live-watched"
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=bench/lib.sh
source "$HERE/lib.sh"
IOMATRIX=${IOMATRIX_BIN:-$HERE/../target/release/iomatrix}

PAIRS=7
DURATION=3
FILE_SIZE=$((64 << 20))
TARGET=""
# shellcheck disable=SC2016 # expanded by the watcher's own bash, from its environment
WATCHER='"$IOMATRIX" watch "$RUN"'

usage() {
    sed -n '2,/^set -euo/{/^set -euo/d; s/^# \{0,1\}//; p}' "${BASH_SOURCE[0]}"
}

while [[ $# -gt 0 ]]; do
    case $1 in
    --pairs) need_value "$@"; PAIRS=$(whole_number "$2" "$1" 2); shift 2 ;;
    --duration) need_value "$@"; DURATION=$(to_seconds "$2" "$1"); shift 2 ;;
    --file-size) need_value "$@"; FILE_SIZE=$(to_bytes "$2" "$1"); shift 2 ;;
    --target) need_value "$@"; TARGET=$2; shift 2 ;;
    --watcher) need_value "$@"; WATCHER=$2; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
    esac
done
((DURATION >= 1)) || die "--duration must be at least 1s"
need_iomatrix IOMATRIX_BIN

SCRATCH="" # the results database, logs, and the tmpfs's mount point
TMPFS=""
WATCHING="" # the watcher's pid while it runs

remove_what_we_made() {
    local rc=0
    if [[ -n $WATCHING ]]; then
        kill -TERM "$WATCHING" 2>/dev/null || true
        wait "$WATCHING" 2>/dev/null || true
    fi
    if [[ -n $TMPFS ]] && ! unmount "$TMPFS"; then
        return 1
    fi
    [[ -z $SCRATCH ]] || remove_dir "$SCRATCH" || rc=1
    return "$rc"
}
trap on_exit EXIT
trap 'on_signal 130' INT
trap 'on_signal 143' TERM

SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/$PROG.XXXXXX")
DB=$SCRATCH/results.sqlite
RESULTS=$SCRATCH/results.tsv
: >"$RESULTS"
if [[ -n $TARGET ]]; then
    [[ -d $TARGET ]] || die "--target $TARGET: not a folder"
    WHERE=$TARGET
elif [[ $(id -u) == 0 ]]; then
    mkdir "$SCRATCH/tmpfs"
    TMPFS=$SCRATCH/tmpfs
    mount_tmpfs "$TMPFS" $((FILE_SIZE + (64 << 20)))
    WHERE=$TMPFS
else
    WHERE=/dev/shm
fi
RUNS=0 # runs stored so far: the next run's id in the fresh database is RUNS + 1

# start_watcher RUN LOG: waits (30 s at most) for the run's live state, then starts the watcher.
start_watcher() {
    local run=$1 log=$2 live="$DB.live/$1.json" tries
    for ((tries = 0; tries < 3000; tries++)); do
        [[ -e $live ]] && break
        kill -0 "$CHILD" 2>/dev/null || return 0
        sleep 0.01
    done
    [[ -e $live ]] || die "run #$run published no live state ($live) within 30 s"
    # The watcher's own CPU time (bash's `time`: user and system seconds) ends its log.
    # shellcheck disable=SC2016 # expanded by the watcher's bash, from its environment
    RUN=$run IOMATRIX_DB=$DB IOMATRIX=$IOMATRIX WATCHER=$WATCHER timeout --kill-after=5 $((DURATION + 120)) \
        bash -c 'TIMEFORMAT="watcher-cpu %U %S"; time eval "$WATCHER"' >"$log" 2>&1 &
    WATCHING=$!
}

# run_one MODE PAIR: one run, alone or watched; its IOPS appended to RESULTS.
run_one() {
    local mode=$1 pair=$2 run=$((RUNS + 1)) out="$SCRATCH/$1-$2" rc=0 figures
    IOMATRIX_BUSY_THRESHOLD=off timeout --kill-after=10 $((DURATION + 120)) "$IOMATRIX" --db "$DB" run access \
        --bs 4k --read 100 --random 100 --qd 1 --duration "${DURATION}s" --file-size "$FILE_SIZE" \
        --target "$WHERE" --json >"$out.json" 2>"$out.err" &
    CHILD=$!
    [[ $mode == alone ]] || start_watcher "$run" "$out.watch"
    wait "$CHILD" || rc=$?
    CHILD=""
    ((rc == 0)) || { sed 's/^/  | /' "$out.err" >&2; die "the $mode run of pair $pair failed (exit $rc)"; }
    RUNS=$run
    if [[ -n $WATCHING ]]; then
        rc=0
        wait "$WATCHING" || rc=$?
        WATCHING=""
        ((rc == 0)) || { sed 's/^/  | /' "$out.watch" >&2; die "the watcher of run #$run ended with $rc"; }
        WATCHED_LINES=$((WATCHED_LINES + $(grep -c '' "$out.watch")))
        awk '$1 == "watcher-cpu" { printf "%.3f\n", $2 + $3 }' "$out.watch" >>"$SCRATCH/watcher-cpu"
    fi
    figures=$(iomatrix_figures "$out.json" "$FILE_SIZE" psync 1 0 "$DURATION" read) ||
        die "the $mode run of pair $pair: unexpected output ($out.json)"
    printf '%s\t4k randread qd1\t%s\t%s\t%s\n' "$pair" "$mode" "$(cut -f1 <<<"$figures")" \
        "$(cut -f2 <<<"$figures")" >>"$RESULTS"
}

WATCHED_LINES=0
printf '%s: %d alternating pairs of a %ds 4k random read qd1 access run on %s, watched by: %s\n' \
    "$PROG" "$PAIRS" "$DURATION" "$WHERE" "$WATCHER"
printf '%s: iomatrix %s (%s); %s, %d CPUs\n' "$PROG" "$IOMATRIX_VERSION" "$IOMATRIX" "$(uname -r)" "$(nproc)"
# One run first, not counted: the first run of a fresh database and binary pays for both.
run_one alone 0
: >"$RESULTS"
for ((pair = 1; pair <= PAIRS; pair++)); do
    if ((pair % 2)); then
        run_one watched "$pair"
        run_one alone "$pair"
    else
        run_one alone "$pair"
        run_one watched "$pair"
    fi
done
printf 'the watchers printed %d lines over %d watched runs, using %s s of CPU each (user + system)\n' \
    "$WATCHED_LINES" "$PAIRS" "$(sort -n "$SCRATCH/watcher-cpu" | tr '\n' ' ')"
median_table "$RESULTS" watched,alone "watched/alone:0.97" watched,alone long
# The paired ratio's 95% t-interval (on the log ratios: the geometric mean), judged against the goal.
python3 - "$RESULTS" <<'PY'
import math, statistics, sys
iops = {}
for line in open(sys.argv[1]):
    pair, _, mode, value = line.split("\t")[:4]
    iops.setdefault(pair, {})[mode] = float(value)
logs = [math.log(p["watched"] / p["alone"]) for p in iops.values()]
n = len(logs)
# Student's t at 97.5% for n-1 degrees of freedom (n up to 31; beyond, 2.04).
t = [12.71, 4.30, 3.18, 2.78, 2.57, 2.45, 2.36, 2.31, 2.26, 2.23, 2.20, 2.18, 2.16, 2.14, 2.13, 2.12, 2.11, 2.10,
     2.09, 2.09, 2.08, 2.07, 2.07, 2.06, 2.06, 2.06, 2.05, 2.05, 2.05, 2.04][min(n - 2, 29)]
mean, half = statistics.mean(logs), t * statistics.stdev(logs) / math.sqrt(n)
low, high = math.exp(mean - half), math.exp(mean + half)
inside = 0.97 <= low and high <= 1.03
print("watched/alone IOPS, %d pairs: geometric mean %.3f, 95%% t-interval %.3f-%.3f: %s" % (
    n, math.exp(mean), low, high, "inside 0.97-1.03 (goal reached)" if inside else "NOT inside 0.97-1.03"))
print("each pair's ratio: " + " ".join("%.3f" % math.exp(v) for v in logs))
PY
