#!/usr/bin/env bash
# uring-depths-vs-fio.sh: iomatrix's io_uring O_DIRECT 4 KiB random reads and writes beside
# fio's, at queue depths 1, 8, 32 and 128, on ext4 loop-mounted from an image on tmpfs.
#
# Usage: bench/uring-depths-vs-fio.sh [--size 512m] [--duration 10s] [--repeats 5]
#                                     [--depths 1,8,32,128] [--rw read,write] [--cpu N]
#                                     [--halt-poll-ns NS] [--poll US] [--submit-batch N]
#                                     [--isolate]
#        bench/uring-depths-vs-fio.sh --pool LOG [LOG...]
#
# WHAT IT MEASURES
#   4 KiB requests at uniformly random 4 KiB-aligned offsets of one file (with replacement),
#   O_DIRECT, through io_uring with --depths requests in flight, for --duration, reads and writes
#   (--rw), each run by iomatrix (`run access`) and by fio. The file system is ext4 on an image
#   of twice the file size (at least 128 MiB) that lives on a tmpfs the script mounts
#   (truncate, mkfs.ext4 -q -F, mount -o loop, which attaches a loop device with autoclear): no
#   disk, so the figures are the cost of the path (each tool, io_uring, ext4's direct I/O, the
#   block layer, the loop driver, tmpfs's memory copies), where each tool's own per-request
#   work shows. For each (rw, depth) it prints the median IOPS of each tool, the ratio
#   iomatrix/fio (the median of the per-pair ratios, and the ratio of the medians), whether
#   iomatrix >= fio (the issue's goal, judged on the median of the per-pair ratios) and each
#   tool's median p99 latency; every run's figures above the table; the conditions; and below
#   the table each tool's median CPU time per request, user and system (iomatrix: its client
#   thread's getrusage over the cell's requests, as `show` prints it; fio: usr_cpu and sys_cpu,
#   percentages of its job's run time, times that run time over its requests).
#
# WHY THE SETTINGS MATCH
#   iomatrix:  iomatrix run access --bs 4096 --read 100 (reads) or --read 0 (writes)
#              --random 100 --qd D --backend io_uring --direct --file-size SIZE --duration T
#              --prepare cached --json (no --prepare with binaries from before issue 33, which
#              kept the file cached without it), with a throwaway --db, in a fresh folder on the
#              ext4 mount. It lays out its own file (sequential writes, fsync: untimed, before the
#              cell) and keeps it in the page cache (see The file, below), opens it with
#              O_DIRECT and for T keeps D requests in flight: registered buffers and a
#              registered file; it pushes a request for every free slot and hands them to the
#              kernel in groups of up to G as they are prepared (G = D/8 from 1 to 8, or
#              --submit-batch), the group that fills the queue in one io_uring_enter with the wait
#              for at least one completion, and it takes every completion that is there. Its ring: COOP_TASKRUN, and SINGLE_ISSUER|DEFER_TASKRUN
#              where the kernel takes them (binaries before issue 16's change: no such flags;
#              what it says about its ring is printed).
#   fio, one invocation per run (bench/lib.sh fio_args, as access-vs-fio.sh's io_uring direct
#   case): --rw=randread or --rw=randwrite --bs=4096 --size=SIZE --ioengine=io_uring
#              --iodepth=D --fixedbufs --registerfiles --hipri=0 --sqthread_poll=0
#              (registered buffers and file, interrupt-driven, no SQ thread)
#              --iodepth_batch_submit=G --iodepth_batch_complete_min=1
#              --iodepth_batch_complete_max=D   iomatrix's batching: requests go in as soon as G
#              are prepared (G as for iomatrix; fio makes the wait a call of its own)
#              --direct=1 --time_based --runtime=T --norandommap --randrepeat=1 --thread
#              --numjobs=1 --invalidate=0 --fadvise_hint=0 --group_reporting --lat_percentiles=1
#              --output-format=json; writes also --scramble_buffers=0 (iomatrix writes one
#              buffer as it is; fio would otherwise change a few bytes of it before each write).
#              fio 3.33 sets its ring up with COOP_TASKRUN|SINGLE_ISSUER|DEFER_TASKRUN.
#   The file. Each tool works on a fresh file of SIZE, laid out before each of its runs and
#   untimed, fully written (not sparse: a write is an overwrite of allocated blocks, no
#   unwritten-extent conversion): iomatrix inside its run; fio in an invocation of its own
#   (--create_only=1, then checked to be SIZE bytes, fully allocated). Only one file exists at a
#   time: fio's is removed after its run; iomatrix's is kept (--keep) to be checked after read
#   runs, then removed. Both start with the whole file in the page cache of the ext4 mount, as
#   iomatrix's layout (buffered writes, fsync) leaves it: fio's layout ends with
#   posix_fadvise(DONTNEED), so the script reads fio's file back in (dd, untimed), and checks
#   with fincore that all of fio's file is cached before its run and at least 95% of iomatrix's after a
#   read run. O_DIRECT requests do not read the cache, but the kernel does work for cached
#   pages: a direct write drops the cached page it overwrites, and a direct read first writes
#   back any dirty page in its range (there is none, but it looks while the file has pages).
#   Latency: iomatrix times a request from just before it queues it to when it sees the
#   completion, fio's lat_ns (not clat_ns), hence --lat_percentiles=1; both include the wait in
#   the submission queue until the batch goes in.
#   IOPS: iomatrix's requests over the cell's wall time; fio's iops over its runtime (whole ms).
#   Order: per repeat, every (rw, depth) runs both tools back to back; which goes first
#   alternates from repeat to repeat and from one (rw, depth) to the next. Exactly
#   repeats x |rw| x |depths| x 2 timed runs, plus the untimed layouts.
#
# POOLING RUNS (--pool LOG...)
#   One invocation's 7 pairs per case tell the tools apart only by more than this machine's
#   hour-to-hour noise. --pool reads the output of earlier invocations (saved with tee or >),
#   takes their per-run lines as pairs of their own (repeat 3 of the second log is pair "2.3")
#   and prints the same two tables over all of them; it runs nothing and needs no root. It
#   refuses logs whose conditions lines differ (another size, duration, depth list, placement,
#   idle setting, kernel or tool version): pooling them would mix two experiments; and a log
#   that holds the same runs as one before it (given twice, or a copy), whose pairs would count
#   twice. tests/cli/bench_pool.rs holds it to the seven runs in bench/runs. The per-run
#   lines carry IOPS as whole numbers, latencies to 0.1 us and CPU to 0.01 us, so the pooled
#   tables are as exact as the per-run lines, not the runs' JSON.
#
# HOW TO READ
#   iomatrix/fio near 1.0: both tools issue the same system calls per batch, so the difference
#   is what each does around them (picking offsets, timestamps, recording latency, reaping).
#   Above 1.0 iomatrix did more requests. At depth 1 each request is a round trip through
#   io_uring_enter and the loop driver; at 32 and 128 the loop driver's worker and the block
#   layer dominate and both tools should land close. Single runs scatter by tens of percent on a
#   busy 2-CPU machine: read the per-run lines pair by pair before trusting a ratio, and run it
#   on a quiet machine for figures worth quoting.
#
# IDLE CPUS (why depth 1 moves by 2x, and --halt-poll-ns)
#   At depth 1 each request wakes the loop driver's worker and then the waiting tool. On a VM
#   whose CPUs halt when idle, each wake-up of an idle virtual CPU is a trip through the host;
#   the guest's cpuidle-haltpoll driver avoids it by polling for guest_halt_poll_ns before
#   halting. On this machine the driver is haltpoll with guest_halt_poll_ns=0 (no polling), so
#   the depth-1 figure of either tool depends on whether the scheduler happens to keep the tool,
#   the worker and the softirq on one CPU (fio often does, iomatrix rarely: both then run at
#   20-45k IOPS); with polling on (--halt-poll-ns 200000, the driver's usual default) both run at
#   90-100k. The conditions line names the cpuidle driver and the setting in force.
#   --halt-poll-ns sets /sys/module/haltpoll/parameters/guest_halt_poll_ns for the timed runs and
#   puts the old value back on every way out.
#
# SUBMISSION GROUPS (--submit-batch N)
#   Both tools hand prepared requests to the kernel in groups of G (iomatrix --submit-batch, fio
#   --iodepth_batch_submit). The kernel starts none of a group of more than two until it has
#   prepared all of them, so large groups let the loop device's one worker run dry: at depth 32
#   groups of 4 ran 1.3x (reads) to 1.6x (writes) faster than whole batches in both tools. The
#   default G is iomatrix's own (D/8, 1 to 8); --submit-batch N sets it for both tools, e.g. N = D
#   for the whole-batch submission that both used before.
#
# PLACEMENT (--cpu N, --isolate)
#   --cpu N runs the tools on CPU N; --isolate (with --cpu) also keeps the kernel's unbound
#   workqueues, among them the loop device's worker, off CPU N (it writes the other CPUs to
#   /sys/devices/virtual/workqueue/cpumask and puts the old mask back on every way out). The tool
#   then has its CPU to itself and the device its own: run to run the figures scatter by a few
#   percent instead of tens, which is what a comparison of the tools' own costs needs.
#
# POLLED COMPLETIONS (--poll US)
#   Both tools can instead keep asking for the completion without sleeping, as a polling
#   application does: iomatrix with --poll-completions USus (it asks, io_uring_enter(0, 0,
#   GETEVENTS), for up to US microseconds before it sleeps), fio with
#   --iodepth_batch_complete_min=0 (its reaping loop never sleeps). The waiting thread then never
#   goes idle and no wake-up is in the latency; each tool's thread keeps its CPU busy (their CPU%
#   shows it). This compares the tools' own costs with the idle CPUs' wake-ups taken out.
#
# Needs root (mounts), fio, python3, util-linux (mount, losetup, findmnt), e2fsprogs and
# coreutils. IOMATRIX_BIN=path chooses the iomatrix binary (default: target/release/iomatrix of
# this workspace; build it with `cargo build --release`), FIO=path fio. Everything the script
# makes (the ext4 mount and its loop device, the tmpfs under the image, a scratch folder with a
# throwaway results database and logs) is removed on every way out, also on failure, Ctrl-C
# (exit 130) or SIGTERM (exit 143); it then checks that no loop device still holds the image.

