# shellcheck shell=bash
# What the bench scripts share: messages, argument checks, sizes and durations, tool versions,
# a bounded child process that a signal can stop, tmpfs and loop-mounted ext4 scratch file
# systems, fio's settings and layout as the benches use them, reading fio's and iomatrix's
# JSON, the table of medians and ratios, and clean-up on every way out. Source it after setting
# PROG, then define remove_what_we_made: it removes everything the script made and returns
# non-zero when something stayed behind. It runs once, on exit, Ctrl-C (exit 130) or SIGTERM
# (exit 143), after the running child is stopped; a second Ctrl-C meanwhile is ignored so that
# nothing stays mounted.

CHILD="" # the process running now

die() {
    printf '%s: %s\n' "$PROG" "$*" >&2
    exit 1
}

warn() {
    printf '%s: warning: %s\n' "$PROG" "$*" >&2
}

# need_value FLAG [VALUE]: a flag that takes a value got one.
need_value() {
    [[ $# -ge 2 && -n $2 ]] || die "$1 needs a value (see --help)"
}

# to_bytes TEXT [WHAT]: a whole number with an optional k/m/g/t (also kb/kib, any case) or b,
# 1024-based, as iomatrix, fio and bonnie++ read sizes; printed as bytes.
to_bytes() {
    local text=$1 what=${2:-size} number unit
    if [[ ! $text =~ ^([0-9]+)(([kKmMgGtT]([iI]?[bB])?)|[bB])?$ ]]; then
        die "$what '$text' is not a size: write a whole number with an optional k, m, g or t (e.g. 64k, 256m, 1g)"
    fi
    number=$((10#${BASH_REMATCH[1]}))
    unit=${BASH_REMATCH[2]:0:1}
    case ${unit,,} in
    "" | b) echo "$number" ;;
    k) echo $((number << 10)) ;;
    m) echo $((number << 20)) ;;
    g) echo $((number << 30)) ;;
    t) echo $((number << 40)) ;;
    esac
}

# to_seconds TEXT [WHAT]: a duration in whole seconds, a number with an optional s or m.
to_seconds() {
    local text=$1 what=${2:---duration} number
    if [[ ! $text =~ ^([0-9]+)([sSmM]?)$ ]]; then
        die "$what '$text' is not a duration: write whole seconds with an optional s or m (e.g. 10s, 2m)"
    fi
    number=$((10#${BASH_REMATCH[1]}))
    case ${BASH_REMATCH[2],,} in
    m) echo $((number * 60)) ;;
    *) echo "$number" ;;
    esac
}

