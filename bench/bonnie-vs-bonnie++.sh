#!/usr/bin/env bash
# bonnie-vs-bonnie++.sh: iomatrix's Bonnie suite beside bonnie++ 2.00a, on the same file system,
# with the same settings.
#
# Usage: bench/bonnie-vs-bonnie++.sh [--target DIR | --ext4 MIB] [--size 1024] [--ram 512] [--files 16]
#                                    [--repeats 5]
#
# WHAT IT MEASURES
#   bonnie++'s twelve tests, run by iomatrix under bonnie++'s own command line (iomatrix bonnie,
#   whose per-char tests are bonnie++ 2.00a's) and by bonnie++ itself:
#     putc, write, rewrite, getc, read   KB/s (1 KB = 1024 bytes, bonnie++'s K/sec)
#     seeks                              random seeks/s
#     seq-create, seq-stat, seq-delete, random-create, random-stat, random-delete   files/s
#   For each it prints every run's figure and %CPU, then the median of each tool over
#   --repeats runs (at least 3), the ratio iomatrix/bonnie++ and whether it lies within 10%,
#   and the conditions (file system, sizes, kernel, tool versions).
#
# WHY THE SETTINGS MATCH
#   iomatrix:  iomatrix bonnie -d DIR -s SIZE -n N -r RAM -u root -q
#   bonnie++:  bonnie++ -d DIR -s SIZE -n N -r RAM -u root -q
#   The same command line (-u root only as root, where bonnie++ insists on it). Same file system
#   (two sibling folders under one fresh folder on the target; --ext4 MIB makes that a fresh
#   loop-mounted ext4 image), same file size in MiB, same chunk (both default to 8192, which
#   bonnie++'s CSV does not record), same N*1024 empty files in one folder, same RAM for the
#   twice-the-RAM rule (--size must be at least 2 x --ram; --ram 0 turns the rule off in both).
#   Both do the data tests on one file in the same order, then the file tests, and time the
#   same operations:
#     putc     the first 3 MiB of the file (bonnie++'s DefaultByteIO), one write(2) system call
#              per byte, then fsync and close inside the timing (iomatrix's --per-char bonnie++,
#              the default under `iomatrix bonnie`)
#     getc     the first 3 MiB read back, one read(2) per byte, then fsync and close
#     write    the file made anew, one write(2) per chunk
#     rewrite  per chunk: read(2), one byte changed, lseek(2) back, write(2)
#     read     one read(2) per chunk
#     seeks    8192 seeks over all seekers, each an lseek(2) to a random chunk and a read(2) of
#              it; one in ten changes a byte, lseeks back and writes the chunk
#     create   N*1024 empty files created (open O_CREAT, close) in one folder; "seq" names
#              begin with a number, "random" names end with it, so random-order names
#     stat     seq: readdir order; random: a random order of the names
#     delete   seq: readdir order; random: a random order; then the folder is removed
#   Both tools' CSV lines (stdout under -q) are read by position; iomatrix's figures themselves
#   (unrounded, with each test's time) come from the run it stored, and its stored plan is
#   checked. bonnie++'s CSV line is read by position (format "1.98", which bonnie++
#   1.98 to 2.00a write; fields counted from 0; each figure is followed by its %CPU):
#     0 format version  1 bonnie++ version  5 file size ("1G", "512M")  6 empty (not the chunk)
#     7 seeks  8 seekers   9 putc  11 write  13 rewrite  15 getc  17 read  19 seeks/s
#     21 files (N)  22-25 max size, min size, folders, file chunk (empty = defaults)
#     26 seq-create  28 seq-stat  30 seq-delete  32 random-create  34 random-stat
#     36 random-delete  38-49 latencies (not used); 50 fields in all.
#   '+++++' in a figure (and '+++' in its %CPU) means bonnie++ timed that test under 0.5 s and
#   gives no figure: it counts as missing, never as 0.
#   Before each tool runs the script calls sync(1) (untimed), so that neither tool starts with
#   the other's dirty data (bonnie++ calls sync() inside some of its timings, see below).
#   Per repeat: iomatrix and bonnie++, the one that goes first alternating from repeat to repeat;
#   everything either tool left is removed between runs. Exactly repeats x 2 runs, nothing else.
#
# WHAT IS NOT THE SAME WORK (checked in bonnie++ 2.00a's source and with strace -f -c)
#   - putc/getc are the same work (above): strace -f -c counts 3,145,728 one-byte write(2)s and
#     as many one-byte read(2)s in each tool. (`iomatrix run bonnie` keeps the original Bonnie's
#     putc/getc, through a stdio-like buffer over the whole file: --per-char bonnie.)
#   - not a difference any more: bonnie++ 2.00a fsyncs the file before every close, inside the
#     timing (putc, write, rewrite, getc, read, and each seeker at its end), whatever -b says;
#     so does `iomatrix bonnie` (its plan's fsync_close; `run bonnie --fsync-close`). Without it
#     iomatrix's getc ran while the kernel wrote out the rewrite's dirty pages (0.7x bonnie++).
#   - not a difference any more either: iomatrix does the per-char tests on a thread with a file
#     table of its own (unshare(CLONE_FILES)), as bonnie++'s single-threaded process has; on a
#     table shared by threads every one-byte read(2)/write(2) costs ~100 ns more (fdget_pos),
#     which made iomatrix's putc 0.88x and getc 0.80x bonnie++'s.
#   - bonnie++ calls sync() (the whole system's) at the end of each create and delete test,
#     inside the timing; iomatrix does not, so its create/delete figures exclude writing the
#     inodes and the folder out (a few ms per sync() here, sometimes much more).
#   - seeks: both use 5 seeker threads (bonnie++ 2.00a's DefaultSeekProcCount; 1.03 had 3, as
#     iomatrix's run bonnie has); bonnie++ hands each seek out as a 4-byte read(2) from a pipe (8192 extra reads), and its
#     seekers' closing fsync (of the ~820 written-back chunks) is inside the timing. A 3 s sleep
#     before the seeks is outside bonnie++'s timing. Worse, each bonnie++ seeker unlinks the test
#     file as soon as it is done; when one seeker is still closing its descriptor then, that
#     close(2) drops the last reference and frees the whole file (page cache and blocks; ~0.45 s
#     for 1 GiB on this machine's ext4) inside the seek timing. So at 8192 seeks on a cached file
#     bonnie++'s figure is either '+++++' or mostly that deletion, not seeks (strace -f -T shows
#     the close taking 0.42-0.47 s in the runs that gave a figure).
#   - file names: bonnie++ uses a 10-digit hex number, iomatrix a 7-digit decimal one (each
#     with 0-12 random characters); bonnie++ creates with O_EXCL, iomatrix with O_TRUNC (on a
#     new file the same). Both close each file inside the create timing.
#   - iomatrix's default seed is fixed (the same seek offsets and file names in every run);
#     bonnie++ seeds from its pid and the time.
#   - the CSV's version field: bonnie++ writes 2.00a, iomatrix iomatrix-VERSION.
#
# HOW TO READ THE RATIO
#   Above 1.0 iomatrix was faster; "within 10%" is 0.90 to 1.10, judged only where each tool has
#   at least 3 runs that took 0.5 s. bonnie++'s rule (no figure under 0.5 s) is applied to both
#   tools' runs before the medians: otherwise, for a test that takes about 0.5 s, only bonnie++'s
#   slow runs would have a figure, to be set against all of iomatrix's (a 1.20 for read that way,
#   1 run against 5, where the one run of each tool over 0.5 s gave 1.01). For the create and
#   delete tests a ratio above 1 is expected from bonnie++'s sync() (above), not from faster
#   code. With a file smaller than the machine's RAM (the usual case here: -r only sets the size
#   check), read, getc, seeks and rewrite's reads are page-cache hits in both tools, and both
#   time read, stat and delete under 0.5 s: the ratio is then "n/a". Next to the ratio of the
#   medians, "paired" is the median of the per-repeat ratios (each repeat's two runs ran
#   back to back), which the machine drifting over the runs moves less. In the per-run lines
#   '*' marks an iomatrix figure timed under 0.5 s (where bonnie++ would have printed '+++++').
#   Creates on an ext4 without a journal (as this machine's / is) are bimodal in both tools:
#   for 60 s after an inode is freed (360 s while its inode-table block is not written back)
#   ext4 will not reuse it and steps over such inodes one by one (recently_deleted() in its
#   inode allocator, where perf finds the time), so a create test soon after a delete test can
#   be 10-30 times slower, whichever tool runs it. Compare create figures pair by pair.
#   This machine is shared and noisy: look at the per-run lines before trusting a ratio.
#
# Environment: IOMATRIX=path overrides the binary (default: target/release/iomatrix of this
# workspace; build it with `cargo build --release`). BONNIE=path overrides bonnie++.
# Everything the script makes (its folder on the target, a scratch folder with a throwaway
# results database and logs) is removed at the end, also on failure or Ctrl-C.

