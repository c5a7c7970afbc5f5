#!/usr/bin/env bash
# fio-jobfile-vs-fio.sh: one fio job file run by real fio and by `iomatrix fio`, in pairs.
#
# Usage: bench/fio-jobfile-vs-fio.sh [--repeats 5] JOBFILE
#
# WHAT IT MEASURES
#   Each job of JOBFILE (the jobs after the first need stonewall: iomatrix fio runs jobs in
#   turn), run --repeats times by each tool, fio and iomatrix in turn (fio first in odd repeats,
#   iomatrix first in even ones, so neither always runs on a machine the other just warmed).
#   Both print fio's JSON (--output-format=json); for each job the script takes IOPS (reads and
#   writes together) and the p99 completion latency (reads where the job reads, else writes), and
#   prints every run's figures, then per job the median IOPS of each tool, the paired ratio
#   iomatrix/fio with its interval, and each tool's median p99.
#
# WHY THE SETTINGS MATCH
#   The same job file, unchanged, for both. iomatrix fio refuses what it does not run (by name,
#   exit 2) instead of running something else, so a file it accepts means the same job to both;
#   its own choices are in docs/fio.md (libaio runs on its io_uring backend; filename= is not
#   opened: iomatrix lays out its own file beside it; iodepth above 1 needs a queued engine).
#   What is not the same: fio lays its file out inside the timed job's start, iomatrix before it
#   (untimed); fio's offsets come from its own generator (randommap on by default: each block
#   once per pass), iomatrix's with replacement. Give norandommap to fio with a job file of your
#   own if that matters to you (iomatrix fio refuses the option: write it for fio only).
#
# Runs without root. Needs fio, python3 and a release build (cargo build --release;
# IOMATRIX_BIN=path and FIO=path choose other binaries). The results database is a throwaway one
# in a scratch folder under /var/tmp, removed at the end with the files fio laid out (named from
# fio's JSON: JOBNAME.N.0 in the job's directory); a job's filename= file is the user's and stays.

set -euo pipefail
PROG=$(basename "$0")
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/lib.sh
source "$HERE/lib.sh"

IOMATRIX=${IOMATRIX_BIN:-$HERE/../target/release/iomatrix}
FIO=${FIO:-fio}
REPEATS=5
JOBFILE=""

usage() {
    sed -n '2,/^$/p' "$0" | sed 's/^# \{0,1\}//'
}

while [[ $# -gt 0 ]]; do
    case $1 in
    --repeats)
        need_value "$@"
        REPEATS=$(whole_number "$2" --repeats 1)
        shift 2
        ;;
    -h | --help)
        usage
        exit 0
        ;;
    -*) die "unknown option $1 (see --help)" ;;
    *)
        [[ -z $JOBFILE ]] || die "one job file at a time (see --help)"
        JOBFILE=$1
        shift
        ;;
    esac
done
[[ -n $JOBFILE ]] || die "give a job file (see --help)"
[[ -f $JOBFILE ]] || die "$JOBFILE is not a regular file"
need_fio
need_iomatrix IOMATRIX_BIN

SCRATCH=$(mktemp -d /var/tmp/fio-jobfile-vs-fio.XXXXXX)
FIO_FILES="$SCRATCH/fio-files"
: >"$FIO_FILES"

remove_what_we_made() {
    local file
    while IFS= read -r file; do
        [[ -n $file ]] && rm -f -- "$file"
    done <"$FIO_FILES"
    remove_dir "$SCRATCH"
}

# figures TOOL REPEAT JSON: one line per job, "repeat<TAB>job<TAB>tool<TAB>IOPS<TAB>p99 ns",
# and the files fio laid out, appended to FIO_FILES.
figures() {
    python3 - "$@" "$FIO_FILES" <<'PY'
import json, os, sys
tool, rep, path, files = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
doc = json.load(open(path))
glob = doc.get("global options", {})
for job in doc["jobs"]:
    if job.get("error", 0) != 0:
        sys.exit("%s: job %s reported error %s" % (tool, job["jobname"], job["error"]))
    r, w = job["read"], job["write"]
    side = r if r["total_ios"] > 0 else w
    p99 = side["clat_ns"].get("percentile", {}).get("99.000000", "-")
    print("%s\t%s\t%s\t%.0f\t%s" % (rep, job["jobname"], tool, r["iops"] + w["iops"], p99))
    if tool == "fio":
        opts = dict(glob, **job.get("job options", {}))
        if "filename" not in opts:
            folder = opts.get("directory", os.getcwd())
            with open(files, "a") as out:
                for n in range(int(opts.get("numjobs", 1))):
                    out.write(os.path.join(folder, "%s.%d.0" % (job["jobname"], n)) + "\n")
PY
}

RESULTS="$SCRATCH/results"
: >"$RESULTS"
run_fio() {
    run_child 0 "$SCRATCH/fio.json" "$SCRATCH/fio.err" "$FIO" --output-format=json "$JOBFILE" ||
        { sed 's/^/  | /' "$SCRATCH/fio.err" >&2; die "fio failed on $JOBFILE"; }
    figures fio "$1" "$SCRATCH/fio.json" | tee -a "$RESULTS"
}
run_iomatrix() {
    run_child 0 "$SCRATCH/iomatrix.json" "$SCRATCH/iomatrix.err" \
        "$IOMATRIX" --db "$SCRATCH/results.sqlite" fio --output-format=json "$JOBFILE" ||
        { grep '^iomatrix: error' "$SCRATCH/iomatrix.err" | sed 's/^/  | /' >&2; die "iomatrix fio failed on $JOBFILE"; }
    figures iomatrix "$1" "$SCRATCH/iomatrix.json" | tee -a "$RESULTS"
}

printf '%s: %s, %s repeats; fio %s, iomatrix %s\n' "$PROG" "$JOBFILE" "$REPEATS" "$FIO_VERSION" "$IOMATRIX_VERSION"
printf 'repeat\tjob\ttool\tIOPS\tp99 ns\n'
for ((rep = 1; rep <= REPEATS; rep++)); do
    if ((rep % 2)); then
        run_fio "$rep"
        run_iomatrix "$rep"
    else
        run_iomatrix "$rep"
        run_fio "$rep"
    fi
done
echo
median_table "$RESULTS" fio,iomatrix iomatrix/fio fio,iomatrix long
