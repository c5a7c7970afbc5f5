//! A metadata plan checked at plan time against what the target and this process can hold:
//! free inodes and space of the target's file system (what `df -i` and `df` show, from
//! statvfs), the open-file limit, and the memory the runner keeps per item. A plan that does
//! not fit is refused before anything is made, naming the limit, what it leaves, and the
//! largest count of the plan that fits (the caller makes it a usage error, exit 2).
//!
//! How a plan is counted (an upper bound, as mdtest lays its items out):
//! - the tree: `B^0 + B^1 + ... + B^D` folders (mdtest -z D -b B), one tree shared by every
//!   client or one per client (mdtest -u);
//! - the folders that hold items: every folder, or the `B^D` leaves (mdtest -L);
//! - items per client: `-n N` in all, or `-I N` in each folder that holds items;
//! - files and directories at once only when the directories are not removed before the
//!   files are made (the directory phases run first, as in mdtest);
//! - items not removed by the run stay, so iterations add up (each iteration makes its own);
//! - bytes: each file's `write_bytes` rounded up to the file system's fragment.
//!
//! With a stonewall (mdtest -W) the item count is a ceiling the stonewall is meant to cut, as
//! IO500 gives it: only the open files are checked; a file system that fills first is a
//! failure the run records (ENOSPC), never a rate.
//!
//! The pure part ([`check_fits_in`]) takes the figures as a [`Room`], so tests need no disk.

use crate::plan::{ItemCount, ItemKinds, Layout, MetadataPlan, Phase};
use std::path::Path;

/// Inodes kept back on the target beyond the plan's: the working folder, its marker, the
/// tree's own test folder per iteration, and some slack for whatever else writes there.
pub const INODES_KEPT_BACK: u64 = 16;
/// Open files of one client at once: the runner opens one at a time (the item it creates or
/// reads, or the folder it lists), and one is kept spare for the file-system seam's own.
pub const OPEN_FILES_PER_CLIENT: u64 = 2;
/// Open files kept back for the rest of the process: the results database and its logs,
/// the terminal, the marker's lock, the working folder, the libraries.
pub const OPEN_FILES_KEPT_BACK: u64 = 64;
/// Memory a client keeps per item of its own during a phase: the order it works on its items
/// in, one 8-byte index each (shuffled with stat in random order, as mdtest's -R keeps it).
pub const MEMORY_PER_ITEM: u64 = 8;

/// What the target's file system has free, from statvfs (what `df -i` and `df` show).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TargetRoom {
    /// `f_favail`: inodes an unprivileged user may still make; None when the file system
    /// counts no inodes (`f_files` of 0: btrfs, tmpfs with nr_inodes=0, many FUSE file systems).
    pub free_inodes: Option<u64>,
    /// `f_bavail * f_frsize`: bytes an unprivileged writer may still use.
    pub free_bytes: u64,
    /// `f_frsize`: the unit a file's data takes space in.
    pub fragment: u64,
}

/// What this process can hold: the open-file limit and memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ProcessRoom {
    /// RLIMIT_NOFILE's hard value (the run raises its soft value up to it); None when unlimited.
    pub open_files: Option<u64>,
    /// Memory that may still be allocated (MemAvailable less an eighth, or the cgroup's
    /// memory left, the smaller); None when unknown.
    pub memory: Option<u64>,
}

/// Where a plan must fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Room {
    /// The target's file system.
    pub target: TargetRoom,
    /// This process.
    pub process: ProcessRoom,
}

impl Room {
    /// Reads the target's statvfs, this process's open-file limit and the memory left.
    pub fn read(target: &Path) -> std::io::Result<Room> {
        Ok(Room { target: target_room(target)?, process: process_room() })
    }
}

/// The target's free inodes and space.
pub fn target_room(target: &Path) -> std::io::Result<TargetRoom> {
    let st = rustix::fs::statvfs(target)?;
    Ok(TargetRoom {
        free_inodes: (st.f_files > 0).then_some(st.f_favail),
        free_bytes: st.f_bavail.saturating_mul(st.f_frsize),
        fragment: st.f_frsize.max(1),
    })
}

