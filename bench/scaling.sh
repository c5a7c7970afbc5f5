#!/usr/bin/env bash
# scaling.sh: aggregate throughput of the iozone suite for 1, 2 and 4 clients, as threads of one
# process (`--clients N`) and as MPI ranks (`mpirun -np N`), on a page-cached folder and on a
# loop-mounted ext4 image read and written with O_DIRECT.
#
# Usage: bench/scaling.sh [--target DIR] [--file-size 256m] [--record 1m] [--repeats 3]
#
# Per client: one file of --file-size, written then read in --record requests (iomatrix run
# iozone --tests write,read). Each configuration runs --repeats times; the table shows the
# median of IOzone's "parent sees" aggregate (all clients' bytes over the time from the common
# start at the barrier to the last client's finish), the MPI/threads ratio and the scaling
# against one client. The cached target measures memory copies and system calls (the files fit
# in RAM); the ext4 image measures the loop device under it (direct I/O), i.e. this VM's disk.
#
# Environment: IOMATRIX (default target/release/iomatrix) and IOMATRIX_MPI (default
# target/mpi/release/iomatrix, built with `cargo build --release --features mpi --target-dir
# target/mpi`). Without mpirun or the MPI build the MPI column says "-".
# Everything the script makes (scratch folder, image, mount) is removed on every exit.

set -euo pipefail

PROG=scaling
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=bench/lib.sh
source "$SCRIPT_DIR/lib.sh"
ROOT=$(cd "$SCRIPT_DIR/.." && pwd)

usage() { sed -n '2,18p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

TARGET=/var/tmp FILE_SIZE=256m RECORD=1m REPEATS=3
while [[ $# -gt 0 ]]; do
    case $1 in
    --target) need_value "$@"; TARGET=$2; shift 2 ;;
    --file-size) need_value "$@"; FILE_SIZE=$2; shift 2 ;;
    --record) need_value "$@"; RECORD=$2; shift 2 ;;
    --repeats) need_value "$@"; REPEATS=$2; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
    esac
done
[[ $REPEATS =~ ^[1-9][0-9]*$ ]] || die "--repeats '$REPEATS' is not a positive whole number"
[[ -d $TARGET ]] || die "--target $TARGET is not a folder"
FILE_BYTES=$(to_bytes "$FILE_SIZE" --file-size)
RECORD_BYTES=$(to_bytes "$RECORD" --record)
((RECORD_BYTES <= FILE_BYTES)) || die "--record $RECORD is larger than --file-size $FILE_SIZE"
[[ $(id -u) == 0 ]] || die "needs root (it loop-mounts an ext4 image)"
command -v python3 >/dev/null || die "needs python3 to read iomatrix's JSON"

IOMATRIX=${IOMATRIX:-$ROOT/target/release/iomatrix}
IOMATRIX_MPI=${IOMATRIX_MPI:-$ROOT/target/mpi/release/iomatrix}
[[ -x $IOMATRIX ]] || (cd "$ROOT" && cargo build --release -q) || die "cannot build iomatrix"
HAVE_MPI=0
if command -v mpirun >/dev/null; then
    if [[ -x $IOMATRIX_MPI ]] || (cd "$ROOT" && cargo build --release -q --features mpi --target-dir target/mpi); then
        HAVE_MPI=1
    else
        warn "the MPI build failed (needs libopenmpi-dev clang libclang-dev): no MPI column"
    fi
else
    warn "no mpirun (apt-get install openmpi-bin libopenmpi-dev): no MPI column"
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

SCRATCH=$(mktemp -d /var/tmp/iomatrix-scaling.XXXXXX)
MNT="" IMAGE=""
remove_what_we_made() { remove_image "$SCRATCH" "$MNT" "$IMAGE"; }

# The image holds four clients' files plus room for ext4's own blocks.
IMAGE=$SCRATCH/ext4.img MNT=$SCRATCH/mnt
mkdir "$MNT"
truncate -s $((4 * FILE_BYTES + (128 << 20))) "$IMAGE"
mkfs.ext4 -q -F "$IMAGE" || die "mkfs.ext4 failed"
mount -o loop "$IMAGE" "$MNT" || die "cannot loop-mount $IMAGE"

# one_run KIND CLIENTS DIR DIRECT: prints "test overall" lines of one run.
one_run() {
    local kind=$1 n=$2 dir=$3 direct=$4 out=$SCRATCH/out.json err=$SCRATCH/err.txt
    local args=(--db "$SCRATCH/results.sqlite" run iozone --target "$dir" --files "$FILE_SIZE" --records "$RECORD"
        --tests "write,read" --json --no-space-check)
    [[ $direct == 1 ]] && args+=(--direct)
    if [[ $kind == threads ]]; then
        run_child 3600 "$out" "$err" "$IOMATRIX" "${args[@]}" --clients "$n" || die "iomatrix failed: $(tail -3 "$err")"
    else
        run_child 3600 "$out" "$err" mpirun --oversubscribe -np "$n" "$IOMATRIX_MPI" "${args[@]}" \
            || die "mpirun failed: $(tail -3 "$err")"
    fi
    python3 -c '
import json, sys
run = json.load(open(sys.argv[1]))
for c in run["run"]["cell_results"]:
    print(c["test"], c["metrics"]["kib_per_sec_overall"])' "$out"
}

printf 'iomatrix scaling: %s per client, %s records, median of %s; %s, kernel %s\n' \
    "$FILE_SIZE" "$RECORD" "$REPEATS" "$(nproc) CPUs" "$(uname -r)"
printf '%-24s %-6s %8s %14s %14s %10s %14s\n' target test clients "threads KB/s" "MPI KB/s" MPI/thr "vs 1 client"
for place in cached direct; do
    if [[ $place == cached ]]; then dir=$TARGET direct=0 label="$TARGET (cached)"; else dir=$MNT direct=1 label="ext4 loop (O_DIRECT)"; fi
    RESULTS=$SCRATCH/$place.txt
    : >"$RESULTS"
    for n in 1 2 4; do
        for ((r = 0; r < REPEATS; r++)); do
            one_run threads "$n" "$dir" "$direct" | sed "s/^/threads $n /" >>"$RESULTS"
            if ((HAVE_MPI)); then
                one_run mpi "$n" "$dir" "$direct" | sed "s/^/mpi $n /" >>"$RESULTS"
            fi
        done
    done
    python3 - "$RESULTS" "$label" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    kind, n, test, kib = line.split()
    rows.setdefault((test, int(n), kind), []).append(float(kib))
med = {k: statistics.median(v) for k, v in rows.items()}
for test in ("write", "read"):
    for n in (1, 2, 4):
        t, m = med.get((test, n, "threads")), med.get((test, n, "mpi"))
        ratio = f"{m / t:.2f}" if t and m else "-"
        base = med.get((test, 1, "threads"))
        scale = f"{t / base:.2f}x" if t and base else "-"
        mpi = f"{m:.0f}" if m else "-"
        print(f"{sys.argv[2]:<24} {test:<6} {n:>8} {t or 0:>14.0f} {mpi:>14} {ratio:>10} {scale:>14}")
PY
done
