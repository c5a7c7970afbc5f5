#!/usr/bin/env bash
# pread-vs-bare.sh: iomatrix's cached 4 KiB random pread at depth 1 beside a bare C loop that
# reads the same offsets, and beside fio.
#
# Usage: bench/pread-vs-bare.sh [--size 512m] [--duration 10s] [--repeats 5] [--coin-flips]
#
# WHAT IT MEASURES
#   4 KiB pread(2)s at uniformly random 4 KiB-aligned offsets of one file, one at a time (depth
#   1), for --duration, the file in memory: on a tmpfs the script mounts for the purpose. Three
#   programs do it, each on a file of its own of --size bytes:
#     iomatrix  iomatrix run access --bs 4096 --read 100 --random 100 --qd 1 --backend psync
#               --file-size SIZE --duration D --prepare cached --json (no --prepare with binaries
#               from before issue 33; on tmpfs the file stays in memory either way): it times every request (a clock read at
#               issue and at completion) and records its latency in HDR histograms, counts
#               per-second figures, checks for a stop signal and the deadline.
#     bare      bench/bare_pread.c, compiled here with gcc -O2: the same offsets in the same
#               order and nothing else. It reads the clock once before the first request and
#               once after the last (a timer signal ends the loop) and prints how many requests
#               it did: the floor of what any tool can do with pread at depth 1 on this machine.
#     fio       fio --ioengine=psync --iodepth=1, with the settings access-vs-fio.sh uses for its
#               "psync qd1 cached" case.
#   Each repeat runs the three once each, in an order that rotates from repeat to repeat
#   (iomatrix fio bare, fio bare iomatrix, bare iomatrix fio, ...), so none always runs first or
#   last. The table gives each tool's median IOPS, the ratios iomatrix/bare and iomatrix/fio
#   (the median of the per-repeat ratios, and the ratio of the medians), iomatrix's and fio's
#   median p99 latency, and whether the issue's goals are met: iomatrix >= 0.90 x bare and
#   >= 1.2 x fio, judged on the median of the per-repeat ratios (at least 5 repeats).
#
# WHY THE SETTINGS MATCH
#   The offsets. iomatrix's access suite draws each request's offset with iomatrix's one
#   generator (xoshiro256++ seeded by splitmix64, crates/random; the xorshift64* of the access
#   runner in binaries whose runs name no generator, which bare_pread -x draws), seeded per cell with
#   plan.seed ^ (rank << 32) ^ cell index: here rank 0 and cell 0, so the plan's seed (0x12006,
#   read from iomatrix's JSON). offset = below(positions) * 4096, positions =
#   (size - 4096) / 4096 + 1, one draw per request (iomatrix no longer draws its read-or-write
#   and random-or-sequential coin flips when a cell is 100% read and 100% random).
#   bare_pread.c carries the same generator. Once per script run, untimed, the script checks it:
#   it runs iomatrix for 16 requests (--bytes 64k) under `strace -f -e trace=openat,close,pread64`
#   and compares the offsets of its first 16 4 KiB preads on its file (after the lay-out, which
#   writes) with the bare loop's first 16 (bare_pread -n 16). If they differ the script stops
#   and says so (and whether iomatrix still draws the coin flips: --coin-flips makes the bare
#   loop draw them too, for a binary built before that change).
#   fio draws its offsets with its own generator (--norandommap: with replacement, as iomatrix;
#   --randrepeat=1: the same sequence in every run), uniformly over the same 4 KiB positions.
#   The files. Each tool reads a file of its own, laid out fresh before each of its runs and
#   untimed, on the same tmpfs, and only one exists at a time: iomatrix lays out its own inside
#   its run (sequential writes, before the timed cell; --keep leaves it to be checked after the
#   run); fio in an invocation of its own (--create_only=1); the bare loop's is written by
#   `head -c SIZE /dev/urandom`. On tmpfs a file is in memory by construction; fincore confirms
#   that all of it is resident: for fio's and the bare loop's before their runs, for iomatrix's
#   after its run (it lives only during the run).
#   fio: --name=access --rw=randread --bs=4096 --size=SIZE --ioengine=psync --iodepth=1
#   --direct=0 --time_based --runtime=D --norandommap --randrepeat=1 --thread --numjobs=1
#   --invalidate=0 --fadvise_hint=0 --group_reporting --lat_percentiles=1 --output-format=json.
#   IOPS: iomatrix's requests over the cell's wall time; fio's read.iops (over its runtime in
#   whole milliseconds); the bare loop's requests over its two clock reads. All three open the
#   file before the clock starts. The bare loop opens it O_RDONLY (iomatrix O_RDWR, fio
#   O_RDONLY for reads): no difference to a pread.
#
# HOW TO READ
#   iomatrix/bare is what iomatrix's per-request work costs next to nothing at all: picking the
#   offset is the same, so the gap is timestamps, the histogram, the per-second counters and the
#   loop's checks. 0.90 means iomatrix spends about 11% more time per request than a pread at
#   random offsets does by itself. iomatrix/fio above 1.0: iomatrix did more requests than fio,
#   which also times every request. These are page-cache speeds: 1-2 us per request, where a few
#   tens of nanoseconds show. Above the table come every run's figures; read them pair by pair
#   before trusting a ratio: on a machine with 2 CPUs anything else running moves single runs
#   by 10-20%.
#
# Needs root (it mounts a tmpfs), gcc, strace, fio, python3, util-linux (mount, findmnt,
# fincore) and coreutils. IOMATRIX_BIN=path chooses the iomatrix binary (default:
# target/release/iomatrix of this workspace; build it with `cargo build --release`), FIO=path
# fio, CC=path the C compiler. Everything the script makes (the tmpfs and its mount point, a
# scratch folder with the compiled loop, a throwaway results database and logs) is removed on
# every way out, also on failure, Ctrl-C (exit 130) or SIGTERM (exit 143).

