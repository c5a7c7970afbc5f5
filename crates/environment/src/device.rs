//! A raw block device proven before it is written: its identity (what names it beyond its kernel
//! name, which another disk may take after a reboot or a `losetup -d`), and whether its blocks are
//! those of something in use (the results database, a mounted file system), through any alias:
//! a partition, a holder (device-mapper, md), or another loop device over the same file.
//!
//! Facts come from sysfs (`/sys/dev/block/M:m`), `/dev/disk/by-id` and `/proc/self/mountinfo`.

use std::fmt;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::block::parse_dev_numbers;
use crate::mount::{self, MountEntry};

/// What names a block device beyond its kernel name: its size, and the identifiers the kernel
/// gives (WWN, serial, device-mapper UUID, udev's `/dev/disk/by-id` names); a loop device's
/// backing file by device and inode; a partition's disk and start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceIdentity {
    /// The kernel's name when measured ("loop2", "sdb1"): shown, never compared.
    pub name: String,
    /// The device's size in bytes (sysfs `size`, 512-byte sectors, times 512); compared.
    pub size_bytes: u64,
    /// `wwid` (NVMe) or `device/wwid` (SCSI): the world-wide name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wwid: Option<String>,
    /// `serial` (virtio) or `device/serial` (NVMe, some SCSI).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serial: Option<String>,
    /// `dm/uuid` of a device-mapper device (LVM, crypt).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dm_uuid: Option<String>,
    /// The names under `/dev/disk/by-id` that lead to it (none without udev).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_id: Vec<String>,
    /// For a loop device, the file behind it; None for any other device.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loop_backing: Option<LoopBacking>,
    /// For a partition, the disk it lies on and where it starts; None for a whole disk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition_of: Option<Box<PartitionOf>>,
}

/// The file behind a loop device: its path when measured (shown), and the device and inode that
/// prove it is the same file (compared), with the loop's offset into it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoopBacking {
    /// The backing file's path when measured: shown, never compared.
    pub file: String,
    /// The device (`st_dev`) of the file system holding the backing file.
    pub st_dev: u64,
    /// The backing file's inode on that device.
    pub inode: u64,
    /// Where the loop device starts in the file, in bytes (`loop/offset`).
    pub offset: u64,
}

/// A partition: the disk it lies on and where, in 512-byte sectors.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionOf {
    /// The identity of the disk the partition lies on.
    pub disk: DeviceIdentity,
    /// The partition's first sector on that disk (512-byte sectors, sysfs `start`).
    pub start_sector: u64,
}

impl DeviceIdentity {
    /// The identity of the block device at `path` (a `/dev` node or a link to one).
    pub fn of(path: &Path) -> std::io::Result<DeviceIdentity> {
        let rdev = block_rdev(path)?;
        let dir = sys_dir(rustix::fs::major(rdev), rustix::fs::minor(rdev))
            .ok_or_else(|| std::io::Error::other(format!("sysfs does not know {}", path.display())))?;
        Ok(identity_at(&dir, 0))
    }

    /// Whether anything beyond the size names it: a device known only by its size could be any
    /// device of that size.
    pub fn is_provable(&self) -> bool {
        self.wwid.is_some()
            || self.serial.is_some()
            || self.dm_uuid.is_some()
            || !self.by_id.is_empty()
            || self.loop_backing.is_some()
            || self.partition_of.as_ref().is_some_and(|p| p.disk.is_provable())
    }