/// This process's open-file limit (hard) and the memory left.
pub fn process_room() -> ProcessRoom {
    let mut rl = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes into the struct we pass.
    let read = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl) } == 0;
    // rlim_t is 64 bits on 64-bit Linux, 32 on some 32-bit targets.
    #[allow(clippy::unnecessary_cast)]
    let open_files = (read && rl.rlim_max != libc::RLIM_INFINITY).then_some(rl.rlim_max as u64);
    let system = iomatrix_environment::SystemLimits::read();
    // An eighth of MemAvailable is kept for the page cache and the kernel, as the harness keeps it.
    let available = system.mem_available.map(|u| u.limit - u.limit / 8);
    let cgroup = system.cgroup_memory.map(|u| u.left());
    let memory = match (available, cgroup) {
        (Some(a), Some(c)) => Some(a.min(c)),
        (a, c) => a.or(c),
    };
    ProcessRoom { open_files, memory }
}

/// Refuses a plan that does not fit on `target` or in this process, naming the limit, what it
/// leaves and the largest count that fits. `clients`: the run's clients in all (also the
/// clients this process holds at once: threads; an MPI rank holds one, so the open-file and
/// memory checks are an upper bound there).
pub fn check_fits(plan: &MetadataPlan, target: &Path, clients: usize) -> Result<(), String> {
    let room = Room::read(target)
        .map_err(|e| format!("cannot read the free inodes and space of {} (statvfs): {e}", target.display()))?;
    check_fits_in(plan, clients, &room).map_err(|e| e.replace("{target}", &target.display().to_string()))
}

/// [`check_fits`] over figures given: the pure check. `{target}` in a message stands for the target.
pub fn check_fits_in(plan: &MetadataPlan, clients: usize, room: &Room) -> Result<(), String> {
    check_open_files(clients as u64, room.process.open_files)?;
    if plan.stonewall.is_some() {
        // The count is a ceiling the stonewall is meant to cut (IO500 gives more items than a
        // run can make in its time): not refused; a file system that fills first is a recorded
        // failure (ENOSPC), and the later phases keep the order of the count reached.
        return Ok(());
    }
    if !plan.makes_items() {
        // In place on what an earlier run left: nothing is made, no inode or byte is taken.
        return Ok(());
    }
    let count = Counted::of(plan, clients as u64);
    check_inodes(&count, room.target.free_inodes)?;
    check_space(&count, plan.write_bytes, &room.target)?;
    check_memory(&count, room.process.memory)
}

/// A plan's counts, each linear in the plan's item count (`unit`: `-n` or `-I`).
#[derive(Debug, Clone)]
struct Counted {
    /// The plan's item count as given (items per client, or per folder).
    unit: u128,
    /// Whether `unit` is per folder (mdtest -I) rather than per client (-n).
    per_folder: bool,
    clients: u128,
    /// Folders of the tree(s) at once: one shared tree, or one per client.
    tree_folders: u128,
    /// Items per client for one of `unit`: 1, or the folders holding items.
    per_unit: u128,
    /// Kinds of item alive at once (0, 1 or 2).
    kinds_at_once: u128,
    /// Whether files are made.
    files: bool,
    /// What the run leaves behind is made again by each iteration: the factor it adds up by.
    iterations: u128,
    /// The tree's own shape in words, for messages.
    shape: String,
}

impl Counted {
    fn of(plan: &MetadataPlan, clients: u64) -> Counted {
        let folders = tree_folders(plan.tree.depth, plan.tree.branch);
        let holding = if plan.tree.leaves_only { power(plan.tree.branch, plan.tree.depth) } else { folders };
        let (unit, per_folder) = match plan.items {
            ItemCount::PerClient(n) => (u128::from(n), false),
            ItemCount::PerFolder(n) => (u128::from(n), true),
        };
        let has = |p: Phase| plan.phases.contains(&p);
        let dirs = matches!(plan.kinds, ItemKinds::Both | ItemKinds::Dirs) && has(Phase::DirCreate);
        let files = matches!(plan.kinds, ItemKinds::Both | ItemKinds::Files) && has(Phase::FileCreate);
        let kinds_at_once = match (dirs, files) {
            (true, true) if has(Phase::DirRemove) => 1,
            (true, true) => 2,
            (false, false) => 0,
            _ => 1,
        };
        let left_behind =
            (dirs && !has(Phase::DirRemove)) || (files && !has(Phase::FileRemove)) || !has(Phase::TreeRemove);
        let clients = u128::from(clients);
        Counted {
            unit,
            per_folder,
            clients,
            tree_folders: match plan.layout {
                Layout::Shared => folders,
                Layout::PerClient => folders.saturating_mul(clients),
            },
            per_unit: if per_folder { holding } else { 1 },
            kinds_at_once,
            files,
            iterations: if left_behind { u128::from(plan.rounds().max(1)) } else { 1 },
            shape: format!(
                "a tree of depth {} and branching {}{}",
                plan.tree.depth,
                plan.tree.branch,
                if plan.layout == Layout::PerClient { " per client" } else { ", shared" }
            ),
        }
    }

