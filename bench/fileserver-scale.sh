#!/usr/bin/env bash
# fileserver-scale.sh: seed 003's file-server load, scaled to this machine, through iomatrix
# (iomatrix run fileserver), with its wall time and peak memory; and beside it, for reference,
# a small-file load from dbench and/or postmark on the same file system.
#
# Usage: bench/fileserver-scale.sh [--connections 590] [--files 50] [--sizes LIST] [--record 4k]
#            [--target DIR | --ext4 MIB] [--interleave N] [--fsync-every N] [--drop-caches]
#            [--reference dbench|postmark|both|none] [--dbench-seconds 30] [--dbench-clients N]
#            [--postmark-files 2000]
#
# WHAT IT RUNS
#   Seed 003: ~590 CIFS connections, each writing 1000 files of 4k..2m in 4 KiB records (about
#   230 GB), then the same connections reading them back, timed per operation type (open, close,
#   create, write, read), with each connection's average throughput and the completion time.
#   Scaled here by default to 590 connections x 50 files of the same ten sizes (file i of a
#   connection gets the (i mod 10)-th size: 4k, 8k, ..., 2m), 4 KiB records: 29,500 files,
#   about 11.5 GiB. All connections start each phase together; the read phase starts when the
#   write phase is over.
#     iomatrix  iomatrix run fileserver --connections N --files-per-connection M --sizes LIST
#               --record R [--interleave N] [--fsync-every N] [--drop-caches] --json
#   run under GNU time (/usr/bin/time -v) for its wall time and peak resident memory; without
#   GNU time the script polls VmHWM in /proc/PID/status instead (and says so).
#   The table printed is iomatrix's own (iomatrix show RUN), the script checks from the JSON
#   that every connection finished and that done = planned for every operation type.
#
# THE REFERENCE LOADS (not the same work; printed beside, never divided into a ratio)
#   dbench    dbench -D DIR -t SECONDS CLIENTS: Samba's NetBench file-server load (the
#             client.txt trace: NTCreateX, Close, ReadX, WriteX, Flush, ...) from CLIENTS
#             processes (default: --connections), each in its own folder, for SECONDS. It prints
#             the count, average and maximum latency (ms) of each operation and a throughput.
#   postmark  PostMark 1.5: one process, a pool of --postmark-files files with sizes uniform
#             between the smallest and the largest of --sizes, as many transactions (read or
#             append, create or delete), reads and writes of --record bytes, unbuffered.
#   Debian packages: dbench, postmark (apt-get install -y dbench postmark). A missing one is
#   skipped with that hint.
#
# WHERE
#   --target DIR: a fresh folder inside DIR (default /var/tmp). --ext4 MIB (root): a fresh ext4
#   image of MIB MiB under /var/tmp, loop-mounted, holding both iomatrix's and the reference
#   loads' files (one after the other). Everything the script makes is removed at the end, also
#   on failure or Ctrl-C.
#
# ENVIRONMENT
#   IOMATRIX_BIN=path (default: target/release/iomatrix of this workspace), DBENCH=path,
#   POSTMARK=path.
set -euo pipefail

PROG=fileserver-scale
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=bench/lib.sh
source "$HERE/lib.sh"
IOMATRIX=${IOMATRIX_BIN:-$HERE/../target/release/iomatrix}
DBENCH=${DBENCH:-dbench}
POSTMARK=${POSTMARK:-postmark}

CONNECTIONS=590
FILES=50
SIZES=4k,8k,16k,32k,64k,128k,256k,512k,1m,2m
RECORD=4k
TARGET=""
EXT4_MIB=""
INTERLEAVE=""
FSYNC_EVERY=""
DROP_CACHES=0
REFERENCE=both
DBENCH_SECONDS=30
DBENCH_CLIENTS=""
POSTMARK_FILES=2000

usage() {
    sed -n '2,/^set -euo/{/^set -euo/d; s/^# \{0,1\}//; p}' "${BASH_SOURCE[0]}"
}
whole() {
    [[ $2 =~ ^[0-9]+$ && $2 -gt 0 ]] || die "$1 '$2' is not a whole number above 0"
}

