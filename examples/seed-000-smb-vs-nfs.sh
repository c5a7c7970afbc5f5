#!/usr/bin/env bash
# Seed 000's experiment, reproduced: the IOzone matrix over a 100 Mbit/s client link against one
# server three ways -- the SMB share mounted (smbnetfs, FUSE: the client's cache is in the path),
# the same share through iomatrix's own SMB client, and the same folder exported over NFSv3 through
# iomatrix's own NFS client (no client cache) -- then the comparisons and a report. Cells faster than
# the link were served by a cache; compare states where that boundary lies.
#
# Needs root and the lab's Debian packages (lab/README.md). Run from the repository:
#   sudo examples/seed-000-smb-vs-nfs.sh [--small] [OUT_DIR]
# --small runs a matrix of files 64k..1m (about a minute; what CI runs) instead of 64k..16m.
# IOMATRIX names the binary (default: target/release/iomatrix, built if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
matrix=(--files 64k,256k,1m,4m,16m --records 64k,256k,1m --tests write,read,reread)
if [ "${1:-}" = --small ]; then
  matrix=(--files 64k,256k,1m --records 64k,256k --tests write,read,reread)
  shift
fi
out=${1:-seed-000-out}
mkdir -p "$out"
bin=${IOMATRIX:-target/release/iomatrix}
[ -x "$bin" ] || cargo build --release
export IOMATRIX_DB="$out/results.sqlite"

set -a
eval "$(lab/up --link 100mbit)"
set +a
trap 'lab/down --state "$IOMATRIX_LAB_STATE" >/dev/null' EXIT

# smbnetfs answers statfs with 0 bytes free: the free-space check cannot judge it.
"$bin" run iozone --target "$IOMATRIX_LAB_SMB_MOUNT" "${matrix[@]}" --no-space-check --label access=smb-mounted \
  --label link=100mbit
IOMATRIX_SMB_PASSWORD_FILE="$IOMATRIX_LAB_SMB_PASSWORD_FILE" \
  "$bin" run iozone --target "$IOMATRIX_LAB_SMB" "${matrix[@]}" --label access=smb-builtin --label link=100mbit
"$bin" run iozone --target "$IOMATRIX_LAB_NFS" "${matrix[@]}" --label access=nfs-builtin --label link=100mbit

"$bin" compare access=smb-builtin access=smb-mounted --limit 100Mbit | tee "$out/smb-mounted-vs-builtin.txt"
"$bin" compare access=smb-builtin access=nfs-builtin --limit 100Mbit | tee "$out/nfs-vs-smb.txt"
"$bin" report access=smb-mounted access=smb-builtin access=nfs-builtin --limit 100Mbit -o "$out/report.html"
