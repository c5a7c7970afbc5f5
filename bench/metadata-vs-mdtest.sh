#!/usr/bin/env bash
# metadata-vs-mdtest.sh: iomatrix's metadata suite beside mdtest, phase by phase, with the same
# flags, on tmpfs and on ext4 and xfs images; iomatrix's file creation beside a bare C loop; and
# iomatrix's guarded remover beside `rm -rf` on a tree of a million files.
#
# Usage: bench/metadata-vs-mdtest.sh --mdtest PATH [--pairs 5] [--fs tmpfs,ext4,xfs]
#            [--clients 1,2] [--cases u,shared,tree] [--items 10000] [--parts mdtest,create,remove]
#            [--create-files 100000] [--remove-files 1000000]
#
# WHAT IT MEASURES
#   mdtest part: for each file system (a tmpfs the script mounts, an ext4 and an xfs image on a
#   loop device), each client count and each case, --pairs pairs of runs, mdtest and iomatrix
#   alternately (mdtest first in odd pairs, iomatrix first in even ones), each on the same
#   freshly made file system, with the same shape:
#     u       mdtest -n ITEMS -u          iomatrix --items ITEMS --per-client-folder
#     shared  mdtest -n ITEMS             iomatrix --items ITEMS
#     tree    mdtest -z 2 -b 4 -I 100 -L  iomatrix --depth 2 --branch 4 --items-per-folder 100
#                                                  --leaves-only
#   Both run every phase mdtest runs (directories: create, stat, rename, remove; files: create,
#   stat, read, remove; the tree: create, remove); iomatrix is given --phases without its own
#   dir-readdir, which mdtest does not have. One client is one process of mdtest and one client
#   thread of iomatrix; 2 clients are `mpirun -np 2 mdtest` and, by default, `--clients 2`
#   (two threads of one iomatrix process; IOMATRIX_MPI=path-to-iomatrix-mpi runs it under
#   mpirun -np 2 too). iomatrix runs `iomatrix mdtest` with mdtest's own flags where the binary
#   has that command, else `iomatrix run metadata` with the flags above.
#   Each phase's figure is the rate of mdtest's SUMMARY table (one iteration: Max = Min =
#   Mean), the slowest client's rate times the clients, and iomatrix's stored figure of the
#   same rule (rate_slowest_times_clients). The table gives, per phase, each tool's median, the
#   paired ratio iomatrix/mdtest (the median of the per-pair ratios) with its sign-test
#   interval, and the issue's goal: at or above 0.95.
#   create part: file creation of --create-files empty files in one folder on tmpfs, one client:
#   bench/create_loop.c (open(O_CREAT)+close in a loop, two clock reads) against iomatrix
#   (--files-only --phases file-create,file-remove, its file-create rate), --pairs pairs,
#   alternately. Goal: iomatrix at or above 0.95 of the bare loop.
#   remove part: a tree of --remove-files empty files in 1,000 folders (create_loop -t) on
#   tmpfs, removed by `rm -rf` and by iomatrix's guarded remover (crates/guard: relative to
#   directory handles, never across a mount), --pairs pairs alternately. The remover is reached
#   as a user reaches it: the tree is made inside a working folder a `run access --keep` left,
#   and `iomatrix clean TARGET --kept` removes it. Goal: at most 1.2 x the time of rm -rf
#   (the table shows rates, files per second: at or above 1/1.2 = 0.83).
#
# HOW TO READ
#   A paired ratio below 1 is iomatrix slower. These are page-cache metadata rates on tmpfs
#   (a few microseconds an operation), where a scheduler's hiccup moves one run by 10%: read the
#   pairs' figures (printed above each table) before trusting a ratio, and the interval: a goal
#   inside it is "noise", not a verdict.
#
# Needs root (mount, loop devices), mkfs.ext4 and mkfs.xfs, gcc, python3, mpirun (for 2
# clients), and an mdtest built from hpc/ior (./bootstrap && ./configure && make; not packaged
# by Debian). IOMATRIX_BIN=path chooses the iomatrix binary (default: target/release/iomatrix
# of this workspace). Everything the script makes (mounts, images, the scratch folder with a
# throwaway results database and the logs) is removed on every way out, also on failure,
# Ctrl-C (exit 130) or SIGTERM (exit 143). --keep-logs DIR copies the logs and tables there.