set -euo pipefail

PROG=uring-depths-vs-fio
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=bench/lib.sh
source "$SCRIPT_DIR/lib.sh"
IOMATRIX=${IOMATRIX_BIN:-$SCRIPT_DIR/../target/release/iomatrix}
FIO=${FIO:-fio}

usage() {
    cat <<EOF
Usage: $0 [--size 512m] [--duration 10s] [--repeats 5] [--depths 1,8,32,128] [--rw read,write]
          [--cpu N] [--isolate] [--halt-poll-ns NS] [--poll US] [--submit-batch N]
       $0 --pool LOG [LOG...]

io_uring, O_DIRECT, 4 KiB random reads and writes at several queue depths, through iomatrix's
access suite and through fio, on ext4 loop-mounted from an image on a tmpfs the script mounts.
Prints per (rw, depth) the median IOPS of each tool, the ratio iomatrix/fio (goal >= 1.0) and
each tool's median p99 latency. Needs root (mount, mount -o loop).

  --size SIZE      the file each tool lays out fresh before each run, k/m/g/t = 1024-based;
                   the ext4 image is twice this [default: 512m]
  --duration TIME  how long each run issues requests: seconds, or with s or m [default: 10s]
  --repeats N      pairs of runs per (rw, depth); medians are quoted; the goal wants 5 or
                   more [default: 5]
  --depths LIST    queue depths, comma-separated [default: 1,8,32,128]
  --rw LIST        read, write or both, comma-separated [default: read,write]
  --cpu N          run both tools' timed runs on CPU N alone (taskset -c N); the loop device's
                   worker still runs anywhere (unless --isolate). Without it the scheduler places the waiting thread,
                   which on a small VM moves depth-1 figures by 2x from run to run [default: off]
  --halt-poll-ns NS  set the guest's idle polling (cpuidle-haltpoll's guest_halt_poll_ns) to NS
                   for the runs and restore it afterwards: with 0 every wake-up of an idle
                   virtual CPU goes through the host (see IDLE CPUS in the script) [default: as is]
  --poll US        polled completions: iomatrix --poll-completions USus, fio
                   --iodepth_batch_complete_min=0 (see POLLED COMPLETIONS) [default: off: both wait]
  --submit-batch N both tools hand requests to the kernel as soon as N are prepared (iomatrix
                   --submit-batch, fio --iodepth_batch_submit; see SUBMISSION GROUPS)
                   [default: iomatrix's own, depth/8 from 1 to 8]
  --isolate        with --cpu N: keep the kernel's unbound workqueues (the loop device's worker)
                   on the other CPUs for the runs, and put the mask back afterwards (see PLACEMENT)
  --pool LOG...    run nothing: print the tables over the per-run lines of earlier invocations'
                   saved output, every log's pairs together; the logs' conditions must match
                   (see POOLING RUNS in the script)
