#!/usr/bin/env bash
# access-vs-fio.sh: iomatrix's access suite beside fio, on the same file system, doing the same work.
#
# Usage: bench/access-vs-fio.sh [--target DIR] [--size 1g] [--duration 10s] [--repeats 5]
#
# WHAT IT MEASURES
#   4 KiB reads at uniformly random 4 KiB-aligned offsets of one file (with replacement), for a
#   fixed time, in four cases, each run by iomatrix (`run access`) and by fio:
#     psync qd1 cached                  pread(2), one request at a time, file in the page cache
#     io_uring qd32 cached              io_uring, 32 requests in flight, file in the page cache
#     psync qd1 direct (ext4 loop)      pread(2) with O_DIRECT, on an ext4 image the script makes
#     io_uring qd32 direct (ext4 loop)  io_uring with O_DIRECT, 32 in flight, on that image
#   For each it prints the median IOPS of each tool over --repeats runs, the ratio iomatrix/fio,
#   and each tool's median p99 latency; every single run's figures above the table; and the
#   conditions (file systems, sizes, kernel, tool versions).
#   The cached cases run in a fresh folder on --target (default: under /var/tmp). The direct
#   cases run on an ext4 file system made for the purpose: an image of twice the file size (at
#   least 128 MiB) in a fresh folder under /var/tmp (truncate, mkfs.ext4 -q -F), mounted with
#   mount -o loop, which attaches the loop device with autoclear. So this script needs root.
#
# WHY THE SETTINGS MATCH
#   iomatrix:  iomatrix run access --bs 4096 --read 100 --random 100 --qd Q --backend B
#              --file-size SIZE --duration D [--direct] --json, with a throwaway --db. It lays out
#              its own file (written sequentially and fsynced, untimed; the pages stay cached),
#              opens it (O_DIRECT with --direct) and for D keeps Q requests in flight. Its seed is
#              fixed, so every run reads the same sequence of offsets. With io_uring it uses
#              registered buffers and a registered file, pushes a request for every free slot and
#              hands them to the kernel in groups of up to Q/8 (1 to 8; 4 at depth 32) as they are
#              prepared, the group that fills the queue in one io_uring_enter with the wait for at
#              least one completion, and it takes every completion that is there.
#   fio, one invocation per run, on one file in a folder of its own on the same file system:
#     all:      --rw=randread --bs=4096 --size=SIZE --time_based --runtime=D --thread --numjobs=1
#               --norandommap   offsets with replacement, as iomatrix draws them
#               --randrepeat=1  a fixed seed, so every run reads the same offsets (as iomatrix)
#               --invalidate=0  fio would otherwise drop the file's page cache at open
#               --fadvise_hint=0  fio would otherwise posix_fadvise(RANDOM); iomatrix gives no hint
#               --lat_percentiles=1 --group_reporting --output-format=json
#     psync:    --ioengine=psync --iodepth=1
#     io_uring: --ioengine=io_uring --iodepth=32 --fixedbufs --registerfiles --hipri=0
#               --sqthread_poll=0 (registered buffers and file, interrupt-driven, no SQ thread)
#               --iodepth_batch_submit=4 --iodepth_batch_complete_min=1
#               --iodepth_batch_complete_max=32   iomatrix's batching: hand requests to the kernel
#               as soon as 4 are prepared (bench/lib.sh submit_group), wait for at least one
#               completion, take all that are there. (fio's defaults, submit 1 and complete_max =
#               complete_min = 1, make fio enter the kernel once per request once the queue is
#               full.)
#               Ring flags: fio 3.33 sets its ring up with
#               IORING_SETUP_COOP_TASKRUN|SINGLE_ISSUER|DEFER_TASKRUN (no fio option changes it);
#               iomatrix with COOP_TASKRUN where the kernel has it (5.19+) and, since issue 16's
#               hot-path change, SINGLE_ISSUER|DEFER_TASKRUN too where the kernel takes them.
#               Without them, completions that arrive from another CPU (O_DIRECT) interrupt the
#               thread with an IPI. Cached reads complete inside io_uring_enter: no effect.
#     direct:   --direct=1 (and iomatrix --direct): O_DIRECT, page-aligned buffers in both.
#   fio's file is laid out by fio itself in an untimed invocation of its own (--create_only=1:
#   fallocate, written in full, fsync; it is then checked to be SIZE bytes and fully allocated,
#   not sparse), so both tools read a file of the same size that was fully written.
#   Cached cases: fio's layout ends with posix_fadvise(DONTNEED), which drops the file from the
#   page cache, so the script reads it once (dd, untimed) and checks with fincore that all of it
#   is cached before the timed run. iomatrix's layout leaves its file cached. As evidence that
#   both tools read a cached file, each cached run's line shows the data the system read from
#   block devices meanwhile (/proc/vmstat pgpgin, all processes); a run that read more than 5%
#   of the file is flagged with '!' and a warning.
#   Latency: iomatrix times each request from just before it queues it to when it sees its
#   completion; that is fio's total latency, lat_ns (from when fio prepares the request), not
#   clat_ns (from when it is handed to the kernel): the p99 columns compare lat_ns, hence
#   --lat_percentiles=1. At depth 1 with psync the two are the same. With io_uring both include
#   the wait in the submission queue until the batch is submitted.
#   Both tools' IOPS are requests completed over the time of the I/O loop (iomatrix: its wall
#   time; fio: read.iops, over its runtime in whole milliseconds).
#   Per repeat, each case runs iomatrix and fio back to back; the tool that goes first alternates
#   from repeat to repeat so that neither always runs on the warmer (or busier) system. Only one
#   tool's file exists at a time (fio's is removed before iomatrix runs, iomatrix removes its
#   own). Exactly 4 x repeats x 2 timed runs, plus the untimed layouts and fio's read-in passes.
#
# HOW TO READ THE RATIO
#   iomatrix/fio near 1.0 means iomatrix's per-request overhead is like fio's: both issue the
#   same system calls (the batching above makes that true for io_uring too), so the difference
#   is what each tool does around them: picking offsets, taking timestamps, recording latency.
#   Above 1.0 iomatrix was faster. The cached cases are page-cache speeds (memory copies and
#   system calls), where that overhead shows most. The direct cases go through ext4, the block
#   layer and the loop driver, which reads the image file through the page cache of the file
#   system under it (the loop device is not in direct-I/O mode), so they measure that path, not
#   the disk; still the same work for both tools.
#   This machine may be shared and noisy, so single runs scatter; the table quotes medians of
#   several runs. Look at the per-run lines before trusting a ratio far from 1.0.
#
# Environment: IOMATRIX_BIN=path overrides the binary (default: target/release/iomatrix of this
# workspace; build it with `cargo build --release`). FIO=path overrides fio.
# Everything the script makes (its folder on the target, the ext4 image's folder with its mount
# and loop device, a scratch folder with a throwaway results database and logs) is removed at
# the end, also on failure or Ctrl-C; it then checks that no loop device is left on the image.