set -euo pipefail

PROG=metadata-vs-mdtest
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=bench/lib.sh
source "$SCRIPT_DIR/lib.sh"
IOMATRIX=${IOMATRIX_BIN:-$SCRIPT_DIR/../target/release/iomatrix}
IOMATRIX_MPI=${IOMATRIX_MPI:-}
CC=${CC:-gcc}
MPIRUN=(mpirun --allow-run-as-root --oversubscribe)

usage() {
    cat <<EOF
Usage: $0 --mdtest PATH [--pairs 5] [--fs tmpfs,ext4,xfs] [--clients 1,2]
          [--cases u,shared,tree] [--items 10000] [--parts mdtest,create,remove]
          [--create-files 100000] [--remove-files 1000000] [--keep-logs DIR]

mdtest's phases beside iomatrix's metadata suite with the same flags, alternately, each
phase's paired ratio iomatrix/mdtest with its interval (goal >= 0.95); file creation beside a
bare C loop (goal >= 0.95); the guarded remover beside rm -rf on a tree (goal: at most 1.2x its
time). Needs root.

  --mdtest PATH         mdtest built from hpc/ior (required for the mdtest part)
  --pairs N             pairs of runs per case; medians want 5 or more [default: 5]
  --fs LIST             file systems: tmpfs, ext4, xfs [default: tmpfs,ext4,xfs]
  --clients LIST        client counts [default: 1,2]
  --cases LIST          u (-n ITEMS -u), shared (-n ITEMS), tree (-z 2 -b 4 -I 100 -L)
                        [default: u,shared,tree]
  --items N             mdtest's -n for the u and shared cases [default: 10000]
  --parts LIST          mdtest, create, remove [default: all three]
  --create-files N      files of the create part [default: 100000]
  --remove-files N      files of the remove part's tree [default: 1000000]
  --keep-logs DIR       copy every run's output and the tables into DIR
EOF
}

MDTEST=""
PAIRS=5
FS_LIST=tmpfs,ext4,xfs
CLIENT_LIST=1,2
CASES=u,shared,tree
ITEMS=10000
PARTS=mdtest,create,remove
CREATE_FILES=100000
REMOVE_FILES=1000000
KEEP_LOGS=""

while [[ $# -gt 0 ]]; do
    case $1 in
    --mdtest) need_value "$@"; MDTEST=$2; shift 2 ;;
    --pairs) need_value "$@"; PAIRS=$2; shift 2 ;;
    --fs) need_value "$@"; FS_LIST=$2; shift 2 ;;
    --clients) need_value "$@"; CLIENT_LIST=$2; shift 2 ;;
    --cases) need_value "$@"; CASES=$2; shift 2 ;;
    --items) need_value "$@"; ITEMS=$2; shift 2 ;;
    --parts) need_value "$@"; PARTS=$2; shift 2 ;;
    --create-files) need_value "$@"; CREATE_FILES=$2; shift 2 ;;
    --remove-files) need_value "$@"; REMOVE_FILES=$2; shift 2 ;;
    --keep-logs) need_value "$@"; KEEP_LOGS=$2; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument '$1'" ;;
    esac
done

