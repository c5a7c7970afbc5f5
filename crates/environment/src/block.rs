//! The block device under a mount, described from sysfs.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::mount::MountEntry;

/// A block device as the kernel names it, with the facts that shape I/O.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BlockDevice {
    /// Kernel name, e.g. "vda", "loop0", "loop0p1", "sda1".
    pub name: String,
    /// The device number's major part (`/sys/dev/block/M:m`).
    pub major: u32,
    /// The device number's minor part.
    pub minor: u32,
    /// `/sys/dev/block/M:m/partition` exists.
    pub is_partition: bool,
    /// Whole-disk name for a partition ("loop0" for "loop0p1").
    pub parent: Option<String>,
    /// `/sys/dev/block/M:m/start`, in 512-byte sectors, for partitions.
    pub start_sector: Option<u64>,
    /// For a partition, [`partition_alignment`] of its start; None for a
    /// whole disk.
    pub alignment_bytes: Option<u64>,
    /// `queue/logical_block_size` of the disk.
    pub logical_block_size: Option<u64>,
    /// `queue/physical_block_size` of the disk.
    pub physical_block_size: Option<u64>,
    /// `queue/rotational` of the disk.
    pub rotational: Option<bool>,
    /// `loop/backing_file` for a loop device (of the parent for a loop
    /// partition).
    pub backing_file: Option<String>,
    /// `queue/scheduler`: the one in use (the bracketed name), e.g. "mq-deadline", "none".
    #[serde(default)]
    pub scheduler: Option<String>,
    /// `queue/read_ahead_kb` of the disk.
    #[serde(default)]
    pub read_ahead_kb: Option<u64>,
    /// `queue/nr_requests`: how many requests the queue holds.
    #[serde(default)]
    pub nr_requests: Option<u64>,
    /// `queue/max_sectors_kb`: the largest request the kernel sends the disk.
    #[serde(default)]
    pub max_sectors_kb: Option<u64>,
}

const ONE_MIB: u64 = 1 << 20;

/// Alignment of a partition start given in 512-byte sectors: the largest
/// power of two dividing `start_sector * 512`, capped at 1 MiB (so 1 MiB
/// means "aligned to 1 MiB or better"). 2048 -> 1 MiB, 63 -> 512, 0 -> 1 MiB.
pub fn partition_alignment(start_sector: u64) -> u64 {
    if start_sector == 0 {
        return ONE_MIB;
    }
    // start_sector * 512 has trailing_zeros(start_sector) + 9 zero bits;
    // counting bits avoids overflowing the multiplication.
    let shift = start_sector.trailing_zeros() + 9;
    if shift >= ONE_MIB.trailing_zeros() {
        ONE_MIB
    } else {
        1 << shift
    }
}

const SYS_DEV_BLOCK: &str = "/sys/dev/block";

/// The block device behind a mount: its `major:minor` if sysfs knows it,
/// else the device named by a `/dev/...` source (btrfs reports an
/// anonymous device number in mountinfo). None for device-less mounts.
pub(crate) fn for_mount(entry: &MountEntry) -> Option<BlockDevice> {
    if entry.major != 0 {
        if let Some(dev) = describe(entry.major, entry.minor) {
            return Some(dev);
        }
    }
    let (major, minor) = dev_of_source(&entry.source)?;
    describe(major, minor)
}

/// `major:minor` of a `/dev/X` mount source, following symlinks such as
/// `/dev/mapper/x` or `/dev/disk/by-uuid/...`.
fn dev_of_source(source: &str) -> Option<(u32, u32)> {
    if !source.starts_with("/dev/") {
        return None;
    }
    let real = std::fs::canonicalize(source).unwrap_or_else(|_| PathBuf::from(source));
    let name = real.file_name()?.to_str()?;
    let text = std::fs::read_to_string(Path::new("/sys/class/block").join(name).join("dev")).ok()?;
    parse_dev_numbers(&text)
}