set -euo pipefail

PROG=access-vs-fio
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=bench/lib.sh
source "$SCRIPT_DIR/lib.sh"
IOMATRIX=${IOMATRIX_BIN:-$SCRIPT_DIR/../target/release/iomatrix}
FIO=${FIO:-fio}

usage() {
    cat <<EOF
Usage: $0 [--target DIR] [--size 1g] [--duration 10s] [--repeats 5]

Runs 4 KiB random reads through iomatrix's access suite and through fio on the same file
systems (psync at depth 1 and io_uring at depth 32; page-cached, and O_DIRECT on an ext4
image the script loop-mounts) and prints the median IOPS of each tool, the ratio
iomatrix/fio and each tool's median p99 latency. Needs root (mount -o loop).

  --target DIR     folder for the cached cases; a fresh subfolder is made and removed
                   [default: a fresh folder under /var/tmp]
  --size SIZE      file size, k/m/g/t = 1024-based; the ext4 image is twice this
                   [default: 1g]
  --duration TIME  how long each run reads: seconds, or with s or m [default: 10s]
  --repeats N      runs of each tool per case; medians are quoted [default: 5]
EOF
}

TARGET=""
SIZE=1g
DURATION=10s
REPEATS=5

while [[ $# -gt 0 ]]; do
    case $1 in
    --target) need_value "$@"; TARGET=$2; shift 2 ;;
    --target=*) TARGET=${1#*=}; shift ;;
    --size) need_value "$@"; SIZE=$2; shift 2 ;;
    --size=*) SIZE=${1#*=}; shift ;;
    --duration) need_value "$@"; DURATION=$2; shift 2 ;;
    --duration=*) DURATION=${1#*=}; shift ;;
    --repeats) need_value "$@"; REPEATS=$2; shift 2 ;;
    --repeats=*) REPEATS=${1#*=}; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument '$1'" ;;
    esac
done

BS=4096
SIZE_BYTES=$(to_bytes "$SIZE" --size)
SECS=$(to_seconds "$DURATION")
REPEATS=$(whole_number "$REPEATS" --repeats 1)
((SECS >= 1)) || die "--duration must be at least 1 second"
((SIZE_BYTES >= 1 << 20)) || die "--size ($SIZE) must be at least 1m"
((SIZE_BYTES % BS == 0)) || die "--size ($SIZE) must be a whole number of 4 KiB blocks"
# The ext4 image: twice the file (one file at a time lives on it, plus ext4's own metadata).
IMAGE_BYTES=$((2 * SIZE_BYTES))
((IMAGE_BYTES >= 128 << 20)) || IMAGE_BYTES=$((128 << 20))

((EUID == 0)) || die "needs root: the direct cases run on an ext4 image it mounts with 'mount -o loop'"
need_iomatrix IOMATRIX_BIN
need_fio
command -v python3 >/dev/null || die "python3 not found: it computes the medians and reads the JSON"
for tool in mkfs.ext4 mount umount mountpoint losetup findmnt fincore truncate timeout dd; do
    command -v "$tool" >/dev/null || die "$tool not found: install util-linux, e2fsprogs and coreutils"
done

KERNEL=$(uname -r)

# ---- everything this script makes, and its removal -------------------------------------------

WORK=""     # our folder on the target: the cached cases' files live in it
IMGDIR=""   # our folder under /var/tmp: the ext4 image and its mount point
IMAGE=""    # the ext4 image file
MNT=""      # where the image is mounted
LOOPDEV=""  # the loop device mount attached to the image (for the conditions line)
SCRATCH=""  # local: the throwaway results database, JSON outputs and logs

remove_what_we_made() {
    local rc=0
    [[ -z $WORK ]] || rm -rf -- "$WORK"
    [[ -z $IMGDIR ]] || remove_image "$IMGDIR" "$MNT" "$IMAGE" || rc=1
    [[ -z $SCRATCH ]] || rm -rf -- "$SCRATCH"
    return "$rc"
}

# Each child is bounded: the run itself, plus time for a layout at 8 MiB/s, plus 5 minutes.
LIMIT=$((SECS + 300 + SIZE_BYTES / (8 << 20)))

if [[ -n $TARGET ]]; then
    [[ -d $TARGET ]] || die "--target '$TARGET' is not a folder"
    [[ -w $TARGET ]] || die "--target '$TARGET' is not writable"
    BASE=$(cd "$TARGET" && pwd)
else
    BASE=/var/tmp
fi
IMAGE_BASE=/var/tmp

# Space: on the target one file at a time (fio's is removed before iomatrix runs, iomatrix
# removes its own), plus 10%; under /var/tmp the image, which may fill up to its full size.
NEED=$((SIZE_BYTES + SIZE_BYTES / 10))
IMAGE_NEED=$((IMAGE_BYTES + IMAGE_BYTES / 20))
free_bytes() {
    local avail
    avail=$(df -P -B1 -- "$1" | awk 'NR == 2 { print $4 }')
    [[ $avail =~ ^[0-9]+$ ]] || die "cannot tell the free space of $1 (df said '$avail')"
    echo "$avail"
}
AVAIL=$(free_bytes "$BASE")
IMAGE_AVAIL=$(free_bytes "$IMAGE_BASE")
if [[ $(stat -c %d -- "$BASE") == "$(stat -c %d -- "$IMAGE_BASE")" ]]; then
    NEED=$((NEED + IMAGE_NEED))
    IMAGE_NEED=$NEED
fi
if ((AVAIL < NEED)); then
    die "$BASE has $((AVAIL >> 20)) MiB free; a $SIZE file needs $((NEED >> 20)) MiB (with the ext4 image if it shares the file system): choose a smaller --size or another --target"
fi
if ((IMAGE_AVAIL < IMAGE_NEED)); then
    die "$IMAGE_BASE has $((IMAGE_AVAIL >> 20)) MiB free; the $(human "$IMAGE_BYTES") ext4 image needs $((IMAGE_NEED >> 20)) MiB: choose a smaller --size"
fi
# The cached cases need the file (and fio's read-in pass) to stay in RAM.
MEM_AVAIL=$(awk '$1 == "MemAvailable:" { print $2 * 1024 }' /proc/meminfo)
if [[ $MEM_AVAIL =~ ^[0-9]+$ ]] && ((MEM_AVAIL < 2 * SIZE_BYTES)); then
    warn "only $((MEM_AVAIL >> 20)) MiB of memory available: a $SIZE file may not stay in the page cache for the cached cases; choose a smaller --size"
fi

WORK=$(mktemp -d "$BASE/$PROG.XXXXXX")
IMGDIR=$(mktemp -d "$IMAGE_BASE/$PROG-ext4.XXXXXX")
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/$PROG-scratch.XXXXXX")
DB=$SCRATCH/results.sqlite
IMAGE=$IMGDIR/ext4.img
MNT=$IMGDIR/mnt
mkdir "$WORK/fio" "$MNT"

make_ext4 "$IMAGE" "$IMAGE_BYTES" "$MNT" "$SCRATCH/ext4.log"
LOOPDEV=$(findmnt -no SOURCE -- "$MNT" 2>/dev/null || echo "?")
mkdir "$MNT/fio"

# ---- conditions -----------------------------------------------------------------------------

FSTYPE=$(findmnt -no FSTYPE -T "$WORK" 2>/dev/null | head -n 1 || true)
[[ -n $FSTYPE ]] || FSTYPE=$(stat -f -c %T "$WORK" 2>/dev/null || echo unknown)
case $FSTYPE in
tmpfs | ramfs) warn "$WORK is on $FSTYPE (memory), not a disk" ;;
esac