EOF
}

SIZE=512m
DURATION=10s
REPEATS=5
DEPTHS_ARG=1,8,32,128
RW_ARG=read,write
CPU_ARG=""
PIN=()
HALT_POLL_ARG=""
POLL_ARG=""
COMPLETIONS="waited for"
IOMATRIX_POLL=()
FIO_POLL=()
HALT_POLL=/sys/module/haltpoll/parameters/guest_halt_poll_ns
HALT_POLL_OLD="" # the value to put back, once this script has changed it
SUBMIT_BATCH=""  # bench/lib.sh submit_group reads it: empty is iomatrix's default by depth
IOMATRIX_GROUPS=()
ISOLATE=0
WQ_MASK=/sys/devices/virtual/workqueue/cpumask
WQ_MASK_OLD="" # the mask to put back, once this script has changed it
POOL=()        # --pool: earlier runs' saved output
ARGC=$#        # --pool must come first: the other options would be ignored

while [[ $# -gt 0 ]]; do
    case $1 in
    --size) need_value "$@"; SIZE=$2; shift 2 ;;
    --size=*) SIZE=${1#*=}; shift ;;
    --duration) need_value "$@"; DURATION=$2; shift 2 ;;
    --duration=*) DURATION=${1#*=}; shift ;;
    --repeats) need_value "$@"; REPEATS=$2; shift 2 ;;
    --repeats=*) REPEATS=${1#*=}; shift ;;
    --depths) need_value "$@"; DEPTHS_ARG=$2; shift 2 ;;
    --depths=*) DEPTHS_ARG=${1#*=}; shift ;;
    --rw) need_value "$@"; RW_ARG=$2; shift 2 ;;
    --rw=*) RW_ARG=${1#*=}; shift ;;
    --cpu) need_value "$@"; CPU_ARG=$2; shift 2 ;;
    --cpu=*) CPU_ARG=${1#*=}; shift ;;
    --halt-poll-ns) need_value "$@"; HALT_POLL_ARG=$2; shift 2 ;;
    --halt-poll-ns=*) HALT_POLL_ARG=${1#*=}; shift ;;
    --poll) need_value "$@"; POLL_ARG=$2; shift 2 ;;
    --poll=*) POLL_ARG=${1#*=}; shift ;;
    --submit-batch) need_value "$@"; SUBMIT_BATCH=$2; shift 2 ;;
    --submit-batch=*) SUBMIT_BATCH=${1#*=}; shift ;;
    --isolate) ISOLATE=1; shift ;;
    --pool)
        ((ARGC == $#)) || die "--pool reads earlier runs and runs nothing: give it first, followed only by the logs"
        shift
        (($# > 0)) || die "--pool needs the saved output of at least one earlier run"
        POOL=("$@")
        set --
        ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument '$1'" ;;
    esac
done

# cpu_per_request_table RESULTS: per case, each tool's median CPU time per request, user and
# system, in us, and the ratio of the totals (iomatrix/fio: below 1 iomatrix spent less).
cpu_per_request_table() {
    python3 - "$1" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    rep, case, tool, *figures = line.rstrip("\n").split("\t")
    runs.setdefault(case, {}).setdefault(tool, []).append((float(figures[4]), float(figures[5])))
print()
print("CPU per request, us (median over the runs; iomatrix: its client thread's getrusage over its requests;")
print("fio: usr_cpu and sys_cpu of its job over its requests):")
print("%-16s %12s %12s %12s %12s %12s %12s %16s" % ("case", "iomatrix usr", "iomatrix sys", "iomatrix all",
                                                     "fio usr", "fio sys", "fio all", "iomatrix/fio all"))
for case, tools in runs.items():
    med = {t: (statistics.median(u for u, _ in v) / 1e3, statistics.median(s for _, s in v) / 1e3,
               statistics.median(u + s for u, s in v) / 1e3) for t, v in tools.items()}
    i, f = med.get("iomatrix"), med.get("fio")
    if not i or not f:
        continue
    print("%-16s %12.2f %12.2f %12.2f %12.2f %12.2f %12.2f %16.2f" % (case, *i, *f, i[2] / f[2] if f[2] else float("nan")))
PY
}

# pool_runs OUT LOG...: reads the per-run lines that earlier invocations printed (see POOLING
# RUNS) into OUT in the RESULTS format, each log's repeat R as pair "L.R" (L: the log's place on the
# command line); says on stderr how many pairs each log gave. Fails, naming the log, on a log that is
# not there or not a regular file of at most 16 MiB, has no conditions line or no per-run line, has
# a conditions line other than the first log's, or holds the same runs as a log before it.
pool_runs() {
    python3 - "$@" <<'PY'
import os, re, stat, sys
out, logs = sys.argv[1], sys.argv[2:]
LIMIT = 16 << 20
run = re.compile(r"^(\d+)\s+(rand(?:read|write) qd\d+)\s+(iomatrix|fio)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$")
first, rows, seen = None, [], {}
for n, path in enumerate(logs, 1):
    try:
        st = os.stat(path)
        # A run's output is tens of kilobytes; /dev/zero or a stray image would never end.
        if not stat.S_ISREG(st.st_mode) or st.st_size > LIMIT:
            sys.exit("uring-depths-vs-fio: --pool: %s is not a saved run (a regular file of at most %d MiB)"
                     % (path, LIMIT >> 20))
        with open(path, errors="replace") as f:
            text = f.read(LIMIT).splitlines()
    except OSError as e:
        sys.exit("uring-depths-vs-fio: --pool: cannot read %s: %s" % (path, e.strerror))
    conditions = next((l for l in text if l.startswith("uring-depths-vs-fio: ext4 on ")), None)
    if conditions is None:
        sys.exit("uring-depths-vs-fio: --pool: %s has no conditions line: is it this script's output?" % path)
    if first is None:
        first = (path, conditions)
    elif conditions != first[1]:
        sys.exit("uring-depths-vs-fio: --pool: %s ran under other conditions than %s; pool only runs of one"
                 " experiment:\n  %s\n  %s" % (path, first[0], first[1], conditions))
    runs = {}
    for line in text:
        m = run.match(line)
        if m:
            rep, case, tool = m.group(1), m.group(2), m.group(3)
            iops, p99, mean, secs, usr, sys_ = (float(x) for x in m.groups()[3:])
            runs[(rep, case, tool)] = "%s.%s\t%s\t%s\t%.0f\t%.0f\t%.0f\t%.3f\t%.0f\t%.0f" % (
                n, rep, case, tool, iops, p99 * 1e3, mean * 1e3, secs, usr * 1e3, sys_ * 1e3)
    pairs = {(r, c) for r, c, t in runs if t == "iomatrix" and (r, c, "fio") in runs}
    if not runs:
        sys.exit("uring-depths-vs-fio: --pool: %s has no per-run line (repeat, case, tool, IOPS, ...)" % path)
    # The same runs twice (the same log, or a copy) would count every pair twice.
    figures = tuple(sorted(v.split("\t", 1)[1] for v in runs.values()))
    if figures in seen:
        sys.exit("uring-depths-vs-fio: --pool: %s holds the same runs as %s: pooling both would count each"
                 " pair twice" % (path, seen[figures]))
    seen[figures] = path
    print("uring-depths-vs-fio: --pool: %s: %d pairs over %d cases" % (path, len(pairs), len({c for _, c in pairs})),
          file=sys.stderr)
    rows += list(runs.values())
with open(out, "w") as f:
    f.write("".join(r + "\n" for r in rows))
print("uring-depths-vs-fio: pooled %d logs, %s" % (len(logs), first[1].split(": ", 1)[1]))
PY
}

# --pool: the tables over earlier runs' per-run lines, and nothing else.
if ((${#POOL[@]} > 0)); then
    command -v python3 >/dev/null || die "python3 not found: it reads the logs and computes the medians"
    POOLED=$(mktemp "${TMPDIR:-/tmp}/$PROG-pool.XXXXXX") || die "could not make a scratch file for --pool"
    trap 'rm -f -- "$POOLED"' EXIT
    pool_runs "$POOLED" "${POOL[@]}" || exit 2
    median_table "$POOLED" iomatrix,fio "iomatrix/fio:1.0" iomatrix,fio
    cpu_per_request_table "$POOLED"
    exit 0
fi

BS=4096
SIZE_BYTES=$(to_bytes "$SIZE" --size)
SECS=$(to_seconds "$DURATION")
REPEATS=$(whole_number "$REPEATS" --repeats 1)
if [[ -n $CPU_ARG ]]; then
    CPU_ARG=$(whole_number "$CPU_ARG" --cpu 0)
    ((CPU_ARG < $(nproc))) || die "--cpu $CPU_ARG: this machine has CPUs 0 to $(($(nproc) - 1))"
    command -v taskset >/dev/null || die "--cpu needs taskset (Debian: apt-get install util-linux)"
    PIN=(taskset -c "$CPU_ARG")
    PINNED="both tools on CPU $CPU_ARG"
fi
if [[ -n $POLL_ARG ]]; then
    POLL_ARG=$(whole_number "$POLL_ARG" --poll 1)
    IOMATRIX_POLL=(--poll-completions "${POLL_ARG}us")
    FIO_POLL=(--iodepth_batch_complete_min=0)
    COMPLETIONS="polled (iomatrix up to $POLL_ARG us, fio --iodepth_batch_complete_min=0)"
fi
if [[ -n $SUBMIT_BATCH ]]; then
    SUBMIT_BATCH=$(whole_number "$SUBMIT_BATCH" --submit-batch 1)
    IOMATRIX_GROUPS=(--submit-batch "$SUBMIT_BATCH")
fi
if ((ISOLATE)); then
    [[ -n $CPU_ARG ]] || die "--isolate keeps the kernel's workers off the tools' CPU: give it with --cpu N"
    (($(nproc) >= 2)) || die "--isolate needs at least 2 CPUs: one for the tools, the rest for the kernel's workers"
    [[ -w $WQ_MASK ]] || die "--isolate: $WQ_MASK is not there or not writable (needs root)"
fi
if [[ -n $HALT_POLL_ARG ]]; then
    HALT_POLL_ARG=$(whole_number "$HALT_POLL_ARG" --halt-poll-ns 0)
    [[ -w $HALT_POLL ]] || die "--halt-poll-ns: $HALT_POLL is not there or not writable (needs root and the cpuidle-haltpoll driver of a KVM guest)"
fi
((SECS >= 1)) || die "--duration must be at least 1 second"
((SIZE_BYTES >= 1 << 20)) || die "--size ($SIZE) must be at least 1m"
((SIZE_BYTES % BS == 0)) || die "--size ($SIZE) must be a whole number of 4 KiB blocks"
((REPEATS >= 5)) || warn "--repeats $REPEATS: the issue's goal is judged on medians of at least 5 pairs"
DEPTHS=()
IFS=, read -r -a depth_list <<<"$DEPTHS_ARG"
for d in "${depth_list[@]}"; do
    DEPTHS+=("$(whole_number "$d" "--depths entry" 1)")
done
((${#DEPTHS[@]} > 0)) || die "--depths is empty"
RWS=()
IFS=, read -r -a rw_list <<<"$RW_ARG"
for rw in "${rw_list[@]}"; do
    case $rw in
    read | write) RWS+=("$rw") ;;
    *) die "--rw entry '$rw' must be read or write" ;;
    esac
done
((${#RWS[@]} > 0)) || die "--rw is empty"
# The ext4 image: twice the file (one file at a time lives on it, plus ext4's own metadata);
# the tmpfs holds the image, which fills up to its full size.
IMAGE_BYTES=$((2 * SIZE_BYTES))
((IMAGE_BYTES >= 128 << 20)) || IMAGE_BYTES=$((128 << 20))
TMPFS_BYTES=$((IMAGE_BYTES + (16 << 20)))

((EUID == 0)) || die "needs root: it mounts a tmpfs and loop-mounts an ext4 image on it"
need_iomatrix IOMATRIX_BIN
iomatrix_keep_cached
need_fio
command -v python3 >/dev/null || die "python3 not found: it computes the medians and reads the JSON"
for tool in mkfs.ext4 mount umount mountpoint losetup findmnt fincore truncate timeout stat dd; do
    command -v "$tool" >/dev/null || die "$tool not found: install util-linux, e2fsprogs and coreutils"
done
# Memory: the image on tmpfs, plus the file in the page cache of the ext4 mount, plus room.
MEM_AVAIL=$(mem_available || true)
if [[ $MEM_AVAIL =~ ^[0-9]+$ ]] && ((MEM_AVAIL < TMPFS_BYTES + SIZE_BYTES + (256 << 20))); then
    die "only $((MEM_AVAIL >> 20)) MiB of memory available: the $(human "$IMAGE_BYTES") image on tmpfs and a $SIZE file need more; choose a smaller --size"
fi

# ---- everything this script makes, and its removal -------------------------------------------

SCRATCH="" # results database, logs, and the two mount points
TMPFS=""   # the tmpfs (inside SCRATCH); the image lives in TMPFS/img
IMAGE=""   # the ext4 image
MNT=""     # where the image is mounted (inside SCRATCH, not on the tmpfs)

# put_back VAR FILE WHAT: writes the setting saved in VAR (if any) back to FILE and empties VAR;
# false, with a warning that says how to do it by hand, if it cannot.
put_back() {
    local -n saved=$1
    local file=$2 what=$3
    [[ -n $saved ]] || return 0
    if echo "$saved" >"$file"; then
        saved=""
    else
        warn "could not put $what back to $saved: echo $saved > $file"
        return 1
    fi
}

remove_what_we_made() {
    local rc=0
    put_back WQ_MASK_OLD "$WQ_MASK" "the unbound workqueues' CPU mask" || rc=1
    put_back HALT_POLL_OLD "$HALT_POLL" guest_halt_poll_ns || rc=1
    if [[ -n $IMAGE ]] && ! remove_image "$TMPFS/img" "$MNT" "$IMAGE"; then
        return 1 # the tmpfs and SCRATCH stay: they hold the image and its mount
    fi
    if [[ -n $TMPFS ]] && ! unmount "$TMPFS"; then
        return 1
    fi
    [[ -z $SCRATCH ]] || remove_dir "$SCRATCH" || rc=1
    return "$rc"
}

# Each child is bounded: the run itself, plus time for a layout at 8 MiB/s, plus 5 minutes.
LIMIT=$((SECS + 300 + SIZE_BYTES / (8 << 20)))

SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/$PROG.XXXXXX")
DB=$SCRATCH/results.sqlite
mkdir "$SCRATCH/tmpfs" "$SCRATCH/ext4"
TMPFS=$SCRATCH/tmpfs
mount_tmpfs "$TMPFS" "$TMPFS_BYTES"
mkdir "$TMPFS/img"
MNT=$SCRATCH/ext4
IMAGE=$TMPFS/img/ext4.img
make_ext4 "$IMAGE" "$IMAGE_BYTES" "$MNT" "$SCRATCH/ext4.log"
mkdir "$MNT/fio"
FIO_FILE=$MNT/fio/testfile

# ---- conditions -----------------------------------------------------------------------------

LOOPDEV=$(findmnt -no SOURCE -- "$MNT" 2>/dev/null || echo "?")
LOOP_DIO=$(losetup -n -O DIO -- "$LOOPDEV" 2>/dev/null | tr -d ' ' || true)
CPU=$(awk -F': ' '$1 ~ /^model name/ { print $2; exit }' /proc/cpuinfo)
if [[ -n $HALT_POLL_ARG ]]; then
    # shellcheck disable=SC2034 # read back by put_back, through its nameref
    HALT_POLL_OLD=$(cat "$HALT_POLL")
    echo "$HALT_POLL_ARG" >"$HALT_POLL" || die "could not write $HALT_POLL_ARG to $HALT_POLL"
fi
if ((ISOLATE)); then
    # shellcheck disable=SC2034 # read back by put_back, through its nameref
    WQ_MASK_OLD=$(cat "$WQ_MASK")
    # Every CPU but the tools' one, as the hexadecimal mask the file takes (up to 64 CPUs).
    ((CPU_ARG < 64)) || die "--isolate handles CPUs 0 to 63"
    printf '%x\n' $(((1 << $(nproc)) - 1 - (1 << CPU_ARG))) >"$WQ_MASK" ||
        die "could not write the unbound workqueues' CPU mask to $WQ_MASK"
    PINNED+=", kernel workqueues on the other CPUs (mask $(cat "$WQ_MASK"))"
fi
IDLE_DRIVER=$(cat /sys/devices/system/cpu/cpuidle/current_driver 2>/dev/null || echo none)
IDLE="cpuidle $IDLE_DRIVER"
[[ -r $HALT_POLL ]] && IDLE+=" guest_halt_poll_ns=$(cat "$HALT_POLL")${HALT_POLL_ARG:+ (set by --halt-poll-ns)}"
NRUNS=$((REPEATS * ${#RWS[@]} * ${#DEPTHS[@]} * 2))
CONDITIONS="ext4 on $LOOPDEV (direct-io ${LOOP_DIO:-?}) from a $(human "$IMAGE_BYTES") image on tmpfs, file $SIZE, io_uring O_DIRECT 4k random ${RWS[*]} at depths ${DEPTHS[*]}, ${SECS}s per run, $REPEATS repeats, ${PINNED:-unpinned}, $IDLE, completions $COMPLETIONS, submitted in groups of ${SUBMIT_BATCH:-depth/8 (1 to 8)}; kernel $(uname -r), ${CPU:-?} x $(nproc) CPUs; iomatrix $IOMATRIX_VERSION, $FIO_VERSION"
echo "$PROG: $CONDITIONS"
echo "$PROG: $NRUNS timed runs of ${SECS}s (about $(((NRUNS * (SECS + 2) + 59) / 60)) minutes with the layouts)"

# ---- the runs -------------------------------------------------------------------------------

RESULTS=$SCRATCH/results.tsv # repeat, case, tool, IOPS, p99 ns, mean ns, timed s, user and system ns per request
: >"$RESULTS"
RING_NOTED=0

# Appends one run's figures ("IOPS<TAB>p99 ns<TAB>mean ns<TAB>timed s<TAB>user ns<TAB>system ns",
# the last two per request) and prints its line.
record() {
    local rep=$1 case=$2 tool=$3 parsed=$4
    printf '%s\t%s\t%s\t%s\n' "$rep" "$case" "$tool" "$parsed" >>"$RESULTS"
    printf '%s\n' "$parsed" | awk -F'\t' -v r="$rep" -v c="$case" -v t="$tool" '
        { printf "%-7s %-16s %-9s %10d %10.1f %10.1f %8.3f %8.2f %8.2f\n", r, c, t, $1, $2 / 1000, $3 / 1000, $4, $5 / 1000, $6 / 1000 }'
}

run_iomatrix() {
    local rep=$1 rw=$2 qd=$3 case=$4 name=iomatrix-$1-$2-$3 read_pct=100
    local json=$SCRATCH/$name.json log=$SCRATCH/$name.log
    [[ $rw == write ]] && read_pct=0
    if ! run_child "$LIMIT" "$json" "$log" "${PIN[@]}" "$IOMATRIX" --db "$DB" run access --target "$MNT" --keep --bs "$BS" \
        --read "$read_pct" --random 100 --qd "$qd" --backend io_uring --direct --file-size "$SIZE_BYTES" \
        --duration "${SECS}s" "${IOMATRIX_POLL[@]}" "${IOMATRIX_GROUPS[@]}" "${IOMATRIX_CACHED[@]}" --json; then
        sed 's/^/  | /' "$log" >&2
        die "iomatrix failed in '$case', repeat $rep (its messages are above)"
    fi
    local parsed
    parsed=$(iomatrix_figures "$json" "$SIZE_BYTES" io_uring "$qd" 1 "$SECS" "$rw") ||
        die "iomatrix's output in '$case', repeat $rep is not as expected"
    # Its file, kept (--keep): after reads, still all in the page cache, as its layout left it
    # (direct writes drop the pages they overwrite, so there is nothing to check after writes).
    local cell_file
    cell_file=$(find "$MNT" -mindepth 3 -maxdepth 3 -path "$MNT/iomatrix-*/client-0/*" -type f -print -quit)
    [[ -n $cell_file ]] || die "iomatrix's file not found under $MNT after '$case', repeat $rep (--keep)"
    # After its direct reads the kernel may have let a few pages go (seen: 1 MiB of 512): 99% will do.
    # 95, not 100: the page cache is not read by O_DIRECT requests, so during the run its pages
    # are cold, and a machine that pages out cold memory (DAMON's pageout scheme, kdamond) takes
    # some of them.
    [[ $rw == read ]] && check_cached "$cell_file" "$SIZE_BYTES" "iomatrix's file after '$case', repeat $rep" 95
    rm -rf -- "$MNT"/iomatrix-*
    # What iomatrix says about its ring (a flag the kernel refused), once.
    if ((!RING_NOTED)) && grep -qi 'IORING_SETUP' "$log"; then
        RING_NOTED=1
        grep -i 'IORING_SETUP' "$log" | sed "s/^/$PROG: iomatrix said: /" >&2
    fi
    record "$rep" "$case" iomatrix "$parsed"
}

run_fio() {
    local rep=$1 rw=$2 qd=$3 case=$4 name=fio-$1-$2-$3
    local json=$SCRATCH/$name.json log=$SCRATCH/$name.log where="'$case', repeat $rep"
    fio_layout "$LIMIT" "$FIO_FILE" "$SIZE_BYTES" "$BS" "$SCRATCH/$name-layout" "$where"
    # iomatrix's layout leaves its file in the page cache; fio's drops it: read it back in.
    # Read twice when the first pass leaves pages out (seen: 2 MiB of 512 MiB, once in 40 layouts);
    # then 99% will do, as for iomatrix's file.
    local _
    for _ in 1 2; do
        run_child "$LIMIT" /dev/null "$SCRATCH/$name-readin.log" dd if="$FIO_FILE" of=/dev/null bs=1M status=none ||
            die "could not read $FIO_FILE into the page cache in $where"
        cached_at_least "$FIO_FILE" "$SIZE_BYTES" 100 && break
    done
    check_cached "$FIO_FILE" "$SIZE_BYTES" "fio's file after reading it in ($where)" 99
    fio_args "$FIO_FILE" "rand$rw" "$SIZE_BYTES" "$BS" io_uring "$qd" 1 "$SECS"
    [[ $rw == write ]] && FIO_ARGS+=(--scramble_buffers=0)
    # fio takes the last of a repeated option: this replaces fio_args's --iodepth_batch_complete_min=1.
    FIO_ARGS+=("${FIO_POLL[@]}")
    if ! run_child "$LIMIT" "$json" "$log" "${PIN[@]}" "$FIO" "${FIO_ARGS[@]}"; then
        sed 's/^/  | /' "$log" "$json" >&2
        die "fio failed in $where (its messages are above)"
    fi
    local parsed size
    parsed=$(fio_figures "$json" "$SECS" "$rw") || die "fio's output in $where: see above"
    size=$(stat -c %s -- "$FIO_FILE")
    ((size == SIZE_BYTES)) || die "fio's file is $size bytes after its run in $where; expected $SIZE_BYTES"
    rm -f -- "$FIO_FILE"
    record "$rep" "$case" fio "$parsed"
}

echo
echo "per run: IOPS, latency p99 and mean in us (iomatrix: queued to completion seen; fio: lat_ns),"
echo "timed seconds, CPU per request in us, user and system (iomatrix: its client thread's own; fio: usr_cpu, sys_cpu)"
printf '%-7s %-16s %-9s %10s %10s %10s %8s %8s %8s\n' repeat case tool IOPS "p99 us" "mean us" "timed s" "usr/IO" "sys/IO"
for ((rep = 1; rep <= REPEATS; rep++)); do
    k=0
    for rw in "${RWS[@]}"; do
        for qd in "${DEPTHS[@]}"; do
            case="rand$rw qd$qd"
            if (((rep + k) % 2 == 1)); then
                run_iomatrix "$rep" "$rw" "$qd" "$case"
                run_fio "$rep" "$rw" "$qd" "$case"
            else
                run_fio "$rep" "$rw" "$qd" "$case"
                run_iomatrix "$rep" "$rw" "$qd" "$case"
            fi
            k=$((k + 1))
        done
    done
done

# ---- medians --------------------------------------------------------------------------------

echo
echo "$PROG: $CONDITIONS"
median_table "$RESULTS" iomatrix,fio "iomatrix/fio:1.0" iomatrix,fio
cpu_per_request_table "$RESULTS"