while [[ $# -gt 0 ]]; do
    case $1 in
    --connections) need_value "$@"; whole "$1" "$2"; CONNECTIONS=$2; shift 2 ;;
    --files) need_value "$@"; whole "$1" "$2"; FILES=$2; shift 2 ;;
    --sizes) need_value "$@"; SIZES=$2; shift 2 ;;
    --record) need_value "$@"; RECORD=$2; shift 2 ;;
    --target) need_value "$@"; TARGET=$2; shift 2 ;;
    --ext4) need_value "$@"; whole "$1" "$2"; EXT4_MIB=$2; shift 2 ;;
    --interleave) need_value "$@"; whole "$1" "$2"; INTERLEAVE=$2; shift 2 ;;
    --fsync-every) need_value "$@"; whole "$1" "$2"; FSYNC_EVERY=$2; shift 2 ;;
    --drop-caches) DROP_CACHES=1; shift ;;
    --reference) need_value "$@"; REFERENCE=$2; shift 2 ;;
    --dbench-seconds) need_value "$@"; whole "$1" "$2"; DBENCH_SECONDS=$2; shift 2 ;;
    --dbench-clients) need_value "$@"; whole "$1" "$2"; DBENCH_CLIENTS=$2; shift 2 ;;
    --postmark-files) need_value "$@"; whole "$1" "$2"; POSTMARK_FILES=$2; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
    esac
done
case $REFERENCE in
dbench | postmark | both | none) ;;
*) die "--reference '$REFERENCE': give dbench, postmark, both or none" ;;
esac
[[ -z $TARGET || -z $EXT4_MIB ]] || die "give --target or --ext4, not both"
[[ -n $DBENCH_CLIENTS ]] || DBENCH_CLIENTS=$CONNECTIONS

[[ -x $IOMATRIX ]] || die "no iomatrix binary at $IOMATRIX: build it with 'cargo build --release' (or set IOMATRIX_BIN=path)"
command -v python3 >/dev/null || die "python3 not found: it reads iomatrix's JSON"
command -v timeout >/dev/null || die "timeout (coreutils) not found"

# Bytes of a size as iomatrix reads it (k, m, g binary; a bare number is bytes).
RECORD_BYTES=$(to_bytes "$RECORD")
MIN_SIZE=""
MAX_SIZE=0
SIZE_BYTES=()
IFS=, read -r -a SIZE_LIST <<<"$SIZES"
for s in "${SIZE_LIST[@]}"; do
    [[ $s == *..* ]] && die "--sizes: give a plain list here (ranges are iomatrix's; the script needs each size)"
    b=$(to_bytes "$s")
    ((b > 0)) || die "--sizes: a size of 0"
    if [[ -z $MIN_SIZE ]] || ((b < MIN_SIZE)); then MIN_SIZE=$b; fi
    if ((b > MAX_SIZE)); then MAX_SIZE=$b; fi
    SIZE_BYTES+=("$b")
done

# ---- everything this script makes, and its removal -------------------------------------------

WORK=""    # our folder: iomatrix's target and the reference loads' folders
IMGDIR=""  # with --ext4: our folder under /var/tmp holding the image and its mount point
IMAGE=""
MNT=""
SCRATCH="" # local: the throwaway results database, outputs, logs

remove_what_we_made() {
    local rc=0
    [[ -z $WORK ]] || rm -rf -- "$WORK"
    [[ -z $IMGDIR ]] || remove_image "$IMGDIR" "$MNT" "$IMAGE" || rc=1
    [[ -z $SCRATCH ]] || rm -rf -- "$SCRATCH"
    return "$rc"
}

SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/$PROG-scratch.XXXXXX")
if [[ -n $EXT4_MIB ]]; then
    ((EUID == 0)) || die "--ext4 needs root (mount -o loop)"
    for tool in mkfs.ext4 mount umount mountpoint truncate; do
        command -v "$tool" >/dev/null || die "$tool not found: install util-linux, e2fsprogs and coreutils"
    done
    IMGDIR=$(mktemp -d "/var/tmp/$PROG.XXXXXX")
    IMAGE=$IMGDIR/fs.img
    MNT=$IMGDIR/mnt
    mkdir "$MNT"
    make_ext4 "$IMAGE" "$((EXT4_MIB << 20))" "$MNT" "$IMGDIR/mkfs.log"
    WORK=$MNT/work
    mkdir "$WORK"
else
    BASE=${TARGET:-/var/tmp}
    [[ -d $BASE ]] || die "--target '$BASE' is not a folder"
    [[ -w $BASE ]] || die "--target '$BASE' is not writable"
    WORK=$(mktemp -d "$BASE/$PROG.XXXXXX")
fi
mkdir "$WORK/iomatrix"

