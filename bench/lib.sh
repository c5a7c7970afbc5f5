# shellcheck shell=bash
# What the bench scripts share: messages, argument checks, sizes, a bounded child process that
# a signal can stop, and clean-up on every way out. Source it after setting PROG, then define
# remove_what_we_made: it removes everything the script made and returns non-zero when
# something stayed behind. It runs once, on exit, Ctrl-C (exit 130) or SIGTERM (exit 143),
# after the running child is stopped; a second Ctrl-C meanwhile is ignored so that nothing
# stays mounted.

CHILD="" # the process running now

die() {
    printf '%s: %s\n' "$PROG" "$*" >&2
    exit 1
}

warn() {
    printf '%s: warning: %s\n' "$PROG" "$*" >&2
}

# need_value FLAG [VALUE]: a flag that takes a value got one.
need_value() {
    [[ $# -ge 2 && -n $2 ]] || die "$1 needs a value (see --help)"
}

# to_bytes TEXT [WHAT]: a whole number with an optional k/m/g/t (also kb/kib, any case) or b,
# 1024-based, as iomatrix, fio and bonnie++ read sizes; printed as bytes.
to_bytes() {
    local text=$1 what=${2:-size} number unit
    if [[ ! $text =~ ^([0-9]+)(([kKmMgGtT]([iI]?[bB])?)|[bB])?$ ]]; then
        die "$what '$text' is not a size: write a whole number with an optional k, m, g or t (e.g. 64k, 256m, 1g)"
    fi
    number=$((10#${BASH_REMATCH[1]}))
    unit=${BASH_REMATCH[2]:0:1}
    case ${unit,,} in
    "" | b) echo "$number" ;;
    k) echo $((number << 10)) ;;
    m) echo $((number << 20)) ;;
    g) echo $((number << 30)) ;;
    t) echo $((number << 40)) ;;
    esac
}

# run_child LIMIT OUT ERR CMD...: runs CMD with stdout to OUT and stderr to ERR, for at most
# LIMIT seconds (0: no limit), in the background so that a signal reaches the trap at once (the
# trap then stops the child). Returns the child's status (124 when it ran out of time).
run_child() {
    local limit=$1 out=$2 err=$3 rc=0
    shift 3
    timeout --kill-after=10 "$limit" "$@" >"$out" 2>"$err" &
    CHILD=$!
    wait "$CHILD" || rc=$?
    CHILD=""
    return "$rc"
}

# unmount MNT: unmounts MNT if mounted, retrying for 5 s while it is busy; non-zero (with a
# message) when it is still mounted.
unmount() {
    local mnt=$1 tries
    mountpoint -q -- "$mnt" || return 0
    for ((tries = 0; tries < 10; tries++)); do
        umount -- "$mnt" 2>/dev/null && return 0
        sleep 0.5
    done
    mountpoint -q -- "$mnt" || return 0
    printf '%s: could not unmount %s; unmount it by hand\n' "$PROG" "$mnt" >&2
    return 1
}

# remove_image DIR MNT IMAGE: unmounts the loop-mounted IMAGE at MNT, waits for its loop device
# to go (mount -o loop sets autoclear: the kernel detaches it after the unmount, asynchronously;
# only if that has not happened after 5 s is it detached here) and removes DIR, which holds
# both. Non-zero (with a message) when something stays.
remove_image() {
    local dir=$1 mnt=$2 image=$3 tries dev
    if [[ -n $mnt ]] && ! unmount "$mnt"; then
        printf '%s: remove %s by hand once it is unmounted\n' "$PROG" "$dir" >&2
        return 1
    fi
    if [[ -n $image ]]; then
        for ((tries = 0; tries < 50; tries++)); do
            [[ -z $(losetup -n -O NAME -l -j "$image" 2>/dev/null) ]] && break
            sleep 0.1
        done
        for dev in $(losetup -n -O NAME -l -j "$image" 2>/dev/null); do
            losetup -d "$dev" 2>/dev/null || true
        done
        if [[ -n $(losetup -n -O NAME -l -j "$image" 2>/dev/null) ]]; then
            printf '%s: a loop device still holds %s: %s\n' "$PROG" "$image" \
                "$(losetup -l -j "$image" 2>/dev/null | tr '\n' ' ')" >&2
            return 1
        fi
    fi
    rm -rf -- "$dir"
}

on_exit() {
    local rc=$?
    trap '' INT TERM
    if [[ -n $CHILD ]]; then
        kill -TERM "$CHILD" 2>/dev/null || true
        wait "$CHILD" 2>/dev/null || true
        CHILD=""
    fi
    if declare -F remove_what_we_made >/dev/null; then
        remove_what_we_made || rc=1
    fi
    exit "$rc"
}

on_signal() {
    printf '\n%s: interrupted, cleaning up\n' "$PROG" >&2
    exit "$1"
}

trap on_exit EXIT
trap 'on_signal 130' INT
trap 'on_signal 143' TERM
