#!/usr/bin/env bash
# personality-vs-filebench.sh: filebench's fileserver, varmail and webserver in real filebench
# (1.5-alpha3, its own workloads/*.f) and as iomatrix's built-in personalities, on the same
# fileset, on a fresh tmpfs and a loop-mounted ext4, in alternating pairs; medians of flows/s,
# ops/s, MiB/s and each operation's mean latency, and the ratios iomatrix/filebench (issue 37).
#
# Usage: bench/personality-vs-filebench.sh [--repeats 5] [--seconds 5]
#            [--personalities fileserver,varmail,webserver] [--fs tmpfs,ext4]
#            [--threads N] [--files N] [--filebench PATH | --filebench-src DIR [--precise-latency]]
#
# WHAT IT RUNS (each repeat of each personality on each file system: both, in alternating order)
#   filebench  filebench -f NAME.f, the workload file filebench installed (share/filebench/
#              workloads/NAME.f), with only `set $dir=` (a fresh folder on the file system) and
#              `run 60` (-> run SECONDS) changed, and `set $nthreads=` / `set $nfiles=` when
#              --threads / --files are given. Its fileset is removed after each run.
#   iomatrix   iomatrix run personality NAME --connections T --files F --duration SECONDS
#              --target DIR, where T and F are the .f file's $nthreads and $nfiles (or the
#              flags): the same threads and files. The figures are read from the stored run
#              (`iomatrix show ID --json`), never from its text.
#   Before anything runs, the .f file's $nthreads, $nfiles, $meandirwidth, mean file size,
#   $iosize and append size are printed beside the built-in's own summary (`iomatrix
#   personalities show NAME`), so a difference in the fileset is in plain sight.
#   filebench ends a run without figures when a flowop finds no file ("Run stopped early";
#   varmail on a fast tmpfs): such a run is run again, up to 4 times; after that the repeat has
#   no filebench figures, which the end of the output says.
#
# THE FIGURES (per personality and file system; medians over the repeats)
#   flows/s      filebench: its thread loops per second (the rate of the flowop each loop runs
#                once: deletefile for fileserver and varmail, the log's appendfilerand for
#                webserver); iomatrix: the same operation's rate (delete; webserver: append to
#                the log). In filebench one loop runs every flowop of the thread in turn;
#                iomatrix's built-ins draw one flow per iteration, so this is the unit both share.
#   ops/s        filebench: IO Summary's ops/s (every flowop counts one per call); iomatrix: the
#                cell's flow steps over its wall time (one per flowop execution, as filebench
#                counts; runs stored before flow steps were counted: requests).
#   MiB/s        filebench: IO Summary's mb/s (MiB); iomatrix: bytes over the wall time in MiB.
#   OP mean ms   per operation kind (create, open, read, append, fsync, close, delete, stat,
#                write): filebench's flowops of that type (from the .f file), their ms/op
#                weighted by their counts; iomatrix: ops.OP.flowop_mean_ns of the stored cell
#                (the requests' time per flow step; older runs: mean_ns, per request).
#   Ratios: iomatrix/filebench, "paired" = the median of the per-repeat ratios, with their range.
#   filebench prints ms/op with ONE decimal (0.1 ms steps): its mean latencies below 1 ms are
#   coarse. --precise-latency (with --filebench-src) builds filebench with 4 decimals in those two
#   printf formats of stats.c, nothing else changed; the output says which filebench ran.
#
# FILEBENCH
#   Default: `filebench` on PATH (it must be installed: `make install`, so that it finds its cvar
#   libraries under PREFIX/share/filebench). --filebench PATH: that binary (installed). With
#   --filebench-src DIR (filebench's source, e.g. `git archive 1.5-alpha3` of
#   github.com/filebench/filebench), a copy of DIR is built and installed into the scratch folder:
#   libtoolize; aclocal; autoheader; automake --add-missing; autoconf; ./configure --prefix;
#   make; make install (Debian: apt-get install autoconf automake libtool flex bison).
#   filebench runs with ASLR off (/proc/sys/kernel/randomize_va_space 0), as it asks; the old
#   value is restored on every way out.
#
# WHERE
#   A fresh tmpfs (--tmpfs-size, default 3g) and a fresh ext4 image on a tmpfs of its own
#   (--ext4-size, default 4g; the image's blocks are in memory), one after the other (--fs).
#   Everything made (mounts, loop devices, filebench's processes and its /tmp/filebench-shm-*
#   files, the scratch folder) is removed at the end, also on failure or Ctrl-C. Needs root.
#
# QUIET MACHINE
#   16-100 threads on a few CPUs: anything else running moves the figures. Measure on a quiet
#   machine.
#
# ENVIRONMENT
#   IOMATRIX_BIN=path (default: target/release/iomatrix of this workspace).
set -euo pipefail

