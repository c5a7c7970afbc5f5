#!/usr/bin/env bash
# viewer-db.sh: a results database of N runs (default 10,000) made of real runs, and the viewer's
# speed on it (issue 53): `runs --page 1`, a few filtered pages, and `compare server=a server=b`
# with SIDE runs a side (default 1,400), each timed as a user meets it (process start included)
# and its peak memory (GNU time's maximum resident set size).
#
# Usage: bench/viewer-db.sh [--runs 10000] [--side 1400] [--repeats 10] [--db PATH] [--keep]
#
# HOW THE DATABASE IS MADE
#   Real runs first, tiny and quick, on a tmpfs the script mounts (root) or in /dev/shm: iozone
#   (a 2 x 2 matrix of write and read: 8 cells with latency histograms), bonnie, fileserver,
#   metadata and access. Their rows (runs, cells, histograms) are then copied with SQL into a
#   copy of that database until it holds --runs runs, and the originals removed: 2 x --side
#   copies of the iozone run labelled server=a and server=b alternately (compare's two sides),
#   the others copies of the other suites labelled server=c; every run also build=N (its place),
#   one of 7 hosts, an hour apart in start time, a fresh uid. Everything but those columns is as
#   the real runs stored it, so every reader reads real rows.
#
# WHAT IT MEASURES
#   Each command --repeats times (compare: 3 times); the median wall time (ms) and the largest
#   peak RSS (MiB). Goals (issue 53): runs --page 1 well under 200 ms, compare under 1 s, memory
#   under 200 MB. The figures are the binary's: IOMATRIX_BIN=path chooses it (default:
#   target/release/iomatrix if built, else target/debug/iomatrix, which the table names; a debug
#   build is several times slower than a release one).
#
# Needs python3 (its sqlite3 module), GNU time (/usr/bin/time), and root for the tmpfs (else
# /dev/shm). The scratch folder (tmpfs, seed runs) is removed on every way out; the big database
# (under /tmp, ~0.3 GB for 10,000 runs) too unless --keep or --db.

set -euo pipefail

PROG=viewer-db
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=bench/lib.sh
source "$SCRIPT_DIR/lib.sh"
if [[ -n ${IOMATRIX_BIN:-} ]]; then
    IOMATRIX=$IOMATRIX_BIN
elif [[ -x $SCRIPT_DIR/../target/release/iomatrix ]]; then
    IOMATRIX=$SCRIPT_DIR/../target/release/iomatrix
else
    IOMATRIX=$SCRIPT_DIR/../target/debug/iomatrix
fi