PAIRS=$(whole_number "$PAIRS" --pairs 1)
ITEMS=$(whole_number "$ITEMS" --items 1)
CREATE_FILES=$(whole_number "$CREATE_FILES" --create-files 1)
REMOVE_FILES=$(whole_number "$REMOVE_FILES" --remove-files 1000)
((PAIRS >= 5)) || warn "--pairs $PAIRS: the issue's goals are judged on medians of at least 5 pairs"
has() { [[ ,$1, == *,$2,* ]]; }
for part in ${PARTS//,/ }; do
    has mdtest,create,remove "$part" || die "--parts: no part '$part' (mdtest, create, remove)"
done
for fs in ${FS_LIST//,/ }; do
    has tmpfs,ext4,xfs "$fs" || die "--fs: no file system '$fs' (tmpfs, ext4, xfs)"
done
for c in ${CASES//,/ }; do
    has u,shared,tree "$c" || die "--cases: no case '$c' (u, shared, tree)"
done
for n in ${CLIENT_LIST//,/ }; do
    whole_number "$n" --clients 1 >/dev/null
done

((EUID == 0)) || die "needs root: it mounts a tmpfs and loop images"
need_iomatrix IOMATRIX_BIN
if has "$PARTS" mdtest; then
    [[ -n $MDTEST ]] || die "--mdtest PATH is required for the mdtest part (build it from hpc/ior: ./bootstrap && ./configure && make), or leave the part out with --parts create,remove"
    [[ -x $MDTEST ]] || die "--mdtest $MDTEST is not an executable"
fi
command -v python3 >/dev/null || die "python3 not found: it reads the outputs and computes the medians"
command -v "$CC" >/dev/null || die "$CC not found: install gcc or set CC=path"
for tool in mount umount mountpoint findmnt losetup mkfs.ext4 mkfs.xfs timeout; do
    command -v "$tool" >/dev/null || die "$tool not found: install util-linux, e2fsprogs and xfsprogs"
done
if has "$PARTS" mdtest && [[ $CLIENT_LIST != 1 ]]; then
    command -v mpirun >/dev/null || die "mpirun not found: 2 clients of mdtest are MPI ranks (apt-get install -y openmpi-bin)"
fi

# ---- everything this script makes, and its removal -------------------------------------------

SCRATCH="" # the compiled loop, the results database, logs, images and mount points
MNT=""     # the file system mounted now
IMAGE=""   # its image, for a loop-mounted one

unmount_current() {
    local rc=0
    if [[ -n $MNT ]]; then
        if [[ -n $IMAGE ]]; then
            remove_image "$(dirname "$IMAGE")" "$MNT" "$IMAGE" || rc=1
        else
            unmount "$MNT" || rc=1
        fi
    fi
    MNT="" IMAGE=""
    return "$rc"
}

remove_what_we_made() {
    local rc=0
    unmount_current || return 1 # SCRATCH stays: it holds the mount point
    if [[ -n $SCRATCH && -n $KEEP_LOGS ]]; then
        mkdir -p -- "$KEEP_LOGS" && cp -r -- "$SCRATCH/logs/." "$KEEP_LOGS/" || rc=1
    fi
    [[ -z $SCRATCH ]] || remove_dir "$SCRATCH" || rc=1
    return "$rc"
}

SCRATCH=$(mktemp -d "${TMPDIR:-/var/tmp}/$PROG.XXXXXX")
mkdir -p "$SCRATCH/logs" "$SCRATCH/fs"
export IOMATRIX_DB=$SCRATCH/results.sqlite
LOOP=$SCRATCH/create_loop
run_child 120 "$SCRATCH/logs/cc.log" "$SCRATCH/logs/cc.err" "$CC" -O2 -Wall -o "$LOOP" "$SCRIPT_DIR/create_loop.c" ||
    { sed 's/^/  | /' "$SCRATCH/logs/cc.err" >&2; die "could not compile bench/create_loop.c with $CC"; }

# fresh_fs FS: a fresh FS mounted at $SCRATCH/fs (the one before unmounted): a 4 GiB tmpfs, or
# a 4 GiB ext4 or xfs image on a loop device (the image in $SCRATCH/img, on the disk).
fresh_fs() {
    local fs=$1
    unmount_current || die "could not unmount the file system before"
    MNT=$SCRATCH/fs
    case $fs in
    tmpfs)
        mount_tmpfs "$MNT" $((4 << 30))
        ;;
    ext4 | xfs)
        mkdir -p "$SCRATCH/img"
        IMAGE=$SCRATCH/img/$fs.img
        make_loop_fs "$fs" "$IMAGE" $((4 << 30)) "$MNT" "$SCRATCH/logs/mkfs-$fs.log"
        ;;
    esac
}

# ---- conditions -----------------------------------------------------------------------------

CPU=$(awk -F': ' '$1 ~ /^model name/ { print $2; exit }' /proc/cpuinfo)
MDTEST_VERSION=-
if [[ -n $MDTEST ]]; then
    # mdtest says its version when it runs ("mdtest-4.1.0+dev was launched ..."): a run of one item.
    mkdir "$SCRATCH/version"
    MDTEST_VERSION=$("$MDTEST" -n 1 -d "$SCRATCH/version/t" 2>&1 | grep -o 'mdtest-[0-9][^ ]*' | head -1 || true)
    rm -rf -- "$SCRATCH/version"
fi
FRONT="run metadata"
if "$IOMATRIX" mdtest --help >/dev/null 2>&1; then
    FRONT="mdtest"
fi
echo "$PROG: kernel $(uname -r), ${CPU:-?} x $(nproc) CPUs; iomatrix $IOMATRIX_VERSION (iomatrix $FRONT), ${MDTEST_VERSION:-mdtest ?}, $(version_of "$CC" --version)"
echo "$PROG: $PAIRS pair(s); file systems $FS_LIST; clients $CLIENT_LIST; cases $CASES; items $ITEMS"

# ---- the mdtest part --------------------------------------------------------------------------

# mdtest_flags CASE: mdtest's flags of the case.
mdtest_flags() {
    case $1 in
    u) echo "-n $ITEMS -u" ;;
    shared) echo "-n $ITEMS" ;;
    tree) echo "-z 2 -b 4 -I 100 -L" ;;
    esac
}