# whole_number TEXT WHAT MIN: TEXT is a whole number of at least MIN; printed without leading
# zeros.
whole_number() {
    local text=$1 what=$2 min=$3
    if [[ ! $text =~ ^[0-9]+$ ]] || ((10#$text < min)); then
        die "$what '$text' must be a whole number of at least $min"
    fi
    echo $((10#$text))
}

# human BYTES: 1024-based, the way sizes are written on the command line: 2147483648 -> 2g.
human() {
    local bytes=$1 shift_by=40 unit
    for unit in t g m k; do
        if ((bytes >= 1 << shift_by && bytes % (1 << shift_by) == 0)); then
            echo "$((bytes >> shift_by))$unit"
            return
        fi
        shift_by=$((shift_by - 10))
    done
    echo "$bytes"
}

# version_of CMD...: the first line CMD prints (for --version); fails if it fails or prints
# nothing.
version_of() {
    local v
    v=$("$@" 2>/dev/null) || return 1
    [[ -n $v ]] || return 1
    printf '%s\n' "${v%%$'\n'*}"
}

# need_fio: $FIO runs; sets FIO_VERSION ("fio-3.33").
# shellcheck disable=SC2034 # FIO_VERSION is for the scripts that source this
need_fio() {
    command -v "$FIO" >/dev/null || die "fio not found: install it (Debian: apt-get install -y fio) or set FIO=path"
    FIO_VERSION=$(version_of "$FIO" --version) || die "'$FIO --version' failed: is fio installed correctly?"
}

# need_iomatrix HOW: $IOMATRIX runs; sets IOMATRIX_VERSION ("0.1.0"). HOW names the variable
# that chooses another binary (IOMATRIX_BIN, IOMATRIX), for the message when it does not.
need_iomatrix() {
    local how=$1
    [[ -x $IOMATRIX ]] || die "no iomatrix binary at $IOMATRIX: build it with 'cargo build --release' in the workspace (or set $how=path)"
    IOMATRIX_VERSION=$(version_of "$IOMATRIX" --version) ||
        die "'$IOMATRIX --version' failed: rebuild it with 'cargo build --release'"
    IOMATRIX_VERSION=${IOMATRIX_VERSION#iomatrix }
}

# iomatrix_keep_cached: sets IOMATRIX_CACHED to the arguments that make `$IOMATRIX run access`
# keep its file in the page cache after the layout: `--prepare cached` where the binary has the
# flag (since issue 33 its default drops the file before every cell, as fio's invalidate=1
# does), nothing for binaries from before, which kept it cached anyway.
# shellcheck disable=SC2034 # IOMATRIX_CACHED is for the scripts that source this
iomatrix_keep_cached() {
    IOMATRIX_CACHED=()
    if "$IOMATRIX" run access --help 2>/dev/null | grep -q -- '--prepare'; then
        IOMATRIX_CACHED=(--prepare cached)
    fi
}

# run_child LIMIT OUT ERR CMD...: runs CMD with stdout to OUT and stderr to ERR, for at most
# LIMIT seconds (0: no limit), in the background so that a signal reaches the trap at once (the
# trap then stops the child). Returns the child's status (124 when it ran out of time).
run_child() {
    local limit=$1 out=$2 err=$3 rc=0
    shift 3
    timeout --kill-after=10 "$limit" "$@" >"$out" 2>"$err" &
    CHILD=$!
    wait "$CHILD" || rc=$?
    CHILD=""
    return "$rc"
}

# unmount MNT: unmounts MNT if mounted, retrying for 5 s while it is busy; non-zero (with a
# message) when it is still mounted.
unmount() {
    local mnt=$1 tries
    mountpoint -q -- "$mnt" || return 0
    for ((tries = 0; tries < 10; tries++)); do
        umount -- "$mnt" 2>/dev/null && return 0
        sleep 0.5
    done
    mountpoint -q -- "$mnt" || return 0
    printf '%s: could not unmount %s; unmount it by hand\n' "$PROG" "$mnt" >&2
    return 1
}

# remove_image DIR MNT IMAGE: unmounts the loop-mounted IMAGE at MNT, waits for its loop device
# to go (mount -o loop sets autoclear: the kernel detaches it after the unmount, asynchronously;
# only if that has not happened after 5 s is it detached here) and removes DIR, which holds
# both. Non-zero (with a message) when something stays.
remove_image() {
    local dir=$1 mnt=$2 image=$3 tries dev
    if [[ -n $mnt ]] && ! unmount "$mnt"; then
        printf '%s: remove %s by hand once it is unmounted\n' "$PROG" "$dir" >&2
        return 1
    fi
    if [[ -n $image ]]; then
        for ((tries = 0; tries < 50; tries++)); do
            [[ -z $(losetup -n -O NAME -l -j "$image" 2>/dev/null) ]] && break
            sleep 0.1
        done
        for dev in $(losetup -n -O NAME -l -j "$image" 2>/dev/null); do
            losetup -d "$dev" 2>/dev/null || true
        done
        if [[ -n $(losetup -n -O NAME -l -j "$image" 2>/dev/null) ]]; then
            printf '%s: a loop device still holds %s: %s\n' "$PROG" "$image" \
                "$(losetup -l -j "$image" 2>/dev/null | tr '\n' ' ')" >&2
            return 1
        fi
    fi
    rm -rf -- "$dir"
}

on_exit() {
    local rc=$?
    trap '' INT TERM
    if [[ -n $CHILD ]]; then
        kill -TERM "$CHILD" 2>/dev/null || true
        wait "$CHILD" 2>/dev/null || true
        CHILD=""
    fi
    if declare -F remove_what_we_made >/dev/null; then
        remove_what_we_made || rc=1
    fi
    exit "$rc"
}

on_signal() {
    printf '\n%s: interrupted, cleaning up\n' "$PROG" >&2
    exit "$1"
}


# mem_available: the memory available for new work, in bytes (MemAvailable), or nothing when
# /proc/meminfo does not say. (awk would print the product in bytes as 2.3e+10: the
# multiplication is bash's.)
mem_available() {
    local kib
    kib=$(awk '$1 == "MemAvailable:" { print $2 }' /proc/meminfo 2>/dev/null)
    [[ $kib =~ ^[0-9]+$ ]] && echo $((kib * 1024))
}

# mount_tmpfs MNT BYTES: mounts a fresh tmpfs of BYTES at MNT (an empty folder). Refused when
# BYTES is more than the memory available less 512 MiB: a tmpfs larger than that can fill the
# memory (there may be no swap), and the kernel then kills other processes to make room.
mount_tmpfs() {
    local mnt=$1 bytes=$2 avail
    avail=$(mem_available) || die "cannot tell the available memory (MemAvailable in /proc/meminfo): not mounting a $((bytes >> 20)) MiB tmpfs"
    ((bytes + (512 << 20) <= avail)) ||
        die "a $((bytes >> 20)) MiB tmpfs does not fit in the $((avail >> 20)) MiB of memory available (with 512 MiB to spare): choose a smaller --size"
    mount -t tmpfs -o "size=$bytes,mode=0700" tmpfs "$mnt" || die "could not mount a tmpfs at $mnt"
}

# make_ext4 IMAGE BYTES MNT LOG: make_loop_fs ext4 IMAGE BYTES MNT LOG.
make_ext4() {
    make_loop_fs ext4 "$@"
}

# make_loop_fs FSTYPE IMAGE BYTES MNT LOG: makes an FSTYPE (ext4 or xfs) image of BYTES
# (truncate, mkfs.ext4 -q -F or mkfs.xfs -q -f, each with its defaults) and mounts it at MNT with
# mount -o loop, which attaches a loop device with autoclear. LOG keeps the tools' messages,
# shown on failure. xfs wants at least 300 MiB.
make_loop_fs() {
    local fstype=$1 image=$2 bytes=$3 mnt=$4 log=$5 mkfs
    case $fstype in
    ext4) mkfs=(mkfs.ext4 -q -F) ;;
    xfs) mkfs=(mkfs.xfs -q -f) ;;
    *) die "make_loop_fs: no mkfs for '$fstype' (ext4 or xfs)" ;;
    esac
    truncate -s "$bytes" -- "$image" || die "could not make $image"
    "${mkfs[@]}" -- "$image" >"$log" 2>&1 || { sed 's/^/  | /' "$log" >&2; die "${mkfs[0]} failed on $image"; }
    mount -o loop -- "$image" "$mnt" 2>"$log" ||
        { sed 's/^/  | /' "$log" >&2; die "mount -o loop $image failed (loop devices available? /dev/loop-control)"; }
}

# remove_dir DIR: rm -rf DIR, unless something is still mounted at or below it (then it says
# so and fails: rm would go into the mount).
remove_dir() {
    local dir=$1 mounted
    [[ -e $dir ]] || return 0
    mounted=$(findmnt -rn -o TARGET | awk -v d="$dir" '$0 == d || index($0, d "/") == 1')
    if [[ -n $mounted ]]; then
        printf '%s: not removing %s: still mounted there: %s\n' "$PROG" "$dir" "$(tr '\n' ' ' <<<"$mounted")" >&2
        return 1
    fi
    rm -rf -- "$dir"
}

# ---- fio and iomatrix, as the benches run them -------------------------------------------------

# submit_group QD: how many prepared requests iomatrix's io_uring hands to the kernel at once at
# depth QD: SUBMIT_BATCH when the calling script sets it (its --submit-batch), else iomatrix's
# default, depth/8 from 1 to 8 (iomatrix_backend::default_submit_batch).
submit_group() {
    local qd=$1 group
    if [[ -n ${SUBMIT_BATCH:-} ]]; then
        echo "$SUBMIT_BATCH"
        return
    fi
    group=$((qd / 8))
    ((group >= 1)) || group=1
    ((group <= 8)) || group=8
    echo "$group"
}

# fio_engine_args BACKEND QD: fio's options for iomatrix's backend at depth QD (see
# access-vs-fio.sh, WHY THE SETTINGS MATCH): psync; io_uring with registered buffers and file,
# no polling, and iomatrix's batching: requests handed to the kernel as soon as submit_group QD
# of them are prepared (--iodepth_batch_submit), wait for at least one completion, take all that
# are there.
fio_engine_args() {
    local backend=$1 qd=$2
    case $backend in
    psync) echo "--ioengine=psync --iodepth=1" ;;
    io_uring)
        echo "--ioengine=io_uring --iodepth=$qd --fixedbufs --registerfiles --hipri=0 --sqthread_poll=0" \
            "--iodepth_batch_submit=$(submit_group "$qd") --iodepth_batch_complete_min=1" \
            "--iodepth_batch_complete_max=$qd"
        ;;
    *) die "fio_engine_args: no fio engine for backend '$backend'" ;;
    esac
}

