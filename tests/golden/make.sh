#!/usr/bin/env bash
# Makes the golden fixture: a results database with runs of every suite, made by the binary
# given (main's, before a change that must not alter output), and what show, compare, sweep,
# report and runs print for it (tests/golden/commands lists them; tests/cli/golden.rs checks
# that today's binary prints the same bytes). Run once, on purpose:
#   cargo build && bash tests/golden/make.sh target/debug/iomatrix
# then look at `git diff tests/golden` before committing.
set -euo pipefail
bin=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
db=$work/results.sqlite
t=$work/target
mkdir -p "$t" "$work/tree/a/b"
run() { "$bin" "$@" --db "$db" >/dev/null; }

# Two of each suite (a label tells them apart), small enough for seconds.
for v in 1 2; do
  run run iozone --target "$t" --files 64k,256k --records 4k,64k --tests write,read,random-read --label sys=s$v
  run run access --target "$t" --bs 4k,64k --read 100,0 --random 100 --qd 1,4 --file-size 1m --duration 200ms --label sys=s$v
  run run bonnie --target "$t" --size 2m --ram 1m --files 1 --fast --label sys=s$v
  run run fileserver --target "$t" --connections 2 --files-per-connection 5 --sizes 4k,16k --label sys=s$v
  run run personality varmail --target "$t" --scale small --connections 2 --duration 300ms --label sys=s$v
done
head -c 300000 /dev/urandom >"$work/tree/a/one"
head -c 70000 /dev/urandom >"$work/tree/a/b/two"
for v in 1 2; do run run backup --target "$work/tree" --warm --label sys=s$v; done
run run iozone --target "$t" --files 64k,256k --records 4k,64k --tests write,read --clients 2 --label sys=s3
if [ -e /usr/share/dbench/client.txt ]; then
  head -n 400 /usr/share/dbench/client.txt >"$work/client.txt"
  run run personality --dbench-loadfile "$work/client.txt" --target "$t" --connections 2 --as-fast-as-possible --label sys=s1
fi
# Every importer: the repository's real outputs of fio, Iometer, bonnie++, Bonnie, and IOzone's -R.
data=$here/../../crates/import/tests/data
run import "$data/fio-3.33-randrw-libaio.json" --label sys=fio
run import "$data/iometer-2006.07.27-results.csv" --label sys=iometer
run import "$data/bonnie-2.00a-x2.csv" --label sys=bonniepp
run import "$data/bonnie-1.x-two-runs.txt" --label sys=bonnie1
run import "$here/../../../shared/fixtures/iozone-3.471-s64m-r4k-r1m-tmpfs.txt" --format iozone --label sys=iozone-r
# A run that failed: the file-server load on a file system too small for it (stored failed, exit 3).
mkdir -p "$work/full"
mount -t tmpfs -o size=256k tmpfs "$work/full"
trap 'umount "$work/full" 2>/dev/null; rm -rf "$work"' EXIT
"$bin" run fileserver --target "$work/full" --connections 2 --files-per-connection 5 --sizes 64k --no-space-check \
  --label sys=full --db "$db" >/dev/null 2>&1 || true
umount "$work/full"
cp "$db" "$here/results.sqlite"
# Times after this one are when a command ran (a report's "made at"), not stored figures.
date -u +%Y-%m-%dT%H:%M:%SZ >"$here/made-at"
