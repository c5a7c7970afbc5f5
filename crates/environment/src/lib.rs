//! iomatrix-environment records the machine and the target a benchmark ran
//! on, so every stored result carries its conditions.
//!
//! Main types: [`Environment`] (host, kernel, OS, CPU, memory and the
//! target), [`TargetInfo`] (the target directory's mount, file system and
//! space), [`BlockDevice`] (the device under that mount, from sysfs) and
//! [`Space`]; [`DeviceIdentity`], what proves a raw device the same one, and
//! [`refuse_if_in_use`], what refuses one whose blocks are in use. Entry points: [`capture`], [`space`], [`machine_ram_bytes`]
//! [`capture_device`] (a raw block device as target) and [`partition_alignment`];
//! [`HostEnvironment`] ([`capture_host`]): one MPI rank's host, with the interface its traffic
//! takes; [`ServerDescription`]: a file server described in `key=value` lines;
//! [`SystemLimits`]: the threads, memory and address space this process may
//! still take, read before a run starts any.
//!
//! Linux only: facts come from `uname(2)`, `/proc`, `/etc/os-release`,
//! `statvfs(3)` and `/sys/dev/block`. A fact that cannot be read becomes
//! "unknown", 0 or `None`; only a target that cannot be resolved or
//! statted is an error.

#![warn(missing_docs)]

mod addresses;
mod block;
mod device;
mod host;
mod limits;
pub mod load;
mod machine;
mod mount;
mod server;
mod space;
pub mod stored;

use std::path::Path;

use serde::{Deserialize, Serialize};

pub use addresses::ipv4_addresses;
pub use block::{partition_alignment, BlockDevice};
pub use device::{refuse_if_in_use, DeviceIdentity, InUse, LoopBacking, PartitionOf};
pub use host::{capture_host, nic_toward, FolderFacts, HostEnvironment, Nic, NOT_SHAPED};
pub use limits::{SystemLimits, Used};
pub use load::{BusyThresholds, DiskCounters, IoLedger, LoadReading, MachineLoad, Settle};
pub use machine::{machine_ram_bytes, Machine};
pub use server::{parse_description, DescriptionError, ServerDescription, RAM_KEY};
pub use space::{space, Space};

/// The machine a benchmark ran on and the target it ran against.
/// Serialised flat: the machine's fields sit beside `target`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Environment {
    /// The machine's facts: host, kernel, OS, CPU and memory.
    #[serde(flatten)]
    pub machine: Machine,
    /// The target folder, its mount and the device under it.
    pub target: TargetInfo,
}

/// The target directory and the mount holding it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetInfo {
    /// Canonical absolute path of the target directory, or of the raw block
    /// device ([`capture_device`]).
    pub path: String,
    /// The mount containing it: the longest mount point in
    /// `/proc/self/mountinfo` that is a component-wise prefix of `path`.
    pub mount_point: String,
    /// e.g. "tmpfs", "ext4", "xfs", "fuse.sshfs".
    pub fs_type: String,
    /// e.g. "/dev/loop0", "tmpfs".
    pub mount_source: String,
    /// Per-mount options and super options joined with a comma, as in
    /// mountinfo (e.g. "rw,relatime,rw,errors=remount-ro").
    pub mount_options: String,
    /// statvfs `f_blocks * f_frsize`.
    pub total_bytes: u64,
    /// statvfs `f_bavail * f_frsize`: what an unprivileged writer may use.
    pub free_bytes: u64,
    /// None for tmpfs, fuse and other device-less mounts.
    pub block_device: Option<BlockDevice>,
    /// A raw block device target's identity ([`capture_device`]), by which `rerun` proves it
    /// writes the same device; absent for folders, servers and runs stored before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_identity: Option<DeviceIdentity>,
}

const UNKNOWN: &str = "unknown";

/// Capture everything for a target directory. Errors only if the path does
/// not exist or cannot be statted; any machine fact that cannot be read
/// becomes "unknown"/0/None rather than an error.
pub fn capture(target: &Path) -> std::io::Result<Environment> {
    Ok(Environment { machine: machine::read(), target: target_info(target)? })
}

/// Everything for a raw block device used as the target: `fs_type` is
/// "raw block device", the mount fields are empty, and total and free bytes
/// are the device's size (all of it is the benchmark's to write). `size` is
/// the device's size as the caller measured it on its open descriptor.
pub fn capture_device(device: &Path, size: u64) -> std::io::Result<Environment> {
    use std::os::unix::fs::MetadataExt;
    let path = std::fs::canonicalize(device)?;
    let rdev = std::fs::metadata(&path)?.rdev();
    let (major, minor) = (rustix::fs::major(rdev), rustix::fs::minor(rdev));
    Ok(Environment {
        machine: machine::read(),
        target: TargetInfo {
            path: path.to_string_lossy().into_owned(),
            mount_point: String::new(),
            fs_type: RAW_DEVICE.to_string(),
            mount_source: path.to_string_lossy().into_owned(),
            mount_options: String::new(),
            total_bytes: size,
            free_bytes: size,
            block_device: block::describe(major, minor),
            device_identity: DeviceIdentity::of(&path).ok(),
        },
    })
}

/// A target on a server reached by iomatrix's own protocol client: the
/// machine as usual; the target is the URL, `fs_type` names the protocol
/// (e.g. "nfs3 (iomatrix client)"), `mount_source` the server. Sizes are
/// unknown (0): the server does not lend them to this record.
pub fn capture_remote(url: &str, fs_type: &str, server: &str) -> Environment {
    Environment {
        machine: machine::read(),
        target: TargetInfo {
            path: url.to_string(),
            mount_point: String::new(),
            fs_type: fs_type.to_string(),
            mount_source: server.to_string(),
            mount_options: String::new(),
            total_bytes: 0,
            free_bytes: 0,
            block_device: None,
            device_identity: None,
        },
    }
}

/// [`TargetInfo::fs_type`] of a raw block device target.
pub const RAW_DEVICE: &str = "raw block device";

pub(crate) fn target_info(target: &Path) -> std::io::Result<TargetInfo> {
    let path = std::fs::canonicalize(target)?;
    let space = space::space(&path)?;
    let entries = mount::read_mountinfo().unwrap_or_default();
    let entry = mount::choose_mount(&entries, &path);
    let text = |f: fn(&mount::MountEntry) -> String| entry.map_or_else(|| UNKNOWN.to_string(), f);
    Ok(TargetInfo {
        path: path.to_string_lossy().into_owned(),
        mount_point: text(|e| e.mount_point.clone()),
        fs_type: text(|e| e.fs_type.clone()),
        mount_source: text(|e| e.source.clone()),
        mount_options: text(mount::MountEntry::joined_options),
        total_bytes: space.total_bytes,
        free_bytes: space.free_bytes,
        block_device: entry.and_then(block::for_mount),
        device_identity: None,
    })
}