FSTYPE=$(findmnt -no FSTYPE -T "$WORK" 2>/dev/null | head -n 1 || true)
[[ -n $FSTYPE ]] || FSTYPE=$(stat -f -c %T "$WORK" 2>/dev/null || echo unknown)
IOMATRIX_VERSION=$("$IOMATRIX" --version 2>/dev/null | head -n 1) || die "'$IOMATRIX --version' failed"
# File i of every connection is the (i mod n)-th size, as iomatrix assigns them.
PER_CONNECTION=0
for ((i = 0; i < FILES; i++)); do
    PER_CONNECTION=$((PER_CONNECTION + SIZE_BYTES[i % ${#SIZE_BYTES[@]}]))
done
TOTAL_BYTES=$((PER_CONNECTION * CONNECTIONS))
echo "$PROG: $CONNECTIONS connections x $FILES files ($SIZES), $RECORD records, $((TOTAL_BYTES >> 20)) MiB in all; target $WORK ($FSTYPE); kernel $(uname -r); ${IOMATRIX_VERSION}; $(nproc) CPUs, $(awk '$1 == "MemTotal:" { printf "%.1f GiB RAM", $2 / 1048576 }' /proc/meminfo)"

# ---- iomatrix -----------------------------------------------------------------------------------

ARGS=(--db "$SCRATCH/results.sqlite" run fileserver --target "$WORK/iomatrix" --connections "$CONNECTIONS"
    --files-per-connection "$FILES" --sizes "$SIZES" --record "$RECORD" --json)
[[ -z $INTERLEAVE ]] || ARGS+=(--interleave "$INTERLEAVE")
[[ -z $FSYNC_EVERY ]] || ARGS+=(--fsync-every "$FSYNC_EVERY")
((DROP_CACHES == 0)) || ARGS+=(--drop-caches)
LIMIT=$((4 * 3600))
GNU_TIME=""
if [[ -x /usr/bin/time ]] && /usr/bin/time --version 2>&1 | grep -q GNU; then
    GNU_TIME=/usr/bin/time
fi

echo
echo "== iomatrix run fileserver (${ARGS[*]:2})"
START=$(date +%s.%N)
if [[ -n $GNU_TIME ]]; then
    if ! run_child "$LIMIT" "$SCRATCH/iomatrix.json" "$SCRATCH/iomatrix.err" \
        "$GNU_TIME" -v -o "$SCRATCH/time.txt" "$IOMATRIX" "${ARGS[@]}"; then
        sed 's/^/  | /' "$SCRATCH/iomatrix.err" >&2
        die "iomatrix failed (its messages are above)"
    fi
    PEAK_KIB=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$SCRATCH/time.txt")
    WALL=$(awk -F': ' '/Elapsed \(wall clock\)/ { print $2 }' "$SCRATCH/time.txt")
    HOW="GNU time: Maximum resident set size"
else
    # No GNU time: poll the process's high-water mark until it exits (the last reading stands).
    timeout --kill-after=10 "$LIMIT" "$IOMATRIX" "${ARGS[@]}" >"$SCRATCH/iomatrix.json" 2>"$SCRATCH/iomatrix.err" &
    CHILD=$!
    PEAK_KIB=0
    while kill -0 "$CHILD" 2>/dev/null; do
        for pid in $(pgrep -P "$CHILD" 2>/dev/null) "$CHILD"; do
            hwm=$(awk '$1 == "VmHWM:" { print $2 }' "/proc/$pid/status" 2>/dev/null || true)
            [[ -n $hwm ]] && ((hwm > PEAK_KIB)) && PEAK_KIB=$hwm
        done
        sleep 0.1
    done
    rc=0
    wait "$CHILD" || rc=$?
    CHILD=""
    if ((rc != 0)); then
        sed 's/^/  | /' "$SCRATCH/iomatrix.err" >&2
        die "iomatrix failed (its messages are above)"
    fi
    WALL=""
    HOW="VmHWM polled every 0.1 s (GNU time is not installed: apt-get install -y time)"
fi
END=$(date +%s.%N)
[[ -n $WALL ]] || WALL=$(python3 -c "import sys; print('%.2f s' % (float(sys.argv[2]) - float(sys.argv[1])))" "$START" "$END")
grep -v '^\[' "$SCRATCH/iomatrix.err" | sed 's/^/  /' || true

RUN_ID=$(python3 - "$SCRATCH/iomatrix.json" "$CONNECTIONS" "$FILES" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
connections, files = int(sys.argv[2]), int(sys.argv[3])
run = doc["run"]
problems = []
if run["status"] != "complete":
    problems.append("the run is %s (%s)" % (run["status"], run.get("error")))
for c in run["cell_results"]:
    m = c["metrics"]
    if m["planned"] != m["done"]:
        problems.append("%s: done %s, planned %s" % (c["test"], m["done"], m["planned"]))
    if m["connections_ok"] != connections:
        problems.append("%s: %d of %d connections finished, errors %s, %d samples lost"
                        % (c["test"], m["connections_ok"], connections, m["errors"], m["lost_samples"]))
    if m["done"]["files"] != connections * files:
        problems.append("%s: %d files, expected %d" % (c["test"], m["done"]["files"], connections * files))
for p in problems:
    print("check: " + p, file=sys.stderr)
print(run["id"])
EOF
)
echo
"$IOMATRIX" --db "$SCRATCH/results.sqlite" show "$RUN_ID" | sed -n '/^Write test/,$p'
echo
echo "iomatrix: wall time $WALL, peak memory $((PEAK_KIB / 1024)) MiB ($PEAK_KIB KiB; $HOW)"
echo "          every operation planned was done and timed, in every connection, unless a 'check:' line says otherwise above"
rm -rf -- "${WORK:?}/iomatrix"
sync

# ---- the reference loads ------------------------------------------------------------------------

run_dbench() {
    if ! command -v "$DBENCH" >/dev/null; then
        echo "== dbench: not installed; skipped (Debian: apt-get install -y dbench)"
        return 0
    fi
    local dir=$WORK/dbench
    mkdir "$dir"
    echo
    echo "== dbench -D $dir -t $DBENCH_SECONDS $DBENCH_CLIENTS   (NetBench trace, $DBENCH_CLIENTS client processes, reference only)"
    if ! run_child $((DBENCH_SECONDS + 1800)) "$SCRATCH/dbench.out" "$SCRATCH/dbench.err" \
        "$DBENCH" -D "$dir" -t "$DBENCH_SECONDS" "$DBENCH_CLIENTS"; then
        tail -n 20 "$SCRATCH/dbench.out" "$SCRATCH/dbench.err" | sed 's/^/  | /' >&2
        echo "dbench failed (its last lines are above); going on"
    else
        # The operation table (count, average and maximum latency in ms) and the throughput line.
        sed -n '/^ Operation/,$p' "$SCRATCH/dbench.out" | sed '/^$/d'
    fi
    rm -rf -- "$dir"
    sync
}

run_postmark() {
    if ! command -v "$POSTMARK" >/dev/null; then
        echo "== postmark: not installed; skipped (Debian: apt-get install -y postmark)"
        return 0
    fi
    local dir=$WORK/postmark
    mkdir "$dir"
    echo
    echo "== postmark: $POSTMARK_FILES files of $MIN_SIZE..$MAX_SIZE bytes, $POSTMARK_FILES transactions, $RECORD_BYTES-byte reads and writes, unbuffered (one process, reference only)"
    printf 'set location %s\nset number %d\nset transactions %d\nset size %d %d\nset read %d\nset write %d\nset buffering false\nrun\nquit\n' \
        "$dir" "$POSTMARK_FILES" "$POSTMARK_FILES" "$MIN_SIZE" "$MAX_SIZE" "$RECORD_BYTES" "$RECORD_BYTES" \
        >"$SCRATCH/postmark.cfg"
    if ! run_child 7200 "$SCRATCH/postmark.out" "$SCRATCH/postmark.err" "$POSTMARK" "$SCRATCH/postmark.cfg"; then
        tail -n 20 "$SCRATCH/postmark.out" "$SCRATCH/postmark.err" | sed 's/^/  | /' >&2
        echo "postmark failed (its last lines are above); going on"
    else
        sed -n '/^Time:/,$p' "$SCRATCH/postmark.out" | sed '/^pm>/d; /^$/d'
    fi
    rm -rf -- "$dir"
}

case $REFERENCE in
dbench) run_dbench ;;
postmark) run_postmark ;;
both)
    run_dbench
    run_postmark
    ;;
none) ;;
esac

echo
echo "$PROG: iomatrix's times are per operation (ms, from its HDR histograms); dbench's are per NetBench"
echo "operation (ms, AvgLat/MaxLat) over a different mix (renames, stats, finds, locks, flushes), and"
echo "postmark's are whole seconds for a single process. Compare shapes and orders of magnitude, not ratios."
