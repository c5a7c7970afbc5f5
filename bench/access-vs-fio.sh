#!/usr/bin/env bash
# access-vs-fio.sh: iomatrix's access suite beside fio, on the same file systems, doing the same
# work, with each tool's page-cache state at the start of each run printed beside its figures.
#
# Usage: bench/access-vs-fio.sh [--cases LIST] [--fs ext4,xfs] [--target DIR] [--size 1g]
#                               [--duration 10s] [--repeats 5] [--list]
#
# WHAT IT MEASURES
#   Requests to one file for a fixed time, each case run by iomatrix (`run access`) and by fio,
#   in alternating pairs, on each file system of --fs: ext4 and xfs, each made for the purpose
#   on an image in a tmpfs the script mounts (truncate, mkfs.ext4 -q -F / mkfs.xfs -q -f with
#   their defaults, mount -o loop, which attaches a loop device with autoclear), so no disk
#   moves the figures: they are the cost of each tool, the system calls, the page cache, the
#   file system, the block layer, the loop driver and tmpfs's memory copies. --target DIR adds
#   a folder of the user's (a real disk) as one more place. The cases (--list prints them):
#     4 KiB, random offsets (uniform, with replacement), figure IOPS:
#       randread-psync-cached     reads, psync qd1, the file in the page cache      (1)
#       randread-uring-cached     reads, io_uring qd32, the file in the page cache  (1)
#       randread-psync-direct     reads, psync qd1, O_DIRECT                         (1)
#       randread-uring-direct     reads, io_uring qd32, O_DIRECT                     (1)
#       randwrite-psync           writes, psync qd1, buffered
#       randrw70-psync            70% reads / 30% writes, psync qd1, buffered
#     sequential (from offset 0, wrapping at the end), figure MiB/s:
#       read-128k-psync, write-128k-psync, read-1m-psync, write-1m-psync      buffered, psync qd1
#       read-128k-uring-direct, write-128k-uring-direct                       O_DIRECT, io_uring qd8
#       read-1m-uring-direct, write-1m-uring-direct                           O_DIRECT, io_uring qd4
#       read-128k-psync-direct, write-128k-psync-direct,
#       read-1m-psync-direct, write-1m-psync-direct                           O_DIRECT, psync qd1
#   (1) the four cases this script ran before issue 33, with the same settings (until then the
#   cached ones ran on --target's disk, default /var/tmp, and the direct ones on an ext4 image
#   under /var/tmp; now they run on each --fs like every case).
#   Every run's line gives the figure, the latency p99 and mean (reads; for writes and the mix,
#   writes), the timed seconds, the MiB read from block devices during the run and the share of
#   the file the page cache held when the run began (see PAGE-CACHE STATE). Then per case: the
#   median figure of each tool over --repeats pairs, the paired ratio iomatrix/fio (the median
#   of the per-pair ratios), its range and interval, the ratio of the medians and the verdict
#   against the issue's goal, 0.95: "yes", or "NO" when the paired median is below it
#   ("NO (noise)" when the interval still reaches 0.95); and each tool's page-cache state over
#   the runs (lowest-highest).
#
# WHY THE SETTINGS MATCH
#   iomatrix:  iomatrix run access --bs BS --read R --random X --qd Q --backend B
#              --file-size SIZE --duration D [--direct] [--prepare cached] --json, with a
#              throwaway --db, in a fresh folder on the file system. R = 100 (reads), 0 (writes)
#              or 70 (the mix); X = 100 (random) or 0 (sequential). It lays out its own file
#              (1 MiB writes, fsync, untimed) and prepares it before the cell: by default
#              (--prepare dropped, since issue 33) fdatasync + posix_fadvise(DONTNEED), which
#              drops it from the page cache, as fio's default invalidate=1 does at open;
#              --prepare cached (the cached read cases) keeps it cached. It opens the file
#              (O_DIRECT with --direct) and for D keeps Q requests in flight. Its seed is fixed,
#              so every run makes the same requests. It writes one buffer as it is (no stamps:
#              no --verify). With io_uring it uses registered buffers and a registered file,
#              pushes a request for every free slot and hands them to the kernel in groups of up
#              to Q/8 (1 to 8: 1 at depths 4 and 8, 4 at 32), the group that fills the queue in
#              one io_uring_enter with the wait for at least one completion, and it takes every
#              completion that is there.
#   fio, one invocation per run, on one file in a folder of its own on the same file system:
#     all:      --rw=RW --bs=BS --size=SIZE --time_based --runtime=D --thread --numjobs=1
#               RW = randread, randwrite, randrw --rwmixread=70, read or write
#               --norandommap   random offsets with replacement, as iomatrix draws them
#               --randrepeat=1  a fixed seed, so every run makes the same requests (as iomatrix)
#               --fadvise_hint=0  fio would otherwise posix_fadvise(RANDOM) or (SEQUENTIAL),
#               which turns the kernel's readahead off or doubles it; iomatrix gives no hint
#               --lat_percentiles=1 --group_reporting --output-format=json
#     writes and the mix: --scramble_buffers=0 (iomatrix writes one buffer as it is; fio would
#               otherwise change a few bytes of it before each write)
#     page cache: by case, as PAGE-CACHE STATE below says: fio's default --invalidate=1 in the
#               random write and mix cases, --invalidate=0 in all others
#     psync:    --ioengine=psync --iodepth=1
#     io_uring: --ioengine=io_uring --iodepth=Q --fixedbufs --registerfiles --hipri=0
#               --sqthread_poll=0 (registered buffers and file, interrupt-driven, no SQ thread)
#               --iodepth_batch_submit=G --iodepth_batch_complete_min=1
#               --iodepth_batch_complete_max=Q   iomatrix's batching: hand requests to the kernel
#               as soon as G = Q/8 (1 to 8) are prepared (bench/lib.sh submit_group), wait for
#               at least one completion, take all that are there. (fio's defaults, submit 1 and
#               complete_max = complete_min = 1, make fio enter the kernel once per request once
#               the queue is full.)
#               Ring flags: fio 3.33 sets its ring up with
#               IORING_SETUP_COOP_TASKRUN|SINGLE_ISSUER|DEFER_TASKRUN (no fio option changes it);
#               iomatrix with COOP_TASKRUN where the kernel has it (5.19+) and, since issue 16's
#               hot-path change, SINGLE_ISSUER|DEFER_TASKRUN too where the kernel takes them.
#     direct:   --direct=1 (and iomatrix --direct): O_DIRECT, page-aligned buffers in both.
#   fio's file is laid out by fio itself in an untimed invocation of its own before each run
#   (--create_only=1 with the case's block size, as the job would lay it out: fallocate,
#   written in full, fsync, posix_fadvise(DONTNEED)); it is then checked to be SIZE bytes and
#   fully allocated, not sparse, so both tools work on a file of the same size that was fully
#   written. In the cached read cases the script then reads it once (dd, untimed) and checks
#   with fincore that all of it is cached, and fio runs with --invalidate=0.
#   Latency: iomatrix times each request from just before it queues it to when it sees its
#   completion; that is fio's total latency, lat_ns (from when fio prepares the request), not
#   clat_ns: the p99 and mean columns compare lat_ns, hence --lat_percentiles=1. At depth 1 with
#   psync the two are the same. With io_uring both include the wait in the submission queue.
#   Figures: requests (reads and writes) over the time of the I/O loop (iomatrix: its wall
#   time; fio: read.iops + write.iops, over its runtime in whole milliseconds); MiB/s the same
#   bytes over the same time.
#   Per repeat, each case on each file system runs iomatrix and fio back to back; the tool that
#   goes first alternates from repeat to repeat, so that neither always runs on the warmer (or
#   busier) system. Only one tool's file exists at a time (fio's is removed after its run,
#   iomatrix removes its own). Exactly cases x file systems x repeats x 2 timed runs, plus the
#   untimed layouts and fio's read-in passes.
#
# PAGE-CACHE STATE (the "cached" column of every run line)
#   A buffered write into a file that was written in large writes and is still cached costs
#   several times one into a file dropped from the cache (ext4's large folios: issue 33), so
#   both tools start each run with their files in the same state, and each run line says how
#   much of the file the page cache held when the timed run began. Three states (--list and
#   the case table in the script say which case has which):
#     cached      the 4k cached read cases: iomatrix --prepare cached (laid out, kept cached);
#                 fio's file read in with dd and checked with fincore to be all cached,
#                 --invalidate=0.
#     dropped     the 4k random write and mix cases: both tools' defaults. iomatrix drops its
#                 file after the layout (--prepare dropped: fdatasync + posix_fadvise(DONTNEED));
#                 fio drops its file when it opens it (--invalidate=1, the same call). A job of
#                 random requests opens the file once, so this is one drop before the run in both.
#     predropped  the sequential cases and the 4k direct read cases: iomatrix's default, as
#                 above; fio's file as its layout leaves it (dropped; checked with fincore, and
#                 dropped again with dd oflag=nocache if anything stayed), with --invalidate=0.
#                 fio's default would not do the same work here: a time-based sequential job
#                 closes and reopens its file at every pass over it, and with --invalidate=1
#                 drops it each time (measured: a 2 s sequential 128k read of a 64 MiB file read
#                 12,447 MiB from the device with --invalidate=1 and 0 MiB with 0), while
#                 iomatrix drops once, before the cell, and reads later passes from the cache.
#                 (The direct read cases ran with --invalidate=0 before issue 33 too.)
#   iomatrix: its own figure, cached_at_start in the cell's metrics (--json): mincore over its
#   file, taken after its layout and --prepare, just before the cell starts ("?" if the binary
#   does not store it). fio: nothing can look inside fio's run, so the script measures fio's
#   file with fincore (util-linux, mincore too) after fio's untimed layout (and, in the cached
#   cases, after the dd read-in), just before the timed fio run; where fio runs with its
#   default --invalidate=1 it drops the file again when it opens it, so what it starts with is
#   at most that figure (the column then reads "N%>0": N% measured, dropped at open). The
#   "disk MiB" column (/proc/vmstat pgpgin, all processes, during the run) is a second witness:
#   in the cached cases it should be ~0, and a run that read more than 5% of the file from a
#   block device is flagged with '!' and a warning; in the other buffered cases the first read
#   of each block comes from the loop device, so about the file size (once) is expected there.
#
# HOW TO READ THE RATIO
#   iomatrix/fio near 1.0 means iomatrix's per-request overhead is like fio's: both issue the
#   same system calls (the batching above makes that true for io_uring too) on a file in the
#   same state, so the difference is what each tool does around them: picking offsets, taking
#   timestamps, recording latency, the buffer it writes. Above 1.0 iomatrix was faster. The
#   cached and buffered cases are page-cache speeds (memory copies and system calls), where that
#   overhead shows most. The direct cases go through the file system, the block layer and the
#   loop driver, which reads the image through tmpfs (the loop device is not in direct-I/O
#   mode). This machine may be shared and noisy, so single runs scatter; the table quotes
#   medians of several pairs. Look at the per-run lines before trusting a ratio far from 1.0.
#
# Needs root (mount, mount -o loop), fio, python3, util-linux (mount, losetup, findmnt,
# fincore), e2fsprogs, xfsprogs (for --fs xfs) and coreutils. IOMATRIX_BIN=path overrides the
# binary (default: target/release/iomatrix of this workspace; build it with `cargo build
# --release`); it must have `run access --prepare` (issue 33). FIO=path overrides fio.
# Everything the script makes (the tmpfs with the images, their mounts and loop devices, its
# folder on --target, a scratch folder with a throwaway results database and logs) is removed
# at the end, also on failure, Ctrl-C (exit 130) or SIGTERM (exit 143); it then checks that no
# loop device is left on an image.

