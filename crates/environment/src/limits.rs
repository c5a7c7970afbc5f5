//! What this machine lets one process start and hold right now: threads
//! (RLIMIT_NPROC, `kernel.threads-max`, `kernel.pid_max`, the cgroup's
//! `pids.max`, and `vm.max_map_count`, since every thread maps its stack),
//! memory (MemAvailable, the cgroup's memory limit) and address space
//! (RLIMIT_AS). Read once, before a run plans its threads and buffers.
//!
//! Each limit is read with what it already holds, so what is left is known:
//! a limit of 1,000 with 990 in use leaves 10. A limit that cannot be read
//! is `None` (not checked), never a guess.

use std::path::{Path, PathBuf};

/// A cap and what is already counted against it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Used {
    /// The cap itself.
    pub limit: u64,
    /// What already counts against the cap; [`Used::left`] is the difference.
    pub used: u64,
}

impl Used {
    /// What is left under the cap.
    pub fn left(&self) -> u64 {
        self.limit.saturating_sub(self.used)
    }
}

/// The limits in force for this process, as read at one moment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SystemLimits {
    /// RLIMIT_NPROC (its soft value) and the threads this user runs now.
    /// None when unlimited, or when it does not bind: the kernel does not
    /// apply it to root (real uid 0) or to a process with CAP_SYS_RESOURCE
    /// or CAP_SYS_ADMIN.
    pub nproc: Option<Used>,
    /// `kernel.threads-max` and the threads of the whole machine now.
    pub threads_max: Option<Used>,
    /// `kernel.pid_max` and the threads now: every thread takes a PID.
    pub pid_max: Option<Used>,
    /// The tightest `pids.max` of this process's cgroup and its parents, with its `pids.current`.
    pub cgroup_pids: Option<Used>,
    /// `vm.max_map_count` and the memory maps this process holds now.
    pub max_map_count: Option<Used>,
    /// MemAvailable of `/proc/meminfo`: what can be allocated without swapping (limit; used 0).
    pub mem_available: Option<Used>,
    /// The tightest memory limit of this process's cgroup and its parents,
    /// with what it holds less its page cache (reclaimable).
    pub cgroup_memory: Option<Used>,
    /// RLIMIT_AS (soft) and this process's address space now (VmSize).
    pub address_space: Option<Used>,
}

impl SystemLimits {
    /// Reads every limit; any that cannot be read is left out.
    pub fn read() -> SystemLimits {
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        let threads_now = std::fs::read_to_string("/proc/loadavg").ok().and_then(|t| parse_loadavg_threads(&t));
        let sysctl = |name: &str| -> Option<u64> { std::fs::read_to_string(name).ok()?.trim().parse().ok() };
        let used = |limit: Option<u64>, now: Option<u64>| Some(Used { limit: limit?, used: now? });
        let cgroups = CgroupPaths::of_self();
        SystemLimits {
            nproc: nproc(&status),
            threads_max: used(sysctl("/proc/sys/kernel/threads-max"), threads_now),
            pid_max: used(sysctl("/proc/sys/kernel/pid_max"), threads_now),
            cgroup_pids: cgroups.tightest(&["pids.max"], &["pids.current"], |_| Some(0)),
            max_map_count: used(
                sysctl("/proc/sys/vm/max_map_count"),
                std::fs::read("/proc/self/maps").ok().map(|m| m.iter().filter(|b| **b == b'\n').count() as u64),
            ),
            mem_available: std::fs::read_to_string("/proc/meminfo")
                .ok()
                .and_then(|t| parse_meminfo(&t, "MemAvailable:"))
                .map(|limit| Used { limit, used: 0 }),
            cgroup_memory: cgroups.tightest(
                &["memory.max", "memory.limit_in_bytes"],
                &["memory.current", "memory.usage_in_bytes"],
                cgroup_page_cache,
            ),
            address_space: match rlimit(rustix::process::Resource::As) {
                Some(limit) => status_kib(&status, "VmSize:").map(|now| Used { limit, used: now }),
                None => None,
            },
        }
    }
}

/// A soft resource limit; None when unlimited.
fn rlimit(resource: rustix::process::Resource) -> Option<u64> {
    rustix::process::getrlimit(resource).current
}

/// RLIMIT_NPROC where it binds: the kernel counts every thread of the real
/// uid against it (`kernel/fork.c`), except for uid 0 and holders of
/// CAP_SYS_RESOURCE or CAP_SYS_ADMIN.
fn nproc(status: &str) -> Option<Used> {
    let limit = rlimit(rustix::process::Resource::Nproc)?;
    let uid = parse_status_uid(status)?;
    let caps = parse_status_caps(status).unwrap_or(0);
    const CAP_SYS_ADMIN: u32 = 21;
    const CAP_SYS_RESOURCE: u32 = 24;
    if uid == 0 || caps & (1 << CAP_SYS_ADMIN) != 0 || caps & (1 << CAP_SYS_RESOURCE) != 0 {
        return None;
    }
    Some(Used { limit, used: threads_of_user(uid) })
}

