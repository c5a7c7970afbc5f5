//! The walk itself: one pass over the tree, a file at a time, from a
//! [`TreeSource`]: [`LocalTree`] here, [`crate::remote::RemoteTree`] on a
//! server through iomatrix's own protocol client.

use crate::result::{BackupResult, ErrorTally, Live, Skipped};
use crate::{BackupError, BackupPlan};
use iomatrix_core::figures::CachedAtStart;
use iomatrix_extents::{ExtentSummary, ExtentTally, Fiemap, FiemapError, FileExtents};
use iomatrix_stats::{ClientSeries, CpuReading, SeriesRecorder};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};
use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Read};
use std::os::fd::AsFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// Where a file failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Listing a folder.
    Walk,
    /// Reading an entry's metadata.
    Stat,
    /// Opening a file.
    Open,
    /// Reading a file's data.
    Read,
    /// Closing a file on a server (SMB CLOSE); local closes cannot fail.
    Close,
}

impl Stage {
    /// The stage's name in error kinds ("read: Input/output error").
    pub fn name(self) -> &'static str {
        match self {
            Stage::Walk => "walk",
            Stage::Stat => "stat",
            Stage::Open => "open",
            Stage::Read => "read",
            Stage::Close => "close",
        }
    }
}

/// What the walker counts besides the files themselves.
#[derive(Debug, Default)]
pub(crate) struct TreeCounts {
    pub directories: u64,
    pub mount_points: u64,
    pub hard_links: u64,
    pub skipped: Skipped,
    pub errors: ErrorTally,
}

/// Whether the walk goes on after a file.
pub(crate) enum Flow {
    Go,
    Stop,
}

/// A regular file the walk found.
pub(crate) struct Found {
    /// As reports show it: the local path, or the target's URL joined with the path below it.
    pub path: PathBuf,
    /// The path below the tree's root for a protocol client (`""`-rooted, `/` between parts);
    /// empty for a local file.
    pub below_root: String,
    /// Bytes, as lstat or the server's listing gave them.
    pub size: u64,
}

/// What is known of a file before its timed read (outside the timing).
pub(crate) struct BeforeRead {
    /// O_NOATIME held for it (always true where it does not apply).
    pub noatime: bool,
    pub extents: Mapping,
}

/// A file's extents, or why there are none to ask for.
pub(crate) enum Mapping {
    Fiemap(Result<FileExtents, FiemapError>),
    /// No extent map exists where the file lives (the reason, for the results).
    NoExtentMap(&'static str),
}

/// Where the walked tree lives: the walk's one seam. [`LocalTree`] walks a
/// folder of this machine (walkdir, FIEMAP, O_NOATIME);
/// [`crate::remote::RemoteTree`] one on a server through a protocol client.
pub(crate) trait TreeSource {
    /// Walks the tree in walk order, counting what is not a regular file, and
    /// calls `each` for every regular file. True when the walk ended early
    /// (`stop`, `each` said so, or the tree was lost: see [`TreeSource::lost`]).
    fn walk_files(
        &mut self,
        stop: &AtomicBool,
        counts: &mut TreeCounts,
        each: &mut dyn FnMut(&mut Self, &Found, &mut TreeCounts) -> Flow,
    ) -> Result<bool, BackupError>;

    /// Untimed, before the file's timed read: its extents.
    fn before_read(&mut self, file: &Found) -> io::Result<BeforeRead>;

    /// Timed: open, read `buf.len()` bytes at a time to the end, close.
    /// `Ok(None)` when `stop` was raised part way; on failure, where, why
    /// and the bytes read before.
    fn read_whole(
        &mut self,
        file: &Found,
        before: &BeforeRead,
        buf: &mut [u8],
        stop: &AtomicBool,
    ) -> Result<Option<(u64, u64)>, (Stage, io::Error, u64)>;

    /// Counts a failed call on `path` and says whether the walk goes on: a
    /// tree that can no longer be reached at all ends it.
    fn failed(&mut self, counts: &mut TreeCounts, stage: Stage, path: &Path, error: &io::Error) -> Flow {
        counts.errors.add(stage.name(), path, error);
        Flow::Go
    }