# iomatrix_flags CASE: run metadata's flags of the same shape.
iomatrix_flags() {
    case $1 in
    u) echo "--items $ITEMS --per-client-folder" ;;
    shared) echo "--items $ITEMS" ;;
    tree) echo "--depth 2 --branch 4 --items-per-folder 100 --leaves-only" ;;
    esac
}

MDTEST_PHASES="tree-create,dir-create,dir-stat,dir-rename,dir-remove,file-create,file-stat,file-read,file-remove,tree-remove"

# mdtest_rates OUT: "phase<TAB>rate" per row of mdtest's SUMMARY table (its Max column: one
# iteration), phases in iomatrix's names.
mdtest_rates() {
    python3 - "$1" <<'PY'
import re, sys
names = {"Directory creation": "dir-create", "Directory stat": "dir-stat", "Directory rename": "dir-rename",
         "Directory removal": "dir-remove", "File creation": "file-create", "File stat": "file-stat",
         "File read": "file-read", "File removal": "file-remove", "Tree creation": "tree-create",
         "Tree removal": "tree-remove"}
text = open(sys.argv[1]).read()
if "SUMMARY rate" not in text:
    sys.exit("no SUMMARY rate table in %s" % sys.argv[1])
table = text.split("SUMMARY rate", 1)[1]
for line in table.splitlines():
    m = re.match(r"^   (\S.*?)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s*$", line)
    if m and m.group(1) in names:
        print("%s\t%s" % (names[m.group(1)], m.group(2)))
PY
}

# iomatrix_rates JSON: "phase<TAB>rate" per cell of iomatrix's stored run (--json): mdtest's
# SUMMARY rule, rate_slowest_times_clients; refuses a cell with failures, partial or failed.
iomatrix_rates() {
    python3 - "$1" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
for cell in doc["run"]["cell_results"]:
    phase = cell["metrics"]["phase"]
    kind = cell["state"]["kind"]
    # disturbed: the machine was busy around the cell (other builds on this shared machine);
    # its figure is measured, and kept (the pairs' spread shows the noise).
    if kind not in ("complete", "disturbed") or phase.get("failures"):
        sys.exit("cell %s is %s, failures %s" % (cell["test"], kind, phase.get("failures")))
    print("%s\t%s" % (cell["test"], phase["rate_slowest_times_clients"]))
PY
}

# rates_of TOOL: the reader of TOOL's output: mdtest's SUMMARY table, which `iomatrix mdtest`
# prints too (read by the same parser), or run metadata's stored run.
rates_of() {
    if [[ $1 == mdtest || $FRONT == mdtest ]]; then
        echo mdtest_rates
    else
        echo iomatrix_rates
    fi
}

