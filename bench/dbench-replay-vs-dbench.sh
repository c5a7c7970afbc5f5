#!/usr/bin/env bash
# dbench-replay-vs-dbench.sh: iomatrix's replay of a dbench load file beside dbench itself, on the
# same folder, the same load file, the same time and number of clients.
#
# Usage: bench/dbench-replay-vs-dbench.sh [--target DIR | --ext4 MIB] [--loadfile FILE] [--time 10s]
#                                         [--clients 1] [--repeats 5]
#
# WHAT IT MEASURES
#   dbench 4:  dbench -c FILE -D DIR -t T N
#   iomatrix:  iomatrix run personality --dbench-loadfile FILE --target DIR --connections N
#                --duration Ts   (into a throwaway results database; its stored cell is read back)
#   Each gives its throughput (MB/sec: bytes of ReadX and WriteX per second, 10^6 bytes a MB)
#   and per operation its count, mean and largest latency (ms). The script prints every run's
#   MB/sec, then for each tool the median over --repeats runs (at least 5 pairs for a ratio worth
#   quoting), the paired ratio iomatrix/dbench (the median of each pair's ratio, the two runs of a
#   pair back to back) with its sign-test interval and how many pairs iomatrix won, and per
#   operation the median operations per second and mean latency of each tool with their ratios.
#   Within each pair the tool that goes first alternates.
#
# WHY THE WORK IS THE SAME
#   Both read the same load file line by line (client.txt: no timestamps, so both go as fast as
#   possible), loop it until the time is up, put connection N's files below DIR/clients/clientN
#   (dbench numbers its clients from 0, and so does the replay: `\clients\client1` becomes
#   clients/client0 for one client), write zeros, and remove DIR/clients at the end.
#   The operations map one to one: NTCreateX is open(2) with the disposition's flags (a folder
#   made and opened O_DIRECTORY), ReadX pread, WriteX pwrite, Close close, Unlink unlink, Rename
#   rename, Mkdir mkdir, Deltree a recursive removal, QUERY_PATH_INFORMATION stat, ..._FILE_...
#   fstat, QUERY_FS_INFORMATION statvfs, SET_FILE_INFORMATION the file's times (utime in dbench,
#   futimens in the replay), FIND_FIRST a folder listing, LockX/UnlockX fcntl byte-range locks.
#
# WHAT IS NOT THE SAME WORK
#   - dbench resolves every path before its operation as a Samba server would (a stat(2), and on
#     a miss a folder listing compared case-insensitively); the replay does not: its
#     QUERY_PATH_INFORMATION is one stat, its NTCreateX one open.
#   - dbench re-reads and re-tokenizes the load file's text on every pass (gzgets, string
#     substitutions per line, a kill(parent, 0) per line); the replay parses it once, before the
#     clock starts.
#   - dbench checks only some statuses (unlink, rmdir, rename, an NTCreateX expected to fail) and
#     ends a client on a mismatch; the replay checks every line's status, counts mismatches per
#     operation and goes on (the script prints the count: 0 expected on a local file system).
#   - FIND_FIRST: dbench reads at most the line's count of entries without matching; the replay
#     lists the folder and matches the pattern (DOS wildcards), as the server would.
#   - locks: dbench's F_SETLKW locks belong to the process (never conflicting in one client); the
#     replay's are open-file-description locks (F_OFD_SETLK), which conflict between opens as SMB's do.
#   - both fsync on Flush (strace shows dbench's fsync calls; on tmpfs both time it at ~0 ms).
#   Under strace -f -c, 3 s of dbench on tmpfs made a kill(2) per line (30,822), 26,724 newfstatat
#   (6,116 failing: path resolution misses) and 15,890 getdents64 for ~31,000 operations: the
#   replay's one system call per operation is most of the throughput ratio on tmpfs.
#   - dbench prints a progress line each second from its parent process; iomatrix a live line
#     from its main thread. iomatrix works in DIR/iomatrix-PID-N/client-0 (its run folder), so its
#     paths are two folders deeper than dbench's DIR/clients/...
#   - iomatrix's clock for the cell runs from the common start to the last connection's last
#     operation; dbench's from its start to the time limit.
#
# Environment: IOMATRIX=path overrides the binary (default: target/release/iomatrix of this
# workspace; build it with `cargo build --release`). DBENCH=path overrides dbench. Everything the script makes (a tmpfs or loop-mounted ext4 and its
# folder, the logs) is removed at the end, also on failure or Ctrl-C.

set -euo pipefail

PROG=dbench-replay-vs-dbench
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=bench/lib.sh
source "$SCRIPT_DIR/lib.sh"
IOMATRIX=${IOMATRIX:-$SCRIPT_DIR/../target/release/iomatrix}
DBENCH=${DBENCH:-dbench}