    /// Why the walk ended before the tree's end without a stop, if it did
    /// (a server that stopped answering), naming the server and the call.
    fn lost(&self) -> Option<String> {
        None
    }
}

/// A folder of this machine, walked with walkdir and mapped with FIEMAP.
pub(crate) struct LocalTree {
    root: PathBuf,
    fiemap: Fiemap,
}

impl LocalTree {
    pub fn new(root: &Path) -> LocalTree {
        LocalTree { root: root.to_path_buf(), fiemap: Fiemap::new() }
    }
}

impl TreeSource for LocalTree {
    fn walk_files(
        &mut self,
        stop: &AtomicBool,
        counts: &mut TreeCounts,
        each: &mut dyn FnMut(&mut Self, &Found, &mut TreeCounts) -> Flow,
    ) -> Result<bool, BackupError> {
        let root = self.root.clone();
        walk_tree(&root, stop, counts, &mut |path, meta, counts| {
            let found = Found { path: path.to_path_buf(), below_root: String::new(), size: meta.len() };
            each(self, &found, counts)
        })
    }

    /// Opens the file (untimed) to map it with FIEMAP.
    fn before_read(&mut self, file: &Found) -> io::Result<BeforeRead> {
        let (pre, noatime) = open_read(&file.path, true, libc::O_NONBLOCK)?;
        Ok(BeforeRead { noatime, extents: Mapping::Fiemap(self.fiemap.count(pre.as_fd())) })
    }

    fn read_whole(
        &mut self,
        file: &Found,
        before: &BeforeRead,
        buf: &mut [u8],
        stop: &AtomicBool,
    ) -> Result<Option<(u64, u64)>, (Stage, io::Error, u64)> {
        read_whole(&file.path, before.noatime, buf, stop)
    }
}

/// Walks `root` (no symlink followed, one file system, each inode once) and
/// calls `each` for every regular file with its lstat metadata. Returns
/// true when `stop` ended the walk early.
fn walk_tree(
    root: &Path,
    stop: &AtomicBool,
    counts: &mut TreeCounts,
    each: &mut dyn FnMut(&Path, &Metadata, &mut TreeCounts) -> Flow,
) -> Result<bool, BackupError> {
    let root_meta = std::fs::metadata(root).map_err(|e| BackupError(format!("{}: {e}", root.display())))?;
    if !root_meta.is_dir() {
        return Err(BackupError(format!("{} is not a folder", root.display())));
    }
    let root_dev = root_meta.dev();
    let mut seen = HashSet::new();
    for entry in walkdir::WalkDir::new(root).follow_links(false).same_file_system(true) {
        if stop.load(Ordering::Relaxed) {
            return Ok(true);
        }
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) => {
                let path = e.path().unwrap_or(root).to_path_buf();
                match e.io_error() {
                    Some(io) => counts.errors.add(Stage::Walk.name(), &path, io),
                    None => counts.errors.add_kind(format!("walk: {e}"), &path),
                }
                continue;
            }
        };
        let kind = entry.file_type();
        if kind.is_dir() {
            if entry.depth() > 0 {
                counts.directories += 1;
                // walkdir does not enter a folder on another file system; say how many there were.
                if entry.metadata().is_ok_and(|m| m.dev() != root_dev) {
                    counts.mount_points += 1;
                }
            }
        } else if kind.is_symlink() {
            counts.skipped.symlinks += 1;
        } else if kind.is_file() {
            let meta = match entry.metadata() {
                Ok(meta) => meta,
                Err(e) => {
                    match e.io_error() {
                        Some(io) => counts.errors.add(Stage::Stat.name(), entry.path(), io),
                        None => counts.errors.add_kind(format!("stat: {e}"), entry.path()),
                    }
                    continue;
                }
            };
            // A file with several names is read once, as tar stores it once.
            if meta.nlink() > 1 && !seen.insert((meta.dev(), meta.ino())) {
                counts.hard_links += 1;
                continue;
            }
            if let Flow::Stop = each(entry.path(), &meta, counts) {
                return Ok(true);
            }
        } else if kind.is_fifo() {
            counts.skipped.fifos += 1;
        } else if kind.is_socket() {
            counts.skipped.sockets += 1;
        } else if kind.is_block_device() || kind.is_char_device() {
            counts.skipped.devices += 1;
        } else {
            counts.skipped.other += 1;
        }
    }
    Ok(false)
}