set -euo pipefail

PROG=access-vs-fio
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=bench/lib.sh
source "$SCRIPT_DIR/lib.sh"
IOMATRIX=${IOMATRIX_BIN:-$SCRIPT_DIR/../target/release/iomatrix}
FIO=${FIO:-fio}

GOAL=0.95

# ---- the cases --------------------------------------------------------------------------------

# One row per case: name, fio's rw, iomatrix's --read, --random, block size (bytes), backend,
# depth, O_DIRECT (0/1), page-cache state (see PAGE-CACHE STATE in the header: cached, dropped,
# predropped), the latency shown (read or write).
CASE_TABLE="
randread-psync-cached    randread  100 100 4096    psync    1  0 cached     read
randread-uring-cached    randread  100 100 4096    io_uring 32 0 cached     read
randread-psync-direct    randread  100 100 4096    psync    1  1 predropped read
randread-uring-direct    randread  100 100 4096    io_uring 32 1 predropped read
randwrite-psync          randwrite 0   100 4096    psync    1  0 dropped    write
randrw70-psync           randrw    70  100 4096    psync    1  0 dropped    write
read-128k-psync          read      100 0   131072  psync    1  0 predropped read
write-128k-psync         write     0   0   131072  psync    1  0 predropped write
read-1m-psync            read      100 0   1048576 psync    1  0 predropped read
write-1m-psync           write     0   0   1048576 psync    1  0 predropped write
read-128k-uring-direct   read      100 0   131072  io_uring 8  1 predropped read
write-128k-uring-direct  write     0   0   131072  io_uring 8  1 predropped write
read-1m-uring-direct     read      100 0   1048576 io_uring 4  1 predropped read
write-1m-uring-direct    write     0   0   1048576 io_uring 4  1 predropped write
read-128k-psync-direct   read      100 0   131072  psync    1  1 predropped read
write-128k-psync-direct  write     0   0   131072  psync    1  1 predropped write
read-1m-psync-direct     read      100 0   1048576 psync    1  1 predropped read
write-1m-psync-direct    write     0   0   1048576 psync    1  1 predropped write
"
ALL_NAMES=()
declare -A C_RW C_READ C_RANDOM C_BS C_BACKEND C_QD C_DIRECT C_STATE C_LAT
while read -r name rw read random bs backend qd direct state lat; do
    [[ -n $name ]] || continue
    ALL_NAMES+=("$name")
    C_RW[$name]=$rw C_READ[$name]=$read C_RANDOM[$name]=$random C_BS[$name]=$bs
    C_BACKEND[$name]=$backend C_QD[$name]=$qd C_DIRECT[$name]=$direct C_STATE[$name]=$state
    C_LAT[$name]=$lat