# fio_args FILE RW SIZE BS BACKEND QD DIRECT SECS [INVALIDATE]: sets FIO_ARGS to the timed fio
# job the benches run beside `iomatrix run access`: RW (randread, randwrite, randrw, read,
# write) at BS-aligned offsets of FILE (SIZE bytes, laid out beforehand by fio_layout), random
# ones uniformly with replacement (--norandommap) from a fixed seed (--randrepeat=1), for SECS,
# through fio_engine_args's engine, O_DIRECT when DIRECT is 1; the page cache dropped at open
# when INVALIDATE is 1 (fio's default), else not (--invalidate=0, the default here); no
# posix_fadvise hint (--fadvise_hint=0), one thread; JSON with total-latency percentiles
# (--lat_percentiles=1: lat_ns, iomatrix's latency).
# shellcheck disable=SC2034 # FIO_ARGS is for the scripts that source this
fio_args() {
    local file=$1 rw=$2 size=$3 bs=$4 backend=$5 qd=$6 direct=$7 secs=$8 invalidate=${9:-0} engine
    read -r -a engine <<<"$(fio_engine_args "$backend" "$qd")"
    FIO_ARGS=(--name=access --filename="$file" --rw="$rw" --bs="$bs" --size="$size" "${engine[@]}"
        --direct="$direct" --time_based --runtime="$secs" --norandommap --randrepeat=1 --thread
        --numjobs=1 --invalidate="$invalidate" --fadvise_hint=0 --group_reporting --lat_percentiles=1
        --output-format=json)
}