PROG=personality-vs-filebench
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=bench/lib.sh
source "$HERE/lib.sh"
IOMATRIX=${IOMATRIX_BIN:-$HERE/../target/release/iomatrix}

REPEATS=5
SECS=5
PERSONALITIES=fileserver,varmail,webserver
FILESYSTEMS=tmpfs,ext4
THREADS=""
FILES=""
FILEBENCH=""
FILEBENCH_SRC=""
PRECISE=0
TMPFS_SIZE=$((3 << 30))
EXT4_SIZE=$((4 << 30))

usage() {
    sed -n '2,/^set -euo/{/^set -euo/d; s/^# \{0,1\}//; p}' "${BASH_SOURCE[0]}"
}

while [[ $# -gt 0 ]]; do
    case $1 in
    --repeats) need_value "$@"; REPEATS=$(whole_number "$2" "$1" 1); shift 2 ;;
    --seconds) need_value "$@"; SECS=$(whole_number "$2" "$1" 1); shift 2 ;;
    --personalities) need_value "$@"; PERSONALITIES=$2; shift 2 ;;
    --fs) need_value "$@"; FILESYSTEMS=$2; shift 2 ;;
    --threads) need_value "$@"; THREADS=$(whole_number "$2" "$1" 1); shift 2 ;;
    --files) need_value "$@"; FILES=$(whole_number "$2" "$1" 1); shift 2 ;;
    --filebench) need_value "$@"; FILEBENCH=$2; shift 2 ;;
    --filebench-src) need_value "$@"; FILEBENCH_SRC=$2; shift 2 ;;
    --precise-latency) PRECISE=1; shift ;;
    --tmpfs-size) need_value "$@"; TMPFS_SIZE=$(to_bytes "$2" "$1"); shift 2 ;;
    --ext4-size) need_value "$@"; EXT4_SIZE=$(to_bytes "$2" "$1"); shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
    esac
done
for p in ${PERSONALITIES//,/ }; do
    case $p in
    fileserver | varmail | webserver) ;;
    *) die "--personalities: '$p' is not one of fileserver, varmail, webserver" ;;
    esac
done
for f in ${FILESYSTEMS//,/ }; do
    case $f in
    tmpfs | ext4) ;;
    *) die "--fs: '$f' is not one of tmpfs, ext4" ;;
    esac
done
[[ -z $FILEBENCH || -z $FILEBENCH_SRC ]] || die "--filebench and --filebench-src: give one of them"
((PRECISE == 0)) || [[ -n $FILEBENCH_SRC ]] || die "--precise-latency needs --filebench-src (it changes the build's output format)"
[[ $EUID -eq 0 ]] || die "needs root: tmpfs and loop mounts, and ASLR off for filebench"
need_iomatrix IOMATRIX_BIN
command -v python3 >/dev/null || die "python3 not found (Debian: apt-get install -y python3)"

SCRATCH=""
MNT=""     # the file system under way
IMAGE=""   # its ext4 image, when it is one
BACKING="" # the tmpfs that holds the image
FB_PID="" # filebench's process group under way
ASLR_WAS=""
SHM_BEFORE=""

# stop_filebench: ends filebench's process group (filebench forks a process per `process` of
# the .f file) and removes the shared-memory files of it that a killed filebench leaves in /tmp.
stop_filebench() {
    local f
    if [[ -n $FB_PID ]]; then
        kill -TERM -- "-$FB_PID" 2>/dev/null || true
        sleep 1
        kill -KILL -- "-$FB_PID" 2>/dev/null || true
        wait "$FB_PID" 2>/dev/null || true
        FB_PID=""
    fi
    for f in /tmp/filebench-shm-*; do
        [[ -e $f ]] || continue
        grep -qxF -- "$f" <<<"$SHM_BEFORE" || rm -f -- "$f"
    done
}

