#!/usr/bin/env bash
# protocols.sh: iomatrix's built-in NFS and SMB clients beside the usual command-line clients
# (nfs-cp from libnfs-utils, smbclient) and beside the raw link rate (iperf3), on the same servers
# (the lab's nfs-ganesha and Samba, lab/up) and the same work.
#
# Usage: sudo bench/protocols.sh [--link 100mbit|1gbit|none] [--size 64m] [--record 1m] [--repeats 3]
#                                [--iperf-seconds 5] [--depths 1,8,32] [--access-duration 5s]
#                                [--no-access]
#
# Streaming (the first table): one file of --size written to the server, then read back from
# it, sequentially in --record requests (iomatrix run iozone --tests write,read: with the default
# 1m records this is iomatrix's sequential 1 MiB figure; nfs-cp and smbclient use their own
# request sizes). Each repeat runs, in an order that rotates from repeat to repeat: iomatrix over
# nfs://, nfs-cp put and get, iomatrix over smb://, smbclient put and get, iperf3 each way for
# --iperf-seconds, and the random 4 KiB cells below. The table shows each figure's median over
# the repeats (KiB/s), the built-in client against the other client, and each built-in client
# against the link (iperf3's payload rate: here -> server for writes, server -> here for reads).
#
# Random 4 KiB (the second table, unless --no-access): iomatrix run access --target nfs://...
# and smb://... --bs 4k --read 100,0 --random 100 --qd DEPTHS --file-size SIZE --duration
# --access-duration: 4 KiB reads, then writes, at uniformly random 4 KiB-aligned offsets of one
# file (laid out on the server first, untimed), at each of --depths (1..64; NFS: that many
# connections, one request in flight on each; SMB: that many requests in flight on one session).
# The table gives, per protocol, reads or writes and depth, the median IOPS and p99 latency over
# the repeats. It has NO PEER COLUMN: nfs-cp and smbclient only copy whole files from start to
# end; they have no random 4 KiB mode, so nothing here does the same work to compare with.
# Compare the built-in clients with them in the streaming table.
#
# Environment: IOMATRIX (default target/release/iomatrix). Needs root (lab/up), lab/up's
# packages (lab/README.md), libnfs-utils, smbclient, iperf3 and python3. Everything it makes
# (the lab, iperf3's server, the scratch folder) is removed on every exit, also on Ctrl-C.

set -euo pipefail

PROG=protocols
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=bench/lib.sh
source "$SCRIPT_DIR/lib.sh"
ROOT=$(cd "$SCRIPT_DIR/.." && pwd)

# The comment block at the top, without its first line.
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; }

LINK=100mbit SIZE=64m RECORD=1m REPEATS=3 IPERF_SECONDS=5 DEPTHS_ARG=1,8,32 ACCESS_DURATION=5s ACCESS=1
while [[ $# -gt 0 ]]; do
    case $1 in
    --link) need_value "$@"; LINK=$2; shift 2 ;;
    --size) need_value "$@"; SIZE=$2; shift 2 ;;
    --record) need_value "$@"; RECORD=$2; shift 2 ;;
    --repeats) need_value "$@"; REPEATS=$2; shift 2 ;;
    --iperf-seconds) need_value "$@"; IPERF_SECONDS=$2; shift 2 ;;
    --depths) need_value "$@"; DEPTHS_ARG=$2; shift 2 ;;
    --access-duration) need_value "$@"; ACCESS_DURATION=$2; shift 2 ;;
    --no-access) ACCESS=0; shift ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
    esac