    /// Items of one kind, of every client, for `unit` items as given.
    fn items_of(&self, unit: u128) -> u128 {
        unit.saturating_mul(self.per_unit).saturating_mul(self.clients)
    }

    /// The largest item count whose `per_item x items_of(n)` fits in `left`, if one does.
    fn largest_unit(&self, left: u128, per_item: u128) -> u128 {
        let per_unit = self.per_unit.saturating_mul(self.clients).saturating_mul(per_item).max(1);
        (left / per_unit).min(self.unit.saturating_sub(1))
    }

    /// "at most 42 items per client (--items, mdtest -n) fit".
    fn fits(&self, most: u128) -> String {
        let what = if self.per_folder {
            "items per folder (--items-per-folder, mdtest -I)"
        } else {
            "items per client (--items, mdtest -n)"
        };
        match most {
            0 => format!("not even 1 of the {what} fits"),
            n => format!("at most {n} {what} fit"),
        }
    }
}

/// Folders of a tree of `depth` levels below its root and `branch` folders per folder, the
/// root included: `B^0 + ... + B^D`, saturating (a shape past any disk stays past it).
pub fn tree_folders(depth: u32, branch: u32) -> u128 {
    if branch <= 1 {
        return u128::from(depth) + 1;
    }
    let (mut sum, mut level) = (0u128, 1u128);
    for _ in 0..=depth {
        sum = sum.saturating_add(level);
        level = level.saturating_mul(u128::from(branch));
        if sum == u128::MAX {
            break;
        }
    }
    sum
}

/// `base^exp`, saturating.
fn power(base: u32, exp: u32) -> u128 {
    if base <= 1 {
        return u128::from(base).max(u128::from(exp == 0));
    }
    let mut out = 1u128;
    for _ in 0..exp {
        out = out.saturating_mul(u128::from(base));
        if out == u128::MAX {
            break;
        }
    }
    out
}

fn check_inodes(c: &Counted, free: Option<u64>) -> Result<(), String> {
    let Some(free) = free else { return Ok(()) };
    let per_item = c.kinds_at_once.saturating_mul(c.iterations);
    let tree = c.tree_folders.saturating_mul(c.iterations);
    let items = c.items_of(c.unit).saturating_mul(per_item);
    let need = tree.saturating_add(items).saturating_add(u128::from(INODES_KEPT_BACK));
    let free = u128::from(free);
    if need <= free {
        return Ok(());
    }
    let counted = format!(
        "{} item(s) of {} kind(s) at once{} and {} folder(s) of {}, plus {INODES_KEPT_BACK} kept back",
        c.items_of(c.unit),
        c.kinds_at_once,
        iterations_words(c.iterations),
        c.tree_folders,
        c.shape
    );
    let fix = if tree.saturating_add(u128::from(INODES_KEPT_BACK)) > free {
        format!("the tree alone does not fit: give a smaller depth or branching{}", per_client_tree_hint(c))
    } else {
        c.fits(c.largest_unit(free - tree - u128::from(INODES_KEPT_BACK), per_item))
    };
    Err(format!(
        "this plan makes {need} inodes on {{target}} ({counted}), but its file system has {free} free inodes \
         (df -i): {fix}; give fewer items or clients, or a file system with more inodes"
    ))
}