remove_what_we_made() {
    local rc=0
    stop_filebench
    if [[ -n $ASLR_WAS ]]; then
        echo "$ASLR_WAS" >/proc/sys/kernel/randomize_va_space || {
            printf '%s: could not restore /proc/sys/kernel/randomize_va_space to %s\n' "$PROG" "$ASLR_WAS" >&2
            rc=1
        }
    fi
    if [[ -n $IMAGE ]]; then
        remove_image "$(dirname "$IMAGE")" "$MNT" "$IMAGE" || rc=1
    elif [[ -n $MNT ]]; then
        unmount "$MNT" || rc=1
    fi
    if [[ -n $BACKING ]]; then
        unmount "$BACKING" || rc=1
    fi
    [[ -z $SCRATCH ]] || remove_dir "$SCRATCH" || rc=1
    return "$rc"
}

SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/$PROG.XXXXXX")
SHM_BEFORE=$(compgen -G '/tmp/filebench-shm-*' || true)
DB=$SCRATCH/results.sqlite
RESULTS=$SCRATCH/results.tsv
: >"$RESULTS"

# build_filebench SRC: builds and installs a copy of SRC into SCRATCH/filebench; sets FILEBENCH.
build_filebench() {
    local src=$1 build=$SCRATCH/filebench-build prefix=$SCRATCH/filebench log=$SCRATCH/filebench-build.log
    [[ -f $src/configure.ac && -f $src/stats.c ]] || die "--filebench-src $src: not filebench's source (no configure.ac and stats.c)"
    local tool
    for tool in libtoolize aclocal autoheader automake autoconf make cc flex bison; do
        command -v "$tool" >/dev/null ||
            die "$tool not found: filebench builds with autoconf automake libtool flex bison and a C compiler (Debian: apt-get install -y autoconf automake libtool flex bison build-essential)"
    done
    mkdir "$build"
    cp -a -- "$src/." "$build/"
    if ((PRECISE)); then
        # Output only: the Per-Operation Breakdown's and the IO Summary's ms/op with 4 decimals.
        sed -i -e 's/%8\.1fms\/op/%8.4fms\/op/' -e 's/%5\.1fms\/op/%5.4fms\/op/' "$build/stats.c"
        [[ $(grep -c '\.4fms/op' "$build/stats.c") -eq 2 ]] ||
            die "--precise-latency: stats.c in $src does not print ms/op as 1.5-alpha3 does (expected its two '%.1fms/op' formats)"
    fi
    echo "$PROG: building filebench from $src (log: $log)" >&2
    if ! (cd "$build" && libtoolize && aclocal && autoheader && automake --add-missing && autoconf &&
        ./configure --prefix="$prefix" && make -j"$(nproc)" && make install) >"$log" 2>&1; then
        tail -20 "$log" | sed 's/^/  | /' >&2
        die "building filebench from $src failed (the log's end is above)"
    fi
    FILEBENCH=$prefix/bin/filebench
}

if [[ -n $FILEBENCH_SRC ]]; then
    build_filebench "$FILEBENCH_SRC"
elif [[ -z $FILEBENCH ]]; then
    FILEBENCH=$(command -v filebench) ||
        die "filebench not found: filebench is not in Debian; build it from its public source (github.com/filebench/filebench, tag 1.5-alpha3) with --filebench-src DIR, or install it and pass --filebench PATH"