TARGET="" EXT4_MIB="" LOADFILE=/usr/share/dbench/client.txt SECONDS_EACH=10 CLIENTS=1 REPEATS=5
while (($#)); do
    case $1 in
    --target) need_value "$@"; TARGET=$2; shift 2 ;;
    --ext4) need_value "$@"; EXT4_MIB=$(whole_number "$2" --ext4 64); shift 2 ;;
    --loadfile) need_value "$@"; LOADFILE=$2; shift 2 ;;
    --time) need_value "$@"; SECONDS_EACH=$(to_seconds "$2" --time); shift 2 ;;
    --clients) need_value "$@"; CLIENTS=$(whole_number "$2" --clients 1); shift 2 ;;
    --repeats) need_value "$@"; REPEATS=$(whole_number "$2" --repeats 1); shift 2 ;;
    -h | --help) sed -n '2,/^$/p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
    esac
done
[[ -n $TARGET && -n $EXT4_MIB ]] && die "--target and --ext4 name two places: give one"
((SECONDS_EACH >= 1)) || die "--time must be at least 1 s"
[[ -f $LOADFILE ]] || die "no load file at $LOADFILE: install dbench (Debian: apt-get install -y dbench) or pass --loadfile"
command -v "$DBENCH" >/dev/null || die "dbench not found: install it (Debian: apt-get install -y dbench) or set DBENCH=path"
need_iomatrix IOMATRIX

SCRATCH=$(mktemp -d /tmp/dbench-vs.XXXXXX)
MNT="" IMAGE=""
remove_what_we_made() {
    local rc=0
    if [[ -n $IMAGE ]]; then
        remove_image "$SCRATCH/fs" "$MNT" "$IMAGE" || rc=1
    elif [[ -n $MNT ]]; then
        unmount "$MNT" || rc=1
    fi
    [[ -n $TARGET && -n ${DIR:-} ]] && { rm -rf -- "$DIR" || rc=1; }
    remove_dir "$SCRATCH" || rc=1
    return "$rc"
}

if [[ -n $TARGET ]]; then
    [[ -d $TARGET ]] || die "--target $TARGET is not a folder"
    DIR=$(mktemp -d "$TARGET/dbench-vs.XXXXXX")
    WHERE="$TARGET ($(findmnt -n -o FSTYPE -T "$TARGET"))"
elif [[ -n $EXT4_MIB ]]; then
    [[ $EUID -eq 0 ]] || die "--ext4 mounts an image: run as root"
    mkdir -p "$SCRATCH/fs/mnt"
    MNT=$SCRATCH/fs/mnt IMAGE=$SCRATCH/fs/ext4.img
    make_ext4 "$IMAGE" $((EXT4_MIB << 20)) "$MNT" "$SCRATCH/mkfs.log"
    DIR=$MNT
    WHERE="a fresh ext4 of $EXT4_MIB MiB, loop-mounted"
else
    [[ $EUID -eq 0 ]] || die "the default target is a fresh tmpfs, which needs root: run as root, or pass --target DIR"
    mkdir -p "$SCRATCH/mnt"
    MNT=$SCRATCH/mnt
    mount_tmpfs "$MNT" $((2 << 30))
    DIR=$MNT
    WHERE="a fresh tmpfs of 2 GiB"
fi

LIMIT=$((SECONDS_EACH + 120))
RESULTS=$SCRATCH/results.tsv
: >"$RESULTS"

# run_tool TOOL REP: one run; its output saved as SCRATCH/TOOL.REP.out.
run_tool() {
    local tool=$1 rep=$2 out=$SCRATCH/$1.$2.out err=$SCRATCH/$1.$2.err rc=0
    rm -rf -- "${DIR:?}/clients"
    sync
    case $tool in
    dbench) run_child "$LIMIT" "$out" "$err" "$DBENCH" -c "$LOADFILE" -D "$DIR" -t "$SECONDS_EACH" "$CLIENTS" || rc=$? ;;
    iomatrix)
        run_child "$LIMIT" "$out.run" "$err" "$IOMATRIX" --db "$SCRATCH/results.sqlite" run personality \
            --dbench-loadfile "$LOADFILE" --target "$DIR" --connections "$CLIENTS" --duration "${SECONDS_EACH}s" || rc=$?
        if ((rc == 0)); then
            # The stored cell, in dbench's words: the op table, Throughput and the mismatches.
            "$IOMATRIX" --db "$SCRATCH/results.sqlite" show "$rep" --json 2>>"$err" | python3 -c '
import json, sys
c = json.load(sys.stdin)["run"]["cell_results"][0]["metrics"]
for name, o in c["ops"].items():
    print(" %s %d %.3f %.3f" % (name, o["count"], o["mean_ns"] / 1e6, o["max_ns"] / 1e6))
print("Throughput %.2f MB/sec" % c["dbench"]["mb_per_s"])
print("mismatches %d" % c["dbench"]["mismatches"])' >"$out" || rc=$?
        fi
        ;;
    esac
    if ((rc != 0)); then
        sed 's/^/  | /' "$err" "$out" | tail -20 >&2
        die "$tool failed (exit $rc) in repeat $rep"
    fi
    grep -q '^Throughput' "$out" || die "$tool printed no Throughput line in repeat $rep (see $out)"
    printf '%s\t%s\t%s\n' "$rep" "$tool" "$out" >>"$RESULTS"
}

