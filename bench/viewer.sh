#!/usr/bin/env bash
# The viewer on a big database (issue 53's goals): `iomatrix serve` over DB, then
#   - the runs page (page 1, newest first) fetched 15 times: median and worst time, goal < 200 ms;
#   - the compare page of two label groups (default server=a against server=b; 1,400 runs a side in
#     bench/viewer-db.sh's database) fetched 5 times, goal < 1 s;
#   - the same questions asked of the command line (`iomatrix runs --page 1`, `iomatrix compare`),
#     for the share of the time the page adds;
#   - the server's peak memory (VmHWM) after all of it, goal < 200 MB.
# Usage: bench/viewer.sh --db DB [--iomatrix PATH] [--a SIDE] [--b SIDE] [--out FOLDER]
set -euo pipefail
PROG=bench/viewer.sh
cd "$(dirname "$0")/.."
source bench/lib.sh

DB="" IOMATRIX=target/release/iomatrix A=server=a B=server=b OUT=""
while [[ $# -gt 0 ]]; do
    case $1 in
    --db) need_value "$@"; DB=$2; shift 2 ;;
    --iomatrix) need_value "$@"; IOMATRIX=$2; shift 2 ;;
    --a) need_value "$@"; A=$2; shift 2 ;;
    --b) need_value "$@"; B=$2; shift 2 ;;
    --out) need_value "$@"; OUT=$2; shift 2 ;;
    -h | --help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
    esac
done
[[ -n $DB && -f $DB ]] || die "--db: give a results database (bench/viewer-db.sh makes one of 10,000 runs)"
[[ -x $IOMATRIX ]] || die "--iomatrix $IOMATRIX: no such program; cargo build --release, or give target/debug/iomatrix"
command -v curl >/dev/null || die "needs curl (apt-get install curl)"

SERVER_PID="" LOG=$(mktemp)
remove_what_we_made() {
    if [[ -n $SERVER_PID ]]; then kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null || true; fi
    rm -f "$LOG"
}
trap 'remove_what_we_made' EXIT

"$IOMATRIX" --db "$DB" serve >"$LOG" 2>/dev/null &
SERVER_PID=$!
for _ in $(seq 100); do grep -q '^iomatrix serve: ' "$LOG" && break; sleep 0.1; done
URL=$(sed -n 's/^iomatrix serve: //p' "$LOG")
[[ -n $URL ]] || die "the viewer did not say where it listens"

# times N URL: each fetch's total seconds, one a line; a status other than 200 fails the bench.
times() {
    local n=$1 url=$2 i line
    for ((i = 0; i < n; i++)); do
        line=$(curl -s -o /dev/null -w '%{http_code} %{time_total}' "$url")
        [[ ${line%% *} == 200 ]] || die "$url answered ${line%% *}"
        echo "${line#* }"
    done
}

# cli_times N ARGS...: each run's wall seconds.
cli_times() {
    local n=$1 i start end
    shift
    for ((i = 0; i < n; i++)); do
        start=$(date +%s.%N)
        "$IOMATRIX" --db "$DB" "$@" >/dev/null
        end=$(date +%s.%N)
        echo "$end - $start" | bc -l
    done
}

median_max() { sort -g | awk '{v[NR]=$1} END {printf "median %.3f s, worst %.3f s (%d fetches)", (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2), v[NR], NR}'; }

runs_total=$("$IOMATRIX" --db "$DB" runs --page 1 --json | grep -o '"total": *[0-9]*' | grep -o '[0-9]*$' || echo "?")
compare_q="side=$(printf %s "$A" | sed 's/=/%3D/g')&side=$(printf %s "$B" | sed 's/=/%3D/g')"
{
    echo "viewer bench: $IOMATRIX on $DB ($runs_total runs), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "runs page   : $(times 15 "${URL}runs" | median_max)   (goal < 0.200 s)"
    echo "runs (CLI)  : $(cli_times 5 runs --page 1 | median_max)"
    echo "compare page: $(times 5 "${URL}compare?${compare_q}" | median_max)   (goal < 1 s; $A against $B)"
    echo "compare(CLI): $(cli_times 3 compare "$A" "$B" | median_max)"
    echo "server peak memory: $(grep VmHWM "/proc/$SERVER_PID/status" | awk '{printf "%.1f MB", $2/1024}')   (goal < 200 MB)"
} | tee ${OUT:+"$OUT/viewer.txt"}