done <<<"$CASE_TABLE"

# label NAME: the case as the tables name it: "4k randwrite psync qd1 buffered".
label() {
    local name=$1 how
    if ((C_DIRECT[$name])); then
        how=direct
    elif [[ ${C_STATE[$name]} == cached ]]; then
        how=cached
    else
        how=buffered
    fi
    local rw=${C_RW[$name]}
    [[ $rw == randrw ]] && rw="randrw ${C_READ[$name]}/$((100 - C_READ[$name]))"
    echo "$(human "${C_BS[$name]}") $rw ${C_BACKEND[$name]} qd${C_QD[$name]} $how"
}

list_cases() {
    local name
    for name in "${ALL_NAMES[@]}"; do
        printf '  %-25s %s\n' "$name" "$(label "$name")"
    done
}

usage() {
    cat <<EOF
Usage: $0 [--cases LIST] [--fs ext4,xfs] [--target DIR] [--size 1g] [--duration 10s]
          [--repeats 5] [--list]

Runs the same work through iomatrix's access suite and through fio (4 KiB random reads,
writes and a 70/30 mix; sequential 128 KiB and 1 MiB reads and writes; buffered and O_DIRECT,
psync and io_uring) on ext4 and xfs, each loop-mounted from an image on a tmpfs the script
mounts, in alternating pairs, and prints each run's figures with each tool's page-cache state
at its start, then per case the median of each tool, the ratio iomatrix/fio and whether it
reaches $GOAL. Needs root (mount, mount -o loop).

  --cases LIST     cases to run, comma-separated names or shell patterns (e.g. 'randwrite*,*1m*'),
                   or all [default: all; --list shows them]
  --fs LIST        file systems to make and run on: ext4, xfs or both, comma-separated, or none
                   (with --target) [default: ext4,xfs]
  --target DIR     also run every case in a fresh folder in DIR (e.g. on a real disk)
  --size SIZE      file size, k/m/g/t = 1024-based; each image is twice this, at least 512m
                   [default: 1g]
  --duration TIME  how long each run issues requests: seconds, or with s or m [default: 10s]
  --repeats N      pairs of runs per case and file system; medians are quoted [default: 5]
  --list           print the cases and exit
