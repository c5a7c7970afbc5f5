#!/usr/bin/env bash
# iozone-vs-fio.sh: iomatrix beside fio, on the same file system, doing the same work.
#
# Usage: bench/iozone-vs-fio.sh [--target DIR] [--size 256m] [--record 64k] [--repeats 5] [--direct]
#
# WHAT IT MEASURES
#   Three IOzone tests, as iomatrix implements them, each run by iomatrix and by fio:
#     write        a new file written sequentially, one pwrite(2) per record
#     read         the whole file read sequentially, one pread(2) per record
#     random-read  every record read exactly once, in random order, one pread(2) each
#   For each it prints the median throughput (KiB/s, 1 KiB = 1024 bytes) of each tool over
#   --repeats runs and the ratio iomatrix/fio, every single run's figures above the table,
#   and the conditions (file system, sizes, cached or direct, kernel, tool versions).
#
# WHY THE SETTINGS MATCH
#   iomatrix:  iomatrix run iozone --files SIZE --records RECORD --tests write,read,random-read
#              (psync backend; no --fsync/--close, so the write time excludes open, fsync and
#              close; the file is created anew, never preallocated; the read tests read the
#              file the write test wrote, without dropping the page cache in between).
#   fio, one invocation per test, in the same order, on one file in a folder under the target:
#     all:     --ioengine=psync --bs=RECORD --size=SIZE --thread --numjobs=1
#              --invalidate=0    fio would otherwise drop the file's page cache before each
#                                job; iomatrix does not, so cached reads are cache hits in both
#              --fadvise_hint=0  fio would otherwise posix_fadvise(SEQUENTIAL/RANDOM) the
#                                file; iomatrix gives no hints
#     write:   the file is deleted first; --create_on_open=1 --fallocate=none --end_fsync=0
#              (fio creates it at open, does not preallocate and does not fsync; iomatrix
#              neither) --scramble_buffers=0 (iomatrix writes the same incompressible buffer
#              each time; fio would otherwise alter a few bytes of its buffer before each write)
#     read:    --rw=read  (the file fio's write job left)
#     randread:--rw=randread --norandommap=0 --randrepeat=1  (every block exactly once)
#   --direct adds iomatrix --direct and fio --direct=1 (O_DIRECT; page-aligned buffers in both).
#   Both tools' figures are bytes moved over the time of the I/O loop. Both files are checked
#   to have moved exactly SIZE bytes. fio reports whole milliseconds, rounded up, so at page-
#   cache speeds (runs of a few tens of ms) fio's figure may read up to ~2% low; the per-run
#   lines show each run's time so this stays visible.
#   Per repeat: iomatrix (write, read, random-read in one invocation) and fio (write, read,
#   randread); the tool that goes first alternates from repeat to repeat so that neither
#   always runs on the warmer (or busier) system. All files are removed between repeats.
#   Exactly repeats x 6 timed runs, nothing else.
#
# HOW TO READ THE RATIO
#   iomatrix/fio near 1.0 means iomatrix's per-request overhead is like fio's: both issue the
#   same system calls, so the difference is what each tool does around them. Above 1.0
#   iomatrix was faster. Unless --direct is given, the figures are page-cache speeds (the file
#   fits in RAM): memory copies and system-call cost, not the storage. With --direct they
#   are the storage's speeds for single-threaded, queue-depth-1 requests.
#   This machine is shared and noisy, so single runs scatter; the table quotes medians of
#   several runs. Look at the per-run lines before trusting a ratio far from 1.0.
#
# Environment: IOMATRIX=path overrides the binary (default: target/release/iomatrix of this
# workspace; build it with `cargo build --release`). FIO=path overrides fio.
# Everything the script makes (its folder on the target, a scratch folder with a throwaway
# results database and logs) is removed at the end, also on failure or Ctrl-C.

set -euo pipefail