fn check_space(c: &Counted, write_bytes: u64, room: &TargetRoom) -> Result<(), String> {
    if !c.files || write_bytes == 0 {
        return Ok(());
    }
    let frag = u128::from(room.fragment.max(1));
    let per_file = u128::from(write_bytes).div_ceil(frag).saturating_mul(frag);
    let per_item = per_file.saturating_mul(c.iterations);
    let need = c.items_of(c.unit).saturating_mul(per_item);
    let free = u128::from(room.free_bytes);
    if need <= free {
        return Ok(());
    }
    Err(format!(
        "this plan writes {need} bytes on {{target}} ({} file(s){} of {write_bytes} bytes, {per_file} each in \
         {frag}-byte fragments), but its file system has {free} bytes free (df): {}; give fewer items or \
         clients, fewer bytes per file, or a file system with more space",
        c.items_of(c.unit),
        iterations_words(c.iterations),
        c.fits(c.largest_unit(free, per_item))
    ))
}

fn check_open_files(clients: u64, limit: Option<u64>) -> Result<(), String> {
    let Some(limit) = limit else { return Ok(()) };
    let need = clients.saturating_mul(OPEN_FILES_PER_CLIENT).saturating_add(OPEN_FILES_KEPT_BACK);
    if need <= limit {
        return Ok(());
    }
    let most = limit.saturating_sub(OPEN_FILES_KEPT_BACK) / OPEN_FILES_PER_CLIENT;
    let fits = match most {
        0 => "not even 1 client fits".to_string(),
        n => format!("at most {n} clients fit"),
    };
    Err(format!(
        "this plan holds {need} open files at once ({clients} client(s) x {OPEN_FILES_PER_CLIENT}: an item and \
         its folder, plus {OPEN_FILES_KEPT_BACK} kept back for the database and the rest), but the open-file limit \
         (RLIMIT_NOFILE, hard) is {limit}: {fits}; give fewer clients, or raise it (ulimit -Hn, limits.conf)"
    ))
}

fn check_memory(c: &Counted, left: Option<u64>) -> Result<(), String> {
    let Some(left) = left else { return Ok(()) };
    let per_item = u128::from(MEMORY_PER_ITEM);
    let need = c.items_of(c.unit).saturating_mul(per_item);
    let left = u128::from(left);
    if need <= left {
        return Ok(());
    }
    Err(format!(
        "each client keeps the order of its items during a phase: {need} bytes ({} item(s) x {per_item} bytes), \
         but this process may hold {left} bytes of memory (MemAvailable less an eighth, or the cgroup's limit): \
         {}; give fewer items or clients",
        c.items_of(c.unit),
        c.fits(c.largest_unit(left, per_item))
    ))
}

fn iterations_words(iterations: u128) -> String {
    if iterations > 1 {
        format!(" x {iterations} iterations (what is not removed stays)")
    } else {
        String::new()
    }
}