    /// How `now` differs from this identity, in words; empty when it is the same device. The
    /// kernel's identifiers must be equal (one present and the other absent differs); udev's
    /// by-id names, which come and go with udev, must share a name when both have some.
    pub fn differences(&self, now: &DeviceIdentity) -> Vec<String> {
        let mut found = Vec::new();
        if self.size_bytes != now.size_bytes {
            found.push(format!("size {} bytes, now {}", self.size_bytes, now.size_bytes));
        }
        let mut same = |what: &str, was: &Option<String>, is: &Option<String>| {
            if was != is {
                found.push(format!("{what} {}, now {}", shown(was), shown(is)));
            }
        };
        same("WWN", &self.wwid, &now.wwid);
        same("serial", &self.serial, &now.serial);
        same("device-mapper UUID", &self.dm_uuid, &now.dm_uuid);
        if !self.by_id.is_empty() && !now.by_id.is_empty() && !self.by_id.iter().any(|n| now.by_id.contains(n)) {
            found.push(format!("by-id {}, now {}", self.by_id.join(" "), now.by_id.join(" ")));
        }
        let proof = |b: &LoopBacking| (b.st_dev, b.inode, b.offset);
        if self.loop_backing.as_ref().map(proof) != now.loop_backing.as_ref().map(proof) {
            found.push(format!(
                "loop backing file {}, now {}",
                self.loop_backing.as_ref().map_or("none".into(), LoopBacking::to_string),
                now.loop_backing.as_ref().map_or("none".into(), LoopBacking::to_string)
            ));
        }
        match (&self.partition_of, &now.partition_of) {
            (None, None) => {}
            (Some(was), Some(is)) => {
                if was.start_sector != is.start_sector {
                    found.push(format!("partition start sector {}, now {}", was.start_sector, is.start_sector));
                }
                found.extend(was.disk.differences(&is.disk).into_iter().map(|d| format!("its disk's {d}")));
            }
            (was, _) => found.push(
                if was.is_some() { "a partition, now a whole disk" } else { "a whole disk, now a partition" }.into(),
            ),
        }
        found
    }
}

fn shown(value: &Option<String>) -> &str {
    value.as_deref().unwrap_or("none")
}

impl fmt::Display for LoopBacking {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (major, minor) = (rustix::fs::major(self.st_dev), rustix::fs::minor(self.st_dev));
        write!(f, "{} (file system {major}:{minor}, inode {}", self.file, self.inode)?;
        match self.offset {
            0 => write!(f, ")"),
            at => write!(f, ", from byte {at})"),
        }
    }
}

impl fmt::Display for DeviceIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}, {} bytes", self.name, self.size_bytes)?;
        if let Some(w) = &self.wwid {
            write!(f, ", WWN {w}")?;
        }
        if let Some(s) = &self.serial {
            write!(f, ", serial {s}")?;
        }
        if let Some(u) = &self.dm_uuid {
            write!(f, ", device-mapper UUID {u}")?;
        }
        if !self.by_id.is_empty() {
            write!(f, ", by-id {}", self.by_id.join(" "))?;
        }
        if let Some(b) = &self.loop_backing {
            write!(f, ", a loop device over {b}")?;
        }
        if let Some(p) = &self.partition_of {
            write!(f, ", a partition from sector {} of [{}]", p.start_sector, p.disk)?;
        }
        Ok(())
    }
}

/// The device number of the block device at `path`; an error for anything else.
fn block_rdev(path: &Path) -> std::io::Result<u64> {
    let meta = std::fs::metadata(path)?;
    if !meta.file_type().is_block_device() {
        return Err(std::io::Error::other(format!("{} is not a block device", path.display())));
    }
    Ok(meta.rdev())
}

/// `/sys/dev/block/M:m`, resolved: a partition's directory sits inside its disk's.
fn sys_dir(major: u32, minor: u32) -> Option<PathBuf> {
    std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).ok()
}

/// Deeper than any real stack of partitions, loops and holders: a loop over itself stops here.
const MAX_DEPTH: usize = 16;

fn identity_at(dir: &Path, depth: usize) -> DeviceIdentity {
    let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let partition_of = match (dir.join("partition").exists(), dir.parent()) {
        (true, Some(disk)) if depth < MAX_DEPTH => Some(Box::new(PartitionOf {
            disk: identity_at(disk, depth + 1),
            start_sector: read_u64(&dir.join("start")).unwrap_or(0),
        })),
        _ => None,
    };
    DeviceIdentity {
        size_bytes: read_u64(&dir.join("size")).unwrap_or(0).saturating_mul(512),
        wwid: read_text(&dir.join("wwid")).or_else(|| read_text(&dir.join("device/wwid"))),
        serial: read_text(&dir.join("serial")).or_else(|| read_text(&dir.join("device/serial"))),
        dm_uuid: read_text(&dir.join("dm/uuid")),
        by_id: by_id_names(&name),
        loop_backing: loop_backing(dir),
        partition_of,
        name,
    }
}