set -euo pipefail

PROG=pread-vs-bare
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=bench/lib.sh
source "$SCRIPT_DIR/lib.sh"
IOMATRIX=${IOMATRIX_BIN:-$SCRIPT_DIR/../target/release/iomatrix}
FIO=${FIO:-fio}
CC=${CC:-gcc}

usage() {
    cat <<EOF
Usage: $0 [--size 512m] [--duration 10s] [--repeats 5] [--coin-flips]

Cached 4 KiB random pread at depth 1, on a tmpfs the script mounts: iomatrix's access suite
(latency recorded for every request) beside a bare C loop reading the same offsets in the same
order with no statistics (bench/bare_pread.c), and beside fio (psync). Prints each tool's median
IOPS and the ratios iomatrix/bare (goal >= 0.90) and iomatrix/fio (goal >= 1.2). Checks first,
with strace, that the bare loop reads the offsets iomatrix reads. Needs root (mount).

  --size SIZE      each tool's file, k/m/g/t = 1024-based [default: 512m]
  --duration TIME  how long each run reads: seconds, or with s or m [default: 10s]
  --repeats N      runs of each tool; medians are quoted; the goals want 5 or more [default: 5]
  --coin-flips     make the bare loop draw the two coin flips per request iomatrix drew before
                   it skipped them for 100% read, 100% random cells (for older binaries)
EOF
}

SIZE=512m
DURATION=10s
REPEATS=5
COIN_FLIPS=0

while [[ $# -gt 0 ]]; do
    case $1 in
    --size) need_value "$@"; SIZE=$2; shift 2 ;;
    --size=*) SIZE=${1#*=}; shift ;;
    --duration) need_value "$@"; DURATION=$2; shift 2 ;;
    --duration=*) DURATION=${1#*=}; shift ;;
    --repeats) need_value "$@"; REPEATS=$2; shift 2 ;;
    --repeats=*) REPEATS=${1#*=}; shift ;;
    --coin-flips) COIN_FLIPS=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument '$1'" ;;
    esac
done