echo "$PROG: $REPEATS pairs of ${SECONDS_EACH}s runs, $CLIENTS client(s), $LOADFILE, on $WHERE" >&2
for ((rep = 1; rep <= REPEATS; rep++)); do
    if ((rep % 2)); then order="dbench iomatrix"; else order="iomatrix dbench"; fi
    for tool in $order; do
        run_tool "$tool" "$rep"
        printf '%s: repeat %d %-8s %s\n' "$PROG" "$rep" "$tool" "$(grep '^Throughput' "$SCRATCH/$tool.$rep.out")" >&2
    done
done

python3 - "$RESULTS" "$REPEATS" <<'PY'
import math, re, statistics, sys

DBENCH_NAMES = {"Qpathinfo": "QUERY_PATH_INFORMATION", "Qfileinfo": "QUERY_FILE_INFORMATION",
                "Qfsinfo": "QUERY_FS_INFORMATION", "Sfileinfo": "SET_FILE_INFORMATION", "Find": "FIND_FIRST"}

def parse(path):
    """MB/s, seconds-free op table {name: (count, avg_ms, max_ms)}, mismatches (iomatrix only)."""
    mbs, ops, mism = None, {}, None
    for line in open(path):
        m = re.match(r"^Throughput ([0-9.]+) MB/sec", line)
        if m:
            mbs = float(m.group(1))
        m = re.match(r"^ (\w+)\s+(\d+)\s+([0-9.]+)\s+([0-9.]+)\s*$", line)
        if m:
            ops[DBENCH_NAMES.get(m.group(1), m.group(1))] = (int(m.group(2)), float(m.group(3)), float(m.group(4)))
        m = re.match(r"^mismatches (\d+)", line)
        if m:
            mism = int(m.group(1))
    return mbs, ops, mism

def interval(values):
    v, n = sorted(values), len(values)
    below = lambda k: sum(math.comb(n, i) for i in range(k)) / 2 ** n
    k = 1
    while k + 1 <= n // 2 and 1 - 2 * below(k + 1) >= 0.95:
        k += 1
    return v[k - 1], v[n - k], 1 - 2 * below(k)

runs = {}
for line in open(sys.argv[1]):
    rep, tool, path = line.rstrip("\n").split("\t")
    runs[(int(rep), tool)] = parse(path)
reps = sorted({r for r, _ in runs})
print("repeat  dbench MB/s  iomatrix MB/s  ratio")
ratios = []
for r in reps:
    d, i = runs[(r, "dbench")][0], runs[(r, "iomatrix")][0]
    ratios.append(i / d)
    print("%6d  %11.2f  %13.2f  %5.3f" % (r, d, i, i / d))
md = statistics.median(runs[(r, "dbench")][0] for r in reps)
mi = statistics.median(runs[(r, "iomatrix")][0] for r in reps)
lo, hi, level = interval(ratios)
print()
print("throughput (median of %d): dbench %.2f MB/s, iomatrix %.2f MB/s" % (len(reps), md, mi))
print("iomatrix/dbench: paired %.3f (iomatrix won %d/%d, interval %.3f-%.3f at %.0f%%), of medians %.3f"
      % (statistics.median(ratios), sum(x > 1 for x in ratios), len(ratios), lo, hi, 100 * level, mi / md))
mism = [runs[(r, "iomatrix")][2] for r in reps]
print("iomatrix's status mismatches per run: %s" % mism)
if len(reps) < 5:
    print("NOTE: %d pair(s): quote ratios from at least 5 (--repeats 5)." % len(reps))
print()
names = [n for n in runs[(reps[0], "dbench")][1]]
for n in runs[(reps[0], "iomatrix")][1]:
    if n not in names:
        names.append(n)
print("%-24s %12s %12s %7s   %10s %10s %7s" % ("operation (median)", "dbench ops", "iomatrix ops", "ratio",
                                                "dbench ms", "iomatrix ms", "ratio"))
for n in names:
    def med(tool, i):
        v = [runs[(r, tool)][1][n][i] for r in reps if n in runs[(r, tool)][1]]
        return statistics.median(v) if v else None
    dc, ic, dl, il = med("dbench", 0), med("iomatrix", 0), med("dbench", 1), med("iomatrix", 1)
    fmt = lambda x, f: (f % x) if x is not None else "-"
    print("%-24s %12s %12s %7s   %10s %10s %7s" % (
        n, fmt(dc, "%.0f"), fmt(ic, "%.0f"), fmt(ic / dc, "%.2f") if dc and ic else "-",
        fmt(dl, "%.3f"), fmt(il, "%.3f"), fmt(il / dl, "%.2f") if dl and il else "-"))
print("ops: operations in the run (both run the same time); ms: mean latency; a latency ratio below 1 is")
print("iomatrix faster. dbench prints latencies to 0.001 ms: its 0.000 rows have no ratio.")
PY
echo "conditions: $(uname -r), $WHERE, dbench $(dpkg-query -W -f '${Version}' dbench 2>/dev/null || echo '?'), iomatrix $IOMATRIX_VERSION ($(git -C "$SCRIPT_DIR/.." rev-parse --short HEAD 2>/dev/null || echo '?'))"