fi
[[ -x $FILEBENCH ]] || die "$FILEBENCH: not an executable filebench"
FB_VERSION=$("$FILEBENCH" -h 2>&1 | sed -n 's/.*Filebench version \(.*\)/\1/p' | head -1)
[[ -n $FB_VERSION ]] || die "$FILEBENCH -h printed no 'Filebench version': is it filebench?"
WORKLOADS=$(dirname "$(dirname "$(readlink -f "$FILEBENCH")")")/share/filebench/workloads
for p in ${PERSONALITIES//,/ }; do
    [[ -f $WORKLOADS/$p.f ]] || die "no $WORKLOADS/$p.f: filebench must be installed (make install) with its workloads"
done
[[ -d $(dirname "$WORKLOADS")/cvars ]] ||
    die "no $(dirname "$WORKLOADS")/cvars: filebench must be installed (make install) to find its cvar libraries"

ASLR_WAS=$(cat /proc/sys/kernel/randomize_va_space)
echo 0 >/proc/sys/kernel/randomize_va_space

# fvar NAME.f VAR: the value the .f file sets VAR to (`set $VAR=VALUE`).
fvar() {
    sed -n "s/^set \\\$$2=\\([^ ]*\\).*/\\1/p" "$1" | head -1
}

# workload NAME DIR: filebench's NAME.f with $dir=DIR, run SECS, and the thread and file
# counts of the flags; written to SCRATCH/NAME.f.
workload() {
    local name=$1 dir=$2 out=$SCRATCH/$1.f sets=()
    sets+=(-e "s|^set \\\$dir=.*|set \$dir=$dir|" -e "s|^run 60\$|run $SECS|")
    [[ -z $THREADS ]] || sets+=(-e "s|^set \\\$nthreads=.*|set \$nthreads=$THREADS|")
    [[ -z $FILES ]] || sets+=(-e "s|^set \\\$nfiles=.*|set \$nfiles=$FILES|")
    sed "${sets[@]}" "$WORKLOADS/$name.f" >"$out"
    grep -qx "run $SECS" "$out" || die "$WORKLOADS/$name.f has no 'run 60' line to set the run time in"
    grep -qx "set \$dir=$dir" "$out" || die "$WORKLOADS/$name.f has no 'set \$dir=' line"
}

NO_FIGURES=() # filebench runs that gave no figures (stopped early every time)
FB_STOPPED_EARLY=0
EARLY_STOPS=0 # filebench runs that stopped early (a flowop found no file) and were run again
# After filebench stopped early this many times in a row, the bench gives up.
EARLY_STOP_TRIES=4

# run_filebench NAME FS REP DIR: one filebench run; its output is SCRATCH/filebench.NAME.FS.REP.
# filebench in its default mode ends the whole run, without figures, when a flowop finds no file
# ("Run stopped early": e.g. varmail's createfile when no absent file is free; its deletefile skips a
# file another thread has open); such a run is run again, counted in EARLY_STOPS and said; after
# EARLY_STOP_TRIES in a row the repeat has no filebench figures (NO_FIGURES, said at the end) and
# the bench goes on.
run_filebench() {
    local try
    for ((try = 1; try <= EARLY_STOP_TRIES; try++)); do
        run_filebench_once "$@"
        ((FB_STOPPED_EARLY)) || return 0
        EARLY_STOPS=$((EARLY_STOPS + 1))
        printf '%s: filebench %s on %s (repeat %d) stopped early (a flowop found no file): run again\n' "$PROG" "$1" "$2" "$3" >&2
    done
    printf '%s: filebench %s on %s (repeat %d) stopped early %d times in a row: no figures from it for this repeat\n' \
        "$PROG" "$1" "$2" "$3" "$EARLY_STOP_TRIES" >&2
    NO_FIGURES+=("filebench $1 on $2, repeat $3")
}

# run_filebench_once NAME FS REP DIR: as run_filebench, once; sets FB_STOPPED_EARLY to 1 when
# filebench stopped early (no figures), else 0. (A status, not a return code: a function called
# where its status is tested runs without set -e.)
run_filebench_once() {
    local name=$1 fs=$2 rep=$3 dir=$4 out=$SCRATCH/filebench.$1.$2.$3 deadline rc=0
    rm -rf -- "${dir:?}/filebench"
    mkdir "$dir/filebench"
    workload "$name" "$dir/filebench"
    sync
    setsid "$FILEBENCH" -f "$SCRATCH/$name.f" >"$out" 2>&1 &
    FB_PID=$!
    deadline=$((SECONDS + SECS + 600))
    while kill -0 "$FB_PID" 2>/dev/null && ((SECONDS < deadline)); do
        sleep 0.2
    done
    if kill -0 "$FB_PID" 2>/dev/null; then
        stop_filebench
        die "filebench $name on $fs (repeat $rep) ran past $((SECS + 600)) s: stopped (its output: $out)"
    fi
    wait "$FB_PID" || rc=$?
    FB_PID=""
    stop_filebench # its children, if any stayed
    rm -rf -- "${dir:?}/filebench"
    FB_STOPPED_EARLY=0
    if grep -q 'Run stopped early' "$out"; then
        FB_STOPPED_EARLY=1
        return 0
    fi
    if ((rc != 0)) || ! grep -q 'IO Summary:' "$out"; then
        tail -20 "$out" | sed 's/^/  | /' >&2
        die "filebench $name on $fs (repeat $rep) failed (exit $rc) or printed no IO Summary"
    fi
    python3 - "$out" "$SCRATCH/$name.f" "$name" "$fs" "$rep" >>"$RESULTS" <<'PY'
import re, sys
out, wml, name, fs, rep = sys.argv[1:6]
# flowop name -> type, from the .f file
types = dict((m.group(2), m.group(1)) for m in re.finditer(r"flowop\s+(\w+)\s+name=(\w+)", open(wml).read()))
kind = {"createfile": "create", "openfile": "open", "closefile": "close", "fsync": "fsync",
        "appendfilerand": "append", "appendfile": "append", "readwholefile": "read", "read": "read",
        "writewholefile": "write", "write": "write", "deletefile": "delete", "statfile": "stat"}
per = {}
summary = None
loop_op = {"fileserver": "delete", "varmail": "delete", "webserver": "append"}[name]
loop_rates = []
for line in open(out):
    m = re.search(r"^(\S+)\s+(\d+)ops\s+([\d.]+)ops/s\s+([\d.]+)mb/s\s+([\d.]+)ms/op", line)
    if m and m.group(1) in types:
        op = kind.get(types[m.group(1)])
        if op is None:
            sys.exit("filebench flowop %s is of type %s, which this bench does not map" % (m.group(1), types[m.group(1)]))
        n, rate, ms = int(m.group(2)), float(m.group(3)), float(m.group(5))
        c = per.setdefault(op, [0, 0.0, 0.0])
        c[0] += n; c[1] += rate; c[2] += n * ms
        if op == loop_op:
            loop_rates.append(rate)
    m = re.search(r"IO Summary:\s+(\d+) ops ([\d.]+) ops/s ([\d.]+)/([\d.]+) rd/wr\s+([\d.]+)mb/s", line)
    if m:
        summary = (float(m.group(2)), float(m.group(5)))
if summary is None or not per or not loop_rates:
    sys.exit("no IO Summary or per-flowop lines in %s" % out)
case = "%s %s" % (name, fs)
print("%s\t%s\tfilebench\tflows/s\t%.3f" % (rep, case, min(loop_rates)))
print("%s\t%s\tfilebench\tops/s\t%.3f" % (rep, case, summary[0]))
print("%s\t%s\tfilebench\tMiB/s\t%.3f" % (rep, case, summary[1]))
for op, (n, rate, nms) in sorted(per.items()):
    print("%s\t%s\tfilebench\t%s ops/s\t%.3f" % (rep, case, op, rate))
    if n:
        print("%s\t%s\tfilebench\t%s mean ms\t%.6f" % (rep, case, op, nms / n))
PY
}

RUNS=0 # iomatrix runs stored so far in DB

# run_iomatrix NAME FS REP DIR: one iomatrix run, read back from the store.
run_iomatrix() {
    local name=$1 fs=$2 rep=$3 dir=$4 out=$SCRATCH/iomatrix.$1.$2.$3 wml=$SCRATCH/$1.f threads files id
    workload "$name" "$dir/filebench" # for its thread and file counts
    threads=$(fvar "$wml" nthreads)
    files=$(fvar "$wml" nfiles)
    sync
    run_child $((SECS + 600)) "$out.run" "$out.err" "$IOMATRIX" --db "$DB" run personality "$name" \
        --connections "$threads" --files "$files" --duration "${SECS}s" --target "$dir" ||
        { tail -20 "$out.err" | sed 's/^/  | /' >&2; die "iomatrix $name on $fs (repeat $rep) failed"; }
    RUNS=$((RUNS + 1))
    id=$("$IOMATRIX" --db "$DB" runs --json 2>>"$out.err" | python3 -c '
import json, sys
doc = json.load(sys.stdin)
runs = doc.get("runs", doc) if isinstance(doc, dict) else doc
print(max(r["id"] for r in runs))') || die "could not list the stored runs (see $out.err)"
    "$IOMATRIX" --db "$DB" show "$id" --json >"$out.json" 2>>"$out.err" || die "iomatrix show $id --json failed (see $out.err)"
    python3 - "$out.json" "$name" "$fs" "$rep" "$threads" "$SECS" >>"$RESULTS" <<'PY'
import json, sys
path, name, fs, rep, threads, secs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6])
run = json.load(open(path))["run"]
cells = run["cell_results"]
if len(cells) != 1:
    sys.exit("iomatrix stored %d cells, expected 1" % len(cells))
c = cells[0]
m = c["metrics"]
wall = c["wall_ns"] / 1e9
if wall < 0.9 * secs:
    sys.exit("iomatrix's cell ran %.3f s, expected about %d s" % (wall, secs))
conns = m.get("fairness", {}).get("connections")
if conns is not None and conns != threads:
    sys.exit("iomatrix ran %s connections, expected %d" % (conns, threads))
ops = m["ops"]
case = "%s %s" % (name, fs)
loop_op = {"fileserver": "delete", "varmail": "delete", "webserver": "append"}[name]
# Flow steps (one per flowop execution, as filebench counts ops) where the run stored them;
# requests in runs from before they were counted.
steps = lambda o: o.get("flowops") if o.get("flowops") is not None else o.get("count", 0)
step_mean = lambda o: o.get("flowop_mean_ns") if o.get("flowop_mean_ns") is not None else o["mean_ns"]
count = lambda o: steps(ops.get(o, {}))
print("%s\t%s\tiomatrix\tflows/s\t%.3f" % (rep, case, count(loop_op) / wall))
total = m.get("flowops") if m.get("flowops") is not None else c["ops"]
print("%s\t%s\tiomatrix\tops/s\t%.3f" % (rep, case, total / wall))
print("%s\t%s\tiomatrix\tMiB/s\t%.3f" % (rep, case, c["bytes"] / wall / 2**20))
for op, o in sorted(ops.items()):
    if not isinstance(o, dict) or not steps(o):
        continue
    print("%s\t%s\tiomatrix\t%s ops/s\t%.3f" % (rep, case, op, steps(o) / wall))
    print("%s\t%s\tiomatrix\t%s mean ms\t%.6f" % (rep, case, op, step_mean(o) / 1e6))
PY
}