/// Opens `path` read-only, without following a symlink, with O_NOATIME if
/// `noatime`; O_NOATIME refused (EPERM: not the owner, no CAP_FOWNER) falls
/// back to a plain open. Returns the file and whether O_NOATIME held.
fn open_read(path: &Path, noatime: bool, extra: i32) -> io::Result<(File, bool)> {
    let base = libc::O_NOFOLLOW | libc::O_CLOEXEC | extra;
    if noatime {
        match OpenOptions::new().read(true).custom_flags(base | libc::O_NOATIME).open(path) {
            Err(e) if e.raw_os_error() == Some(libc::EPERM) => {}
            other => return other.map(|f| (f, true)),
        }
    }
    OpenOptions::new().read(true).custom_flags(base).open(path).map(|f| (f, false))
}

/// One file's timed part: open, read `buf.len()` bytes at a time to the
/// end, close. `Ok(None)` when `stop` was raised part way. On success, the
/// bytes and read calls. On failure, where, why, and the bytes read before.
pub fn read_whole(
    path: &Path,
    noatime: bool,
    buf: &mut [u8],
    stop: &AtomicBool,
) -> Result<Option<(u64, u64)>, (Stage, io::Error, u64)> {
    let (mut file, _) = open_read(path, noatime, 0).map_err(|e| (Stage::Open, e, 0))?;
    let (mut bytes, mut reads) = (0u64, 0u64);
    loop {
        if stop.load(Ordering::Relaxed) {
            return Ok(None);
        }
        match file.read(buf) {
            Ok(0) => break,
            Ok(n) => {
                bytes += n as u64;
                reads += 1;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err((Stage::Read, e, bytes)),
        }
    }
    drop(file);
    Ok(Some((bytes, reads)))
}

/// Walks the plan's tree and reads every regular file; `live` hears after
/// each file. Errors on single files are counted and the walk goes on;
/// only a root that cannot be walked, or a failed syncfs, ends it. A cold
/// walk syncs and drops every file's cached pages first, untimed.
pub fn execute(plan: &BackupPlan, stop: &AtomicBool, live: &mut dyn FnMut(&Live)) -> Result<BackupResult, BackupError> {
    let prepared = prepare(plan, stop)?;
    walk(&mut LocalTree::new(&plan.root), plan, &prepared, Instant::now(), stop, live).map(|walked| walked.result)
}

/// What a cold walk did before its start, untimed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Prepared {
    pub sync_ns: u64,
    pub evict_ns: u64,
    pub evict_failures: u64,
    /// What the page cache still held of the files after the drop (mincore), over the files
    /// the kernel answers for; None for a warm walk.
    pub cached_at_start: Option<CachedAtStart>,
    /// Files whose cached pages the kernel would not count for this process.
    pub cache_uncounted: u64,
}

/// The untimed part before the walk (before the clients' common start):
/// checks the plan and the root; for a cold walk, syncs the root's file
/// system and drops every regular file's cached pages, walking the tree as
/// [`walk`] will, then counts what stayed cached (pages another process maps
/// or has locked stay: POSIX_FADV_DONTNEED leaves them). A file that cannot be
/// opened here is left to the walk, which counts it; a raised `stop` ends the
/// pass early (the walk then stops at once).
pub(crate) fn prepare(plan: &BackupPlan, stop: &AtomicBool) -> Result<Prepared, BackupError> {
    plan.validate().map_err(|e| BackupError(format!("the backup plan cannot run: {e}")))?;
    let root = plan.root.as_path();
    let mut prepared = Prepared::default();
    if !plan.cold {
        return Ok(prepared);
    }
    let dir = File::open(root).map_err(|e| BackupError(format!("{}: {e}", root.display())))?;
    let t = Instant::now();
    rustix::fs::syncfs(&dir)
        .map_err(|e| BackupError(format!("cannot sync the file system of {}: {e}", root.display())))?;
    prepared.sync_ns = t.elapsed().as_nanos() as u64;
    let t = Instant::now();
    let mut cached = CachedAtStart::default();
    walk_tree(root, stop, &mut TreeCounts::default(), &mut |path, meta, _counts| {
        if let Ok((file, _)) = open_read(path, true, libc::O_NONBLOCK) {
            if rustix::fs::fadvise(&file, 0, None, rustix::fs::Advice::DontNeed).is_err() {
                prepared.evict_failures += 1;
            }
            match still_cached(path, meta, &file) {
                Some(held) => cached = CachedAtStart::sum([cached, held]).unwrap_or_default(),
                None => prepared.cache_uncounted += 1,
            }
        }
        Flow::Go
    })?;
    prepared.evict_ns = t.elapsed().as_nanos() as u64;
    prepared.cached_at_start = Some(cached);
    Ok(prepared)
}