BS=4096
CHECK_N=16 # requests in the offset check
SIZE_BYTES=$(to_bytes "$SIZE" --size)
SECS=$(to_seconds "$DURATION")
REPEATS=$(whole_number "$REPEATS" --repeats 1)
((SECS >= 1)) || die "--duration must be at least 1 second"
((SIZE_BYTES >= 1 << 20)) || die "--size ($SIZE) must be at least 1m"
((SIZE_BYTES % BS == 0)) || die "--size ($SIZE) must be a whole number of 4 KiB blocks"
((REPEATS >= 5)) || warn "--repeats $REPEATS: the issue's goals are judged on medians of at least 5 pairs"
# The tmpfs holds one tool's file at a time; twice that leaves room for iomatrix's space check.
TMPFS_BYTES=$((2 * SIZE_BYTES))

((EUID == 0)) || die "needs root: it mounts a tmpfs for the files"
need_iomatrix IOMATRIX_BIN
iomatrix_keep_cached
need_fio
command -v python3 >/dev/null || die "python3 not found: it computes the medians and reads the JSON"
command -v "$CC" >/dev/null || die "$CC not found: install gcc (Debian: apt-get install -y gcc) or set CC=path"
command -v strace >/dev/null || die "strace not found: install it (Debian: apt-get install -y strace); it checks the offsets"
for tool in mount umount mountpoint findmnt fincore timeout head stat; do
    command -v "$tool" >/dev/null || die "$tool not found: install util-linux and coreutils"
done
MEM_AVAIL=$(mem_available || true)
if [[ $MEM_AVAIL =~ ^[0-9]+$ ]] && ((MEM_AVAIL < 2 * SIZE_BYTES + (256 << 20))); then
    die "only $((MEM_AVAIL >> 20)) MiB of memory available: a $SIZE file on tmpfs needs more; choose a smaller --size"
fi
CC_VERSION=$(version_of "$CC" --version) || die "'$CC --version' failed"
STRACE_VERSION=$(version_of strace -V) || die "'strace -V' failed"

# ---- everything this script makes, and its removal -------------------------------------------

SCRATCH="" # the compiled loop, the results database, logs, and the tmpfs's mount point
TMPFS=""   # where the tmpfs is mounted (inside SCRATCH)

remove_what_we_made() {
    local rc=0
    if [[ -n $TMPFS ]] && ! unmount "$TMPFS"; then
        return 1 # SCRATCH stays too: it holds the mount point
    fi
    [[ -z $SCRATCH ]] || remove_dir "$SCRATCH" || rc=1
    return "$rc"
}

# Each child is bounded: the run itself, plus time for a layout at 8 MiB/s, plus 5 minutes.
LIMIT=$((SECS + 300 + SIZE_BYTES / (8 << 20)))

SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/$PROG.XXXXXX")
DB=$SCRATCH/results.sqlite
BARE=$SCRATCH/bare_pread
mkdir "$SCRATCH/tmpfs" "$SCRATCH/strace"
run_child 120 "$SCRATCH/cc.log" "$SCRATCH/cc.err" "$CC" -O2 -Wall -o "$BARE" "$SCRIPT_DIR/bare_pread.c" ||
    { sed 's/^/  | /' "$SCRATCH/cc.err" >&2; die "could not compile bench/bare_pread.c with $CC"; }
TMPFS=$SCRATCH/tmpfs
mount_tmpfs "$TMPFS" "$TMPFS_BYTES"
mkdir "$TMPFS/fio" "$TMPFS/bare"
FIO_FILE=$TMPFS/fio/testfile
BARE_FILE=$TMPFS/bare/testfile

# ---- conditions -----------------------------------------------------------------------------