/// The threads of every process whose real uid is `uid` (what RLIMIT_NPROC counts).
fn threads_of_user(uid: u32) -> u64 {
    let Ok(entries) = std::fs::read_dir("/proc") else { return 0 };
    entries
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_str().is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit())))
        .filter_map(|e| std::fs::read_to_string(e.path().join("status")).ok())
        .filter(|s| parse_status_uid(s) == Some(uid))
        .filter_map(|s| status_number(&s, "Threads:"))
        .sum()
}

/// The 4th field of `/proc/loadavg`, `running/total`: the threads of the machine.
pub(crate) fn parse_loadavg_threads(text: &str) -> Option<u64> {
    text.split_whitespace().nth(3)?.split_once('/')?.1.parse().ok()
}

/// A `/proc/meminfo` line's value in bytes (`MemAvailable:  1234 kB`).
pub(crate) fn parse_meminfo(text: &str, key: &str) -> Option<u64> {
    let rest = text.lines().find_map(|l| l.strip_prefix(key))?.trim();
    let kib: u64 = rest.strip_suffix("kB").unwrap_or(rest).trim().parse().ok()?;
    kib.checked_mul(1024)
}

fn status_number(status: &str, key: &str) -> Option<u64> {
    status.lines().find_map(|l| l.strip_prefix(key))?.split_whitespace().next()?.parse().ok()
}

/// A `/proc/self/status` size (`VmSize:  123 kB`) in bytes.
fn status_kib(status: &str, key: &str) -> Option<u64> {
    status_number(status, key)?.checked_mul(1024)
}

/// The real uid: the first of `Uid:`'s four.
pub(crate) fn parse_status_uid(status: &str) -> Option<u32> {
    status.lines().find_map(|l| l.strip_prefix("Uid:"))?.split_whitespace().next()?.parse().ok()
}

/// The effective capabilities (`CapEff:`, hexadecimal).
pub(crate) fn parse_status_caps(status: &str) -> Option<u64> {
    u64::from_str_radix(status.lines().find_map(|l| l.strip_prefix("CapEff:"))?.trim(), 16).ok()
}

/// The page cache a cgroup's memory figure holds (reclaimable, so not in
/// use for this purpose): `file` (v2) or `total_cache` (v1) of memory.stat.
fn cgroup_page_cache(dir: &Path) -> Option<u64> {
    let stat = std::fs::read_to_string(dir.join("memory.stat")).ok()?;
    ["file ", "total_cache ", "cache "]
        .iter()
        .find_map(|key| stat.lines().find_map(|l| l.strip_prefix(key)).and_then(|v| v.trim().parse().ok()))
}

/// The folders of this process's cgroups, where they are mounted here.
struct CgroupPaths {
    /// (the mount point, the process's cgroup folder below it), per hierarchy.
    hierarchies: Vec<(PathBuf, PathBuf)>,
}

impl CgroupPaths {
    fn of_self() -> CgroupPaths {
        let cgroup = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        CgroupPaths { hierarchies: cgroup_folders(&cgroup, &mountinfo) }
    }

    /// The cap with the least left over every hierarchy and every level from
    /// the process's cgroup up to the mount: `max` files hold the cap ("max"
    /// is none), `current` files what is counted, `reclaimable` what of that
    /// can be given back.
    fn tightest(&self, max: &[&str], current: &[&str], reclaimable: impl Fn(&Path) -> Option<u64>) -> Option<Used> {
        let mut best: Option<Used> = None;
        for (mount, own) in &self.hierarchies {
            let mut dir = own.clone();
            loop {
                let read = |names: &[&str]| names.iter().find_map(|n| std::fs::read_to_string(dir.join(n)).ok());
                let cap = read(max).and_then(|t| t.trim().parse::<u64>().ok());
                let now = read(current).and_then(|t| t.trim().parse::<u64>().ok());
                // cgroup v1 writes "no limit" as a huge number (2^63 rounded to a page).
                if let (Some(limit), Some(now)) = (cap.filter(|c| *c < 1 << 62), now) {
                    let used = now.saturating_sub(reclaimable(&dir).unwrap_or(0));
                    let here = Used { limit, used };
                    if best.is_none_or(|b| here.left() < b.left()) {
                        best = Some(here);
                    }
                }
                if dir == *mount || !dir.pop() || !dir.starts_with(mount) {
                    break;
                }
            }
        }
        best
    }
}