# run_mdtest CLIENTS CASE LOG: mdtest on the mounted file system.
run_mdtest() {
    local clients=$1 case=$2 log=$3 cmd flags
    read -r -a flags <<<"$(mdtest_flags "$case")"
    cmd=("$MDTEST" "${flags[@]}" -d "$MNT/mdtest")
    if ((clients > 1)); then
        cmd=("${MPIRUN[@]}" -np "$clients" "${cmd[@]}")
    fi
    run_child 3600 "$log" "$log.err" "${cmd[@]}" || { sed 's/^/  | /' "$log.err" "$log" >&2; die "mdtest failed: ${cmd[*]}"; }
    rm -rf -- "$MNT/mdtest"
}

# run_iomatrix CLIENTS CASE LOG: iomatrix on the mounted file system, its stored run in LOG.
run_iomatrix() {
    local clients=$1 case=$2 log=$3 cmd flags
    if [[ $FRONT == mdtest ]]; then
        read -r -a flags <<<"$(mdtest_flags "$case")"
        cmd=("$IOMATRIX" mdtest "${flags[@]}" -d "$MNT/iomatrix")
        # mdtest makes its -d; iomatrix mdtest makes its working folder inside an existing one.
        mkdir -p -- "$MNT/iomatrix"
    else
        read -r -a flags <<<"$(iomatrix_flags "$case")"
        cmd=("$IOMATRIX" run metadata "${flags[@]}" --phases "$MDTEST_PHASES" --target "$MNT" --json)
    fi
    if ((clients > 1)) && [[ -n $IOMATRIX_MPI ]]; then
        cmd=("${MPIRUN[@]}" -np "$clients" "$IOMATRIX_MPI" "${cmd[@]:1}")
    elif ((clients > 1)); then
        cmd+=(--clients "$clients")
    fi
    run_child 3600 "$log" "$log.err" "${cmd[@]}" || { sed 's/^/  | /' "$log.err" >&2; die "iomatrix failed: ${cmd[*]}"; }
    rm -rf -- "$MNT/iomatrix"
}

