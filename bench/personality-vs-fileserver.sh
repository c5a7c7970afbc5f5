#!/usr/bin/env bash
# personality-vs-fileserver.sh: seed 003's load two ways on the same work: `iomatrix run
# fileserver` (the file-server suite's own engine) and `iomatrix run personality netware-2008`
# (the same load as a personality: filesets and flows through the personality engine), in
# alternating pairs, medians of each phase's operations per second and p99, and their ratio.
#
# Usage: bench/personality-vs-fileserver.sh [--repeats 5] [--connections 8] [--files 20]
#            [--target DIR]
#
# WHAT IT RUNS (each repeat: both, in alternating order)
#   fileserver   iomatrix run fileserver --connections N --files-per-connection M --record 4k
#                (sizes 4k,8k,...,2m cycled through: seed 003's)
#   personality  iomatrix run personality netware-2008 --connections N --files M
#                (the built-in: create+close, open, write whole in 4k records, close; then
#                open, read whole, close; the same sizes cycled through)
#   Both do exactly the same operations and bytes (tests/cli/personality.rs checks it); the
#   figure per phase is operations over the phase's completion time (common start to the last
#   connection's last operation), the p99 that of each phase's write or read requests.
#   Defaults are netware-2008's --scale small (8 connections x 20 files, about 66 MiB a run).
#
# WHERE
#   --target DIR: a fresh folder inside DIR; default (root): a fresh tmpfs, so the storage
#   adds no noise of its own; without root, /var/tmp. Everything is removed at the end, also
#   on failure or Ctrl-C.
#
# ENVIRONMENT
#   IOMATRIX_BIN=path (default: target/release/iomatrix of this workspace).
set -euo pipefail

PROG=personality-vs-fileserver
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=bench/lib.sh
source "$HERE/lib.sh"
IOMATRIX=${IOMATRIX_BIN:-$HERE/../target/release/iomatrix}

REPEATS=5
CONNECTIONS=8
FILES=20
TARGET=""

usage() {
    sed -n '2,/^set -euo/{/^set -euo/d; s/^# \{0,1\}//; p}' "${BASH_SOURCE[0]}"
}

while [[ $# -gt 0 ]]; do
    case $1 in
    --repeats) need_value "$@"; REPEATS=$(whole_number "$2" "$1" 5); shift 2 ;;
    --connections) need_value "$@"; CONNECTIONS=$(whole_number "$2" "$1" 1); shift 2 ;;
    --files) need_value "$@"; FILES=$(whole_number "$2" "$1" 1); shift 2 ;;
    --target) need_value "$@"; TARGET=$2; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
    esac
done
need_iomatrix IOMATRIX_BIN

SCRATCH="" # the results database, logs, and the tmpfs's mount point
TMPFS=""

remove_what_we_made() {
    local rc=0
    if [[ -n $TMPFS ]] && ! unmount "$TMPFS"; then
        return 1
    fi
    [[ -z $SCRATCH ]] || remove_dir "$SCRATCH" || rc=1
    return "$rc"
}

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
    mount_tmpfs "$TMPFS" $((2 << 30))
    WHERE=$TMPFS
else
    WHERE=/var/tmp
fi

# run_one TOOL REPEAT: one run, its phases' figures appended to RESULTS.
run_one() {
    local tool=$1 rep=$2 args
    if [[ $tool == fileserver ]]; then
        args=(run fileserver --connections "$CONNECTIONS" --files-per-connection "$FILES" --record 4k)
    else
        args=(run personality netware-2008 --connections "$CONNECTIONS" --files "$FILES")
    fi
    run_child 600 "$SCRATCH/$tool-$rep.json" "$SCRATCH/$tool-$rep.err" \
        "$IOMATRIX" --db "$DB" "${args[@]}" --target "$WHERE" --json ||
        { sed 's/^/  | /' "$SCRATCH/$tool-$rep.err" >&2; die "$tool (repeat $rep) failed"; }
    python3 - "$SCRATCH/$tool-$rep.json" "$rep" "$tool" >>"$RESULTS" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))
run = run.get("run", run)
for cell in run["cell_results"]:
    m, phase = cell["metrics"], cell["test"]
    op = "write" if phase == "write" else "read"
    ops_per_sec = cell["ops"] / (cell["wall_ns"] / 1e9)
    print("%s\t%s phase (ops %d, bytes %d)\t%s\t%.1f\t%d" % (sys.argv[2], phase, cell["ops"], cell["bytes"], sys.argv[3], ops_per_sec, m["ops"][op]["p99_ns"]))
PY
}

printf '%s: %d alternating pairs, %d connections x %d files (4k..2m cycled, 4k records), in %s; iomatrix %s\n' \
    "$PROG" "$REPEATS" "$CONNECTIONS" "$FILES" "$WHERE" "$IOMATRIX_VERSION"
for ((rep = 1; rep <= REPEATS; rep++)); do
    if ((rep % 2)); then
        run_one fileserver "$rep"
        run_one personality "$rep"
    else
        run_one personality "$rep"
        run_one fileserver "$rep"
    fi
done
echo "operations per second of each phase (IOPS: operations over the completion time), medians:"
median_table "$RESULTS" personality,fileserver "personality/fileserver:0.95" personality,fileserver long