set -euo pipefail

PROG=bonnie-vs-bonnie++
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=bench/lib.sh
source "$SCRIPT_DIR/lib.sh"
IOMATRIX=${IOMATRIX:-$SCRIPT_DIR/../target/release/iomatrix}
BONNIE=${BONNIE:-bonnie++}

usage() {
    cat <<EOF
Usage: $0 [--target DIR | --ext4 MIB] [--size 1024] [--ram 512] [--files 16] [--repeats 5]

Runs bonnie++'s tests through iomatrix (iomatrix bonnie, bonnie++'s command line) and through
bonnie++ on the same file system and prints the median figure of each tool, the ratio
iomatrix/bonnie++ and whether it is within 10%.

  --target DIR   folder on the file system to test; a fresh subfolder is made and removed
                 [default: a fresh folder under /var/tmp]
  --ext4 MIB     (root) test on a fresh ext4 image of MIB MiB (written full of zeros first),
                 loop-mounted under /var/tmp and removed at the end
  --size MIB     test file size in MiB (bonnie++'s -s) [default: 1024]
  --ram MIB      RAM for the twice-the-RAM rule (bonnie++'s -r; 0 turns it off); --size
                 must be at least twice it [default: 512]
  --files N      file tests with N*1024 empty files (bonnie++'s -n) [default: 16]
  --repeats N    runs of each tool, at least 3; medians are quoted [default: 5]
EOF
}

TARGET=""
EXT4_MIB=""
SIZE=1024
RAM=512
FILES=16
REPEATS=5

while [[ $# -gt 0 ]]; do
    case $1 in
    --target) need_value "$@"; TARGET=$2; shift 2 ;;
    --target=*) TARGET=${1#*=}; shift ;;
    --ext4) need_value "$@"; EXT4_MIB=$2; shift 2 ;;
    --ext4=*) EXT4_MIB=${1#*=}; shift ;;
    --size) need_value "$@"; SIZE=$2; shift 2 ;;
    --size=*) SIZE=${1#*=}; shift ;;
    --ram) need_value "$@"; RAM=$2; shift 2 ;;
    --ram=*) RAM=${1#*=}; shift ;;
    --files) need_value "$@"; FILES=$2; shift 2 ;;
    --files=*) FILES=${1#*=}; shift ;;
    --repeats) need_value "$@"; REPEATS=$2; shift 2 ;;
    --repeats=*) REPEATS=${1#*=}; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument '$1'" ;;
    esac
done

# A whole number (no unit: bonnie++'s -s and -r are MiB, -n is thousands of files) of at least
# $3, without leading-zero octal surprises.
whole_number() {
    local text=$1 what=$2 min=$3
    if [[ ! $text =~ ^[0-9]{1,9}$ ]] || ((10#$text < min)); then
        die "$what '$text' must be a whole number of at least $min (no unit: $4)"
    fi
    echo $((10#$text))
}

SIZE=$(whole_number "$SIZE" --size 1 "MiB, as bonnie++'s -s")
RAM=$(whole_number "$RAM" --ram 0 "MiB, as bonnie++'s -r")
FILES=$(whole_number "$FILES" --files 1 "thousands (x1024) of files, as bonnie++'s -n")
REPEATS=$(whole_number "$REPEATS" --repeats 3 "runs: a median needs at least 3")
[[ -z $TARGET || -z $EXT4_MIB ]] || die "give --target or --ext4, not both"
[[ -z $EXT4_MIB ]] || EXT4_MIB=$(whole_number "$EXT4_MIB" --ext4 64 "MiB")
if ((RAM > 0 && SIZE < 2 * RAM)); then
    die "--size $SIZE is less than twice --ram $RAM; both tools refuse that: use --size $((2 * RAM)) or more, or a smaller --ram (0 turns the rule off)"
fi
((FILES <= 16384)) || die "--files $FILES is more than 16384 (16M files), the most iomatrix keeps names for"

[[ -x $IOMATRIX ]] || die "no iomatrix binary at $IOMATRIX: build it with 'cargo build --release' in the workspace (or set IOMATRIX=path)"
command -v "$BONNIE" >/dev/null || die "bonnie++ not found: install it (Debian: apt-get install -y bonnie++) or set BONNIE=path"
command -v python3 >/dev/null || die "python3 not found: it computes the medians and reads the JSON and CSV"

# ---- everything this script makes, and its removal -------------------------------------------

WORK=""    # our folder on the target: one subfolder per tool
IMGDIR=""  # with --ext4: our folder under /var/tmp holding the image and its mount point
IMAGE=""
MNT=""
SCRATCH="" # local: the throwaway results database, outputs and logs

remove_what_we_made() {
    local rc=0
    [[ -z $WORK ]] || rm -rf -- "$WORK"
    [[ -z $IMGDIR ]] || remove_image "$IMGDIR" "$MNT" "$IMAGE" || rc=1
    [[ -z $SCRATCH ]] || rm -rf -- "$SCRATCH"
    return "$rc"
}

if [[ -n $EXT4_MIB ]]; then
    ((EUID == 0)) || die "--ext4 needs root (mount -o loop)"
    for tool in mkfs.ext4 mount umount mountpoint dd losetup; do
        command -v "$tool" >/dev/null || die "$tool not found: install util-linux, e2fsprogs and coreutils"
    done
    IMGDIR=$(mktemp -d "/var/tmp/$PROG.XXXXXX")
    IMAGE=$IMGDIR/fs.img
    MNT=$IMGDIR/mnt
    mkdir "$MNT"
    # Written in full first (untimed), so that no run is the first to make the blocks of the file
    # behind the loop device: a sparse image made the first run's write 2-3x slower.
    dd if=/dev/zero of="$IMAGE" bs=1M count="$EXT4_MIB" conv=fsync status=none || die "cannot write $IMAGE"
    mkfs.ext4 -q -F "$IMAGE" || die "mkfs.ext4 on $IMAGE failed"
    mount -o loop "$IMAGE" "$MNT" || die "cannot loop-mount $IMAGE"
    BASE=$MNT
elif [[ -n $TARGET ]]; then
    [[ -d $TARGET ]] || die "--target '$TARGET' is not a folder"
    [[ -w $TARGET ]] || die "--target '$TARGET' is not writable"
    BASE=$(cd "$TARGET" && pwd)
else
    BASE=/var/tmp
fi

# Space: one tool at a time, and each holds at most the test file (the empty files of the file
# tests come after it is removed and need inodes, not space), plus 10%.
SIZE_BYTES=$((SIZE << 20))
NEED=$((SIZE_BYTES + SIZE_BYTES / 10))
AVAIL=$(df -P -B1 -- "$BASE" | awk 'NR == 2 { print $4 }')
[[ $AVAIL =~ ^[0-9]+$ ]] || die "cannot tell the free space of $BASE (df said '$AVAIL')"
if ((AVAIL < NEED)); then
    die "$BASE has $((AVAIL >> 20)) MiB free; a $SIZE MiB file needs $((NEED >> 20)) MiB (file plus 10%): choose a smaller --size or another --target"
fi
INODES=$(df -P -i -- "$BASE" | awk 'NR == 2 { print $4 }')
if [[ $INODES =~ ^[0-9]+$ ]] && ((INODES > 0 && INODES < FILES * 1024 + 16)); then
    die "$BASE has $INODES free inodes; --files $FILES needs $((FILES * 1024)): choose fewer --files or another --target"
fi

WORK=$(mktemp -d "$BASE/$PROG.XXXXXX")
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/$PROG-scratch.XXXXXX")
IOMATRIX_DIR=$WORK/iomatrix
BONNIE_DIR=$WORK/bonnie++
mkdir "$IOMATRIX_DIR" "$BONNIE_DIR"
DB=$SCRATCH/results.sqlite

# ---- conditions -----------------------------------------------------------------------------

FSTYPE=$(findmnt -no FSTYPE -T "$WORK" 2>/dev/null | head -n 1 || true)
[[ -n $FSTYPE ]] || FSTYPE=$(stat -f -c %T "$WORK" 2>/dev/null || echo unknown)
KERNEL=$(uname -r)
IOMATRIX_VERSION=$("$IOMATRIX" --version 2>/dev/null | head -n 1) || IOMATRIX_VERSION=""
[[ -n $IOMATRIX_VERSION ]] || die "'$IOMATRIX --version' failed: rebuild it with 'cargo build --release'"
IOMATRIX_VERSION=${IOMATRIX_VERSION#iomatrix }
# bonnie++ has no --version; its usage message (for any unknown option, exit status 1) ends
# with "Version: 2.00a".
BONNIE_VERSION=$({ "$BONNIE" -h 2>&1 || true; } | sed -n 's/^Version: *//p' | head -n 1)
[[ -n $BONNIE_VERSION ]] || die "cannot tell the version of '$BONNIE' (its usage message has no 'Version:' line)"
case $FSTYPE in
tmpfs | ramfs) echo "$PROG: warning: $WORK is on $FSTYPE (memory), not a disk" >&2 ;;
esac
MACHINE_RAM_MIB=$(awk '$1 == "MemTotal:" { print int($2 / 1024) }' /proc/meminfo 2>/dev/null || echo 0)

CONDITIONS="target $WORK ($FSTYPE), size $SIZE MiB, chunk 8k, files $FILES*1024, ram $RAM MiB, $REPEATS repeats, kernel $KERNEL, bonnie++ $BONNIE_VERSION, iomatrix $IOMATRIX_VERSION"
echo "$PROG: $CONDITIONS"
if [[ $MACHINE_RAM_MIB =~ ^[0-9]+$ ]] && ((MACHINE_RAM_MIB > SIZE)); then
    echo "$PROG: note: this machine has $MACHINE_RAM_MIB MiB of RAM, more than the $SIZE MiB file: it stays in the page cache, so the reads are cache hits in both tools (--ram only sets their size check)"
fi

# ---- the runs -------------------------------------------------------------------------------

TESTS="putc write rewrite getc read seeks seq-create seq-stat seq-delete random-create random-stat random-delete"
RESULTS=$SCRATCH/results.tsv # repeat, tool, test, figure ('+++++' = none), %CPU ('+++' = none), ms ('-' = unknown)
META=$SCRATCH/meta.tsv       # tool, key, value (seekers, seeks)
: >"$RESULTS"
: >"$META"

# Reads iomatrix's JSON, checks that it ran the plan asked for, prints
# "test<TAB>figure<TAB>%CPU<TAB>ms" lines in bonnie++'s order and "=key<TAB>value" lines.
IOMATRIX_PARSE='
import json, sys
path, size, files, ram = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
tests = sys.argv[5].split()
units = {"putc": "KB/s", "write": "KB/s", "rewrite": "KB/s", "getc": "KB/s", "read": "KB/s", "seeks": "seeks/s"}
doc = json.load(open(path))
if doc.get("schema") != "iomatrix.run/1":
    sys.exit("unexpected schema %r" % doc.get("schema"))
run = doc["run"]
if run.get("status") != "complete":
    sys.exit("the run is %r, not complete (error: %s)" % (run.get("status"), run.get("error")))
plan = run.get("plan", {})
want = {"size": size << 20, "chunk": 8192, "files": files * 1024, "ram": ram << 20, "repeats": 1,
        "skip_per_char": False, "sync": False, "direct": False,
        "per_char": "bonnie++", "per_char_size": 3 << 20, "fsync_close": True}
for key, value in want.items():
    if plan.get(key) != value:
        sys.exit("the stored plan has %s = %r, expected %r" % (key, plan.get(key), value))
cells = {}
for c in run["cell_results"]:
    if c["test"] in cells:
        sys.exit("two %s cells in the output" % c["test"])
    cells[c["test"]] = c
for test in tests:
    c = cells.get(test)
    if c is None:
        sys.exit("no %s cell in the output" % test)
    m = c["metrics"]
    if m["unit"] != units.get(test, "files/s"):
        sys.exit("%s is in %s, expected %s" % (test, m["unit"], units.get(test, "files/s")))
    print("%s\t%.1f\t%.1f\t%.3f" % (test, m["per_sec"], c["cpu_percent"], c["wall_ns"] / 1e6))
print("=seekers\t%d" % plan["seekers"])
print("=seeks\t%d" % plan["seeks"])
'

# Reads bonnie++'s CSV line (see the positions in the header), checks that it ran the settings
# asked for, prints lines as above ("+++++"/"+++" where bonnie++ gave no figure, ms "-").
BONNIE_PARSE='
import sys
path, size, files = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
tests = sys.argv[4].split()
lines = [l.strip() for l in open(path) if l.strip()]
if len(lines) != 1:
    sys.exit("expected one CSV line on stdout, got %d" % len(lines))
f = lines[0].split(",")
if f[0] != "1.98":
    sys.exit("CSV format %r: this script reads format 1.98 (bonnie++ 1.98 to 2.00a) by position" % f[0])
if len(f) != 50:
    sys.exit("%d CSV fields, expected 50 in format 1.98" % len(f))
label = "%dG" % (size // 1024) if size % 1024 == 0 else "%dM" % size
if f[5] != label:
    sys.exit("bonnie++ ran a %s file, expected %s" % (f[5], label))
if f[21] != str(files) or any(f[22:26]):
    sys.exit("bonnie++ ran the file tests with %s, expected %d and default sizes" % (",".join(f[21:26]), files))
positions = [9, 11, 13, 15, 17, 19, 26, 28, 30, 32, 34, 36]
for test, p in zip(tests, positions):
    value, cpu = f[p], f[p + 1]
    if value == "":
        sys.exit("no %s figure (field %d is empty): bonnie++ skipped the test" % (test, p))
    if value != "+++++":
        value = "%.1f" % float(value)
        cpu = "%.1f" % float(cpu)
    print("%s\t%s\t%s\t-" % (test, value, cpu))
print("=seekers\t%s" % f[8])
print("=seeks\t%s" % f[7])
'

# Files a tool left in its folder (there should be none), removed so the next run starts clean.
tidy() {
    local dir=$1 tool=$2 rep=$3 left
    left=$(find "$dir" -mindepth 1 -maxdepth 1 | head -n 3)
    if [[ -n $left ]]; then
        echo "$PROG: warning: $tool left files in repeat $rep (removed): ${left//$'\n'/ }" >&2
        find "$dir" -mindepth 1 -delete
    fi
}

# Stores a parser's output: figure lines into $RESULTS, "=key" lines into $META.
store() {
    local rep=$1 tool=$2 parsed=$3
    printf '%s\n' "$parsed" | grep -v '^=' | sed "s/^/$rep\t$tool\t/" >>"$RESULTS"
    printf '%s\n' "$parsed" | sed -n "s/^=/$tool\t/p" >>"$META"
}

run_iomatrix() {
    local rep=$1 csv=$SCRATCH/iomatrix-$1.csv json=$SCRATCH/iomatrix-$1.json log=$SCRATCH/iomatrix-$1.log
    # bonnie++'s own command line (see run_bonnie).
    local args=(--db "$DB" bonnie -d "$IOMATRIX_DIR" -s "$SIZE" -n "$FILES" -r "$RAM" -q)
    ((EUID != 0)) || args+=(-u root)
    sync
    if ! run_child 0 "$csv" "$log" "$IOMATRIX" "${args[@]}"; then
        sed 's/^/  | /' "$log" >&2
        die "iomatrix failed in repeat $rep (its messages are above)"
    fi
    # Its CSV line must read as bonnie++'s, by the same reader.
    python3 -c "$BONNIE_PARSE" "$csv" "$SIZE" "$FILES" "$TESTS" >/dev/null ||
        die "iomatrix's CSV line in repeat $rep is not bonnie++'s (it is below)
$(cat "$csv")"
    # The figures themselves, unrounded and with each test's time: the run it stored, the last one.
    local id
    id=$("$IOMATRIX" --db "$DB" runs --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["runs"][-1]["id"])') ||
        die "cannot list the runs in $DB"
    "$IOMATRIX" --db "$DB" show "$id" --json >"$json" || die "cannot show run $id of $DB"
    local parsed
    parsed=$(python3 -c "$IOMATRIX_PARSE" "$json" "$SIZE" "$FILES" "$RAM" "$TESTS") ||
        die "iomatrix's output in repeat $rep is not as expected"
    store "$rep" iomatrix "$parsed"
    tidy "$IOMATRIX_DIR" iomatrix "$rep"
}

run_bonnie() {
    local rep=$1 csv=$SCRATCH/bonnie-$1.csv log=$SCRATCH/bonnie-$1.log
    local args=(-d "$BONNIE_DIR" -s "$SIZE" -n "$FILES" -r "$RAM" -q)
    # As root bonnie++ insists on -u (the user to run as); as anyone else it must not switch.
    ((EUID != 0)) || args+=(-u root)
    sync
    if ! run_child 0 "$csv" "$log" "$BONNIE" "${args[@]}"; then
        sed 's/^/  | /' "$log" "$csv" >&2
        die "bonnie++ failed in repeat $rep (its messages are above)"
    fi
    local parsed
    parsed=$(python3 -c "$BONNIE_PARSE" "$csv" "$SIZE" "$FILES" "$TESTS") ||
        die "bonnie++'s output in repeat $rep is not as expected (it is in the line below)
$(cat "$csv")"
    store "$rep" bonnie++ "$parsed"
    tidy "$BONNIE_DIR" bonnie++ "$rep"
}

# Prints two lines per tool for a repeat, in the order the tools ran: figures, then %CPU.
show_repeat() {
    local rep=$1 tool
    shift
    for tool in "$@"; do
        awk -F'\t' -v r="$rep" -v t="$tool" '
            $1 == r && $2 == t {
                v = ($4 == "+++++") ? $4 : sprintf("%.0f", $4)
                if ($6 != "-" && $6 + 0 < 500) v = v "*"
                figures = figures sprintf(" %9s", v)
                cpu = cpu sprintf(" %9s", ($5 == "+++") ? $5 : sprintf("%.0f", $5))
            }
            END { printf "%-6s %-8s%s\n%-6s %-8s%s\n", r, t, figures, "", "  %CPU", cpu }' "$RESULTS"
    done
}

echo
echo "per run: KB/s (putc .. read), seeks/s, files/s; '+++++' = bonnie++ timed it under 0.5 s and gave no figure; * = iomatrix timed it under 0.5 s"
printf '%-6s %-8s' repeat tool
printf ' %9s' putc write rewrite getc read seeks seq-cr seq-stat seq-del rand-cr rand-stat rand-del
echo
for ((rep = 1; rep <= REPEATS; rep++)); do
    if ((rep % 2 == 1)); then
        run_iomatrix "$rep"
        run_bonnie "$rep"
        show_repeat "$rep" iomatrix bonnie++
    else
        run_bonnie "$rep"
        run_iomatrix "$rep"
        show_repeat "$rep" bonnie++ iomatrix
    fi
done

# ---- medians --------------------------------------------------------------------------------

echo
echo "$PROG: $CONDITIONS"
python3 - "$RESULTS" "$META" "$REPEATS" "$SIZE" "$TESTS" "$BONNIE_VERSION" <<'EOF'
import statistics, sys
results, meta, repeats, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
tests, version = sys.argv[5].split(), sys.argv[6]
# bonnie++ gives a figure only for a test that took at least 0.5 s; the same rule is applied to
# iomatrix's figures before any median or ratio, or a test near 0.5 s would set bonnie++'s slow
# runs (the only ones with a figure) against all of iomatrix's.
figures, by_repeat, everything = {}, {}, {}
for line in open(results):
    rep, tool, test, value, cpu, ms = line.rstrip("\n").split("\t")
    figures.setdefault((tool, test), [])
    if value == "+++++":
        continue
    everything.setdefault((tool, test), []).append(float(value))
    if ms != "-" and float(ms) < 500:
        continue
    figures[(tool, test)].append(float(value))
    by_repeat[(tool, test, rep)] = float(value)
info = {}
for line in open(meta):
    tool, key, value = line.rstrip("\n").split("\t")
    info.setdefault((tool, key), set()).add(value)
units = {"putc": "KB/s", "write": "KB/s", "rewrite": "KB/s", "getc": "KB/s", "read": "KB/s", "seeks": "seeks/s"}
print("%-15s %-8s %11s %11s %5s   %s" % ("test", "unit", "iomatrix", "bonnie++", "runs", "iomatrix/bonnie++ within 10%"))
for test in tests:
    mine = figures.get(("iomatrix", test), [])
    theirs = figures.get(("bonnie++", test), [])
    m = statistics.median(mine) if mine else None
    t = statistics.median(theirs) if theirs else None
    # Each repeat's iomatrix figure over the bonnie++ figure of the same repeat.
    paired = [by_repeat[("iomatrix", test, r)] / by_repeat[("bonnie++", test, r)]
              for r in map(str, range(1, repeats + 1))
              if by_repeat.get(("bonnie++", test, r), 0) > 0 and ("iomatrix", test, r) in by_repeat]
    if m is None or t is None or t <= 0:
        ratio = "n/a: no run of %s took 0.5 s" % ("either" if m is None and t is None else
                                                  "iomatrix" if m is None else "bonnie++")
    else:
        r = m / t
        if len(mine) >= 3 and len(theirs) >= 3:
            verdict = "yes" if 0.9 <= r <= 1.1 else "NO"
        else:
            verdict = "n/a"
        ratio = "%-6.2f %-4s paired %s" % (r, verdict, "%.2f" % statistics.median(paired) if paired else "-")
        if verdict == "n/a":
            ratio += "  (fewer than 3 runs each took 0.5 s: no verdict)"
    shown = lambda v, tool: ("%.0f" % v if v is not None else
                             "(%.0f*)" % statistics.median(everything[(tool, test)])
                             if everything.get((tool, test)) else "+++++")
    print("%-15s %-8s %11s %11s %5s   %s" % (test, units.get(test, "files/s"), shown(m, "iomatrix"),
          shown(t, "bonnie++"), "%d/%d" % (len(mine), len(theirs)), ratio))
def one(tool, key):
    values = info.get((tool, key), set())
    return "/".join(sorted(values)) if values else "?"
print()
print("medians over each tool's runs that took at least 0.5 s (bonnie++'s rule for giving a figure, applied to")
print("both; 'runs' counts them, iomatrix/bonnie++, of %d each; '(N*)' is iomatrix's median over its faster runs)." % repeats)
print("iomatrix/bonnie++ is the ratio of the medians, with a verdict where both have at least 3 runs; 'paired' is")
print("the median of the per-repeat ratios (less moved by the machine drifting over the runs).")
print("The work differs in these ways (see the script's header):")
print("  putc/getc: the same work in both (bonnie++ %s's: 3 MiB, one write(2)/read(2) system call per byte," % version)
print("             fsync before close)")
print("  both fsync the data file before every close, inside the timing (bonnie++ 2.00a's close)")
print("  bonnie++ calls sync() at the end of each create and delete test, inside the timing; iomatrix does not")
print("  seeks: %s seeker threads in iomatrix, %s in bonnie++ (%s and %s seeks); bonnie++ takes each seek from a"
      % (one("iomatrix", "seekers"), one("bonnie++", "seekers"), one("iomatrix", "seeks"), one("bonnie++", "seeks")))
print("  pipe (one more read(2) per seek) and its seekers fsync at the end, inside the timing; a bonnie++ seeker")
print("  that closes the file after another one unlinked it frees the whole file inside the timing")
EOF