done
case $LINK in 100mbit | 1gbit | none) ;; *) die "--link '$LINK': choose 100mbit, 1gbit or none" ;; esac
[[ $REPEATS =~ ^[1-9][0-9]*$ ]] || die "--repeats '$REPEATS' is not a positive whole number"
[[ $IPERF_SECONDS =~ ^[1-9][0-9]*$ ]] || die "--iperf-seconds '$IPERF_SECONDS' is not a positive whole number"
SIZE_BYTES=$(to_bytes "$SIZE" --size)
RECORD_BYTES=$(to_bytes "$RECORD" --record)
((RECORD_BYTES <= SIZE_BYTES)) || die "--record $RECORD is larger than --size $SIZE"
((SIZE_BYTES % RECORD_BYTES == 0)) || die "--size $SIZE is not a whole number of --record $RECORD"
ACCESS_SECS=$(to_seconds "$ACCESS_DURATION" --access-duration)
((ACCESS_SECS >= 1)) || die "--access-duration must be at least 1 second"
IFS=, read -r -a depth_list <<<"$DEPTHS_ARG"
DEPTHS=()
for d in "${depth_list[@]}"; do
    d=$(whole_number "$d" "--depths entry" 1)
    ((d <= 64)) || die "--depths entry $d: iomatrix goes up to 64 on a server"
    DEPTHS+=("$d")