# mdtest_part: every file system, client count and case, PAIRS pairs; the table per file system.
mdtest_part() {
    local fs clients case pair tool results log
    for fs in ${FS_LIST//,/ }; do
        results=$SCRATCH/logs/mdtest-$fs.tsv
        : >"$results"
        fresh_fs "$fs"
        for clients in ${CLIENT_LIST//,/ }; do
            for case in ${CASES//,/ }; do
                for ((pair = 1; pair <= PAIRS; pair++)); do
                    local order=(mdtest iomatrix)
                    ((pair % 2)) || order=(iomatrix mdtest)
                    for tool in "${order[@]}"; do
                        log=$SCRATCH/logs/$fs-c$clients-$case-$pair-$tool.out
                        "run_$tool" "$clients" "$case" "$log"
                        "$(rates_of "$tool")" "$log" | while IFS=$'\t' read -r phase rate; do
                            printf '%s\t%s\t%s\t%s\t-\n' "$pair" "c$clients $case $phase" "$tool" "$rate"
                        done >>"$results"
                    done
                    printf '%s: %s, %s client(s), %s: pair %d of %d done\n' "$PROG" "$fs" "$clients" "$case" "$pair" "$PAIRS" >&2
                done
            done
        done
        echo
        echo "== $fs: ops/s by mdtest's SUMMARY rule (the slowest client's rate x clients), iomatrix/mdtest"
        TABLE_FIGURE=ops/s median_table "$results" mdtest,iomatrix iomatrix/mdtest:0.95 "" | tee "$SCRATCH/logs/table-mdtest-$fs.txt"
    done
}

# ---- the create part ----------------------------------------------------------------------------

create_part() {
    local results=$SCRATCH/logs/create.tsv pair tool log n ns
    : >"$results"
    fresh_fs tmpfs
    for ((pair = 1; pair <= PAIRS; pair++)); do
        local order=(bare iomatrix)
        ((pair % 2)) || order=(iomatrix bare)
        for tool in "${order[@]}"; do
            log=$SCRATCH/logs/create-$pair-$tool.out
            if [[ $tool == bare ]]; then
                mkdir "$MNT/bare"
                run_child 3600 "$log" "$log.err" "$LOOP" "$MNT/bare" "$CREATE_FILES" || die "create_loop failed: $(cat "$log.err")"
                read -r n ns <"$log"
                rm -rf -- "$MNT/bare"
                printf '%s\tfile-create\tbare\t%s\t-\n' "$pair" "$(python3 -c "print($n / ($ns / 1e9))")" >>"$results"
            else
                run_child 3600 "$log" "$log.err" "$IOMATRIX" run metadata --files-only --items "$CREATE_FILES" \
                    --phases file-create,file-remove --target "$MNT" --json || die "iomatrix failed: $(cat "$log.err")"
                iomatrix_rates "$log" | awk -v p="$pair" -F'\t' '$1 == "file-create" { printf "%s\tfile-create\tiomatrix\t%s\t-\n", p, $2 }' >>"$results"
            fi
        done
    done
    echo
    echo "== file creation on tmpfs, one client, $CREATE_FILES empty files in one folder: iomatrix/bare loop"
    TABLE_FIGURE=files/s median_table "$results" bare,iomatrix iomatrix/bare:0.95 "" | tee "$SCRATCH/logs/table-create.txt"
}

# ---- the remove part ------------------------------------------------------------------------------

# kept_workdir: the working folder a tiny `run access --keep` leaves on $MNT (with its marker).
kept_workdir() {
    local log=$SCRATCH/logs/keep.out
    run_child 600 "$log" "$log.err" "$IOMATRIX" run access --target "$MNT" --file-size 4k --bs 4k --duration 1s --keep ||
        die "iomatrix run access --keep failed: $(cat "$log.err")"
    local dirs=("$MNT"/iomatrix-*)
    [[ ${#dirs[@]} -eq 1 && -d ${dirs[0]} ]] || die "expected one kept working folder on $MNT, found: ${dirs[*]}"
    echo "${dirs[0]}"
}

remove_part() {
    local results=$SCRATCH/logs/remove.tsv pair tool log start end tree
    : >"$results"
    fresh_fs tmpfs
    for ((pair = 1; pair <= PAIRS; pair++)); do
        local order=(rm iomatrix)
        ((pair % 2)) || order=(iomatrix rm)
        for tool in "${order[@]}"; do
            log=$SCRATCH/logs/remove-$pair-$tool.out
            if [[ $tool == rm ]]; then
                tree=$MNT/rm-tree
                mkdir "$tree"
            else
                tree=$(kept_workdir)/tree
                mkdir "$tree"
            fi
            run_child 3600 "$log.make" "$log.make.err" "$LOOP" -t 1000 "$tree" "$REMOVE_FILES" ||
                die "create_loop -t failed: $(cat "$log.make.err")"
            sync
            start=$(date +%s%N)
            if [[ $tool == rm ]]; then
                run_child 3600 "$log" "$log.err" rm -rf -- "$tree" || die "rm -rf failed: $(cat "$log.err")"
            else
                run_child 3600 "$log" "$log.err" "$IOMATRIX" clean "$MNT" --kept || die "iomatrix clean failed: $(cat "$log.err" "$log")"
            fi
            end=$(date +%s%N)
            [[ ! -e $tree ]] || die "$tool left $tree behind"
            printf '%s\tremove %s files\t%s\t%s\t-\n' "$pair" "$REMOVE_FILES" "$tool" \
                "$(python3 -c "print($REMOVE_FILES / (($end - $start) / 1e9))")" >>"$results"
        done
    done
    echo
    echo "== removal of a tree of $REMOVE_FILES empty files in 1000 folders on tmpfs: files/s, iomatrix clean / rm -rf"
    echo "   (goal: at most 1.2x rm's time, a rate ratio at or above 0.83)"
    TABLE_FIGURE=files/s median_table "$results" rm,iomatrix iomatrix/rm:0.83 "" | tee "$SCRATCH/logs/table-remove.txt"
}

! has "$PARTS" mdtest || mdtest_part
! has "$PARTS" create || create_part
! has "$PARTS" remove || remove_part