CPU=$(awk -F': ' '$1 ~ /^model name/ { print $2; exit }' /proc/cpuinfo)
TMPFS_OPTIONS=$(findmnt -no OPTIONS -- "$TMPFS")
SHMEM_HUGE=$(sed -n 's/.*\[\(.*\)\].*/\1/p' /sys/kernel/mm/transparent_hugepage/shmem_enabled 2>/dev/null || true)
FLIPS_NOTE=""
((COIN_FLIPS)) && FLIPS_NOTE=" (bare loop draws the old coin flips: --coin-flips)"
CONDITIONS="file $SIZE on tmpfs ($TMPFS_OPTIONS; shmem huge pages: ${SHMEM_HUGE:-?}), 4k random pread qd1, ${SECS}s per run, $REPEATS repeats$FLIPS_NOTE; kernel $(uname -r), ${CPU:-?} x $(nproc) CPUs; iomatrix $IOMATRIX_VERSION, $FIO_VERSION, ${CC_VERSION}, ${STRACE_VERSION}"
echo "$PROG: $CONDITIONS"

# ---- the offsets: the bare loop reads what iomatrix reads --------------------------------------

# offsets_from_strace DIR: the offsets of the 4 KiB pread64 calls iomatrix made on the files it
# opened in client-0/ (its data file), in order, from strace -ff's per-thread files in DIR.
offsets_from_strace() {
    python3 - "$1" <<'PY'
import glob, re, sys
opened = re.compile(r'^openat\(AT_FDCWD, "([^"]*/client-0/[^"]+)", ([A-Z_|]+)[^)]*\) = (\d+)$')
closed = re.compile(r'^close\((\d+)\)')
pread = re.compile(r'^pread64\((\d+), .*, (\d+), (\d+)\)\s+= (-?\d+)')
found = []
for path in sorted(glob.glob(sys.argv[1] + "/t.*")):
    fds, offsets = set(), []
    for line in open(path):
        m = opened.match(line)
        if m:
            if "O_DIRECTORY" not in m.group(2):
                fds.add(m.group(3))
            continue
        m = closed.match(line)
        if m:
            fds.discard(m.group(1))
            continue
        m = pread.match(line)
        if m and m.group(1) in fds and m.group(2) == "4096":
            offsets.append(m.group(3))
    if offsets:
        found.append(offsets)
if len(found) != 1:
    sys.exit("expected 4 KiB preads on iomatrix's file from one thread, found them from %d" % len(found))
print(" ".join(found[0]))
PY
}