/// What the page cache holds of a file just dropped from it (mincore over a mapping of its
/// open descriptor, nothing read), or None where the kernel does not answer this process.
fn still_cached(path: &Path, meta: &Metadata, file: &File) -> Option<CachedAtStart> {
    if !iomatrix_backend::residency_answered(path, meta) {
        return None;
    }
    iomatrix_backend::residency_of(file, meta.len()).ok()
}

/// A finished walk, and its files by extent count (every file FIEMAP
/// mapped, as in `result.extents`) so that several clients' extent
/// summaries can be merged exactly.
#[derive(Debug, Clone, Default)]
pub(crate) struct Walked {
    pub result: BackupResult,
    pub extent_counts: BTreeMap<u64, u64>,
    /// The files read, over time from `origin`: each a read of its bytes, timed as the walk
    /// times it (open, read to the end, close).
    pub series: ClientSeries,
}

/// The walk itself, after [`prepare`] (locally): `origin` is its clock's
/// zero (the clients' common start), so `wall_ns` runs from there to the
/// walk's end. Per file, untimed: what `source` knows before the read (a
/// local file is opened and mapped with FIEMAP); timed: open, read to the
/// end, close.
pub(crate) fn walk<S: TreeSource>(
    source: &mut S,
    plan: &BackupPlan,
    prepared: &Prepared,
    origin: Instant,
    stop: &AtomicBool,
    live: &mut dyn FnMut(&Live),
) -> Result<Walked, BackupError> {
    let mut result = BackupResult {
        cold: plan.cold,
        sync_ns: prepared.sync_ns,
        evict_ns: prepared.evict_ns,
        evict_failures: prepared.evict_failures,
        cached_at_start: prepared.cached_at_start,
        cache_uncounted: prepared.cache_uncounted,
        ..BackupResult::default()
    };
    let mut buf = Vec::new();
    // A read size the user chose: memory the machine lacks is the client's error, not an abort.
    buf.try_reserve_exact(plan.read_size as usize).map_err(|_| {
        BackupError(format!(
            "cannot allocate the read buffer of {} bytes: not that much memory is free",
            plan.read_size
        ))
    })?;
    buf.resize(plan.read_size as usize, 0);
    let mut extents = ExtentTally::new();
    let mut extent_counts = BTreeMap::new();
    // Files where no extent map exists (over a protocol), and why.
    let (mut unmapped, mut unmapped_why) = (0u64, "");
    let mut counts = TreeCounts::default();
    let mut series = SeriesRecorder::new(plan.series_interval_ns);
    let cpu = CpuReading::now();
    let ended_early = source.walk_files(stop, &mut counts, &mut |source, file, counts| {
        // Untimed: what is known of the file before its read.
        let before = match source.before_read(file) {
            Ok(before) => before,
            Err(e) => return source.failed(counts, Stage::Open, &file.path, &e),
        };
        if !before.noatime {
            result.noatime_refused += 1;
        }
        let mapped = match &before.extents {
            Mapping::Fiemap(mapped) => {
                extents.add_result(mapped);
                mapped.as_ref().ok().map(|m| m.extents)
            }
            Mapping::NoExtentMap(why) => {
                (unmapped, unmapped_why) = (unmapped + 1, *why);
                None
            }
        };
        if let Some(n) = mapped {
            *extent_counts.entry(n).or_insert(0u64) += 1;
        }
        // Timed: open, read to the end, close.
        let t = Instant::now();
        let outcome = source.read_whole(file, &before, &mut buf, stop);
        let end = Instant::now();
        let ns = end.saturating_duration_since(t).as_nanos() as u64;
        let flow = match outcome {
            Ok(Some((bytes, reads))) => {
                result.add_file(bytes, reads, ns, mapped);
                series.record(end.saturating_duration_since(origin).as_nanos() as u64, ns, bytes, false);
                Flow::Go
            }
            Ok(None) => return Flow::Stop,
            Err((stage, e, partial)) => {
                result.failed_bytes += partial;
                source.failed(counts, stage, &file.path, &e)
            }
        };
        live(&Live { errors: counts.errors.total, ..result.live() });
        flow
    })?;
    result.wall_ns = origin.elapsed().as_nanos() as u64;
    let cpu = CpuReading::now().since(cpu);
    result.user_ns = cpu.user_ns;
    result.sys_ns = cpu.sys_ns;
    result.server_lost = source.lost();
    result.interrupted = ended_early && result.server_lost.is_none();
    result.directories = counts.directories;
    result.mount_points = counts.mount_points;
    result.hard_links = counts.hard_links;
    result.skipped = counts.skipped;
    result.errors = counts.errors;
    result.extents = extents.summary();
    if unmapped > 0 {
        result.extents.files_without_fiemap += unmapped;
        result.extents.no_fiemap_errno = unmapped_why.to_string();
    }
    result.derive();
    Ok(Walked { series: series.finish(result.wall_ns), result, extent_counts })
}