# fio_layout LIMIT FILE SIZE BS LOGBASE WHERE: fio lays out FILE in an invocation of its own
# (--create_only=1: fallocate, written in full, fsync; it ends with posix_fadvise(DONTNEED)),
# untimed; then FILE is checked to be SIZE bytes and fully allocated (not sparse). LOGBASE.json
# and LOGBASE.log keep fio's output; WHERE says which run in messages.
fio_layout() {
    local limit=$1 file=$2 size=$3 bs=$4 logbase=$5 where=$6 got blocks
    rm -f -- "$file"
    if ! run_child "$limit" "$logbase.json" "$logbase.log" "$FIO" --name=layout --filename="$file" \
        --size="$size" --bs="$bs" --rw=randread --thread --create_only=1 --output-format=json; then
        sed 's/^/  | /' "$logbase.log" >&2
        die "fio could not lay out $file in $where (its messages are above)"
    fi
    read -r got blocks < <(stat -c '%s %b' -- "$file")
    ((got == size && blocks * 512 >= size)) ||
        die "fio's file in $where is $got bytes with $((blocks * 512)) allocated; expected $size, fully written"
}

# cached_at_least FILE SIZE PERCENT: whether at least PERCENT of FILE's SIZE bytes are in the
# page cache (fincore), without a word.
cached_at_least() {
    local cached
    cached=$(fincore -b -n -o RES -- "$1" | tr -d ' ')
    [[ $cached =~ ^[0-9]+$ ]] && ((cached * 100 >= $2 * $3))
}