# Runs iomatrix for CHECK_N requests under strace, untimed, and compares its offsets with the
# bare loop's. Sets SEED (the cell's seed, from iomatrix's plan) and GENERATOR (the bare loop's
# -x for a binary whose runs name no generator: its old xorshift64*) for the timed runs.
SEED=""
GENERATOR=()
check_offsets() {
    local json=$SCRATCH/check.json log=$SCRATCH/check.log flips=() observed expected other named
    ((COIN_FLIPS)) && flips=(-c)
    if ! run_child "$LIMIT" "$json" "$log" strace -f -ff -qq -s 0 -e trace=openat,close,pread64 \
        -e signal=none -o "$SCRATCH/strace/t" "$IOMATRIX" --db "$DB" run access --target "$TMPFS" \
        --bs "$BS" --read 100 --random 100 --qd 1 --backend psync --file-size "$SIZE_BYTES" \
        --bytes $((CHECK_N * BS)) --json; then
        sed 's/^/  | /' "$log" >&2
        die "iomatrix under strace failed (its messages are above)"
    fi
    # Rank 0, cell 0: the cell's seed is the plan's.
    SEED=$(python3 -c 'import json, sys; print("%#x" % json.load(open(sys.argv[1]))["run"]["plan"]["seed"])' "$json") ||
        die "no plan seed in iomatrix's JSON ($json)"
    # What the seed drew from: the run's conditions name it (none before they did).
    named=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["run"]["conditions"].get("generator") or "")' "$json") ||
        die "no conditions in iomatrix's JSON ($json)"
    case $named in
        "") GENERATOR=(-x) ;;
        "xoshiro256++ (rand_xoshiro 0.8)") GENERATOR=() ;;
        *) die "iomatrix draws from a generator the bare loop does not carry: $named (bench/bare_pread.c)" ;;
    esac
    flips+=("${GENERATOR[@]}")
    observed=$(offsets_from_strace "$SCRATCH/strace") || die "could not read iomatrix's offsets from strace's output"
    expected=$("$BARE" "${flips[@]}" -s "$SEED" -n "$CHECK_N" "$SIZE_BYTES" | tr '\n' ' ')
    expected=${expected% }
    if [[ $observed != "$expected" ]]; then
        echo "$PROG: OFFSETS DIFFER: the bare loop would not read what iomatrix reads" >&2
        echo "  iomatrix, its first $CHECK_N 4 KiB preads on its file (strace): $observed" >&2
        echo "  the bare loop's first $CHECK_N (bare_pread ${flips[*]:+${flips[*]} }-s $SEED -n $CHECK_N $SIZE_BYTES): $expected" >&2
        if ((COIN_FLIPS)); then
            other=$("$BARE" "${GENERATOR[@]}" -s "$SEED" -n "$CHECK_N" "$SIZE_BYTES" | tr '\n' ' ')
            [[ $observed == "${other% }" ]] &&
                die "iomatrix no longer draws the coin flips: run without --coin-flips"
        else
            other=$("$BARE" -c "${GENERATOR[@]}" -s "$SEED" -n "$CHECK_N" "$SIZE_BYTES" | tr '\n' ' ')
            [[ $observed == "${other% }" ]] &&
                die "iomatrix still draws two coin flips per request before each offset (a binary from before issue 16's change): rebuild it, or run with --coin-flips to match it"
        fi
        die "iomatrix's offsets are neither the bare loop's nor those of the loop with coin flips: has its generator, seed or offset formula changed? (crates/access/src/runner.rs, crates/random)"
    fi
    local first8
    first8=$(cut -d' ' -f1-8 <<<"$observed")
    echo "$PROG: offsets check: iomatrix's first $CHECK_N preads (strace) = the bare loop's first $CHECK_N (seed $SEED, $(((SIZE_BYTES - BS) / BS + 1)) positions): $first8 ..."
}
check_offsets

# ---- the runs -------------------------------------------------------------------------------

CASE="psync qd1 4k randread, tmpfs"
RESULTS=$SCRATCH/results.tsv # repeat, case, tool, IOPS, p99 ns or -, mean ns or -, timed s
: >"$RESULTS"

# Appends one run's figures ("IOPS<TAB>p99 ns<TAB>mean ns<TAB>timed s", - for none) to the
# results and prints its line.
record() {
    local rep=$1 tool=$2 parsed=$3
    printf '%s\t%s\t%s\t%s\n' "$rep" "$CASE" "$tool" "$parsed" >>"$RESULTS"
    printf '%s\n' "$parsed" | awk -F'\t' -v r="$rep" -v t="$tool" '
        function us(ns) { return ns == "-" ? "-" : sprintf("%.2f", ns / 1000) }
        { printf "%-7s %-9s %10d %10s %10s %8.3f\n", r, t, $1, us($2), us($3), $4 }'
}

run_iomatrix() {
    local rep=$1 name=iomatrix-$1 cell_file
    local json=$SCRATCH/$name.json log=$SCRATCH/$name.log
    if ! run_child "$LIMIT" "$json" "$log" "$IOMATRIX" --db "$DB" run access --target "$TMPFS" --keep \
        --bs "$BS" --read 100 --random 100 --qd 1 --backend psync --file-size "$SIZE_BYTES" \
        --duration "${SECS}s" "${IOMATRIX_CACHED[@]}" --json; then
        sed 's/^/  | /' "$log" >&2
        die "iomatrix failed in repeat $rep (its messages are above)"
    fi
    local parsed
    parsed=$(iomatrix_figures "$json" "$SIZE_BYTES" psync 1 0 "$SECS" read "$SEED") ||
        die "iomatrix's output in repeat $rep is not as expected"
    # Its file, kept (--keep) to be checked: it was all in memory.
    cell_file=$(find "$TMPFS" -mindepth 3 -maxdepth 3 -path "$TMPFS/iomatrix-*/client-0/*" -type f -print -quit)
    [[ -n $cell_file ]] || die "iomatrix's file not found under $TMPFS after repeat $rep (--keep)"
    check_cached "$cell_file" "$SIZE_BYTES" "iomatrix's file after repeat $rep"
    rm -rf -- "$TMPFS"/iomatrix-*
    record "$rep" iomatrix "$parsed"
}

