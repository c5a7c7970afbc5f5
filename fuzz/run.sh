#!/usr/bin/env bash
# Fuzzes iomatrix's parsers with cargo-fuzz (libFuzzer), each target for a stated time, then replays
# the kept corpus. Not part of CI (.ci/run): run it by hand, and add every crash it finds as a
# regression test in the crate whose parser failed (fuzz/README.md).
#
#   fuzz/run.sh [--seconds N] [TARGET...]     default: 300 s each, every target
#   fuzz/run.sh --replay [TARGET...]          only run the kept corpus (seconds)
#
# Needs cargo-fuzz (`cargo install cargo-fuzz`). cargo-fuzz needs nightly's -Z flags: on a stable
# toolchain RUSTC_BOOTSTRAP=1 allows them (set here).
set -euo pipefail
cd "$(dirname "$0")"
seconds=300 replay=0 targets=()
while [ $# -gt 0 ]; do
  case $1 in
    --seconds) seconds=$2; shift 2 ;;
    --replay) replay=1; shift ;;
    -h | --help) sed -n '2,10p' "$0"; exit 0 ;;
    -*) echo "fuzz/run.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
command -v cargo-fuzz >/dev/null || { echo "fuzz/run.sh: needs cargo-fuzz: cargo install cargo-fuzz" >&2; exit 2; }
export RUSTC_BOOTSTRAP=1
[ ${#targets[@]} -gt 0 ] || mapfile -t targets < <(cargo fuzz list)
cargo fuzz build -O 2>&1 | grep -E "^(error|warning: unused)" -A 5 || true
cargo fuzz build -O >/dev/null 2>&1 || { echo "fuzz/run.sh: the fuzz targets do not build: cargo fuzz build -O" >&2; exit 1; }

for t in "${targets[@]}"; do
  mkdir -p "corpus/$t" "seeds/$t"
  if [ "$replay" = 1 ]; then
    # -runs=0: execute every corpus input once and stop.
    cargo fuzz run -O "$t" "corpus/$t" "seeds/$t" -- -runs=0 2>&1 | grep -E "^(Done|INFO: seed corpus)|ERROR" || true
    continue
  fi
  started=$(date +%s)
  # -timeout: one input taking over 10 s is a hang; -rss_limit_mb: over 2 GiB is a memory blow-up.
  cargo fuzz run -O "$t" "corpus/$t" "seeds/$t" -- -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 >"/tmp/iomatrix-fuzz-$t.log" 2>&1 || {
    echo "$t: FAILED after $(($(date +%s) - started)) s; the input is in fuzz/artifacts/$t/:" >&2
    grep -E "^==[0-9]+==|panicked|SUMMARY|Test unit written" "/tmp/iomatrix-fuzz-$t.log" >&2 || tail -20 "/tmp/iomatrix-fuzz-$t.log" >&2
    exit 1
  }
  runs=$(grep -oE "stat::number_of_executed_units: *[0-9]+" "/tmp/iomatrix-fuzz-$t.log" | grep -oE "[0-9]+$" || echo "?")
  cov=$(grep -oE "cov: [0-9]+" "/tmp/iomatrix-fuzz-$t.log" | tail -1 || true)
  # Keep the corpus small: only inputs that add coverage.
  cargo fuzz cmin -O "$t" "corpus/$t" >/dev/null 2>&1 || true
  echo "$t: ${seconds} s, $runs inputs, $cov, corpus $(ls "corpus/$t" | wc -l) files, no crash, no hang"
done