CONDITIONS="target $WORK ($FSTYPE), ext4 image $IMAGE ($(human "$IMAGE_BYTES") on $LOOPDEV), file $SIZE, 4k random reads, ${SECS}s per run, $REPEATS repeats, kernel $KERNEL, $FIO_VERSION, iomatrix $IOMATRIX_VERSION"
echo "$PROG: $CONDITIONS"
echo "$PROG: 4 cases x $REPEATS repeats x 2 tools = $((8 * REPEATS)) timed runs of ${SECS}s, plus untimed layouts"

# ---- the cases ------------------------------------------------------------------------------

CASE_LABEL=("psync qd1 cached" "io_uring qd32 cached" "psync qd1 direct (ext4 loop)" "io_uring qd32 direct (ext4 loop)")
CASE_BACKEND=(psync io_uring psync io_uring)
CASE_QD=(1 32 1 32)
CASE_DIRECT=(0 0 1 1)
CASE_DIR=("$WORK" "$WORK" "$MNT" "$MNT")
NCASES=${#CASE_LABEL[@]}

# ---- the runs -------------------------------------------------------------------------------

RESULTS=$SCRATCH/results.tsv # repeat, case label, tool, IOPS, p99 ns, mean ns, timed s, disk KiB or -
: >"$RESULTS"

# Data read from block devices since boot, KiB (all processes).
pgpgin() {
    awk '$1 == "pgpgin" { print $2 }' /proc/vmstat
}

# Appends one run's figures ("IOPS<TAB>p99 ns<TAB>mean ns<TAB>timed s") to the results with
# the KiB read from block devices during the run, and prints its line. In the cached cases
# that should be about nothing; more than 5% of the file is flagged.
record() {
    local rep=$1 case=$2 tool=$3 parsed=$4 disk_kib=$5 flag=""
    if ((CASE_DIRECT[case])); then
        disk_kib=-
    elif ((disk_kib * 1024 > SIZE_BYTES / 20)); then
        flag="!"
        warn "$tool read $((disk_kib >> 10)) MiB from block devices during its '${CASE_LABEL[case]}' run in repeat $rep: its file was not (all) cached, or something else was reading"
    fi
    printf '%s\t%s\t%s\t%s\t%s\n' "$rep" "${CASE_LABEL[case]}" "$tool" "$parsed" "$disk_kib" >>"$RESULTS"
    printf '%s\n' "$parsed" | awk -F'\t' -v r="$rep" -v c="${CASE_LABEL[case]}" -v t="$tool" -v d="$disk_kib" -v f="$flag" '
        { printf "%-7s %-33s %-9s %10d %10.1f %10.1f %8.3f %8s%s\n", r, c, t, $1, $2 / 1000, $3 / 1000, $4,
                 d == "-" ? d : sprintf("%d", d / 1024), f }'
}

run_iomatrix() {
    local rep=$1 case=$2 name=iomatrix-$1-$2
    local json=$SCRATCH/$name.json log=$SCRATCH/$name.log
    local args=(--db "$DB" run access --target "${CASE_DIR[case]}" --bs "$BS" --read 100 --random 100
        --qd "${CASE_QD[case]}" --backend "${CASE_BACKEND[case]}" --file-size "$SIZE_BYTES"
        --duration "${SECS}s" --json)
    ((CASE_DIRECT[case])) && args+=(--direct)
    local before after
    before=$(pgpgin)
    if ! run_child "$LIMIT" "$json" "$log" "$IOMATRIX" "${args[@]}"; then
        sed 's/^/  | /' "$log" >&2
        die "iomatrix failed in '${CASE_LABEL[case]}', repeat $rep (its messages are above)"
    fi
    after=$(pgpgin)
    local parsed
    parsed=$(iomatrix_figures "$json" "$SIZE_BYTES" "${CASE_BACKEND[case]}" "${CASE_QD[case]}" \
        "${CASE_DIRECT[case]}" "$SECS" read) || die "iomatrix's output in '${CASE_LABEL[case]}', repeat $rep is not as expected"
    record "$rep" "$case" iomatrix "$parsed" $((after - before))
}

run_fio() {
    local rep=$1 case=$2 name=fio-$1-$2
    local file=${CASE_DIR[case]}/fio/testfile
    local json=$SCRATCH/$name.json log=$SCRATCH/$name.log
    local where="'${CASE_LABEL[case]}', repeat $rep"
    # Layout, untimed: fio writes the whole file (and drops it from the page cache).
    fio_layout "$LIMIT" "$file" "$SIZE_BYTES" "$BS" "$SCRATCH/$name-layout" "$where"
    if ((!CASE_DIRECT[case])); then
        # Read it into the page cache, untimed, and check that all of it is there.
        run_child "$LIMIT" /dev/null "$SCRATCH/$name-readin.log" dd if="$file" of=/dev/null bs=1M status=none ||
            die "could not read $file into the page cache in $where"
        check_cached "$file" "$SIZE_BYTES" "fio's file after reading it in ($where)"
    fi
    fio_args "$file" randread "$SIZE_BYTES" "$BS" "${CASE_BACKEND[case]}" "${CASE_QD[case]}" "${CASE_DIRECT[case]}" "$SECS"
    local before after
    before=$(pgpgin)
    if ! run_child "$LIMIT" "$json" "$log" "$FIO" "${FIO_ARGS[@]}"; then
        sed 's/^/  | /' "$log" "$json" >&2
        die "fio failed in $where (its messages are above)"
    fi
    after=$(pgpgin)
    local parsed
    parsed=$(fio_figures "$json" "$SECS" read) || die "fio's output in $where: see above"
    rm -f -- "$file"
    record "$rep" "$case" fio "$parsed" $((after - before))
}

echo
echo "per run: IOPS, read latency p99 and mean in us (iomatrix: submit to completion; fio: lat_ns),"
echo "timed seconds, MiB read from block devices during the run (cached cases: should be ~0)"
printf '%-7s %-33s %-9s %10s %10s %10s %8s %8s\n' repeat case tool IOPS "p99 us" "mean us" "timed s" "disk MiB"
for ((rep = 1; rep <= REPEATS; rep++)); do
    for ((case = 0; case < NCASES; case++)); do
        if ((rep % 2 == 1)); then
            run_iomatrix "$rep" "$case"
            run_fio "$rep" "$case"
        else
            run_fio "$rep" "$case"
            run_iomatrix "$rep" "$case"
        fi
    done
done

# ---- medians --------------------------------------------------------------------------------

echo
echo "$PROG: $CONDITIONS"
median_table "$RESULTS" iomatrix,fio iomatrix/fio iomatrix,fio