# compare_filesets NAME: the .f file's fileset beside the built-in's, printed.
compare_filesets() {
    local name=$1 f=$WORKLOADS/$1.f
    printf '  %-10s filebench: nthreads %s, nfiles %s, meandirwidth %s, filesize %s, iosize %s, meanappendsize %s\n' \
        "$name" "$(fvar "$f" nthreads)" "$(fvar "$f" nfiles)" "$(fvar "$f" meandirwidth)" \
        "$(fvar "$f" filesize | sed 's/.*mean:\([0-9]*\).*/mean \1/')" "$(fvar "$f" iosize)" "$(fvar "$f" meanappendsize)"
    # the built-in in its own words (the summary `personalities show` prints after the file)
    local shown
    shown=$("$IOMATRIX" personalities show "$name" 2>&1) || die "'iomatrix personalities show $name' failed: $shown"
    grep -E "^$name: |^  fileset |^    flow " <<<"$shown" | sed 's/^ */             iomatrix:  /' || true
    [[ -z $THREADS$FILES ]] || printf '  %-10s both run:   %s%s\n' "" "${THREADS:+threads $THREADS }" "${FILES:+files $FILES}"
}

printf '%s: %d alternating pairs of %d s runs; filebench %s (%s)%s; iomatrix %s\n' "$PROG" "$REPEATS" "$SECS" \
    "$FB_VERSION" "$FILEBENCH" "$( ((PRECISE)) && echo ', ms/op printed with 4 decimals')" "$IOMATRIX_VERSION"