usage() {
    cat <<EOF
Usage: $0 [--runs 10000] [--side 1400] [--repeats 10] [--db PATH] [--keep]

Makes a results database of --runs runs copied from real ones (2 x --side of them iozone runs
labelled server=a and server=b), then times \`runs --page 1\`, filtered pages and
\`compare server=a server=b\` on it, with their peak memory.

  --runs N      runs in the database [default: 10000]
  --side N      runs a side of the compare [default: 1400]
  --repeats N   times each runs command is timed (the median is shown) [default: 10]
  --db PATH     the database to make (an existing file is refused) and keep [default: under /tmp, removed]
  --keep        keep the database made under /tmp (its path is printed)

IOMATRIX_BIN=path chooses the binary [default: target/release/iomatrix, else target/debug/iomatrix].
EOF
}

RUNS=10000
SIDE=1400
REPEATS=10
DB=""
KEEP=0
while [[ $# -gt 0 ]]; do
    case $1 in
    --runs) need_value "$@"; RUNS=$(whole_number "$2" --runs 10); shift 2 ;;
    --side) need_value "$@"; SIDE=$(whole_number "$2" --side 1); shift 2 ;;
    --repeats) need_value "$@"; REPEATS=$(whole_number "$2" --repeats 1); shift 2 ;;
    --db) need_value "$@"; DB=$2; KEEP=1; shift 2 ;;
    --keep) KEEP=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
    esac
done
((2 * SIDE + 4 <= RUNS)) || die "--side $SIDE: two sides of $SIDE and one run of each other suite need --runs $((2 * SIDE + 4)) or more"
need_iomatrix IOMATRIX_BIN
command -v python3 >/dev/null || die "python3 is needed (apt-get install python3)"
[[ -x /usr/bin/time ]] || die "GNU time is needed for the peak memory (apt-get install time)"
if [[ -n $DB && -e $DB ]]; then
    die "--db $DB exists: give a new path (the script makes the database)"
fi

SCRATCH=$(mktemp -d /tmp/iomatrix-viewer-db.XXXXXX)
MNT=""
[[ -n $DB ]] || DB=$SCRATCH.sqlite

remove_what_we_made() {
    local rc=0
    if [[ -n $MNT ]]; then unmount "$MNT" || rc=1; fi
    remove_dir "$SCRATCH" || rc=1
    if ((KEEP == 0)); then rm -f -- "$DB" "$DB-wal" "$DB-shm"; fi
    return "$rc"
}
trap on_exit EXIT
trap 'on_signal 130' INT
trap 'on_signal 143' TERM

# ---- the real runs -----------------------------------------------------------------------------

TARGET=$SCRATCH/target
mkdir -p "$TARGET"
if [[ $(id -u) -eq 0 ]]; then
    MNT=$TARGET
    mount_tmpfs "$MNT" $((256 << 20))
else
    TARGET=$(mktemp -d /dev/shm/iomatrix-viewer-db.XXXXXX)
    SHM_TARGET=$TARGET
fi
SEED=$SCRATCH/seed.sqlite
seed_run() {
    local log=$SCRATCH/seed.log
    IOMATRIX_BUSY_THRESHOLD=off run_child 600 "$log" "$log.err" "$IOMATRIX" --db "$SEED" run "$@" --target "$TARGET" ||
        { sed 's/^/  | /' "$log.err" >&2; die "the seed run 'iomatrix run $*' failed"; }
}
printf '%s: real runs on %s (%s)\n' "$PROG" "$TARGET" "$IOMATRIX"
seed_run iozone --files 64k,256k --records 4k,16k --tests write,read
seed_run bonnie --size 1m --ram 0 --files 0 --fast
seed_run fileserver --connections 2 --files-per-connection 5 --sizes 64k
seed_run metadata --items 100 --files-only
seed_run access --file-size 4m --bs 4k --read 100 --duration 1s
if [[ -n ${SHM_TARGET:-} ]]; then rm -rf -- "$SHM_TARGET"; fi

# ---- copies ------------------------------------------------------------------------------------

cp -- "$SEED" "$DB"
printf '%s: copying them into %s runs in %s\n' "$PROG" "$RUNS" "$DB"
python3 - "$DB" "$RUNS" "$SIDE" <<'EOF'
import sqlite3, sys

db, runs, side = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
conn = sqlite3.connect(db)
conn.execute("PRAGMA foreign_keys = OFF")
seeds = conn.execute("SELECT id, suite FROM runs ORDER BY id").fetchall()
iozone = [i for i, s in seeds if s == "iozone"][0]
others = [i for i, s in seeds if s != "iozone"]
high = max(i for i, _ in seeds)
conn.execute("CREATE TEMP TABLE gen (k INTEGER PRIMARY KEY, src INTEGER NOT NULL, server TEXT NOT NULL)")
rows = []
for k in range(1, runs + 1):
    if k <= 2 * side:
        rows.append((k, iozone, "a" if k % 2 else "b"))
    else:
        rows.append((k, others[k % len(others)], "c"))
conn.executemany("INSERT INTO gen VALUES (?, ?, ?)", rows)

def columns(table):
    return [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]

# Each copy: run id high + k, an hour after the one before, one of 7 hosts, a fresh uid.
base_ms = 1_767_225_600_000  # 2026-01-01T00:00:00Z
swap = {
    "id": f"{high} + g.k",
    "run_id": f"{high} + g.k",
    "started_at_ms": f"{base_ms} + g.k * 3600000",
    "ended_at_ms": f"{base_ms} + g.k * 3600000 + (t.ended_at_ms - t.started_at_ms)",
    "host": "'host-' || (g.k % 7)",
    "uid": "lower(hex(randomblob(16)))",
}
for table, key in (("runs", "id"), ("cells", "run_id"), ("cell_blobs", "run_id")):
    cols = columns(table)
    picked = ", ".join(swap.get(c, f"t.{c}") if table == "runs" or c == "run_id" else f"t.{c}" for c in cols)
    conn.execute(f"INSERT INTO {table} ({', '.join(cols)}) SELECT {picked} FROM gen g JOIN {table} t ON t.{key} = g.src")
conn.execute(f"INSERT INTO labels (run_id, key, value) SELECT {high} + k, 'server', server FROM gen")
conn.execute(f"INSERT INTO labels (run_id, key, value) SELECT {high} + k, 'build', k FROM gen")
for table, key in (("cell_blobs", "run_id"), ("cells", "run_id"), ("labels", "run_id"), ("runs", "id")):
    conn.execute(f"DELETE FROM {table} WHERE {key} <= {high}")
conn.commit()
conn.execute("VACUUM")
conn.close()
EOF

# ---- measurements ------------------------------------------------------------------------------

# timed REPEATS NAME ARGS...: runs `iomatrix --db DB ARGS` REPEATS times under GNU time; prints a
# table row: the median wall ms, the largest peak RSS in MiB, and the first line of its output.
timed() {
    local repeats=$1 name=$2 i out=$SCRATCH/out err=$SCRATCH/err
    shift 2
    local -a ms=() rss=()
    for ((i = 0; i < repeats; i++)); do
        local start end
        start=$(date +%s%N)
        /usr/bin/time -v -o "$SCRATCH/time" "$IOMATRIX" --db "$DB" "$@" >"$out" 2>"$err" ||
            { sed 's/^/  | /' "$err" >&2; die "'iomatrix $*' failed"; }
        end=$(date +%s%N)
        ms+=($(((end - start) / 1000000)))
        rss+=("$(awk -F': ' '/Maximum resident set size/ { print int($2 / 1024) }' "$SCRATCH/time")")
    done
    printf '%-40s %8s %9s  %s\n' "$name" \
        "$(printf '%s\n' "${ms[@]}" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')" \
        "$(printf '%s\n' "${rss[@]}" | sort -n | tail -1)" "$(head -c 60 "$out" | head -1)"
}

printf '\n%s: %s runs, %s (%s), %s\n' "$PROG" "$RUNS" "$IOMATRIX" "$IOMATRIX_VERSION" "$(du -h "$DB" | cut -f1)"
printf '%-40s %8s %9s  %s\n' "command" "ms (med)" "peak MiB" "first line"
timed "$REPEATS" "runs --page 1" runs --page 1
timed "$REPEATS" "runs --page 100" runs --page 100
timed "$REPEATS" "runs --suite iozone --label server=b" runs --suite iozone --label server=b
timed "$REPEATS" "runs --fs tmpfs --since 2026-06-01" runs --fs tmpfs --since 2026-06-01
timed "$REPEATS" "runs --search build=9999" runs --search build=9999
timed "$REPEATS" "runs (every run, as before)" runs
timed 3 "compare server=a server=b" compare server=a server=b
if ((KEEP == 1)); then printf '%s: the database stays at %s\n' "$PROG" "$DB"; fi