done
((${#DEPTHS[@]} > 0)) || die "--depths is empty"
[[ $(id -u) == 0 ]] || die "needs root (lab/up makes a network namespace and a veth)"
for tool in nfs-cp smbclient iperf3 python3; do
    command -v "$tool" >/dev/null || die "needs $tool (Debian: apt-get install libnfs-utils smbclient iperf3 python3)"
done

IOMATRIX=${IOMATRIX:-$ROOT/target/release/iomatrix}
[[ -x $IOMATRIX ]] || (cd "$ROOT" && cargo build --release -q) || die "cannot build iomatrix"

SCRATCH=$(mktemp -d /tmp/iomatrix-protocols.XXXXXX)
chmod 755 "$SCRATCH" # smbd serves the share (inside it) as smbtest, who must get through
LAB_STATE=$SCRATCH/lab IPERF_SERVER=""
remove_what_we_made() {
    local rc=0
    if [[ -n $IPERF_SERVER ]]; then
        kill "$IPERF_SERVER" 2>/dev/null || true
        wait "$IPERF_SERVER" 2>/dev/null || true
    fi
    if [[ -f $LAB_STATE/state ]]; then
        timeout 120 "$ROOT/lab/down" --state "$LAB_STATE" >/dev/null 2>"$SCRATCH/lab-down.err" || {
            printf '%s: lab/down failed: %s\n' "$PROG" "$(tail -3 "$SCRATCH/lab-down.err")" >&2
            return 1
        }
    fi
    rm -rf -- "$SCRATCH" || rc=1
    return "$rc"
}

# The lab: Samba and nfs-ganesha behind the (shaped) veth.
run_child 180 "$SCRATCH/lab.env" "$SCRATCH/lab-up.err" "$ROOT/lab/up" --link "$LINK" --state "$LAB_STATE" smb nfs \
    || die "lab/up failed: $(tail -5 "$SCRATCH/lab-up.err")"
set -a
# shellcheck disable=SC1091
source "$SCRATCH/lab.env"
set +a
export IOMATRIX_SMB_PASSWORD_FILE=$IOMATRIX_LAB_SMB_PASSWORD_FILE
SMB_AUTH=(env USER=smbtest PASSWD_FILE="$IOMATRIX_LAB_SMB_PASSWORD_FILE")
DATA=$SCRATCH/data BACK=$SCRATCH/back RESULTS=$SCRATCH/results.txt ACCESS_RESULTS=$SCRATCH/access.tsv
: >"$RESULTS"
: >"$ACCESS_RESULTS"
# Random data, so that nothing on the way can compress it; made before anything is timed.
head -c "$SIZE_BYTES" /dev/urandom >"$DATA"

now_ns() { date +%s%N; }

# kib_per_sec BYTES START_NS END_NS
kib_per_sec() { python3 -c 'import sys; b, s, e = map(int, sys.argv[1:]); print(f"{b / 1024 / ((e - s) / 1e9):.0f}")' "$@"; }

# iomatrix_run PROTO URL R: "PROTO-builtin write|read KiB/s" lines from one run of the iozone suite.
iomatrix_run() {
    local proto=$1 url=$2 r=$3 out=$SCRATCH/iomatrix.json err=$SCRATCH/iomatrix.err
    run_child 1800 "$out" "$err" "$IOMATRIX" --db "$SCRATCH/results.sqlite" run iozone --target "$url" \
        --files "$SIZE" --records "$RECORD" --tests write,read --json \
        || die "iomatrix over $url failed (repeat $r): $(tail -3 "$err")"
    python3 - "$out" "$proto" "$SIZE_BYTES" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))
for c in run["run"]["cell_results"]:
    assert c["bytes"] == int(sys.argv[3]), f"{c['test']} moved {c['bytes']} bytes, not the file size"
    print(f"{sys.argv[2]}-builtin {c['test']} {c['kib_per_sec']:.0f}")
PY
}

# nfs_cp R: nfs-cp's put and get of the file, timed around each command (a mount and a lookup
# included: a few milliseconds against seconds of transfer).
nfs_cp() {
    local r=$1 remote=$IOMATRIX_LAB_NFS/protocols-$1.bin start end
    start=$(now_ns)
    run_child 1800 /dev/null "$SCRATCH/nfs-cp.err" nfs-cp "$DATA" "$remote" \
        || die "nfs-cp put failed (repeat $r): $(tail -3 "$SCRATCH/nfs-cp.err")"
    end=$(now_ns)
    echo "nfs-cp write $(kib_per_sec "$SIZE_BYTES" "$start" "$end")"
    rm -f "$BACK"
    start=$(now_ns)
    run_child 1800 /dev/null "$SCRATCH/nfs-cp.err" nfs-cp "$remote" "$BACK" \
        || die "nfs-cp get failed (repeat $r): $(tail -3 "$SCRATCH/nfs-cp.err")"
    end=$(now_ns)
    cmp -s "$DATA" "$BACK" || die "nfs-cp read back something else than it wrote (repeat $r)"
    echo "nfs-cp read $(kib_per_sec "$SIZE_BYTES" "$start" "$end")"
}

# smbclient_run R: smbclient's own average rates (KiB/s over the transfer) for put and get.
smbclient_run() {
    local r=$1 out=$SCRATCH/smbclient.out
    rm -f "$BACK"
    run_child 1800 "$out" "$out.err" "${SMB_AUTH[@]}" smbclient "//$IOMATRIX_LAB_SERVER/share" \
        -c "put $DATA protocols-$r.bin; get protocols-$r.bin $BACK; rm protocols-$r.bin" \
        || die "smbclient failed (repeat $r): $(tail -3 "$out" "$out.err")"
    cmp -s "$DATA" "$BACK" || die "smbclient read back something else than it wrote (repeat $r)"
    python3 - "$out" <<'PY'
import re, sys
text = open(sys.argv[1]).read() + open(sys.argv[1] + ".err").read()
put = re.search(r"putting file .*? \(([0-9.]+) kb/s\)", text)
get = re.search(r"getting file .*? \(([0-9.]+) KiloBytes/sec\)", text)
assert put and get, f"no rates in smbclient's output: {text}"
print(f"smbclient write {float(put.group(1)):.0f}")
print(f"smbclient read {float(get.group(1)):.0f}")
PY
}

# iperf_run R: iperf3's received payload rate each way, with a one-off server in the lab's namespace.
iperf_run() {
    local r=$1 direction flag out=$SCRATCH/iperf.json tries measured
    for direction in write read; do
        flag=()
        [[ $direction == read ]] && flag=(-R)
        ip netns exec "$IOMATRIX_LAB_NETNS" iperf3 -s -1 -B "$IOMATRIX_LAB_SERVER" >/dev/null 2>&1 &
        IPERF_SERVER=$!
        measured=0
        # The server needs a moment to listen: until then the client is refused at once.
        for ((tries = 0; tries < 50; tries++)); do
            # iperf3 -J exits 0 also when refused: its JSON then holds "error" and an empty "end".
            if run_child $((IPERF_SECONDS + 30)) "$out" "$SCRATCH/iperf.err" \
                iperf3 -c "$IOMATRIX_LAB_SERVER" -t "$IPERF_SECONDS" -J "${flag[@]}" &&
                python3 -c 'import json, sys; sys.exit("sum_received" not in json.load(open(sys.argv[1]))["end"])' "$out"; then
                measured=1
                break
            fi
            sleep 0.1
        done
        kill "$IPERF_SERVER" 2>/dev/null || true # gone already after its one test, unless the client failed
        wait "$IPERF_SERVER" 2>/dev/null || true
        IPERF_SERVER=""
        ((measured)) || die "iperf3 failed (repeat $r): $(tail -3 "$SCRATCH/iperf.err" "$out")"
        python3 - "$out" "$direction" <<'PY'
import json, sys
end = json.load(open(sys.argv[1]))["end"]
print(f"iperf3 {sys.argv[2]} {end['sum_received']['bits_per_second'] / 8 / 1024:.0f}")
PY
    done
}

# access_run PROTO URL R: the random 4 KiB cells (reads, then writes, at each depth) in one run
# of the access suite over the built-in client; each cell's figures go to ACCESS_RESULTS
# ("R<TAB>case<TAB>iomatrix<TAB>IOPS<TAB>p99 ns<TAB>mean ns<TAB>timed s") and, as progress, to
# stderr. Prints nothing on stdout: these figures are not the streaming table's.
access_run() {
    local proto=$1 url=$2 r=$3 out=$SCRATCH/access.json err=$SCRATCH/access.err
    local limit=$((2 * ${#DEPTHS[@]} * (ACCESS_SECS + 60) + 1800))
    run_child "$limit" "$out" "$err" "$IOMATRIX" --db "$SCRATCH/results.sqlite" run access --target "$url" \
        --bs 4k --read 100,0 --random 100 --qd "$(IFS=,; echo "${DEPTHS[*]}")" --file-size "$SIZE_BYTES" \
        --duration "${ACCESS_SECS}s" --json \
        || die "iomatrix run access over $url failed (repeat $r): $(tail -3 "$err")"
    python3 - "$out" "$proto" "$r" "$ACCESS_SECS" "$SIZE_BYTES" "${DEPTHS[@]}" >>"$ACCESS_RESULTS" <<'PY' ||
import json, sys
path, proto, rep, secs, size = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
depths = [int(d) for d in sys.argv[6:]]
run = json.load(open(path))["run"]
seen = set()
for c in run["cell_results"]:
    m = c["metrics"]
    rw = {100: "read", 0: "write"}[m["read_percent"]]
    other = {"read": "write", "write": "read"}[rw]
    qd = m["queue_depth"]
    where = "%s:// rand%s qd%d" % (proto, rw, qd)
    if (c["record_size"], c["file_size"], m["random_percent"]) != (4096, size, 100):
        sys.exit("%s: cell ran record %s, file %s, random %s%%" % (where, c["record_size"], c["file_size"], m["random_percent"]))
    if m[rw]["count"] == 0 or m[other]["count"] != 0 or c["ops"] != m[rw]["count"]:
        sys.exit("%s: %d %ss and %d %ss" % (where, m[rw]["count"], rw, m[other]["count"], other))
    if c["wall_ns"] < 0.9e9 * secs:
        sys.exit("%s: ran %.3f s, expected about %d s" % (where, c["wall_ns"] / 1e9, secs))
    seen.add((rw, qd))
    line = "%s\t%s\tiomatrix\t%.0f\t%d\t%.0f\t%.3f" % (rep, where, m["iops"], m[rw]["p99_ns"], m[rw]["mean_ns"], c["wall_ns"] / 1e9)
    print(line)
    print("%s %s: %.0f IOPS, p99 %.1f us" % (rep, where, m["iops"], m[rw]["p99_ns"] / 1000), file=sys.stderr)
missing = {(rw, d) for rw in ("read", "write") for d in depths} - seen
if missing:
    sys.exit("cells missing from the run: %s" % sorted(missing))
remote = run["conditions"].get("remote") or {}
# As iomatrix's conditions report them (SMB: the cipher and signing negotiated).
print("%s %s:// session (iomatrix's conditions): %s" % (rep, proto, ", ".join("%s=%s" % (k, remote[k]) for k in
      ("version", "encryption", "signing", "write_stability") if k in remote)), file=sys.stderr)
PY
        die "iomatrix run access over $url (repeat $r): its output is not as expected (above)"
}

STEPS=(nfs_builtin nfs_cp smb_builtin smbclient_run iperf_run)
((ACCESS)) && STEPS+=(nfs_access smb_access)
nfs_builtin() { iomatrix_run nfs "$IOMATRIX_LAB_NFS" "$1"; }
smb_builtin() { iomatrix_run smb "$IOMATRIX_LAB_SMB" "$1"; }
nfs_access() { access_run nfs "$IOMATRIX_LAB_NFS" "$1"; }
smb_access() { access_run smb "$IOMATRIX_LAB_SMB" "$1"; }

printf '%s: link %s, server %s (nfs-ganesha NFSv3, Samba %s), file %s, records %s, %s repeats\n' "$PROG" "$LINK" \
    "$IOMATRIX_LAB_SERVER" "$(smbd --version 2>/dev/null | awk '{print $2}')" "$SIZE" "$RECORD" "$REPEATS" >&2
for ((r = 0; r < REPEATS; r++)); do
    for ((s = 0; s < ${#STEPS[@]}; s++)); do
        step=${STEPS[$(((s + r) % ${#STEPS[@]}))]}
        # Into a file, not a pipe: a step that dies ends the script, and its iperf3 server stays known to the clean-up.
        "$step" "$r" >"$SCRATCH/step.txt"
        sed "s/^/$r /" "$SCRATCH/step.txt" | tee -a "$RESULTS" >&2
    done
done

python3 - "$RESULTS" "$LINK" "$SIZE" "$RECORD" "$REPEATS" <<'PY'
import statistics, sys
path, link, size, record, repeats = sys.argv[1:]
runs = {}
for line in open(path):
    _, tool, test, kib = line.split()
    runs.setdefault((tool, test), []).append(float(kib))
med = {k: statistics.median(v) for k, v in runs.items()}
print(f"\nmedians of {repeats} repeats, KiB/s; link {link}, file {size}, records {record}")
print(f"{'':26}{'write':>12}{'read':>12}")
for tool in ("nfs-builtin", "nfs-cp", "smb-builtin", "smbclient", "iperf3"):
    label = {"nfs-builtin": "iomatrix nfs:// (built-in)", "smb-builtin": "iomatrix smb:// (built-in)",
             "iperf3": "iperf3 (link payload)"}.get(tool, tool)
    print(f"{label:26}" + "".join(f"{med[(tool, t)]:12.0f}" for t in ("write", "read")))
print("\nratios (of the medians)")
for a, b, label in (("nfs-builtin", "nfs-cp", "built-in NFS / nfs-cp"),
                    ("smb-builtin", "smbclient", "built-in SMB / smbclient"),
                    ("nfs-builtin", "iperf3", "built-in NFS / link (iperf3)"),
                    ("smb-builtin", "iperf3", "built-in SMB / link (iperf3)"),
                    ("nfs-cp", "iperf3", "nfs-cp / link (iperf3)"),
                    ("smbclient", "iperf3", "smbclient / link (iperf3)")):
    print(f"{label:30}" + "".join(f"{med[(a, t)] / med[(b, t)]:12.2f}" for t in ("write", "read")))
PY

if ((ACCESS)); then
    echo
    echo "random 4 KiB, iomatrix's built-in clients: medians of $REPEATS repeats; link $LINK, file $SIZE, ${ACCESS_SECS}s per cell"
    echo "(no peer column: nfs-cp and smbclient copy whole files and have no random 4 KiB mode)"
    median_table "$ACCESS_RESULTS" iomatrix "" iomatrix
fi