/// `"259:3\n"` -> (259, 3).
pub(crate) fn parse_dev_numbers(text: &str) -> Option<(u32, u32)> {
    let (major, minor) = text.trim().split_once(':')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

/// Describe `/sys/dev/block/M:m`, or None if sysfs has no such device.
pub(crate) fn describe(major: u32, minor: u32) -> Option<BlockDevice> {
    let link = Path::new(SYS_DEV_BLOCK).join(format!("{major}:{minor}"));
    // The link's target ends in the kernel name; a partition's directory
    // sits inside its disk's directory.
    let dir = std::fs::canonicalize(&link).ok()?;
    let name = dir.file_name()?.to_string_lossy().into_owned();
    let is_partition = dir.join("partition").exists();
    let disk_dir = if is_partition { dir.parent()? } else { &dir };
    let parent = is_partition.then(|| disk_dir.file_name().map(|n| n.to_string_lossy().into_owned())).flatten();
    let start_sector = if is_partition { read_u64(&dir.join("start")) } else { None };
    let queue = disk_dir.join("queue");
    Some(BlockDevice {
        name,
        major,
        minor,
        is_partition,
        parent,
        start_sector,
        alignment_bytes: start_sector.map(partition_alignment),
        logical_block_size: read_u64(&queue.join("logical_block_size")),
        physical_block_size: read_u64(&queue.join("physical_block_size")),
        rotational: read_u64(&queue.join("rotational")).map(|v| v != 0),
        backing_file: read_trimmed(&disk_dir.join("loop").join("backing_file")),
        scheduler: read_trimmed(&queue.join("scheduler")).map(|s| scheduler_in_use(&s)),
        read_ahead_kb: read_u64(&queue.join("read_ahead_kb")),
        nr_requests: read_u64(&queue.join("nr_requests")),
        max_sectors_kb: read_u64(&queue.join("max_sectors_kb")),
    })
}

/// sysfs lists every scheduler and brackets the one in use ("mq-deadline [none]");
/// a single name without brackets is the one in use.
pub(crate) fn scheduler_in_use(text: &str) -> String {
    match (text.find('['), text.find(']')) {
        (Some(l), Some(r)) if l < r => text[l + 1..r].to_string(),
        _ => text.trim().to_string(),
    }
}

fn read_trimmed(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let text = text.trim_end_matches('\n');
    (!text.is_empty()).then(|| text.to_string())
}

fn read_u64(path: &Path) -> Option<u64> {
    read_trimmed(path)?.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scheduler_in_use_is_the_bracketed_one() {
        assert_eq!(scheduler_in_use("mq-deadline kyber [bfq] none"), "bfq");
        assert_eq!(scheduler_in_use("[none] mq-deadline"), "none");
        assert_eq!(scheduler_in_use("none"), "none");
    }

    #[test]
    fn alignment_of_common_starts() {
        assert_eq!(partition_alignment(2048), ONE_MIB);
        assert_eq!(partition_alignment(4096), ONE_MIB);
        assert_eq!(partition_alignment(63), 512);
        assert_eq!(partition_alignment(0), ONE_MIB);
        assert_eq!(partition_alignment(1), 512);
        assert_eq!(partition_alignment(8), 4096);
        assert_eq!(partition_alignment(1024), 512 * 1024);
        assert_eq!(partition_alignment(2048 + 8), 4096);
        assert_eq!(partition_alignment(u64::MAX), 512);
        assert_eq!(partition_alignment(1 << 63), ONE_MIB);
    }

    #[test]
    fn dev_numbers() {
        assert_eq!(parse_dev_numbers("259:3\n"), Some((259, 3)));
        assert_eq!(parse_dev_numbers("7:0"), Some((7, 0)));
        assert_eq!(parse_dev_numbers("7"), None);
        assert_eq!(parse_dev_numbers("a:b"), None);
    }

    #[test]
    fn unknown_device_is_none() {
        // Major 0 is the anonymous-device range: never a block device.
        assert_eq!(describe(0, 1_000_000), None);
        assert_eq!(dev_of_source("tmpfs"), None);
        assert_eq!(dev_of_source("/dev/definitely-not-a-device"), None);
    }
}