EOF
}

CASES_ARG=all
FS_ARG=ext4,xfs
TARGET=""
SIZE=1g
DURATION=10s
REPEATS=5

while [[ $# -gt 0 ]]; do
    case $1 in
    --cases) need_value "$@"; CASES_ARG=$2; shift 2 ;;
    --cases=*) CASES_ARG=${1#*=}; shift ;;
    --fs) need_value "$@"; FS_ARG=$2; shift 2 ;;
    --fs=*) FS_ARG=${1#*=}; shift ;;
    --target) need_value "$@"; TARGET=$2; shift 2 ;;
    --target=*) TARGET=${1#*=}; shift ;;
    --size) need_value "$@"; SIZE=$2; shift 2 ;;
    --size=*) SIZE=${1#*=}; shift ;;
    --duration) need_value "$@"; DURATION=$2; shift 2 ;;
    --duration=*) DURATION=${1#*=}; shift ;;
    --repeats) need_value "$@"; REPEATS=$2; shift 2 ;;
    --repeats=*) REPEATS=${1#*=}; shift ;;
    --list) list_cases; exit 0 ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument '$1'" ;;
    esac
done

SIZE_BYTES=$(to_bytes "$SIZE" --size)
SECS=$(to_seconds "$DURATION")
REPEATS=$(whole_number "$REPEATS" --repeats 1)
((SECS >= 1)) || die "--duration must be at least 1 second"
((SIZE_BYTES >= 2 << 20)) || die "--size ($SIZE) must be at least 2m (two 1 MiB blocks)"
((SIZE_BYTES % (1 << 20) == 0)) || die "--size ($SIZE) must be a whole number of MiB (the 1 MiB cases' blocks)"

# The cases chosen, in the table's order.
CASES=()
IFS=, read -r -a patterns <<<"$CASES_ARG"
((${#patterns[@]} > 0)) || die "--cases is empty (see --list)"
for pattern in "${patterns[@]}"; do
    [[ $pattern == all ]] && pattern='*'
    matched=0
    for name in "${ALL_NAMES[@]}"; do
        # shellcheck disable=SC2053 # the pattern is meant to match as a glob
        [[ $name == $pattern ]] || continue
        matched=1
        [[ " ${CASES[*]} " == *" $name "* ]] || CASES+=("$name")
    done
    ((matched)) || die "--cases: no case matches '$pattern' (--list shows the cases)"
done
ORDERED=()
for name in "${ALL_NAMES[@]}"; do
    [[ " ${CASES[*]} " == *" $name "* ]] && ORDERED+=("$name")
done
CASES=("${ORDERED[@]}")

FILESYSTEMS=()
IFS=, read -r -a fs_list <<<"$FS_ARG"
for fs in "${fs_list[@]}"; do
    case $fs in
    ext4 | xfs) [[ " ${FILESYSTEMS[*]} " == *" $fs "* ]] || FILESYSTEMS+=("$fs") ;;
    none) ;;
    *) die "--fs entry '$fs' must be ext4, xfs or none" ;;
    esac