/// Each cgroup hierarchy's folder of this process: its path in
/// `/proc/self/cgroup` ("0::/a/b" for v2, "4:memory:/a/b" for v1) under the
/// matching cgroup mount of `mountinfo` (whose root may be a part of it,
/// inside a cgroup namespace or a container).
pub(crate) fn cgroup_folders(cgroup: &str, mountinfo: &str) -> Vec<(PathBuf, PathBuf)> {
    // (mount root, mount point, fs type, super options) of every cgroup mount.
    let mounts: Vec<(&str, &str, &str, &str)> = mountinfo
        .lines()
        .filter_map(|l| {
            let (left, right) = l.split_once(" - ")?;
            let f: Vec<&str> = left.split(' ').collect();
            let r: Vec<&str> = right.split(' ').collect();
            (f.len() >= 5 && r.len() >= 3 && r[0].starts_with("cgroup")).then(|| (f[3], f[4], r[0], r[2]))
        })
        .collect();
    let mut out = Vec::new();
    for line in cgroup.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next()) else { continue };
        let wanted: Vec<&str> = controllers.split(',').filter(|c| !c.is_empty()).collect();
        let mount = mounts.iter().find(|(_, _, fstype, opts)| {
            if wanted.is_empty() {
                *fstype == "cgroup2"
            } else {
                *fstype == "cgroup" && wanted.iter().all(|c| opts.split(',').any(|o| o == *c))
            }
        });
        let Some((root, point, _, _)) = mount else { continue };
        // A path outside the mount's root: the mount shows another part of the tree.
        let Some(below) = path.strip_prefix(root.trim_end_matches('/')) else { continue };
        let mut folder = PathBuf::from(unescape(point));
        folder.extend(below.split('/').filter(|p| !p.is_empty()));
        out.push((PathBuf::from(unescape(point)), folder));
    }
    out
}

/// mountinfo's octal escapes (`\040` for a space).
fn unescape(field: &str) -> String {
    let mut out = String::new();
    let mut rest = field;
    while let Some(i) = rest.find('\\') {
        out.push_str(&rest[..i]);
        match u8::from_str_radix(rest.get(i + 1..i + 4).unwrap_or(""), 8) {
            Ok(b) => {
                out.push(b as char);
                rest = &rest[i + 4..];
            }
            Err(_) => {
                out.push('\\');
                rest = &rest[i + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_files_are_read_as_the_kernel_writes_them() {
        assert_eq!(parse_loadavg_threads("0.52 0.58 0.59 3/1234 5678\n"), Some(1234));
        assert_eq!(parse_loadavg_threads("garbage"), None);
        let meminfo = "MemTotal:       24684084 kB\nMemAvailable:   23931940 kB\n";
        assert_eq!(parse_meminfo(meminfo, "MemAvailable:"), Some(23931940 * 1024));
        let status =
            "Name:\tx\nUid:\t1000\t1000\t1000\t1000\nThreads:\t7\nCapEff:\t0000000001000000\nVmSize:\t  2048 kB\n";
        assert_eq!(parse_status_uid(status), Some(1000));
        assert_eq!(parse_status_caps(status), Some(1 << 24));
        assert_eq!(status_number(status, "Threads:"), Some(7));
        assert_eq!(status_kib(status, "VmSize:"), Some(2 * 1024 * 1024));
    }

    #[test]
    fn cgroup_folders_follow_the_mounts() {
        let mountinfo = "\
30 25 0:26 / /sys/fs/cgroup/pids rw,nosuid - cgroup cgroup rw,pids
31 25 0:27 / /sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,memory
32 25 0:28 /ns /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw
";
        let cgroup = "8:pids:/\n4:memory:/process_api/abc\n0::/ns/job\n";
        let found = cgroup_folders(cgroup, mountinfo);
        assert_eq!(
            found,
            vec![
                (PathBuf::from("/sys/fs/cgroup/pids"), PathBuf::from("/sys/fs/cgroup/pids")),
                (PathBuf::from("/sys/fs/cgroup/memory"), PathBuf::from("/sys/fs/cgroup/memory/process_api/abc")),
                (PathBuf::from("/sys/fs/cgroup/unified"), PathBuf::from("/sys/fs/cgroup/unified/job")),
            ]
        );
        assert_eq!(unescape("/a\\040b"), "/a b");
    }

    #[test]
    fn this_machine_has_limits_to_read() {
        let l = SystemLimits::read();
        let threads = l.threads_max.expect("threads-max and /proc/loadavg are readable on Linux");
        assert!(threads.limit > 0 && threads.used > 0, "{threads:?}");
        let maps = l.max_map_count.expect("vm.max_map_count and /proc/self/maps are readable on Linux");
        assert!(maps.used > 0 && maps.used < maps.limit, "{maps:?}");
        assert!(l.mem_available.is_some_and(|m| m.limit > 0));
    }
}
