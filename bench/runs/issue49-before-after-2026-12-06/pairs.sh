#!/usr/bin/env bash
# pairs.sh SCRIPT PAIRS PREFIX [ARGS...]: runs bench/SCRIPT ARGS alternately with the iomatrix
# binary built before issue 49 and the one built after it (IOMATRIX_BIN), PAIRS pairs, the
# side that goes first alternating (before-after, after-before, ...) so that neither always
# runs on the warmer or busier machine. Each invocation's whole output (stdout and stderr) goes
# to PREFIX-N-SIDE.log in this folder, between a header and a trailer of '# ' lines: the
# command, the binary and its commit, the start and end time and `uptime` before and after, and
# the exit status. Stops at the first invocation that fails.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BENCH=$(cd "$HERE/../.." && pwd)
BEFORE_DIR=${BEFORE_DIR:-/work/wt/bench-before}
AFTER_DIR=${AFTER_DIR:-/work/wt/bench-after}
script=$1 pairs=$2 prefix=$3
shift 3
for ((i = 1; i <= pairs; i++)); do
    if ((i % 2 == 1)); then order=(before after); else order=(after before); fi
    for side in "${order[@]}"; do
        if [[ $side == before ]]; then dir=$BEFORE_DIR; else dir=$AFTER_DIR; fi
        bin=$dir/target/release/iomatrix
        log=$HERE/$prefix-$i-$side.log
        {
            echo "# IOMATRIX_BIN=$bin bench/$script $*"
            echo "# binary: $side, commit $(git -C "$dir" rev-parse HEAD)"
            echo "# start: $(date -u '+%F %T UTC'); uptime: $(uptime)"
        } >"$log"
        rc=0
        IOMATRIX_BIN=$bin "$BENCH/$script" "$@" >>"$log" 2>&1 || rc=$?
        {
            echo "# end: $(date -u '+%F %T UTC'); uptime: $(uptime)"
            echo "# exit status: $rc"
        } >>"$log"
        echo "$(date -u +%T) $prefix pair $i $side: exit $rc ($log)"
        ((rc == 0)) || exit "$rc"
    done
done