# check_cached FILE SIZE WHAT [MIN_PERCENT]: at least MIN_PERCENT (default 100) of FILE's SIZE
# bytes are in the page cache (fincore).
check_cached() {
    local file=$1 size=$2 what=$3 min=${4:-100} cached
    cached=$(fincore -b -n -o RES -- "$file" | tr -d ' ')
    if [[ ! $cached =~ ^[0-9]+$ ]] || ((cached * 100 < size * min)); then
        die "only ${cached:-?} of $size bytes of $what are in the page cache: too little memory? choose a smaller --size"
    fi
}

# iomatrix_figures JSON SIZE BACKEND QD DIRECT SECS RW [SEED]: checks iomatrix's --json output
# of one `run access` cell (backend, depth, O_DIRECT 0/1, file size, 4 KiB blocks, only RW =
# read or write requests, about SECS long, and the plan's seed if SEED is given) and prints
# "IOPS<TAB>p99 ns<TAB>mean ns<TAB>timed s<TAB>user ns per request<TAB>system ns per request" of
# it, the CPU time of the cell's client thread (getrusage) over its requests.
iomatrix_figures() {
    python3 - "$@" <<'PY'
import json, sys
path, size, backend, qd, direct, secs, rw = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5] == "1", int(sys.argv[6]), sys.argv[7]
other = {"read": "write", "write": "read"}[rw]
doc = json.load(open(path))
if doc.get("schema") != "iomatrix.run/1":
    sys.exit("unexpected schema %r" % doc.get("schema"))
if len(sys.argv) > 8 and doc["run"]["plan"]["seed"] != int(sys.argv[8], 0):
    sys.exit("the run's seed is %#x, expected %s" % (doc["run"]["plan"]["seed"], sys.argv[8]))
cells = doc["run"]["cell_results"]
if len(cells) != 1:
    sys.exit("%d cells in the output, expected 1" % len(cells))
c = cells[0]
m = c["metrics"]
got = (c.get("backend"), m.get("queue_depth"), c.get("direct"), c.get("file_size"), c.get("record_size"))
if got != (backend, qd, direct, size, 4096):
    sys.exit("cell ran (backend, depth, direct, file size, block size) = %r; expected %r"
             % (got, (backend, qd, direct, size, 4096)))
r = m[rw]
if r["count"] == 0 or m[other]["count"] != 0 or c["ops"] != r["count"]:
    sys.exit("cell did %d %ss and %d %ss; expected %ss only" % (r["count"], rw, m[other]["count"], other, rw))
if c["wall_ns"] < 0.9e9 * secs:
    sys.exit("cell ran %.3f s, expected about %d s" % (c["wall_ns"] / 1e9, secs))
# CPU per request, user and system, from the cell's own CPU time (its client threads' getrusage).
print("%.0f\t%d\t%.0f\t%.3f\t%.0f\t%.0f" % (m["iops"], r["p99_ns"], r["mean_ns"], c["wall_ns"] / 1e9,
                                        c["user_ns"] / c["ops"], c["sys_ns"] / c["ops"]))
PY
}

# fio_figures JSON SECS RW: checks fio's JSON output of one job (no error, only RW = read or
# write requests, about SECS long) and prints "IOPS<TAB>p99 ns<TAB>mean ns<TAB>timed s<TAB>user
# ns per request<TAB>system ns per request" (usr_cpu and sys_cpu over the requests), the
# latencies from lat_ns (from when fio prepares a request: iomatrix's latency; needs
# --lat_percentiles=1).
fio_figures() {
    python3 - "$@" <<'PY'
import json, sys
path, secs, rw = sys.argv[1], int(sys.argv[2]), sys.argv[3]
other = {"read": "write", "write": "read"}[rw]
doc = json.load(open(path))
job = doc["jobs"][0]
if job.get("error", 0) != 0:
    sys.exit("fio job reported error %s" % job["error"])
d = job[rw]
if d["total_ios"] == 0 or job[other]["total_ios"] != 0:
    sys.exit("fio did %d %ss and %d %ss; expected %ss only" % (d["total_ios"], rw, job[other]["total_ios"], other, rw))
if d["runtime"] < 900 * secs:
    sys.exit("fio ran %d ms, expected about %d s" % (d["runtime"], secs))
lat = d["lat_ns"]
# CPU per request, user and system: fio's usr_cpu and sys_cpu are % of the job's run time (job_runtime, ms).
cpu_ns = lambda pct: pct / 100 * job["job_runtime"] * 1e6 / d["total_ios"]
print("%.0f\t%d\t%.0f\t%.3f\t%.0f\t%.0f" % (d["iops"], lat["percentile"]["99.000000"], lat["mean"], d["runtime"] / 1e3,
                                        cpu_ns(job["usr_cpu"]), cpu_ns(job["sys_cpu"])))
PY
}