PROG=iozone-vs-fio
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=bench/lib.sh
source "$SCRIPT_DIR/lib.sh"
IOMATRIX=${IOMATRIX:-$SCRIPT_DIR/../target/release/iomatrix}
FIO=${FIO:-fio}

usage() {
    cat <<EOF
Usage: $0 [--target DIR] [--size 256m] [--record 64k] [--repeats 5] [--direct]

Runs IOzone's write, read and random-read tests through iomatrix and through fio on the same
file system and prints the median KiB/s of each tool and the ratio iomatrix/fio.

  --target DIR   folder on the file system to test; a fresh subfolder is made and removed
                 [default: a fresh folder under /var/tmp]
  --size SIZE    file size, k/m/g/t = 1024-based [default: 256m]
  --record SIZE  record (request) size [default: 64k]
  --repeats N    runs of each tool; medians are quoted [default: 5]
  --direct       O_DIRECT (bypass the page cache) in both tools [default: cached]
EOF
}

TARGET=""
SIZE=256m
RECORD=64k
REPEATS=5
DIRECT=0

while [[ $# -gt 0 ]]; do
    case $1 in
    --target) need_value "$@"; TARGET=$2; shift 2 ;;
    --target=*) TARGET=${1#*=}; shift ;;
    --size) need_value "$@"; SIZE=$2; shift 2 ;;
    --size=*) SIZE=${1#*=}; shift ;;
    --record) need_value "$@"; RECORD=$2; shift 2 ;;
    --record=*) RECORD=${1#*=}; shift ;;
    --repeats) need_value "$@"; REPEATS=$2; shift 2 ;;
    --repeats=*) REPEATS=${1#*=}; shift ;;
    --direct) DIRECT=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument '$1'" ;;
    esac
done