/// A tree's extents, without reading data.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ExtentsWalk {
    /// Regular files looked at (each inode once).
    pub files: u64,
    /// Their extents.
    pub extents: ExtentSummary,
    /// Folders below the root.
    pub directories: u64,
    /// Folders on another file system (mount points), not entered.
    pub mount_points: u64,
    /// Further names of files already looked at (hard links).
    pub hard_links: u64,
    /// Entries that are not regular files: counted, never opened.
    pub skipped: Skipped,
    /// Files that could not be opened or stat'ed, folders that could not be read.
    pub errors: ErrorTally,
    /// Ctrl-C ended the walk early: the figures cover what was done before it.
    pub interrupted: bool,
}

/// Walks `root` as [`execute`] does and maps every regular file with
/// FIEMAP (with FIEMAP_FLAG_SYNC if `sync`), reading no data. `each` hears
/// every file's outcome, in walk order.
pub fn extents_of_tree(
    root: &Path,
    sync: bool,
    stop: &AtomicBool,
    each: &mut dyn FnMut(&Path, &Result<FileExtents, FiemapError>),
) -> Result<ExtentsWalk, BackupError> {
    let mut fiemap = Fiemap::new().with_sync(sync);
    let mut tally = ExtentTally::new();
    let mut counts = TreeCounts::default();
    let mut files = 0;
    let interrupted = walk_tree(root, stop, &mut counts, &mut |path, _meta, counts| {
        files += 1;
        let mapped = match open_read(path, true, libc::O_NONBLOCK) {
            Ok((file, _)) => fiemap.count(file.as_fd()),
            Err(e) => {
                counts.errors.add(Stage::Open.name(), path, &e);
                Err(FiemapError::Failed(e))
            }
        };
        tally.add_result(&mapped);
        each(path, &mapped);
        Flow::Go
    })?;
    Ok(ExtentsWalk {
        files,
        extents: tally.summary(),
        directories: counts.directories,
        mount_points: counts.mount_points,
        hard_links: counts.hard_links,
        skipped: counts.skipped,
        errors: counts.errors,
        interrupted,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn tree() -> (tempfile::TempDir, u64) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        let sizes: [(&str, usize); 5] =
            [("empty", 0), ("one", 1), ("a/page", 4096), ("a/b/big", 3 << 20), ("a/b/odd", (1 << 20) + 7)];
        for (name, size) in sizes {
            let mut f = File::create(root.join(name)).unwrap();
            f.write_all(&vec![0x5a; size]).unwrap();
        }
        std::os::unix::fs::symlink(root.join("a/b/big"), root.join("link")).unwrap();
        std::fs::hard_link(root.join("a/page"), root.join("a/b/page-again")).unwrap();
        let fifo = std::ffi::CString::new(root.join("fifo").into_os_string().into_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path; mkfifo only creates the node.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        (dir, sizes.iter().map(|(_, s)| *s as u64).sum())
    }

    fn plan(root: &Path, read_size: u64, cold: bool) -> BackupPlan {
        BackupPlan { read_size, cold, ..BackupPlan::new(root.to_path_buf()) }
    }

    #[test]
    fn every_file_is_read_to_the_end_once() {
        let (dir, total) = tree();
        for (read_size, cold) in [(1 << 20, true), (4096, false), (1000, true)] {
            let mut lives = 0;
            let r = execute(&plan(dir.path(), read_size, cold), &AtomicBool::new(false), &mut |_| lives += 1).unwrap();
            assert_eq!((r.files, r.bytes), (5, total), "read size {read_size}");
            assert_eq!(lives, 5);
            assert_eq!(r.hard_links, 1, "the second name of a/page is not read again");
            assert_eq!((r.skipped.symlinks, r.skipped.fifos, r.skipped.total()), (1, 1, 2));
            assert_eq!(r.directories, 2);
            assert_eq!(r.errors.total, 0, "{:?}", r.errors);
            assert!(!r.interrupted);
            // Reads: ceil(size / read size) each, none for the empty file.
            let expect: u64 = [0u64, 1, 4096, 3 << 20, (1 << 20) + 7].iter().map(|s| s.div_ceil(read_size)).sum();
            assert_eq!(r.reads, expect);
            let classes: Vec<(u32, u64)> = r.classes.iter().map(|c| (c.class, c.files)).collect();
            assert_eq!(classes, [(0, 1), (1, 1), (13, 1), (21, 1), (22, 1)]);
            assert!(r.read_ns > 0 && r.wall_ns >= r.read_ns && r.mib_per_min > 0.0);
            assert_eq!(r.cold, cold);
            // The extents cover every file read: mapped, or on a file system without FIEMAP.
            assert_eq!(r.extents.files + r.extents.files_without_fiemap, 5);
        }
    }

    #[test]
    fn the_extent_counts_are_the_summarys_files() {
        let (dir, _) = tree();
        let p = plan(dir.path(), 4096, true);
        let prepared = prepare(&p, &AtomicBool::new(false)).unwrap();
        assert!(prepared.evict_ns > 0, "a cold walk drops the cache before it starts");
        let w =
            walk(&mut LocalTree::new(dir.path()), &p, &prepared, Instant::now(), &AtomicBool::new(false), &mut |_| {})
                .unwrap();
        let x = &w.result.extents;
        assert_eq!(w.extent_counts.values().sum::<u64>(), x.files);
        assert_eq!(w.extent_counts.iter().map(|(e, n)| e * n).sum::<u64>(), x.total_extents);
        assert_eq!((w.result.evict_ns, w.result.sync_ns), (prepared.evict_ns, prepared.sync_ns));
        assert!(w.result.wall_ns >= w.result.read_ns);
    }

    /// A cold walk counts what stayed cached after its drop: nothing of files no one maps, all
    /// of a file this process keeps mapped; a warm walk does not look.
    #[test]
    fn a_cold_walk_counts_what_stayed_cached() {
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let path = dir.path().join("mapped");
        std::fs::write(&path, vec![1u8; 2 << 20]).unwrap();
        std::fs::write(dir.path().join("plain"), vec![2u8; 2 << 20]).unwrap();
        let p = plan(dir.path(), 1 << 20, true);
        let dropped = prepare(&p, &AtomicBool::new(false)).unwrap();
        let held = dropped.cached_at_start.expect("a cold walk counts");
        assert_eq!((held.file_bytes, dropped.cache_uncounted), (4 << 20, 0));
        assert!(held.percent() < 1.0, "nothing maps these files: {held:?}");
        let file = File::open(&path).unwrap();
        // SAFETY: a shared read-only mapping of the 2 MiB file held open above, only read here
        // and unmapped before the test ends.
        let map = unsafe {
            rustix::mm::mmap(
                std::ptr::null_mut(),
                2 << 20,
                rustix::mm::ProtFlags::READ,
                rustix::mm::MapFlags::SHARED,
                &file,
                0,
            )
            .unwrap()
        };
        // SAFETY: each read lies inside the mapping; it faults the page in and keeps it mapped.
        let touched: u64 =
            (0..(2 << 20)).step_by(4096).map(|at| u64::from(unsafe { *(map as *const u8).add(at) })).sum();
        assert_eq!(touched, 512);
        let kept = prepare(&p, &AtomicBool::new(false)).unwrap().cached_at_start.unwrap();
        // SAFETY: the mapping made above, unused after this.
        unsafe { rustix::mm::munmap(map, 2 << 20).unwrap() };
        assert!(kept.cached_bytes >= 2 << 20 && kept.percent() > 49.0, "the mapped file stays cached: {kept:?}");
        let w =
            walk(&mut LocalTree::new(dir.path()), &p, &dropped, Instant::now(), &AtomicBool::new(false), &mut |_| {})
                .unwrap();
        assert_eq!(w.result.cached_at_start, Some(held), "the walk's result keeps the count");
        assert_eq!(prepare(&plan(dir.path(), 1 << 20, false), &AtomicBool::new(false)).unwrap().cached_at_start, None);
    }

    #[test]
    fn a_raised_stop_ends_the_walk_early() {
        let (dir, _) = tree();
        let r = execute(&plan(dir.path(), 4096, false), &AtomicBool::new(true), &mut |_| {}).unwrap();
        assert!(r.interrupted);
        assert_eq!(r.files, 0);
        // Raised during the walk: the file under way is dropped, the finished ones stay.
        let stop = AtomicBool::new(false);
        let r = execute(&plan(dir.path(), 4096, false), &stop, &mut |live| {
            if live.files == 2 {
                stop.store(true, Ordering::Relaxed);
            }
        })
        .unwrap();
        assert!(r.interrupted);
        assert_eq!(r.files, 2);
    }

    #[test]
    fn a_root_that_is_not_a_folder_is_refused() {
        let (dir, _) = tree();
        let e = execute(&plan(&dir.path().join("one"), 4096, false), &AtomicBool::new(false), &mut |_| {}).unwrap_err();
        assert!(e.0.contains("not a folder"), "{e}");
        let e =
            execute(&plan(&dir.path().join("missing"), 4096, true), &AtomicBool::new(false), &mut |_| {}).unwrap_err();
        assert!(e.0.contains("missing"), "{e}");
        let e = execute(&plan(dir.path(), 0, false), &AtomicBool::new(false), &mut |_| {}).unwrap_err();
        assert!(e.0.contains("read size"), "{e}");
    }

    /// Real errors at each stage of one file: a file gone before it is
    /// opened, and a read(2) that fails (a folder opens but cannot be read).
    #[test]
    fn a_file_that_fails_is_counted_by_stage_and_kind() {
        let dir = tempfile::tempdir().unwrap();
        let stop = AtomicBool::new(false);
        let mut buf = vec![0u8; 4096];
        let (stage, e, _) = read_whole(&dir.path().join("gone"), true, &mut buf, &stop).unwrap_err();
        assert_eq!((stage, e.kind()), (Stage::Open, io::ErrorKind::NotFound));
        let (stage, e, partial) = read_whole(dir.path(), true, &mut buf, &stop).unwrap_err();
        assert_eq!((stage, e.raw_os_error(), partial), (Stage::Read, Some(libc::EISDIR), 0));
        let mut t = ErrorTally::default();
        t.add(stage.name(), dir.path(), &e);
        assert_eq!(t.by_kind.keys().collect::<Vec<_>>(), ["read: Is a directory"]);
        // A symlink is never followed, even when handed over directly.
        let link: PathBuf = dir.path().join("link");
        std::os::unix::fs::symlink("/etc/hostname", &link).unwrap();
        let (stage, e, _) = read_whole(&link, true, &mut buf, &stop).unwrap_err();
        assert_eq!((stage, e.raw_os_error()), (Stage::Open, Some(libc::ELOOP)));
    }

    #[test]
    fn extents_of_a_tree_without_reading() {
        let (dir, _) = tree();
        let mut seen = Vec::new();
        let w = extents_of_tree(dir.path(), false, &AtomicBool::new(false), &mut |p, r| {
            seen.push((p.to_path_buf(), r.as_ref().map(|f| f.extents).map_err(|e| e.is_not_supported())));
        })
        .unwrap();
        assert_eq!(w.files, 5);
        assert_eq!(seen.len(), 5);
        assert_eq!(w.extents.files + w.extents.files_without_fiemap, 5);
        assert_eq!((w.hard_links, w.skipped.total(), w.errors.total), (1, 2, 0));
        for (path, r) in &seen {
            match r {
                Ok(n) => assert_eq!(*n == 0, path.ends_with("empty"), "{path:?}: {n}"),
                Err(not_supported) => assert!(not_supported, "{path:?}"),
            }
        }
    }
}