# median_table RESULTS TOOLS PAIRS P99_TOOLS: the table of medians. RESULTS holds one line per
# run: "repeat<TAB>case<TAB>tool<TAB>IOPS<TAB>p99 ns or -" (more columns are ignored); cases
# are printed in the order they first appear. TOOLS: the tools whose median IOPS are shown,
# comma-separated. PAIRS: ratios A/B to show, comma-separated, each optionally with a goal
# (A/B:0.9): "paired" is the median of the per-repeat ratios (A and B of the same repeat and
# case), "of medians" the ratio of the two median IOPS; a goal is judged on the paired median.
# Beside each paired median: how many pairs A won, and a distribution-free confidence interval
# of the median ratio (order statistics of the sorted ratios, the binomial sign-test interval:
# about 95%, or the widest the pairs allow, its level printed). With a goal, the verdict is
# "yes" (paired median >= goal), "noise" (below, but the interval reaches the goal: these pairs
# cannot tell the tools apart there) or "NO" (the whole interval is below the goal).
# P99_TOOLS: tools whose median p99 is shown ("" for none). LAYOUT: wide (default: a row per
# case) or long (a block of lines per case, for few cases and many columns).
# From the environment: TABLE_FIGURE names the figure (default IOPS; e.g. MiB/s); TABLE_RANGE=1
# adds each ratio's range (lowest-highest of the pairs); TABLE_STRICT=1 judges a goal on the
# paired median alone: "NO" whenever it is below the goal, "NO (noise)" when the interval still
# reaches the goal.
median_table() {
    python3 - "$@" <<'PY'
import math, os, statistics, sys, textwrap


def median_interval(values):
    """The sign-test confidence interval of the median: (low, high, level), the k-th smallest and
    k-th largest of the values for the largest k whose level is still >= 95% (k = 1 below 6 values:
    the range, at the level it has)."""
    v, n = sorted(values), len(values)
    below = lambda k: sum(math.comb(n, i) for i in range(k)) / 2 ** n  # P(fewer than k of n under the median)
    k = 1
    while k + 1 <= n // 2 and 1 - 2 * below(k + 1) >= 0.95:
        k += 1
    return v[k - 1], v[n - k], 1 - 2 * below(k)
path, tools, pairs, p99_tools = sys.argv[1], sys.argv[2].split(","), sys.argv[3].split(","), [t for t in sys.argv[4].split(",") if t]
long = len(sys.argv) > 5 and sys.argv[5] == "long"
iops, p99, cases = {}, {}, []
for line in open(path):
    f = line.rstrip("\n").split("\t")
    rep, case, tool = f[0], f[1], f[2]
    if case not in cases:
        cases.append(case)
    iops.setdefault((case, tool), {})[rep] = float(f[3])
    if f[4] != "-":
        p99.setdefault((case, tool), []).append(float(f[4]))
pairs = [(p.split(":")[0].split("/"), float(p.split(":")[1]) if ":" in p else None) for p in pairs if p]
figure = os.environ.get("TABLE_FIGURE") or "IOPS"
with_range = os.environ.get("TABLE_RANGE") == "1"
strict = os.environ.get("TABLE_STRICT") == "1"
head = ["case"] + ["%s %s" % (t, figure) for t in tools]
for (a, b), goal in pairs:
    head += ["%s/%s paired" % (a, b), "%s won" % a] + (["range"] if with_range else []) + ["interval", "of medians"]
    if goal is not None:
        head.append(">= %.2f?" % goal)
head += ["%s p99 us" % t for t in p99_tools]
rows, few = [], set()
for case in cases:
    row = [case]
    med = {}
    for t in tools:
        runs = iops.get((case, t), {})
        med[t] = statistics.median(runs.values()) if runs else None
        row.append("%.0f" % med[t] if med[t] is not None else "-")
    for (a, b), goal in pairs:
        ra, rb = iops.get((case, a), {}), iops.get((case, b), {})
        ratios = [ra[r] / rb[r] for r in ra if r in rb and rb[r] > 0]
        paired = statistics.median(ratios) if ratios else None
        if len(ratios) < 5:
            few.add(len(ratios))
        row.append("%.3f" % paired if paired is not None else "-")
        row.append("%d/%d" % (sum(r > 1 for r in ratios), len(ratios)) if ratios else "-")
        if with_range:
            row.append("%.3f-%.3f" % (min(ratios), max(ratios)) if ratios else "-")
        low, high, level = median_interval(ratios) if ratios else (None, None, None)
        row.append("%.3f-%.3f (%.0f%%)" % (low, high, 100 * level) if ratios else "-")
        ma, mb = statistics.median(ra.values()) if ra else None, statistics.median(rb.values()) if rb else None
        row.append("%.3f" % (ma / mb) if ma and mb else "-")
        if goal is not None:
            if strict:
                verdict = "-" if paired is None else "yes" if paired >= goal else "NO (noise)" if high >= goal else "NO"
            else:
                verdict = "-" if paired is None else "yes" if paired >= goal else "noise" if high >= goal else "NO"
            row.append(verdict)
    for t in p99_tools:
        v = p99.get((case, t))
        row.append(("%.2f" if v and statistics.median(v) < 10000 else "%.1f") % (statistics.median(v) / 1000) if v else "-")
    rows.append(row)
if long:
    for row in rows:
        print(row[0])
        named = dict(zip(head, row))
        print("  %-22s %s" % ("median " + figure, "   ".join("%s %s" % (t, named["%s %s" % (t, figure)]) for t in tools)))
        if p99_tools:
            print("  %-22s %s" % ("median p99 (us)", "   ".join("%s %s" % (t, named["%s p99 us" % t]) for t in p99_tools)))
        at = 1 + len(tools)
        for (a, b), goal in pairs:
            if with_range:
                line = "paired %s (%s won %s, range %s, interval %s)   of medians %s" % (row[at], a, row[at + 1], row[at + 2], row[at + 3], row[at + 4])
                at += 5
            else:
                line = "paired %s (%s won %s, interval %s)   of medians %s" % (row[at], a, row[at + 1], row[at + 2], row[at + 3])
                at += 4
            if goal is not None:
                line += "   goal >= %.2f: %s" % (goal, row[at])
                at += 1
            print("  %-22s %s" % ("%s/%s" % (a, b), line))
else:
    widths = [max(len(r[i]) for r in rows + [head]) for i in range(len(head))]
    for r in [head] + rows:
        print("  ".join(c.ljust(widths[i]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(r)))
if pairs:
    print(textwrap.fill("paired: the median over repeats of each repeat's ratio; won: pairs whose ratio is above 1;%s"
                        " interval: the sign-test confidence interval of the paired median, at the level shown; of"
                        " medians: the ratio of the two median %s."
                        % (" range: the lowest and highest of them;" if with_range else "", figure), 110,
                        break_on_hyphens=False))
if pairs and strict and any(g is not None for _, g in pairs):
    print("A goal is judged on the paired median: yes at or above it, NO below it; \"NO (noise)\" when the interval")
    print("still reaches the goal (more pairs or a quieter machine may tell).")
elif pairs and any(g is not None for _, g in pairs):
    print("A goal is judged on the paired median: yes at or above it; noise below it, but with the goal inside the")
    print("interval (more pairs or a quieter machine may tell); NO when the whole interval is below it.")
if few:
    print("NOTE: %s pair(s) per ratio: quote ratios from at least 5 (--repeats 5)." % "/".join(str(n) for n in sorted(few)))
PY
}

trap on_exit EXIT
trap 'on_signal 130' INT
trap 'on_signal 143' TERM