SIZE_BYTES=$(to_bytes "$SIZE" --size)
RECORD_BYTES=$(to_bytes "$RECORD" --record)
if [[ ! $REPEATS =~ ^[0-9]+$ ]] || ((10#$REPEATS < 1)); then
    die "--repeats '$REPEATS' must be a whole number of at least 1"
fi
REPEATS=$((10#$REPEATS))
((RECORD_BYTES > 0)) || die "--record must be more than 0 bytes"
((SIZE_BYTES >= RECORD_BYTES)) || die "--size ($SIZE) must be at least the record size ($RECORD)"
((SIZE_BYTES % RECORD_BYTES == 0)) || die "--size ($SIZE) must be a whole number of records ($RECORD)"
if ((DIRECT)) && ((RECORD_BYTES % 4096 != 0)); then
    die "--direct needs a record size that is a multiple of 4k (O_DIRECT alignment), not $RECORD"
fi

[[ -x $IOMATRIX ]] || die "no iomatrix binary at $IOMATRIX: build it with 'cargo build --release' in the workspace (or set IOMATRIX=path)"
command -v "$FIO" >/dev/null || die "fio not found: install it (Debian: apt-get install -y fio) or set FIO=path"
command -v python3 >/dev/null || die "python3 not found: it computes the medians and reads the JSON"

# ---- everything this script makes, and its removal -------------------------------------------

WORK=""    # our folder on the target: iomatrix's working folder and fio's file live in it
SCRATCH="" # local: the throwaway results database, JSON outputs and logs

remove_what_we_made() {
    [[ -z $WORK ]] || rm -rf -- "$WORK"
    [[ -z $SCRATCH ]] || rm -rf -- "$SCRATCH"
}

if [[ -n $TARGET ]]; then
    [[ -d $TARGET ]] || die "--target '$TARGET' is not a folder"
    [[ -w $TARGET ]] || die "--target '$TARGET' is not writable"
    BASE=$(cd "$TARGET" && pwd)
else
    BASE=/var/tmp
fi

# Space: one file at a time ever exists (iomatrix removes its file before exiting, fio's is
# removed before iomatrix runs), plus 10%.
NEED=$((SIZE_BYTES + SIZE_BYTES / 10))
AVAIL=$(df -P -B1 -- "$BASE" | awk 'NR == 2 { print $4 }')
[[ $AVAIL =~ ^[0-9]+$ ]] || die "cannot tell the free space of $BASE (df said '$AVAIL')"
if ((AVAIL < NEED)); then
    die "$BASE has $((AVAIL >> 20)) MiB free; a $SIZE file needs $((NEED >> 20)) MiB (file plus 10%): choose a smaller --size or another --target"
fi

WORK=$(mktemp -d "$BASE/$PROG.XXXXXX")
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/$PROG-scratch.XXXXXX")
FIO_DIR=$WORK/fio
FIO_FILE=$FIO_DIR/testfile
mkdir "$FIO_DIR"
DB=$SCRATCH/results.sqlite

# ---- conditions -----------------------------------------------------------------------------

FSTYPE=$(findmnt -no FSTYPE -T "$WORK" 2>/dev/null | head -n 1 || true)
[[ -n $FSTYPE ]] || FSTYPE=$(stat -f -c %T "$WORK" 2>/dev/null || echo unknown)
KERNEL=$(uname -r)
FIO_VERSION=$(version_of "$FIO" --version) || die "'$FIO --version' failed: is fio installed correctly?"
IOMATRIX_VERSION=$(version_of "$IOMATRIX" --version) ||
    die "'$IOMATRIX --version' failed: rebuild it with 'cargo build --release'"
IOMATRIX_VERSION=${IOMATRIX_VERSION#iomatrix }
if ((DIRECT)); then MODE=direct; else MODE=cached; fi
case $FSTYPE in
tmpfs | ramfs) echo "$PROG: warning: $WORK is on $FSTYPE (memory), not a disk" >&2 ;;
esac

CONDITIONS="target $WORK ($FSTYPE), file $SIZE, record $RECORD, $MODE, $REPEATS repeats, kernel $KERNEL, $FIO_VERSION, iomatrix $IOMATRIX_VERSION"
echo "$PROG: $CONDITIONS"

# ---- the runs -------------------------------------------------------------------------------

RESULTS=$SCRATCH/results.tsv # repeat, tool, test, KiB/s, milliseconds
: >"$RESULTS"

# Reads one tool's JSON, checks it, prints "test<TAB>KiB/s<TAB>ms" lines.
IOMATRIX_PARSE='
import json, sys
path, size, direct = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
doc = json.load(open(path))
if doc.get("schema") != "iomatrix.run/1":
    sys.exit("unexpected schema %r" % doc.get("schema"))
cells = {c["test"]: c for c in doc["run"]["cell_results"]}
for test in ("write", "read", "random-read"):
    c = cells.get(test)
    if c is None:
        sys.exit("no %s cell in the output" % test)
    if c["bytes"] != size or c.get("backend", "psync") != "psync" or c.get("direct", direct) != direct:
        sys.exit("%s cell moved %s bytes (backend %s, direct %s); expected %d, psync, %s"
                 % (test, c["bytes"], c.get("backend"), c.get("direct"), size, direct))
    print("%s\t%.0f\t%.3f" % (test, c["kib_per_sec"], c["wall_ns"] / 1e6))
'
FIO_PARSE='
import json, sys
path, size, test, ddir = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
doc = json.load(open(path))
job = doc["jobs"][0]
if job.get("error", 0) != 0:
    sys.exit("fio %s job reported error %s" % (test, job["error"]))
d = job[ddir]
if d["io_bytes"] != size:
    sys.exit("fio %s job moved %s bytes, expected %d" % (test, d["io_bytes"], size))
print("%s\t%.0f\t%d" % (test, d["bw_bytes"] / 1024, d["runtime"]))
'

run_iomatrix() {
    local rep=$1 json=$SCRATCH/iomatrix-$1.json log=$SCRATCH/iomatrix-$1.log
    local args=(--db "$DB" run iozone --target "$WORK" --files "$SIZE_BYTES" --records "$RECORD_BYTES"
        --tests "write,read,random-read" --backend psync --json)
    ((DIRECT)) && args+=(--direct)
    if ! run_child 0 "$json" "$log" "$IOMATRIX" "${args[@]}"; then
        sed 's/^/  | /' "$log" >&2
        die "iomatrix failed in repeat $rep (its messages are above)"
    fi
    local parsed
    parsed=$(python3 -c "$IOMATRIX_PARSE" "$json" "$SIZE_BYTES" "$DIRECT") ||
        die "iomatrix's output in repeat $rep is not as expected"
    printf '%s\n' "$parsed" | sed "s/^/$rep\tiomatrix\t/" >>"$RESULTS"
}

fio_job() {
    local rep=$1 test=$2 ddir=$3
    shift 3
    local json=$SCRATCH/fio-$rep-$test.json log=$SCRATCH/fio-$rep-$test.log
    local args=(--name=x --filename="$FIO_FILE" --thread --numjobs=1 --invalidate=0 --group_reporting
        --ioengine=psync --bs="$RECORD_BYTES" --size="$SIZE_BYTES" --direct="$DIRECT" --fadvise_hint=0
        --output-format=json "$@")
    if ! run_child 0 "$json" "$log" "$FIO" "${args[@]}"; then
        sed 's/^/  | /' "$log" "$json" >&2
        die "fio's $test job failed in repeat $rep (its messages are above)"
    fi
    local parsed
    parsed=$(python3 -c "$FIO_PARSE" "$json" "$SIZE_BYTES" "$test" "$ddir") ||
        die "fio's $test job in repeat $rep: see above"
    printf '%s\n' "$parsed" | sed "s/^/$rep\tfio\t/" >>"$RESULTS"
}

run_fio() {
    local rep=$1
    rm -f -- "$FIO_FILE"
    fio_job "$rep" write write --rw=write --end_fsync=0 --create_on_open=1 --fallocate=none --scramble_buffers=0
    fio_job "$rep" read read --rw=read
    fio_job "$rep" random-read read --rw=randread --norandommap=0 --randrepeat=1
    rm -f -- "$FIO_FILE"
}

# Prints one line per tool for a repeat, in the order the tools ran.
show_repeat() {
    local rep=$1 tool
    shift
    for tool in "$@"; do
        awk -F'\t' -v r="$rep" -v t="$tool" '
            $1 == r && $2 == t { line = line sprintf("  %11d (%6.1f ms)", $4, $5) }
            END { printf "%-7s %-9s%s\n", r, t, line }' "$RESULTS"
    done
}

echo
echo "per run: KiB/s (timed ms: iomatrix's own wall time; fio's runtime, whole ms rounded up)"
printf '%-7s %-9s  %11s %11s  %11s %11s  %11s %11s\n' repeat tool write "" read "" random-read ""
for ((rep = 1; rep <= REPEATS; rep++)); do
    if ((rep % 2 == 1)); then
        run_iomatrix "$rep"
        run_fio "$rep"
        show_repeat "$rep" iomatrix fio
    else
        run_fio "$rep"
        run_iomatrix "$rep"
        show_repeat "$rep" fio iomatrix
    fi
done

# ---- medians --------------------------------------------------------------------------------

echo
echo "$PROG: $CONDITIONS"
python3 - "$RESULTS" <<'EOF'
import statistics, sys
figures = {}
for line in open(sys.argv[1]):
    rep, tool, test, kib, ms = line.rstrip("\n").split("\t")
    figures.setdefault((tool, test), []).append(float(kib))
print("%-12s %16s %13s %14s" % ("test", "iomatrix KiB/s", "fio KiB/s", "iomatrix/fio"))
for test in ("write", "read", "random-read"):
    mine = statistics.median(figures[("iomatrix", test)])
    theirs = statistics.median(figures[("fio", test)])
    ratio = "%.2f" % (mine / theirs) if theirs > 0 else "n/a"
    print("%-12s %16.0f %13.0f %14s" % (test, mine, theirs, ratio))
EOF