echo "the filesets (threads and files are given to iomatrix as the .f file sets them):"
for p in ${PERSONALITIES//,/ }; do
    compare_filesets "$p"
done

for fs in ${FILESYSTEMS//,/ }; do
    mkdir "$SCRATCH/$fs"
    if [[ $fs == tmpfs ]]; then
        MNT=$SCRATCH/$fs/mnt
        mkdir "$MNT"
        mount_tmpfs "$MNT" "$TMPFS_SIZE"
    else
        # the image lives on a tmpfs of its own, so the ext4's blocks are in memory
        mkdir "$SCRATCH/$fs/backing" "$SCRATCH/$fs/mnt"
        BACKING=$SCRATCH/$fs/backing
        mount_tmpfs "$BACKING" $((EXT4_SIZE + (64 << 20)))
        mkdir "$BACKING/img"
        MNT=$SCRATCH/$fs/mnt
        IMAGE=$BACKING/img/ext4.img
        make_ext4 "$IMAGE" "$EXT4_SIZE" "$MNT" "$SCRATCH/$fs/mkfs.log"
    fi
    for p in ${PERSONALITIES//,/ }; do
        for ((rep = 1; rep <= REPEATS; rep++)); do
            if ((rep % 2)); then order="filebench iomatrix"; else order="iomatrix filebench"; fi
            for tool in $order; do
                "run_$tool" "$p" "$fs" "$rep" "$MNT"
            done
            printf '%s: %s on %s, repeat %d done\n' "$PROG" "$p" "$fs" "$rep" >&2
        done
    done
    if [[ -n $IMAGE ]]; then
        remove_image "$(dirname "$IMAGE")" "$MNT" "$IMAGE" || die "could not remove the ext4 at $MNT"
        IMAGE=""
        unmount "$BACKING" || die "could not unmount $BACKING"
        BACKING=""
    else
        unmount "$MNT" || die "could not unmount $MNT"
    fi
    MNT=""
done

((${#NO_FIGURES[@]} == 0)) || printf '%s: NO FIGURES from %s: their pairs are missing below (varmail on tmpfs: filebench runs at --files 10000, measured 2026-11-27)\n' "$PROG" "$(IFS=';'; echo "${NO_FIGURES[*]}")"
((EARLY_STOPS == 0)) || printf '%s: filebench stopped early %d time(s) (a flowop found no file) and was run again each time\n' "$PROG" "$EARLY_STOPS"
python3 - "$RESULTS" <<'PY'
import statistics, sys
vals, cases, figures = {}, [], {}
for line in open(sys.argv[1]):
    rep, case, tool, fig, v = line.rstrip("\n").split("\t")
    if case not in cases:
        cases.append(case)
    figures.setdefault(case, [])
    if fig not in figures[case]:
        figures[case].append(fig)
    vals.setdefault((case, fig, tool), {})[rep] = float(v)
order = lambda f: (0 if f == "flows/s" else 1 if f == "ops/s" else 2 if f == "MiB/s" else 3 if f.endswith("ops/s") else 4, f)
fmt = lambda v: "-" if v is None else ("%.4f" % v if v < 10 else "%.1f" % v if v < 1000 else "%.0f" % v)
for case in cases:
    print("\n%s (medians; iomatrix/filebench paired: the median of the repeats' ratios, and their range)" % case)
    print("  %-18s %12s %12s %10s %15s %6s" % ("figure", "filebench", "iomatrix", "paired", "range", "pairs"))
    for fig in sorted(figures[case], key=order):
        fb, io = vals.get((case, fig, "filebench"), {}), vals.get((case, fig, "iomatrix"), {})
        mf = statistics.median(fb.values()) if fb else None
        mi = statistics.median(io.values()) if io else None
        ratios = [io[r] / fb[r] for r in io if r in fb and fb[r] > 0]
        paired = "%.3f" % statistics.median(ratios) if ratios else "-"
        rng = "%.3f-%.3f" % (min(ratios), max(ratios)) if ratios else "-"
        print("  %-18s %12s %12s %10s %15s %6d" % (fig, fmt(mf), fmt(mi), paired, rng, len(ratios)))
print("\nflows/s: delete (fileserver, varmail) or the log append (webserver) per second: once per filebench thread loop.")
print("A figure only one tool has (an operation the other does not count) shows '-' for the other.")
PY