fn per_client_tree_hint(c: &Counted) -> &'static str {
    if c.clients > 1 && c.shape.ends_with("per client") {
        " (a tree per client makes one tree per client)"
    } else {
        ""
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Neighbour, TreeShape};

    fn plan(items: ItemCount, kinds: ItemKinds, tree: (u32, u32, bool), layout: Layout) -> MetadataPlan {
        MetadataPlan {
            items,
            kinds,
            tree: TreeShape { depth: tree.0, branch: tree.1, leaves_only: tree.2 },
            layout,
            phases: Phase::ALL.to_vec(),
            write_bytes: 0,
            read_bytes: 0,
            fsync: false,
            sync_after_phase: false,
            neighbour: Neighbour { stride: 0 },
            random_stat_seed: None,
            iterations: 1,
            stonewall: None,
            in_place: false,
            series_interval_ns: iomatrix_stats::series::DEFAULT_INTERVAL_NS,
            open: None,
            curve: None,
            latency_target: None,
        }
    }

    fn files(n: u64) -> MetadataPlan {
        plan(ItemCount::PerClient(n), ItemKinds::Files, (0, 1, false), Layout::Shared)
    }

    fn room(inodes: u64, bytes: u64) -> Room {
        Room {
            target: TargetRoom { free_inodes: Some(inodes), free_bytes: bytes, fragment: 4096 },
            process: ProcessRoom { open_files: Some(1_048_576), memory: Some(8 << 30) },
        }
    }

    #[test]
    fn tree_folders_sum_every_level_and_saturate() {
        assert_eq!(tree_folders(0, 4), 1);
        assert_eq!(tree_folders(2, 4), 1 + 4 + 16);
        assert_eq!(tree_folders(3, 1), 4, "a branching of 1 is a chain");
        assert_eq!(tree_folders(5, 10), 111_111);
        assert_eq!(tree_folders(4_000_000_000, 1_000_000), u128::MAX);
    }

    #[test]
    fn a_plan_that_fits_passes() {
        check_fits_in(&files(50), 1, &room(100, 0)).unwrap();
        // The tree's root and 16 kept back: 83 items are the most on 100 free inodes.
        check_fits_in(&files(83), 1, &room(100, 0)).unwrap();
    }

    #[test]
    fn too_many_files_name_free_inodes_and_the_largest_count() {
        let e = check_fits_in(&files(200), 1, &room(100, 0)).unwrap_err();
        assert!(e.contains("this plan makes 217 inodes"), "{e}");
        assert!(e.contains("100 free inodes (df -i)"), "{e}");
        assert!(e.contains("at most 83 items per client (--items, mdtest -n) fit"), "{e}");
        // What it names fits, one more does not.
        check_fits_in(&files(83), 1, &room(100, 0)).unwrap();
        check_fits_in(&files(84), 1, &room(100, 0)).unwrap_err();
    }

    #[test]
    fn a_run_on_what_an_earlier_run_left_needs_no_inodes() {
        let mut stat_only = files(200);
        stat_only.phases = vec![Phase::FileStat];
        stat_only.in_place = true;
        check_fits_in(&stat_only, 1, &room(100, 0)).unwrap();
        // A create in place is checked as any create.
        stat_only.phases = vec![Phase::FileCreate];
        check_fits_in(&stat_only, 1, &room(100, 0)).unwrap_err();
    }

    #[test]
    fn clients_multiply_the_items_of_a_shared_folder() {
        let e = check_fits_in(&files(50), 4, &room(100, 0)).unwrap_err();
        // 200 items + 1 folder + 16; (100 - 1 - 16) / 4 = 20.
        assert!(e.contains("this plan makes 217 inodes"), "{e}");
        assert!(e.contains("at most 20 items per client"), "{e}");
    }

    #[test]
    fn both_kinds_are_alive_at_once_only_when_directories_stay() {
        let mut p = plan(ItemCount::PerClient(45), ItemKinds::Both, (0, 1, false), Layout::Shared);
        check_fits_in(&p, 1, &room(100, 0)).unwrap();
        p.phases.retain(|ph| *ph != Phase::DirRemove);
        let e = check_fits_in(&p, 1, &room(100, 0)).unwrap_err();
        // 2 x 45 + 1 folder + 16.
        assert!(e.contains("this plan makes 107 inodes"), "{e}");
        assert!(e.contains("of 2 kind(s) at once"), "{e}");
        assert!(e.contains("at most 41 items per client"), "{e}");
    }

    #[test]
    fn a_tree_per_client_counts_b_to_the_d_per_client_and_items_per_folder() {
        // -z 2 -b 4 -I 100 -L -u, 2 clients: 21 folders each, 16 leaves x 100 files each.
        let p = plan(ItemCount::PerFolder(100), ItemKinds::Files, (2, 4, true), Layout::PerClient);
        let e = check_fits_in(&p, 2, &room(3000, 0)).unwrap_err();
        // 2 x 16 x 100 = 3,200 files + 42 folders + 16.
        assert!(e.contains("this plan makes 3258 inodes"), "{e}");
        assert!(e.contains("42 folder(s) of a tree of depth 2 and branching 4 per client"), "{e}");
        // (3000 - 42 - 16) / (2 x 16) = 91.
        assert!(e.contains("at most 91 items per folder (--items-per-folder, mdtest -I) fit"), "{e}");
        let fits = MetadataPlan { items: ItemCount::PerFolder(91), ..p };
        check_fits_in(&fits, 2, &room(3000, 0)).unwrap();
    }

    #[test]
    fn items_in_every_folder_count_every_folder() {
        let p = plan(ItemCount::PerFolder(10), ItemKinds::Files, (2, 4, false), Layout::Shared);
        let e = check_fits_in(&p, 1, &room(200, 0)).unwrap_err();
        // 21 folders x 10 + 21 + 16.
        assert!(e.contains("this plan makes 247 inodes"), "{e}");
    }

    #[test]
    fn a_tree_past_any_disk_is_refused_without_overflow() {
        let p = plan(ItemCount::PerFolder(u64::MAX), ItemKinds::Both, (1000, 1000, false), Layout::PerClient);
        let e = check_fits_in(&p, 1000, &room(1_000_000, u64::MAX)).unwrap_err();
        assert!(e.contains("the tree alone does not fit: give a smaller depth or branching"), "{e}");
        assert!(e.contains("one tree per client"), "{e}");
    }

    #[test]
    fn iterations_add_up_what_the_run_does_not_remove() {
        let mut p = files(30);
        p.iterations = 3;
        check_fits_in(&p, 1, &room(100, 0)).unwrap();
        p.phases.retain(|ph| *ph != Phase::FileRemove);
        let e = check_fits_in(&p, 1, &room(100, 0)).unwrap_err();
        assert!(e.contains("x 3 iterations"), "{e}");
        // (100 - 3 folders - 16) / 3 = 27.
        assert!(e.contains("at most 27 items per client"), "{e}");
    }

    #[test]
    fn a_file_system_that_counts_no_inodes_is_not_checked_for_them() {
        let mut r = room(0, 0);
        r.target.free_inodes = None;
        check_fits_in(&files(1_000_000_000), 1, &r).unwrap();
    }

    #[test]
    fn written_bytes_round_up_to_the_fragment_and_name_the_largest_count() {
        let mut p = files(1000);
        p.write_bytes = 3901;
        let e = check_fits_in(&p, 2, &room(1_000_000, 4096 * 1500)).unwrap_err();
        assert!(e.contains("this plan writes 8192000 bytes"), "{e}");
        assert!(e.contains("4096 each in 4096-byte fragments"), "{e}");
        assert!(e.contains("at most 750 items per client (--items, mdtest -n) fit"), "{e}");
        check_fits_in(&files(750), 2, &room(1_000_000, 4096 * 1500)).unwrap();
    }

    #[test]
    fn empty_files_take_no_space() {
        check_fits_in(&files(1000), 1, &room(1_000_000, 0)).unwrap();
    }

    #[test]
    fn clients_past_the_open_file_limit_name_it_and_the_largest_count() {
        let mut r = room(1_000_000, 0);
        r.process.open_files = Some(100);
        check_fits_in(&files(10), 18, &r).unwrap();
        let e = check_fits_in(&files(10), 40, &r).unwrap_err();
        assert!(e.contains("open-file limit (RLIMIT_NOFILE, hard) is 100"), "{e}");
        assert!(e.contains("at most 18 clients fit"), "{e}");
        r.process.open_files = Some(10);
        let e = check_fits_in(&files(10), 1, &r).unwrap_err();
        assert!(e.contains("not even 1 client fits"), "{e}");
    }

    #[test]
    fn the_items_order_is_checked_against_memory() {
        let mut r = room(u64::MAX, 0);
        r.process.memory = Some(8 * 1000);
        check_fits_in(&files(1000), 1, &r).unwrap();
        let e = check_fits_in(&files(2000), 2, &r).unwrap_err();
        assert!(e.contains("32000 bytes (4000 item(s) x 8 bytes)"), "{e}");
        assert!(e.contains("at most 500 items per client"), "{e}");
    }

    #[test]
    fn a_stonewalled_count_is_a_ceiling_not_refused() {
        let mut p = files(3_000_000);
        p.stonewall = Some(std::time::Duration::from_secs(300));
        check_fits_in(&p, 2, &room(2_000_000, 0)).unwrap();
        let mut r = room(2_000_000, 0);
        r.process.open_files = Some(64);
        assert!(check_fits_in(&p, 2, &r).unwrap_err().contains("RLIMIT_NOFILE"));
    }

    #[test]
    fn the_real_target_is_read_and_named() {
        let dir = tempfile::tempdir().unwrap();
        let room = Room::read(dir.path()).unwrap();
        assert!(room.target.fragment >= 512, "{room:?}");
        // Past any disk in bytes, whether or not its file system counts inodes.
        let huge = MetadataPlan { write_bytes: 1, ..files(u64::MAX) };
        let e = check_fits(&huge, dir.path(), 1).unwrap_err();
        assert!(e.contains(&dir.path().display().to_string()), "{e}");
        let e = check_fits(&files(1), &dir.path().join("missing"), 1).unwrap_err();
        assert!(e.contains("cannot read the free inodes and space"), "{e}");
    }
}
