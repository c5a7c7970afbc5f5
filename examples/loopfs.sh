#!/usr/bin/env bash
# loopfs.sh: file systems on image files, loop-mounted, for the study examples' setup and teardown.
# Every command may be run again: it does what is still to do, so a study that resumes after a kill
# finds its file systems (and the files its earlier steps left on them) as they were.
#
#   loopfs.sh ensure IMAGE SIZE FSTYPE MNT [--options OPTS] [--partition-start SECTOR]
#       Makes IMAGE (SIZE bytes, k/m/g suffixes as truncate takes them) with FSTYPE on it if it is
#       not there, then mounts it at MNT with OPTS. With --partition-start the image gets a partition
#       table with one partition starting at that 512-byte sector (63: the old DOS default, not 4 KiB
#       aligned; 2048: 1 MiB aligned) and the file system lives in the partition, so the run's
#       environment records the partition's alignment. Mounted already with other options: remounted
#       from scratch (umount, mount), as options like delalloc cannot change on remount.
#   loopfs.sh release MNT
#       Unmounts MNT (if mounted) and detaches its loop device.
#   loopfs.sh remove DIR
#       Releases every mount under DIR, then removes DIR.
#
# Needs root, util-linux (mount, losetup, partx), fdisk (sfdisk) for partitions, and the mkfs of
# FSTYPE. A loop device it attached is detached again if it fails half-way.
set -euo pipefail

die() { echo "loopfs.sh: $*" >&2; exit 2; }
(($# >= 1)) || die "usage: loopfs.sh ensure|release|remove ..."
((EUID == 0)) || die "needs root (losetup, mount)"

# The loop device (whole disk) behind a mount, if any.
loop_of() {
  local src
  src=$(findmnt -no SOURCE -- "$1" 2>/dev/null || true)
  [[ $src =~ ^(/dev/loop[0-9]+) ]] && echo "${BASH_REMATCH[1]}"
  return 0
}

# The first partition of loop device $1, waiting for the kernel's scan; where the kernel does not
# scan DOS tables (or no udev makes the node), `partx -a` adds it.
first_partition() {
  local part=${1}p1
  for _ in $(seq 20); do [[ -b $part ]] && { echo "$part"; return 0; }; sleep 0.1; done
  partx -a -- "$1" >/dev/null 2>&1 || true
  for _ in $(seq 50); do [[ -b $part ]] && { echo "$part"; return 0; }; sleep 0.1; done
  echo "loopfs.sh: partition $part never appeared" >&2
  return 1
}

# mkfs of FSTYPE on $2, quietly and without asking.
make_fs() {
  case $1 in
  xfs | btrfs) "mkfs.$1" -q -f -- "$2" >/dev/null ;;
  *) "mkfs.$1" -q -F -- "$2" >/dev/null ;;
  esac
}

ATTACHED="" # a loop device this run attached and has not handed to a mount yet
trap '[[ -z $ATTACHED ]] || losetup -d "$ATTACHED" 2>/dev/null || true' EXIT

release() {
  local mnt=$1 loop
  mountpoint -q -- "$mnt" || return 0
  loop=$(loop_of "$mnt")
  umount -- "$mnt"
  # mount -o loop sets autoclear; a device made with losetup -P must be detached.
  [[ -z $loop ]] || ! losetup -- "$loop" >/dev/null 2>&1 || losetup -d "$loop" 2>/dev/null || true
}

case $1 in
ensure)
  shift
  (($# >= 4)) || die "usage: loopfs.sh ensure IMAGE SIZE FSTYPE MNT [--options OPTS] [--partition-start SECTOR]"
  image=$1 size=$2 fstype=$3 mnt=$4
  shift 4
  options="" start=""
  while (($#)); do
    case $1 in
    --options) options=$2; shift 2 ;;
    --partition-start) start=$2; shift 2 ;;
    *) die "unknown argument '$1'" ;;
    esac
  done
  command -v "mkfs.$fstype" >/dev/null || die "mkfs.$fstype not found"
  mkdir -p -- "$(dirname -- "$image")" "$mnt"
  if [[ ! -e $image ]]; then
    truncate -s "$size" -- "$image.new"
    if [[ -n $start ]]; then
      command -v sfdisk >/dev/null || die "sfdisk not found (Debian: apt-get install fdisk)"
      echo "start=$start, type=83" | sfdisk --quiet --label dos -- "$image.new" >/dev/null
      ATTACHED=$(losetup -P -f --show -- "$image.new")
      make_fs "$fstype" "$(first_partition "$ATTACHED")"
      losetup -d "$ATTACHED"
      ATTACHED=""
    else
      make_fs "$fstype" "$image.new"
    fi
    mv -- "$image.new" "$image"
  fi
  if mountpoint -q -- "$mnt"; then
    have=$(findmnt -no OPTIONS -- "$mnt")
    wanted_in=1
    IFS=, read -r -a opts <<<"$options"
    for o in "${opts[@]}"; do [[ ,$have, == *,$o,* ]] || wanted_in=0; done
    ((wanted_in)) && exit 0
    release "$mnt"
  fi
  if [[ -n $start ]]; then
    ATTACHED=$(losetup -P -f --show -- "$image")
    mount ${options:+-o "$options"} -- "$(first_partition "$ATTACHED")" "$mnt"
    ATTACHED="" # the mount holds it now; release detaches it
  else
    mount -o "loop${options:+,$options}" -- "$image" "$mnt"
  fi
  ;;
release)
  (($# == 2)) || die "usage: loopfs.sh release MNT"
  release "$2"
  ;;
remove)
  (($# == 2)) || die "usage: loopfs.sh remove DIR"
  [[ -d $2 ]] || exit 0
  dir=$(realpath -- "$2")
  # Deepest first.
  findmnt -rn -o TARGET | awk -v d="$dir/" 'index($0 "/", d) == 1' | sort -r | while read -r m; do release "$m"; done
  rm -rf -- "$dir"
  ;;
*) die "unknown command '$1': ensure, release or remove" ;;
esac