done
((${#FILESYSTEMS[@]} > 0)) || [[ -n $TARGET ]] || die "--fs $FS_ARG leaves nothing to run on: name ext4 or xfs, or give --target DIR"

# Each image: twice the file (one file at a time lives on it, plus the file system's own
# metadata), at least 512 MiB (mkfs.xfs wants 300 MiB). The tmpfs holds the images, which fill
# up to their full size.
IMAGE_BYTES=$((2 * SIZE_BYTES))
((IMAGE_BYTES >= 512 << 20)) || IMAGE_BYTES=$((512 << 20))
TMPFS_BYTES=$((${#FILESYSTEMS[@]} * IMAGE_BYTES + (16 << 20)))

((EUID == 0)) || die "needs root: it mounts a tmpfs and loop-mounts ext4 and xfs images on it"
need_iomatrix IOMATRIX_BIN
"$IOMATRIX" run access --help 2>/dev/null | grep -q -- '--prepare' ||
    die "$IOMATRIX has no 'run access --prepare' (issue 33): without it the two tools' files are not in the same state; build the workspace from main with 'cargo build --release' (or set IOMATRIX_BIN=path)"
need_fio
command -v python3 >/dev/null || die "python3 not found: it computes the medians and reads the JSON"
for tool in mkfs.ext4 mount umount mountpoint losetup findmnt fincore truncate timeout stat dd; do
    command -v "$tool" >/dev/null || die "$tool not found: install util-linux, e2fsprogs and coreutils"
done
if [[ " ${FILESYSTEMS[*]} " == *" xfs "* ]]; then
    command -v mkfs.xfs >/dev/null || die "mkfs.xfs not found: install xfsprogs, or leave xfs out (--fs ext4)"
fi
# Memory: the images on tmpfs, plus a file in the page cache, plus room.
MEM_AVAIL=$(mem_available || true)
if [[ $MEM_AVAIL =~ ^[0-9]+$ ]] && ((MEM_AVAIL < TMPFS_BYTES + 2 * SIZE_BYTES + (256 << 20))); then
    die "only $((MEM_AVAIL >> 20)) MiB of memory available: ${#FILESYSTEMS[@]} image(s) of $(human "$IMAGE_BYTES") on tmpfs and a $SIZE file need $(((TMPFS_BYTES + 2 * SIZE_BYTES + (256 << 20)) >> 20)) MiB; choose a smaller --size or fewer --fs"
fi

# ---- everything this script makes, and its removal -------------------------------------------

SCRATCH=""  # results database, JSON outputs, logs, the tmpfs's and the images' mount points
TMPFS=""    # the tmpfs (inside SCRATCH); the images live in TMPFS/img
IMAGES=()   # the images made so far
MNTS=()     # where each is mounted (inside SCRATCH, not on the tmpfs)
WORK=""     # our folder in --target

remove_what_we_made() {
    local rc=0 i
    [[ -z $WORK ]] || rm -rf -- "$WORK" || rc=1
    for i in "${!IMAGES[@]}"; do
        # remove_image removes the emptied mount point; the tmpfs and SCRATCH stay if it fails.
        remove_image "${MNTS[i]}" "${MNTS[i]}" "${IMAGES[i]}" || return 1
    done
    if [[ -n $TMPFS ]] && ! unmount "$TMPFS"; then
        return 1
    fi
    [[ -z $SCRATCH ]] || remove_dir "$SCRATCH" || rc=1
    return "$rc"
}

# Each child is bounded: the run itself, plus time for a layout at 8 MiB/s, plus 5 minutes.
LIMIT=$((SECS + 300 + SIZE_BYTES / (8 << 20)))

if [[ -n $TARGET ]]; then
    [[ -d $TARGET ]] || die "--target '$TARGET' is not a folder"
    [[ -w $TARGET ]] || die "--target '$TARGET' is not writable"
    TARGET=$(cd "$TARGET" && pwd)
    avail=$(df -P -B1 -- "$TARGET" | awk 'NR == 2 { print $4 }')
    [[ $avail =~ ^[0-9]+$ ]] || die "cannot tell the free space of $TARGET (df said '$avail')"
    ((avail >= SIZE_BYTES + SIZE_BYTES / 10)) ||
        die "$TARGET has $((avail >> 20)) MiB free; a $SIZE file needs $(((SIZE_BYTES + SIZE_BYTES / 10) >> 20)) MiB: choose a smaller --size or another --target"
fi

SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/$PROG.XXXXXX")
DB=$SCRATCH/results.sqlite
PLACES=()     # where the cases run: a folder per file system
PLACE_NAME=() # how the tables name it
PLACE_DESC=() # for the conditions line
if ((${#FILESYSTEMS[@]} > 0)); then
    TMPFS=$SCRATCH/tmpfs
    mkdir "$TMPFS"
    mount_tmpfs "$TMPFS" "$TMPFS_BYTES"
    mkdir "$TMPFS/img"
fi
for fs in "${FILESYSTEMS[@]}"; do
    mkdir "$SCRATCH/$fs"
    IMAGES+=("$TMPFS/img/$fs.img")
    MNTS+=("$SCRATCH/$fs")
    make_loop_fs "$fs" "$TMPFS/img/$fs.img" "$IMAGE_BYTES" "$SCRATCH/$fs" "$SCRATCH/mkfs-$fs.log"
    loopdev=$(findmnt -no SOURCE -- "$SCRATCH/$fs" 2>/dev/null || echo "?")
    PLACES+=("$SCRATCH/$fs")
    PLACE_NAME+=("$fs")
    PLACE_DESC+=("$fs on $loopdev from a $(human "$IMAGE_BYTES") image on tmpfs")
done
if [[ -n $TARGET ]]; then
    WORK=$(mktemp -d "$TARGET/$PROG.XXXXXX")
    fstype=$(findmnt -no FSTYPE -T "$WORK" 2>/dev/null | head -n 1 || true)
    [[ -n $fstype ]] || fstype=$(stat -f -c %T "$WORK" 2>/dev/null || echo unknown)
    PLACES+=("$WORK")
    PLACE_NAME+=("target")
    PLACE_DESC+=("target $WORK ($fstype)")
fi
# Both tools' folders under one parent: ext4 spreads the folders at a file system's top level
# over its block groups (Orlov), so top-level fio/ and iomatrix/ put the two tools' files in
# different parts of the image, and parts of an image on tmpfs are not equally fast to read (the
# memory behind them: measured 4.8 against 7.4 GB/s for dd over two regions of one image, and
# fio itself read iomatrix's file 20% slower than its own). Under one parent, and with the
# previous file's blocks freed for good (sync) before the next layout, both files of a pair
# land on the same blocks (checked with filefrag).
for place in "${PLACES[@]}"; do
    mkdir -p "$place/work/fio" "$place/work/iomatrix"
done

# ---- conditions -----------------------------------------------------------------------------

NRUNS=$((${#CASES[@]} * ${#PLACES[@]} * REPEATS * 2))
TIMED=$((NRUNS * SECS))
CONDITIONS="$(printf '%s; ' "${PLACE_DESC[@]}")file $SIZE, ${SECS}s per run, $REPEATS repeats; kernel $(uname -r), $(nproc) CPUs; $FIO_VERSION, iomatrix $IOMATRIX_VERSION"
echo "$PROG: $CONDITIONS"
echo "$PROG: ${#CASES[@]} cases x ${#PLACES[@]} file system(s) x $REPEATS repeats x 2 tools = $NRUNS timed runs of ${SECS}s:" \
    "$((TIMED / 60)) min $((TIMED % 60)) s timed, plus an untimed layout of $SIZE before every run"
echo "$PROG: cases: ${CASES[*]}"

# ---- the runs -------------------------------------------------------------------------------

RESULTS=$SCRATCH/results.tsv # repeat, place+case, tool, figure, p99 ns, mean ns, timed s, disk KiB or -, cached, unit
: >"$RESULTS"

# Data read from block devices since boot, KiB (all processes).
pgpgin() {
    awk '$1 == "pgpgin" { print $2 }' /proc/vmstat
}

# unit NAME: the case's figure: IOPS for 4 KiB requests, MiB/s for the sequential ones.
unit() {
    if ((C_RANDOM[$1] == 100)); then echo IOPS; else echo MiB/s; fi
}

# record REP PLACE NAME TOOL PARSED DISK_KIB CACHED: appends one run's figures (PARSED: "IOPS
# <TAB>MiB/s<TAB>p99 ns<TAB>mean ns<TAB>timed s") to the results, with the KiB read from block
# devices during the run and the page cache's share of the file at its start, and prints its
# line. In the cached cases the disk should read about nothing; more than 5% of the file is
# flagged.
record() {
    local rep=$1 place=$2 name=$3 tool=$4 parsed=$5 disk_kib=$6 cached=$7 flag=""
    local case_label
    case_label="${PLACE_NAME[place]} $(label "$name")"
    if ((C_DIRECT[$name])); then
        disk_kib=-
    elif [[ ${C_STATE[$name]} == cached ]] && ((disk_kib * 1024 > SIZE_BYTES / 20)); then
        flag="!"
        warn "$tool read $((disk_kib >> 10)) MiB from block devices during its '$case_label' run in repeat $rep: its file was not (all) cached, or something else was reading"
    fi
    local iops mib p99 mean secs figure
    IFS=$'\t' read -r iops mib p99 mean secs <<<"$parsed"
    if [[ $(unit "$name") == IOPS ]]; then figure=$iops; else figure=$mib; fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$rep" "$case_label" "$tool" "$figure" "$p99" "$mean" "$secs" \
        "$disk_kib" "$cached" "$(unit "$name")" >>"$RESULTS"
    awk -v r="$rep" -v c="$case_label" -v t="$tool" -v f="$figure" -v u="$(unit "$name")" -v p="$p99" -v m="$mean" \
        -v s="$secs" -v d="$disk_kib" -v fl="$flag" -v ca="$cached" 'BEGIN {
        printf "%-6s %-40s %-8s %10.0f %-5s %10.1f %10.1f %7.3f %8s%-1s %s\n", r, c, t, f, u, p / 1000, m / 1000, s,
               d == "-" ? d : sprintf("%d", d / 1024), fl, ca }'
}

# access_figures JSON SIZE BS READ RANDOM BACKEND QD DIRECT SECS LAT: checks iomatrix's --json
# output of one `run access` cell (backend, depth, O_DIRECT, file size, block size, the mix as
# asked: reads only, writes only or about READ% reads; about SECS long) and prints "IOPS<TAB>
# MiB/s<TAB>p99 ns<TAB>mean ns<TAB>timed s<TAB>cached" with LAT's (read or write) latency and
# the page cache's share of the file at the cell's start ("?" where the binary stores none).
access_figures() {
    python3 - "$@" <<'PY'
import json, sys
path = sys.argv[1]
size, bs, read_pct, random_pct = (int(a) for a in sys.argv[2:6])
backend, qd, direct, secs, lat = sys.argv[6], int(sys.argv[7]), sys.argv[8] == "1", int(sys.argv[9]), sys.argv[10]
doc = json.load(open(path))
if doc.get("schema") != "iomatrix.run/1":
    sys.exit("unexpected schema %r" % doc.get("schema"))
cells = doc["run"]["cell_results"]
if len(cells) != 1:
    sys.exit("%d cells in the output, expected 1" % len(cells))
c = cells[0]
m = c["metrics"]
got = (c.get("backend"), m.get("queue_depth"), c.get("direct"), c.get("file_size"), c.get("record_size"),
       m.get("read_percent"), m.get("random_percent"))
want = (backend, qd, direct, size, bs, read_pct, random_pct)
if got != want:
    sys.exit("cell ran (backend, depth, direct, file size, block size, read %%, random %%) = %r; expected %r" % (got, want))
reads, writes = m["read"]["count"], m["write"]["count"]
if c["ops"] != reads + writes or c["ops"] == 0:
    sys.exit("cell did %d requests: %d reads and %d writes" % (c["ops"], reads, writes))
if read_pct == 100 and writes or read_pct == 0 and reads:
    sys.exit("cell did %d reads and %d writes; expected %s only" % (reads, writes, "reads" if read_pct else "writes"))
if 0 < read_pct < 100 and abs(100.0 * reads / c["ops"] - read_pct) > 5:
    sys.exit("cell did %d reads and %d writes; expected about %d%% reads" % (reads, writes, read_pct))
if c["wall_ns"] < 0.9e9 * secs:
    sys.exit("cell ran %.3f s, expected about %d s" % (c["wall_ns"] / 1e9, secs))
cached = m.get("cached_at_start")
if isinstance(cached, dict) and cached.get("file_bytes"):
    share = "%.0f%%" % min(100.0, 100.0 * cached["cached_bytes"] / cached["file_bytes"])
else:
    share = "?"
r = m[lat]
print("%.0f\t%.1f\t%d\t%.0f\t%.3f\t%s" % (m["iops"], m["mib_per_sec"], r["p99_ns"], r["mean_ns"], c["wall_ns"] / 1e9, share))
PY
}

# fio_job_figures JSON SECS READ LAT: checks fio's JSON output of one job (no error; reads only,
# writes only or about READ% reads; about SECS long) and prints "IOPS<TAB>MiB/s<TAB>p99 ns<TAB>
# mean ns<TAB>timed s", reads and writes together, with LAT's (read or write) latency from
# lat_ns (from when fio prepares a request: iomatrix's latency; needs --lat_percentiles=1).
fio_job_figures() {
    python3 - "$@" <<'PY'
import json, sys
path, secs, read_pct, lat = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
doc = json.load(open(path))
job = doc["jobs"][0]
if job.get("error", 0) != 0:
    sys.exit("fio job reported error %s" % job["error"])
reads, writes = job["read"]["total_ios"], job["write"]["total_ios"]
if reads + writes == 0:
    sys.exit("fio did no requests")
if read_pct == 100 and writes or read_pct == 0 and reads:
    sys.exit("fio did %d reads and %d writes; expected %s only" % (reads, writes, "reads" if read_pct else "writes"))
if 0 < read_pct < 100 and abs(100.0 * reads / (reads + writes) - read_pct) > 5:
    sys.exit("fio did %d reads and %d writes; expected about %d%% reads" % (reads, writes, read_pct))
runtime = max(job["read"]["runtime"], job["write"]["runtime"])
if runtime < 900 * secs:
    sys.exit("fio ran %d ms, expected about %d s" % (runtime, secs))
iops = job["read"]["iops"] + job["write"]["iops"]
mib = (job["read"]["bw_bytes"] + job["write"]["bw_bytes"]) / 2**20
l = job[lat]["lat_ns"]
print("%.0f\t%.1f\t%d\t%.0f\t%.3f" % (iops, mib, l["percentile"]["99.000000"], l["mean"], runtime / 1e3))
PY
}

# cached_at_most FILE SIZE PERCENT: whether at most PERCENT of FILE's SIZE bytes are in the page
# cache (fincore), without a word.
cached_at_most() {
    local cached
    cached=$(fincore -b -n -o RES -- "$1" | tr -d ' ')
    [[ $cached =~ ^[0-9]+$ ]] && ((cached * 100 <= $2 * $3))
}

# share_cached FILE SIZE: the page cache's share of FILE (fincore), "N%".
share_cached() {
    local cached
    cached=$(fincore -b -n -o RES -- "$1" | tr -d ' ')
    [[ $cached =~ ^[0-9]+$ ]] || { echo "?"; return; }
    echo "$(((cached * 100 + $2 / 2) / $2))%"
}

run_iomatrix() {
    local rep=$1 place=$2 name=$3 tag=iomatrix-$1-$2-$3
    local json=$SCRATCH/$tag.json log=$SCRATCH/$tag.log
    local where
    where="'${PLACE_NAME[place]} $(label "$name")', repeat $rep"
    local args=(--db "$DB" run access --target "${PLACES[place]}/work/iomatrix" --bs "${C_BS[$name]}"
        --read "${C_READ[$name]}" --random "${C_RANDOM[$name]}" --qd "${C_QD[$name]}"
        --backend "${C_BACKEND[$name]}" --file-size "$SIZE_BYTES" --duration "${SECS}s" --json)
    ((C_DIRECT[$name])) && args+=(--direct)
    [[ ${C_STATE[$name]} == cached ]] && args+=(--prepare cached)
    local before after
    before=$(pgpgin)
    if ! run_child "$LIMIT" "$json" "$log" "$IOMATRIX" "${args[@]}"; then
        sed 's/^/  | /' "$log" >&2
        die "iomatrix failed in $where (its messages are above)"
    fi
    after=$(pgpgin)
    sync -f -- "${PLACES[place]}"
    local parsed cached
    parsed=$(access_figures "$json" "$SIZE_BYTES" "${C_BS[$name]}" "${C_READ[$name]}" "${C_RANDOM[$name]}" \
        "${C_BACKEND[$name]}" "${C_QD[$name]}" "${C_DIRECT[$name]}" "$SECS" "${C_LAT[$name]}") ||
        die "iomatrix's output in $where is not as expected"
    cached=${parsed##*$'\t'}
    record "$rep" "$place" "$name" iomatrix "${parsed%$'\t'*}" $((after - before)) "$cached"
}

# Waits (at most 10 s) until the file system under $1 reports room for a file of $2 bytes plus
# iomatrix's margin (5% + 4 MiB). xfs frees a removed file's blocks in the background (inodegc),
# and statfs may report them as used for a while after the sync: iomatrix's space check, which
# reads statfs, would then refuse the next run.
wait_for_free() {
    local dir=$1 need=$(($2 + $2 / 20 + (4 << 20))) tries=0 free
    while :; do
        free=$(($(stat -f -c '%a * %S' -- "$dir")))
        ((free >= need)) && return 0
        ((++tries > 100)) && return 0
        sleep 0.1
    done
}

run_fio() {
    local rep=$1 place=$2 name=$3 tag=fio-$1-$2-$3
    local file=${PLACES[place]}/work/fio/testfile
    local json=$SCRATCH/$tag.json log=$SCRATCH/$tag.log
    local where
    where="'${PLACE_NAME[place]} $(label "$name")', repeat $rep"
    local rw=${C_RW[$name]} invalidate=1 cached
    # Layout, untimed: fio writes the whole file in the case's block size (and drops it from the
    # page cache).
    fio_layout "$LIMIT" "$file" "$SIZE_BYTES" "${C_BS[$name]}" "$SCRATCH/$tag-layout" "$where"
    case ${C_STATE[$name]} in
    cached)
        # Read it into the page cache, untimed, and check that all of it is there.
        run_child "$LIMIT" /dev/null "$SCRATCH/$tag-readin.log" dd if="$file" of=/dev/null bs=1M status=none ||
            die "could not read $file into the page cache in $where"
        check_cached "$file" "$SIZE_BYTES" "fio's file after reading it in ($where)"
        invalidate=0
        cached=$(share_cached "$file" "$SIZE_BYTES")
        ;;
    predropped)
        # fio's layout ends with posix_fadvise(DONTNEED); should anything be left cached, drop it
        # as fio would (GNU dd: fdatasync, then posix_fadvise(DONTNEED) over the whole file).
        if ! cached_at_most "$file" "$SIZE_BYTES" 0; then
            dd of="$file" oflag=nocache conv=notrunc,fdatasync count=0 status=none ||
                die "could not drop $file from the page cache in $where"
        fi
        invalidate=0
        cached=$(share_cached "$file" "$SIZE_BYTES")
        ;;
    dropped)
        cached="$(share_cached "$file" "$SIZE_BYTES")>0"
        ;;
    esac
    fio_args "$file" "$rw" "$SIZE_BYTES" "${C_BS[$name]}" "${C_BACKEND[$name]}" "${C_QD[$name]}" \
        "${C_DIRECT[$name]}" "$SECS" "$invalidate"
    [[ $rw == randrw ]] && FIO_ARGS+=(--rwmixread="${C_READ[$name]}")
    ((C_READ[$name] < 100)) && FIO_ARGS+=(--scramble_buffers=0)
    local before after
    before=$(pgpgin)
    if ! run_child "$LIMIT" "$json" "$log" "$FIO" "${FIO_ARGS[@]}"; then
        sed 's/^/  | /' "$log" "$json" >&2
        die "fio failed in $where (its messages are above)"
    fi
    after=$(pgpgin)
    local parsed
    parsed=$(fio_job_figures "$json" "$SECS" "${C_READ[$name]}" "${C_LAT[$name]}") || die "fio's output in $where: see above"
    rm -f -- "$file"
    # Untimed: the freed blocks committed, so the next tool's layout may reuse them.
    sync -f -- "${PLACES[place]}"
    wait_for_free "${PLACES[place]}" "$SIZE_BYTES"
    record "$rep" "$place" "$name" fio "$parsed" $((after - before)) "$cached"
}

echo
echo "per run: the figure (IOPS or MiB/s), latency p99 and mean in us (reads; writes for the writes and the"
echo "mix; iomatrix: submit to completion, fio: lat_ns), timed seconds, MiB read from block devices during"
echo "the run, and the share of the file in the page cache at the start (iomatrix: its cached_at_start;"
echo "fio: fincore just before the run, 'N%>0' where fio's invalidate=1 then drops it at open)"
printf '%-6s %-40s %-8s %10s %-5s %10s %10s %7s %9s %s\n' repeat case tool figure "" "p99 us" "mean us" "timed s" \
    "disk MiB" cached
for ((rep = 1; rep <= REPEATS; rep++)); do
    for place in "${!PLACES[@]}"; do
        for name in "${CASES[@]}"; do
            if ((rep % 2 == 1)); then
                run_iomatrix "$rep" "$place" "$name"
                run_fio "$rep" "$place" "$name"
            else
                run_fio "$rep" "$place" "$name"
                run_iomatrix "$rep" "$place" "$name"
            fi
        done
    done
done

# ---- medians --------------------------------------------------------------------------------

echo
echo "$PROG: $CONDITIONS"
IOPS_RESULTS=$SCRATCH/results-iops.tsv
MIBS_RESULTS=$SCRATCH/results-mibs.tsv
awk -F'\t' '$10 == "IOPS"' "$RESULTS" >"$IOPS_RESULTS"
awk -F'\t' '$10 == "MiB/s"' "$RESULTS" >"$MIBS_RESULTS"
export TABLE_RANGE=1 TABLE_STRICT=1
if [[ -s $IOPS_RESULTS ]]; then
    echo
    echo "4 KiB random requests, IOPS:"
    TABLE_FIGURE=IOPS median_table "$IOPS_RESULTS" iomatrix,fio "iomatrix/fio:$GOAL" iomatrix,fio
fi
if [[ -s $MIBS_RESULTS ]]; then
    echo
    echo "sequential requests, MiB/s:"
    TABLE_FIGURE=MiB/s median_table "$MIBS_RESULTS" iomatrix,fio "iomatrix/fio:$GOAL" iomatrix,fio
fi
echo
echo "page cache's share of the file at the start of each run, lowest-highest over the repeats"
echo "(iomatrix: its cached_at_start; fio: fincore before the run, '>0': then dropped at open by invalidate=1)"
python3 - "$RESULTS" <<'PY'
import sys
seen, shares = [], {}
for line in open(sys.argv[1]):
    f = line.rstrip("\n").split("\t")
    case, tool, cached = f[1], f[2], f[8]
    if case not in seen:
        seen.append(case)
    shares.setdefault((case, tool), []).append(cached)


def span(values):
    """'0%', '0-3%', with '>0' when fio dropped the file at open after it was measured."""
    if not values:
        return "-"
    dropped = any(v.endswith(">0") for v in values)
    cores = [v[:-2] if v.endswith(">0") else v for v in values]
    if any(not c.endswith("%") for c in cores):
        return "?"
    nums = [float(c[:-1]) for c in cores]
    low, high = min(nums), max(nums)
    text = "%.0f%%" % low if low == high else "%.0f-%.0f%%" % (low, high)
    return text + (">0" if dropped else "")


width = max(len(c) for c in seen + ["case"])
print("%-*s  %12s  %12s" % (width, "case", "iomatrix", "fio"))
for case in seen:
    print("%-*s  %12s  %12s" % (width, case, span(shares.get((case, "iomatrix"), [])), span(shares.get((case, "fio"), []))))
PY