/// The loop device's backing file, when `dir` is a loop device's and its file can be statted.
fn loop_backing(dir: &Path) -> Option<LoopBacking> {
    let file = read_text(&dir.join("loop/backing_file"))?;
    let meta = std::fs::metadata(&file).ok()?;
    Some(LoopBacking {
        file,
        st_dev: meta.dev(),
        inode: meta.ino(),
        offset: read_u64(&dir.join("loop/offset")).unwrap_or(0),
    })
}

/// The names in `/dev/disk/by-id` whose link leads to the kernel name `name`, sorted.
fn by_id_names(name: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir("/dev/disk/by-id") else { return Vec::new() };
    let mut names: Vec<String> = entries
        .flatten()
        .filter(|e| {
            std::fs::canonicalize(e.path()).ok().and_then(|t| t.file_name().map(|n| n == name)).unwrap_or(false)
        })
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn read_text(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

fn read_u64(path: &Path) -> Option<u64> {
    read_text(path)?.parse().ok()
}

/// Where a stretch of a device's blocks finally lives: a whole device with nothing under it,
/// or the file behind a loop device; two devices share blocks when two of their extents share a
/// root and overlap.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Root {
    Disk(u32, u32),
    File { st_dev: u64, inode: u64 },
}

#[derive(Debug, Clone)]
struct Extent {
    root: Root,
    start: u64,
    len: u64,
    /// The backing file's path, for a root that is a file (for messages).
    file: Option<String>,
    /// Reached through a holder's `slaves/` (device-mapper, md), whose layout sysfs does not give:
    /// the extent is all of the device under it, a bound rather than the blocks used.
    via_holder: bool,
}

impl Extent {
    /// Whether the two share blocks. Two extents both reached through holders are taken apart:
    /// two volumes over one disk (LVM's logical volumes) hold different blocks of it.
    fn overlaps(&self, other: &Extent) -> bool {
        !(self.via_holder && other.via_holder)
            && self.root == other.root
            && self.start < other.start.saturating_add(other.len)
            && other.start < self.start.saturating_add(self.len)
    }

    /// The part `len` bytes long from `offset` into this extent.
    fn within(&self, offset: u64, len: u64) -> Extent {
        let start = self.start.saturating_add(offset);
        Extent { start, len: len.min(self.len.saturating_sub(offset)), ..self.clone() }
    }
}

/// Where the blocks of device `major:minor` live, following partitions to their disk, loop
/// devices to their backing file (or device), and holders (device-mapper, md) to every device
/// under them (all of each: their layout is not read, so the answer errs on the side of overlap).
fn extents(major: u32, minor: u32, depth: usize) -> Vec<Extent> {
    let whole = |len| vec![Extent { root: Root::Disk(major, minor), start: 0, len, file: None, via_holder: false }];
    let Some(dir) = sys_dir(major, minor).filter(|_| depth < MAX_DEPTH) else { return whole(u64::MAX) };
    let len = read_u64(&dir.join("size")).map_or(u64::MAX, |s| s.saturating_mul(512));
    if dir.join("partition").exists() {
        let start = read_u64(&dir.join("start")).unwrap_or(0).saturating_mul(512);
        return match dir.parent().and_then(dev_numbers) {
            Some((ma, mi)) => extents(ma, mi, depth + 1).iter().map(|e| e.within(start, len)).collect(),
            None => whole(len),
        };
    }
    if let Some(file) = read_text(&dir.join("loop/backing_file")) {
        let offset = read_u64(&dir.join("loop/offset")).unwrap_or(0);
        return match std::fs::metadata(&file) {
            Ok(meta) if meta.file_type().is_block_device() => {
                let (ma, mi) = (rustix::fs::major(meta.rdev()), rustix::fs::minor(meta.rdev()));
                extents(ma, mi, depth + 1).iter().map(|e| e.within(offset, len)).collect()
            }
            Ok(meta) => vec![Extent {
                root: Root::File { st_dev: meta.dev(), inode: meta.ino() },
                start: offset,
                len,
                file: Some(file),
                via_holder: false,
            }],
            // A backing file removed since: nothing else can reach it by name.
            Err(_) => whole(len),
        };
    }
    let under: Vec<Extent> = slaves(&dir)
        .into_iter()
        .flat_map(|(ma, mi)| extents(ma, mi, depth + 1))
        .map(|e| Extent { via_holder: true, ..e })
        .collect();
    if under.is_empty() {
        whole(len)
    } else {
        under
    }
}

fn dev_numbers(dir: &Path) -> Option<(u32, u32)> {
    parse_dev_numbers(&std::fs::read_to_string(dir.join("dev")).ok()?)
}

/// The devices a holder is built on (`slaves/`).
fn slaves(dir: &Path) -> Vec<(u32, u32)> {
    let Ok(entries) = std::fs::read_dir(dir.join("slaves")) else { return Vec::new() };
    entries.flatten().filter_map(|e| std::fs::canonicalize(e.path()).ok()).filter_map(|d| dev_numbers(&d)).collect()
}

/// Why a block device may not be written: its blocks are those of something in use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InUse(pub String);

/// Refuses `device` when writing it would write the results database `db` or a mounted file
/// system: when it is the database's file (a loop device over it), a loop device over any file on
/// the database's file system (its journal and WAL sit beside it), or when any of its blocks are
/// those of a mounted device or a swap area, however reached (the device itself, its disk or a
/// partition, a holder built on it or a device it is built on, another loop device over the same
/// file).
pub fn refuse_if_in_use(device: &Path, db: &Path) -> Result<(), InUse> {
    let shown = device.display();
    let Ok(rdev) = block_rdev(device) else { return Ok(()) };
    let mine = extents(rustix::fs::major(rdev), rustix::fs::minor(rdev), 0);
    if let Some(cause) = backed_by_database(&mine, db) {
        return Err(InUse(format!("{shown} is in use: {cause}")));
    }
    let entries = mount::read_mountinfo().unwrap_or_default();
    let db_mount = nearest_existing(db).and_then(|p| mount::choose_mount(&entries, &p).cloned());
    for entry in &entries {
        let Some((major, minor)) = mounted_device(entry) else { continue };
        let itself = (rustix::fs::major(rdev), rustix::fs::minor(rdev)) == (major, minor);
        let theirs = extents(major, minor, 0);
        let shared = mine.iter().find(|m| itself || theirs.iter().any(|t| m.overlaps(t)));
        let Some(shared) = shared else { continue };
        let what = match &db_mount {
            Some(d) if d.mount_point == entry.mount_point => {
                format!("the file system of the results database {}", db.display())
            }
            _ => "a file system".to_string(),
        };
        let through = shared.file.as_ref().map(|f| format!(", both over the file {f}")).unwrap_or_default();
        return Err(InUse(format!(
            "{shown} is in use: its blocks are those of {} ({major}:{minor}{through}), which holds {what} mounted \
             at {}; unmount it or choose another device",
            entry.source, entry.mount_point
        )));
    }
    let swaps = std::fs::read_to_string("/proc/swaps").unwrap_or_default();
    for swap in swap_areas(&swaps) {
        if swap_extents(&swap).iter().any(|t| mine.iter().any(|m| m.overlaps(t))) {
            return Err(InUse(format!(
                "{shown} is in use: its blocks are those of {swap}, in use as swap; swapoff it or choose another device"
            )));
        }
    }
    Ok(())
}

/// The swap areas `/proc/swaps` names (a device or a file), after its heading.
fn swap_areas(text: &str) -> Vec<String> {
    text.lines().skip(1).filter_map(|l| l.split_whitespace().next()).map(mount::decode_octal).collect()
}

/// Where a swap area's blocks live: its device's, or all of its file.
fn swap_extents(area: &str) -> Vec<Extent> {
    match std::fs::metadata(area) {
        Ok(meta) if meta.file_type().is_block_device() => {
            extents(rustix::fs::major(meta.rdev()), rustix::fs::minor(meta.rdev()), 0)
        }
        Ok(meta) => vec![Extent {
            root: Root::File { st_dev: meta.dev(), inode: meta.ino() },
            start: 0,
            len: u64::MAX,
            file: Some(area.to_string()),
            via_holder: false,
        }],
        Err(_) => Vec::new(),
    }
}

/// The cause when some of the device's blocks are a file on the results database's file system.
fn backed_by_database(mine: &[Extent], db: &Path) -> Option<String> {
    let db_meta = nearest_existing(db).and_then(|p| std::fs::metadata(p).ok())?;
    let db_is_file = std::fs::metadata(db).is_ok();
    mine.iter().find_map(|e| match (&e.root, &e.file) {
        (Root::File { st_dev, inode }, Some(file)) if *st_dev == db_meta.dev() => {
            Some(if db_is_file && *inode == db_meta.ino() {
                format!(
                    "it is a loop device over {file}, the results database itself; a run on it would overwrite \
                     every stored run"
                )
            } else {
                format!(
                    "it is a loop device over {file}, on the same file system as the results database {} (where \
                     its journal and WAL live too); put the image on another file system, or give another --db",
                    db.display()
                )
            })
        }
        _ => None,
    })
}

/// `path`, or its nearest ancestor that exists (a database not made yet will be made there).
fn nearest_existing(path: &Path) -> Option<PathBuf> {
    let absolute = std::path::absolute(path).ok()?;
    absolute.ancestors().find_map(|p| std::fs::canonicalize(p).ok())
}

/// The block device behind a mount: its `major:minor`, else the `/dev/...` source's (btrfs shows
/// an anonymous number); None for device-less mounts.
fn mounted_device(entry: &MountEntry) -> Option<(u32, u32)> {
    if entry.major != 0 {
        return Some((entry.major, entry.minor));
    }
    if !entry.source.starts_with("/dev/") {
        return None;
    }
    let rdev = block_rdev(Path::new(&entry.source)).ok()?;
    Some((rustix::fs::major(rdev), rustix::fs::minor(rdev)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn disk(name: &str) -> DeviceIdentity {
        DeviceIdentity {
            name: name.into(),
            size_bytes: 32 << 20,
            wwid: None,
            serial: None,
            dm_uuid: None,
            by_id: Vec::new(),
            loop_backing: None,
            partition_of: None,
        }
    }

    fn over(inode: u64) -> DeviceIdentity {
        let file = format!("/images/{inode}.img");
        DeviceIdentity { loop_backing: Some(LoopBacking { file, st_dev: 2049, inode, offset: 0 }), ..disk("loop2") }
    }

    #[test]
    fn a_loop_device_over_another_file_differs_and_says_both() {
        assert!(over(12).differences(&over(12)).is_empty());
        let found = over(12).differences(&over(13));
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].contains("/images/12.img") && found[0].contains("/images/13.img"), "{found:?}");
        // The path is shown, not compared: a renamed image is the same file.
        let mut moved = over(12);
        moved.loop_backing.as_mut().unwrap().file = "/elsewhere.img".into();
        assert!(over(12).differences(&moved).is_empty());
    }

    #[test]
    fn identifiers_and_size_must_match() {
        let a = DeviceIdentity { wwid: Some("naa.5000c500a1".into()), ..disk("sdb") };
        let b = DeviceIdentity { wwid: Some("naa.5000c500b2".into()), ..disk("sdb") };
        assert!(a.differences(&a.clone()).is_empty());
        assert!(a.differences(&b)[0].starts_with("WWN naa.5000c500a1, now naa.5000c500b2"));
        assert!(a.differences(&disk("sdb"))[0].contains("now none"));
        let bigger = DeviceIdentity { size_bytes: 64 << 20, ..a.clone() };
        assert!(a.differences(&bigger)[0].starts_with("size 33554432 bytes, now 67108864"));
    }

    #[test]
    fn by_id_names_need_one_in_common_when_both_have_some() {
        let a = DeviceIdentity { by_id: vec!["ata-X_1".into(), "wwn-0x1".into()], ..disk("sdb") };
        let b = DeviceIdentity { by_id: vec!["wwn-0x1".into()], ..disk("sdc") };
        let c = DeviceIdentity { by_id: vec!["ata-Y_2".into()], ..disk("sdb") };
        assert!(a.differences(&b).is_empty(), "the kernel name is not compared");
        assert_eq!(a.differences(&c).len(), 1);
        assert!(a.differences(&disk("sdb")).is_empty(), "no udev now: by-id alone proves nothing either way");
    }

    #[test]
    fn a_partition_is_its_disk_and_its_start() {
        let part = |on: DeviceIdentity, start| DeviceIdentity {
            partition_of: Some(Box::new(PartitionOf { disk: on, start_sector: start })),
            ..disk("loop2p1")
        };
        assert!(part(over(12), 2048).differences(&part(over(12), 2048)).is_empty());
        assert!(part(over(12), 2048).differences(&part(over(12), 4096))[0].contains("start sector 2048, now 4096"));
        assert!(part(over(12), 2048).differences(&part(over(13), 2048))[0].starts_with("its disk's loop backing"));
        let whole = part(over(12), 2048).differences(&disk("loop2"));
        assert_eq!(whole, vec!["a partition, now a whole disk".to_string()]);
        assert!(part(over(12), 2048).is_provable());
    }

    #[test]
    fn a_device_known_only_by_its_size_is_not_provable() {
        assert!(!disk("vdb").is_provable());
        assert!(over(1).is_provable());
        assert!(DeviceIdentity { serial: Some("S1".into()), ..disk("vdb") }.is_provable());
    }

    #[test]
    fn extents_overlap_only_on_the_same_root_and_bytes() {
        let file =
            |start, len| Extent { root: Root::File { st_dev: 1, inode: 2 }, start, len, file: None, via_holder: false };
        assert!(file(0, 100).overlaps(&file(50, 100)));
        assert!(!file(0, 100).overlaps(&file(100, 100)), "partitions side by side do not overlap");
        let other = Extent { root: Root::Disk(8, 0), ..file(0, 100) };
        assert!(!file(0, 100).overlaps(&other));
        let part = file(0, 100).within(40, 1000);
        assert_eq!((part.start, part.len), (40, 60), "a part never reaches past its disk");
        let volume = |start, len| Extent { via_holder: true, ..file(start, len) };
        assert!(!volume(0, 100).overlaps(&volume(0, 100)), "two volumes over one disk hold different blocks");
        assert!(volume(0, 100).overlaps(&file(0, 100)), "a volume and the disk under it share its blocks");
    }

    #[test]
    fn swap_areas_are_read_after_the_heading_with_their_escapes() {
        let text = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n\
                    /dev/loop0                              partition\t32764\t\t0\t\t-2\n\
                    /swap\\040file                         file\t\t1024\t\t0\t\t-3\n";
        assert_eq!(swap_areas(text), vec!["/dev/loop0".to_string(), "/swap file".to_string()]);
        assert!(swap_areas("Filename Type Size Used Priority\n").is_empty());
    }

    #[test]
    fn serialised_identity_reads_back_and_leaves_out_what_is_absent() {
        let id = over(7);
        let json = serde_json::to_value(&id).unwrap();
        assert!(json.get("wwid").is_none(), "{json}");
        assert_eq!(serde_json::from_value::<DeviceIdentity>(json).unwrap(), id);
    }
}