run_fio() {
    local rep=$1 name=fio-$1
    local json=$SCRATCH/$name.json log=$SCRATCH/$name.log where="repeat $1"
    fio_layout "$LIMIT" "$FIO_FILE" "$SIZE_BYTES" "$BS" "$SCRATCH/$name-layout" "$where"
    check_cached "$FIO_FILE" "$SIZE_BYTES" "fio's file ($where)"
    fio_args "$FIO_FILE" randread "$SIZE_BYTES" "$BS" psync 1 0 "$SECS"
    if ! run_child "$LIMIT" "$json" "$log" "$FIO" "${FIO_ARGS[@]}"; then
        sed 's/^/  | /' "$log" "$json" >&2
        die "fio failed in $where (its messages are above)"
    fi
    local parsed
    parsed=$(fio_figures "$json" "$SECS" read) || die "fio's output in $where: see above"
    rm -f -- "$FIO_FILE"
    record "$rep" fio "$parsed"
}

run_bare() {
    local rep=$1 name=bare-$1 flips=() out requests ns
    ((COIN_FLIPS)) && flips=(-c)
    flips+=("${GENERATOR[@]}")
    run_child "$LIMIT" "$BARE_FILE" "$SCRATCH/$name-layout.log" head -c "$SIZE_BYTES" /dev/urandom ||
        die "could not write the bare loop's file in repeat $rep"
    check_cached "$BARE_FILE" "$SIZE_BYTES" "the bare loop's file (repeat $rep)"
    if ! run_child "$LIMIT" "$SCRATCH/$name.out" "$SCRATCH/$name.log" "$BARE" "${flips[@]}" -s "$SEED" \
        "$SIZE_BYTES" "$BARE_FILE" "$SECS"; then
        sed 's/^/  | /' "$SCRATCH/$name.log" >&2
        die "the bare loop failed in repeat $rep (its messages are above)"
    fi
    out=$(<"$SCRATCH/$name.out")
    read -r requests ns <<<"$out"
    [[ $requests =~ ^[0-9]+$ && $ns =~ ^[0-9]+$ ]] || die "the bare loop printed '$out' in repeat $rep; expected 'REQUESTS NANOSECONDS'"
    ((requests > 0 && ns >= SECS * 900000000)) ||
        die "the bare loop did $requests requests in $ns ns in repeat $rep; expected about $SECS s"
    rm -f -- "$BARE_FILE"
    record "$rep" bare "$(awk -v n="$requests" -v t="$ns" 'BEGIN { printf "%.0f\t-\t-\t%.3f", n * 1e9 / t, t / 1e9 }')"
}

TOOLS=(iomatrix fio bare)
echo "$PROG: $REPEATS repeats x 3 tools = $((3 * REPEATS)) timed runs of ${SECS}s, plus untimed layouts"
echo
echo "per run: IOPS, read latency p99 and mean in us (iomatrix: issue to completion; fio: lat_ns;"
echo "the bare loop measures none), timed seconds; in each repeat's order"
printf '%-7s %-9s %10s %10s %10s %8s\n' repeat tool IOPS "p99 us" "mean us" "timed s"
for ((rep = 1; rep <= REPEATS; rep++)); do
    for ((i = 0; i < 3; i++)); do
        tool=${TOOLS[(rep - 1 + i) % 3]}
        "run_$tool" "$rep"
    done
done

# ---- medians --------------------------------------------------------------------------------

echo
echo "$PROG: $CONDITIONS"
median_table "$RESULTS" iomatrix,bare,fio "iomatrix/bare:0.90,iomatrix/fio:1.2" iomatrix,fio long
