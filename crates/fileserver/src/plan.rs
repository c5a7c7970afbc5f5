//! The validated plan of a file-server run, and what it asks of each
//! connection, operation by operation (so a run can be checked against it
//! and a failed connection's unfinished work counted as lost).

use iomatrix_core::figures::or_default;
use iomatrix_core::{ByteSize, UsageError, MIB};
use iomatrix_random::{draw_at, Generator};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Connections above this are refused: each is a thread of this process.
pub const MAX_CONNECTIONS: usize = 65_536;
/// Each connection holds one record in memory; larger records are refused.
pub const MAX_RECORD: u64 = 64 * MIB;
/// A file being written, as a connection keeps it: its name (a `String`
/// with its heap block), handle, index and sizes.
pub const GROWING_BYTES: u64 = 160;

/// The operation types timed apart, in report order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// `open(O_CREAT|O_EXCL|O_WRONLY)` + `close`, as Java's `createNewFile`.
    Create,
    /// `open(O_WRONLY)` to write, `open(O_RDONLY)` to read, `open(O_WRONLY|O_TRUNC)` to rewrite.
    Open,
    /// One record's `write(2)` (continued if the kernel takes less).
    Write,
    /// One record's `read(2)`; the final read that finds the end of the file is not counted.
    Read,
    /// `fsync(2)`, only with `--fsync-every`.
    Fsync,
    /// `close(2)` of a file after its last record.
    Close,
}

impl Op {
    /// Every operation type, in the order tables show them.
    pub const ALL: [Op; 6] = [Op::Create, Op::Open, Op::Write, Op::Read, Op::Fsync, Op::Close];

    /// The name tables and stored figures use.
    pub fn name(self) -> &'static str {
        match self {
            Op::Create => "create",
            Op::Open => "open",
            Op::Write => "write",
            Op::Read => "read",
            Op::Fsync => "fsync",
            Op::Close => "close",
        }
    }

    /// Its place in [`Op::ALL`], for per-type arrays.
    pub fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A count per operation type.
/// Stored in a phase's figures: a count it lacks reads as 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct OpCounts {
    /// Exclusive creates.
    #[serde(deserialize_with = "or_default")]
    pub create: u64,
    /// Opens.
    #[serde(deserialize_with = "or_default")]
    pub open: u64,
    /// Record writes.
    #[serde(deserialize_with = "or_default")]
    pub write: u64,
    /// Record reads.
    #[serde(deserialize_with = "or_default")]
    pub read: u64,
    /// fsyncs.
    #[serde(deserialize_with = "or_default")]
    pub fsync: u64,
    /// Closes.
    #[serde(deserialize_with = "or_default")]
    pub close: u64,
}

impl OpCounts {
    /// The count of `op`.
    pub fn get(&self, op: Op) -> u64 {
        match op {
            Op::Create => self.create,
            Op::Open => self.open,
            Op::Write => self.write,
            Op::Read => self.read,
            Op::Fsync => self.fsync,
            Op::Close => self.close,
        }
    }

    fn slot(&mut self, op: Op) -> &mut u64 {
        match op {
            Op::Create => &mut self.create,
            Op::Open => &mut self.open,
            Op::Write => &mut self.write,
            Op::Read => &mut self.read,
            Op::Fsync => &mut self.fsync,
            Op::Close => &mut self.close,
        }
    }

    /// Adds `n` to the count of `op`, saturating.
    pub fn add(&mut self, op: Op, n: u64) {
        let slot = self.slot(op);
        *slot = slot.saturating_add(n);
    }

    /// Operations of every type.
    pub fn total(&self) -> u64 {
        Op::ALL.iter().map(|&op| self.get(op)).sum()
    }

    /// Each count plus `other`'s, saturating.
    #[must_use]
    pub fn plus(&self, other: &OpCounts) -> OpCounts {
        let mut out = *self;
        for op in Op::ALL {
            out.add(op, other.get(op));
        }
        out
    }

    /// Each count less `other`'s, never below zero.
    #[must_use]
    pub fn minus(&self, other: &OpCounts) -> OpCounts {
        let mut out = OpCounts::default();
        for op in Op::ALL {
            *out.slot(op) = self.get(op).saturating_sub(other.get(op));
        }
        out
    }
}

/// What follows the write phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Then {
    /// Every connection reads all its files back (seed 003's read test).
    Read,
    /// Every connection visits each of its files once, in a seeded random
    /// order, and reads it whole (`read_percent`% of the visits) or rewrites it.
    Mix {
        /// The visits that read, in %; the rest rewrite.
        read_percent: u8,
    },
}

/// One phase of a run; each is one stored cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Every connection creates and writes its files.
    Write,
    /// Every connection reads all its files back.
    Read,
    /// Every connection visits each of its files once, reading or rewriting it ([`Then::Mix`]).
    Mix {
        /// The visits that read, in %; the rest rewrite.
        read_percent: u8,
    },
}

impl Phase {
    /// The cell's test name: `write`, `read`, `mix`.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Write => "write",
            Phase::Read => "read",
            Phase::Mix { .. } => "mix",
        }
    }

    /// The operation types this phase can do, in report order.
    pub fn ops(self, fsync: bool) -> Vec<Op> {
        let mut ops = match self {
            Phase::Write => vec![Op::Create, Op::Open, Op::Write, Op::Fsync, Op::Close],
            Phase::Read => vec![Op::Open, Op::Read, Op::Close],
            Phase::Mix { .. } => vec![Op::Open, Op::Write, Op::Read, Op::Fsync, Op::Close],
        };
        if !fsync {
            ops.retain(|&op| op != Op::Fsync);
        }
        ops
    }

    /// True when the phase reads, so a page-cache drop before it matters.
    pub fn reads(self) -> bool {
        !matches!(self, Phase::Write)
    }
}

/// A loaded size profile: a size for a uniformly random u64.
#[derive(Clone)]
pub struct SizeDraw(Arc<dyn Fn(u64) -> u64 + Send + Sync>);

impl SizeDraw {
    /// A draw from `draw`, which maps a uniform 64-bit number to a size in bytes.
    pub fn new(draw: impl Fn(u64) -> u64 + Send + Sync + 'static) -> SizeDraw {
        SizeDraw(Arc::new(draw))
    }
}

impl fmt::Debug for SizeDraw {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SizeDraw(..)")
    }
}

/// Where each file's size comes from.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileSizes {
    /// File `i` of every connection is `list[i % list.len()]`, so the work is exact and known.
    List(Vec<ByteSize>),
    /// Each file's size drawn from a profile (a file-size distribution),
    /// from a generator seeded per connection and file, so runs repeat.
    Profile {
        /// The profile file, as given.
        path: PathBuf,
        /// Files the profile was made from (for the record).
        profile_files: u64,
        /// The loaded profile; absent in a plan read back from the store.
        #[serde(skip)]
        draw: Option<SizeDraw>,
    },
}

impl FileSizes {
    /// Loads a file-size profile (`iomatrix.profile/1`, written by `iomatrix scan --save-profile`)
    /// to draw sizes from; a missing, empty or malformed file is the user's to fix.
    pub fn load_profile(path: &Path) -> Result<FileSizes, UsageError> {
        let profile = iomatrix_tree::Profile::load(path).map_err(|e| UsageError::new(format!("--profile: {e}")))?;
        let profile_files = profile.total_files();
        if profile_files == 0 {
            return Err(UsageError::new(format!(
                "--profile: {} holds no files to draw sizes from; give a profile of a tree with files",
                path.display()
            )));
        }
        Ok(FileSizes::Profile {
            path: path.to_path_buf(),
            profile_files,
            draw: Some(SizeDraw::new(move |u| profile.draw(u))),
        })
    }
}

/// A validated file-server run. Every connection has its own folder and
/// files; all start each phase together.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct FileserverPlan {
    /// Connections, each a thread with its own folder and files.
    pub connections: usize,
    /// Files each connection writes and reads.
    pub files_per_connection: u64,
    /// Where each file's size comes from.
    pub sizes: FileSizes,
    /// Files are written and read in requests of this size (the last may be shorter).
    pub record: ByteSize,
    /// What follows the write phase.
    pub then: Then,
    /// fsync after every N records of a file and after its last record.
    pub fsync_every: Option<u64>,
    /// Write N files of a connection at once, one record to each in turn.
    pub interleave: Option<u64>,
    /// `sync` and drop the page cache before the phase after the writes.
    pub drop_caches: bool,
    /// Seeds the drawn sizes and the mix's order; stored so a run can be repeated.
    pub seed: u64,
    /// The write phase and the one after it run this many times (`--repeat`),
    /// each time on fresh files.
    #[serde(default = "one")]
    pub repeats: u32,
    /// Stamped blocks (`--verify`, `--compressible`) instead of one shared buffer.
    #[serde(default)]
    pub content: iomatrix_verify::ContentSpec,
    /// The interval of each phase's figures over time (`--interval`), in ns.
    #[serde(
        default = "iomatrix_harness::series::default_interval_ns",
        skip_serializing_if = "iomatrix_harness::series::is_default_interval"
    )]
    pub series_interval_ns: u64,
}

fn one() -> u32 {
    1
}

/// The work one connection (or a whole phase) is asked to do. Stored in a phase's figures:
/// what it lacks reads as 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Planned {
    /// Files.
    #[serde(deserialize_with = "or_default")]
    pub files: u64,
    /// Bytes.
    #[serde(deserialize_with = "or_default")]
    pub bytes: u64,
    /// Operations, by type.
    #[serde(deserialize_with = "or_default")]
    pub ops: OpCounts,
}

impl Planned {
    /// Each figure plus `other`'s, saturating.
    #[must_use]
    pub fn plus(&self, other: &Planned) -> Planned {
        Planned {
            files: self.files.saturating_add(other.files),
            bytes: self.bytes.saturating_add(other.bytes),
            ops: self.ops.plus(&other.ops),
        }
    }
}

impl FileserverPlan {
    /// The phases in order: write, then read or mix; again for each repeat.
    pub fn phases(&self) -> Vec<Phase> {
        let then = match self.then {
            Then::Read => Phase::Read,
            Then::Mix { read_percent } => Phase::Mix { read_percent },
        };
        (0..self.repeats.max(1)).flat_map(|_| [Phase::Write, then]).collect()
    }

    /// Refuses a plan that cannot run (no connections or files, a record or sizes out of range);
    /// the error names the flag and the fix.
    pub fn validate(&self) -> Result<(), UsageError> {
        if self.content.compressible > 100 {
            return Err(UsageError::new(format!(
                "--compressible {}: give a percentage from 0 (incompressible) to 100",
                self.content.compressible
            )));
        }
        if self.content.stamped() && self.record.bytes() % iomatrix_verify::UNIT as u64 != 0 {
            return Err(UsageError::new(format!(
                "--record {}: --verify and --compressible write 4k stamped blocks; choose a record of 4k or a multiple",
                self.record
            )));
        }
        if self.connections == 0 {
            return Err(UsageError::new("--connections 0: at least one connection is needed"));
        }
        if self.connections > MAX_CONNECTIONS {
            return Err(UsageError::new(format!(
                "--connections {}: at most {MAX_CONNECTIONS} (each connection is a thread of this process)",
                self.connections
            )));
        }
        if self.files_per_connection == 0 {
            return Err(UsageError::new("--files-per-connection 0: each connection needs at least one file"));
        }
        if self.files_per_connection > u64::from(u32::MAX) {
            return Err(UsageError::new(format!(
                "--files-per-connection {}: at most {} files per connection",
                self.files_per_connection,
                u32::MAX
            )));
        }
        match &self.sizes {
            FileSizes::List(list) => {
                if list.is_empty() {
                    return Err(UsageError::new("--sizes is empty: give at least one size, e.g. 4k,8k,1m"));
                }
                if list.iter().any(|s| s.bytes() == 0) {
                    return Err(UsageError::new(
                        "--sizes holds a size of 0: every file needs at least one byte; give sizes such as 4k,8k,1m",
                    ));
                }
            }
            FileSizes::Profile { path, draw, .. } => {
                if draw.is_none() {
                    return Err(UsageError::new(format!(
                        "the size profile {} is not loaded; give it with --profile",
                        path.display()
                    )));
                }
            }
        }
        if self.record.bytes() == 0 {
            return Err(UsageError::new("--record 0: a record must hold at least one byte; e.g. --record 4k"));
        }
        if self.record.bytes() > MAX_RECORD {
            return Err(UsageError::new(format!(
                "--record {}: at most {} (each connection holds one record in memory)",
                self.record,
                ByteSize(MAX_RECORD)
            )));
        }
        if self.fsync_every == Some(0) {
            return Err(UsageError::new(
                "--fsync-every 0: give how many records go between fsyncs (1 = after every record)",
            ));
        }
        if self.interleave == Some(0) {
            return Err(UsageError::new(
                "--interleave 0: give how many files each connection writes at once (1 or more)",
            ));
        }
        if let Then::Mix { read_percent } = self.then {
            if read_percent > 100 {
                return Err(UsageError::new(format!(
                    "--mix {read_percent}: {read_percent}% is over 100; give the percent of visits that read, 0..100"
                )));
            }
        }
        Ok(())
    }

    /// Size of file `index` of connection `rank`.
    pub fn file_size(&self, rank: usize, index: u64) -> u64 {
        match &self.sizes {
            FileSizes::List(list) if !list.is_empty() => list[(index % list.len() as u64) as usize].bytes(),
            FileSizes::List(_) => 0,
            FileSizes::Profile { draw: Some(draw), .. } => (draw.0)(draw_at(self.seed, rank as u64, index)),
            FileSizes::Profile { draw: None, .. } => 0,
        }
    }

    /// Requests a file of `size` bytes takes: its records, the last one possibly short.
    pub fn records(&self, size: u64) -> u64 {
        size.div_ceil(self.record.bytes().max(1))
    }

    /// fsyncs while writing `records` records: after every N and after the last.
    pub fn fsyncs(&self, records: u64) -> u64 {
        self.fsync_every.map_or(0, |n| records.div_ceil(n.max(1)))
    }

    /// Memory one connection holds at its peak: the record it reads into,
    /// with stamped data the record it stamps, its latency samples before
    /// they reach the shared histograms (16 bytes each), with
    /// `--interleave` the files it writes at once (`GROWING_BYTES` each),
    /// and with `--mix` the order it visits its files in (4 bytes a file).
    pub fn memory_per_connection(&self) -> u64 {
        let record = self.record.bytes();
        let stamped = if self.content.stamped() { record } else { 0 };
        let samples = (crate::SAMPLE_BUFFER * 16) as u64;
        let order = match self.then {
            Then::Mix { .. } => self.files_per_connection.saturating_mul(4),
            Then::Read => 0,
        };
        // Its series recorder and the next phase's, fixed parts (the intervals grow with the phase).
        let series = 2 * iomatrix_stats::SeriesRecorder::footprint(0);
        (record + stamped + samples + series)
            .saturating_add(self.fds_per_connection().saturating_mul(GROWING_BYTES))
            .saturating_add(order)
    }

    /// File descriptors one connection holds at once.
    pub fn fds_per_connection(&self) -> u64 {
        self.interleave.unwrap_or(1).min(self.files_per_connection).max(1)
    }

    /// What connection `rank` is asked to do in `phase`.
    pub fn planned(&self, rank: usize, phase: Phase) -> Planned {
        let mut p = Planned::default();
        let write = |p: &mut Planned, size: u64| {
            let records = self.records(size);
            p.ops.add(Op::Open, 1);
            p.ops.add(Op::Write, records);
            p.ops.add(Op::Fsync, self.fsyncs(records));
            p.ops.add(Op::Close, 1);
            p.bytes = p.bytes.saturating_add(size);
            p.files += 1;
        };
        let read = |p: &mut Planned, size: u64| {
            p.ops.add(Op::Open, 1);
            p.ops.add(Op::Read, self.records(size));
            p.ops.add(Op::Close, 1);
            p.bytes = p.bytes.saturating_add(size);
            p.files += 1;
        };
        match phase {
            Phase::Write => {
                for i in 0..self.files_per_connection {
                    p.ops.add(Op::Create, 1);
                    write(&mut p, self.file_size(rank, i));
                }
            }
            Phase::Read => {
                for i in 0..self.files_per_connection {
                    read(&mut p, self.file_size(rank, i));
                }
            }
            Phase::Mix { read_percent } => {
                for (i, reads) in MixVisits::new(self, rank, read_percent) {
                    let size = self.file_size(rank, i);
                    if reads {
                        read(&mut p, size);
                    } else {
                        write(&mut p, size);
                    }
                }
            }
        }
        p
    }

    /// What all connections together are asked to do in `phase`.
    pub fn planned_total(&self, phase: Phase) -> Planned {
        if let (FileSizes::List(_), Phase::Write | Phase::Read) = (&self.sizes, phase) {
            // Every connection does the same: one connection's work, times connections.
            let one = self.planned(0, phase);
            let n = self.connections as u64;
            let mut ops = OpCounts::default();
            for op in Op::ALL {
                ops.add(op, one.ops.get(op).saturating_mul(n));
            }
            return Planned { files: one.files.saturating_mul(n), bytes: one.bytes.saturating_mul(n), ops };
        }
        (0..self.connections).map(|rank| self.planned(rank, phase)).fold(Planned::default(), |a, b| a.plus(&b))
    }

    /// Bytes all connections write: what the run keeps on the target at its peak.
    pub fn total_bytes(&self) -> u64 {
        self.planned_total(Phase::Write).bytes
    }

    /// The largest file of the run.
    pub fn largest_file(&self) -> u64 {
        match &self.sizes {
            FileSizes::List(list) => list.iter().map(|s| s.bytes()).max().unwrap_or(0),
            FileSizes::Profile { .. } => (0..self.connections)
                .flat_map(|rank| (0..self.files_per_connection).map(move |i| (rank, i)))
                .map(|(rank, i)| self.file_size(rank, i))
                .max()
                .unwrap_or(0),
        }
    }

    /// One line for people: `16 connections x 100 files (4k..2m), 4k records, write then read`.
    pub fn describe(&self) -> String {
        let sizes = match &self.sizes {
            FileSizes::List(list) => list.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(","),
            FileSizes::Profile { path, .. } => format!("sizes from {}", path.display()),
        };
        let then = match self.then {
            Then::Read => "write then read".to_string(),
            Then::Mix { read_percent } => format!("write then mix ({read_percent}% read)"),
        };
        let mut s = format!(
            "{} connections x {} files ({sizes}), {} records, {then}",
            self.connections, self.files_per_connection, self.record
        );
        if let Some(n) = self.fsync_every {
            s.push_str(&format!(", fsync every {n} records"));
        }
        if let Some(n) = self.interleave {
            s.push_str(&format!(", {n} files written at once"));
        }
        s
    }
}

/// The mixed phase's visits of one connection: each file once, in a
/// seeded random order, with whether the visit reads (else rewrites).
pub struct MixVisits {
    order: Vec<u32>,
    pos: usize,
    rng: Generator,
    read_percent: u8,
}

impl MixVisits {
    /// Connection `rank`'s visits of a mix phase: its files in a seeded random order, each read
    /// (`read_percent`% of them) or rewritten.
    pub fn new(plan: &FileserverPlan, rank: usize, read_percent: u8) -> MixVisits {
        let mut rng = Generator::seeded(plan.seed ^ 0x6d69_7800 ^ ((rank as u64) << 32));
        let n = plan.files_per_connection.min(u64::from(u32::MAX)) as u32;
        let mut order: Vec<u32> = (0..n).collect();
        rng.shuffle(&mut order);
        MixVisits { order, pos: 0, rng, read_percent }
    }
}

impl Iterator for MixVisits {
    type Item = (u64, bool);
    fn next(&mut self) -> Option<(u64, bool)> {
        let file = *self.order.get(self.pos)?;
        self.pos += 1;
        Some((u64::from(file), self.rng.below(100) < u64::from(self.read_percent)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iomatrix_core::KIB;

    pub(crate) fn plan() -> FileserverPlan {
        FileserverPlan {
            connections: 3,
            files_per_connection: 5,
            sizes: FileSizes::List(vec![ByteSize(4 * KIB), ByteSize(10 * KIB), ByteSize(1)]),
            record: ByteSize(4 * KIB),
            then: Then::Read,
            fsync_every: None,
            interleave: None,
            drop_caches: false,
            seed: 7,
            repeats: 1,
            content: Default::default(),
            series_interval_ns: iomatrix_stats::series::DEFAULT_INTERVAL_NS,
        }
    }

    #[test]
    fn bad_plans_name_the_problem() {
        let err = |f: &dyn Fn(&mut FileserverPlan)| {
            let mut p = plan();
            f(&mut p);
            p.validate().unwrap_err().to_string()
        };
        assert!(err(&|p| p.connections = 0).contains("--connections 0"));
        assert!(err(&|p| p.files_per_connection = 0).contains("--files-per-connection 0"));
        assert!(err(&|p| p.sizes = FileSizes::List(vec![ByteSize(4096), ByteSize(0)])).contains("size of 0"));
        assert!(err(&|p| p.sizes = FileSizes::List(vec![])).contains("--sizes is empty"));
        assert!(err(&|p| p.record = ByteSize(0)).contains("--record 0"));
        assert!(err(&|p| p.record = ByteSize(1 << 30)).contains("at most 64m"));
        assert!(err(&|p| p.fsync_every = Some(0)).contains("--fsync-every 0"));
        assert!(err(&|p| p.interleave = Some(0)).contains("--interleave 0"));
        assert!(err(&|p| p.then = Then::Mix { read_percent: 101 }).contains("101% is over 100"));
        assert!(err(&|p| p.sizes = FileSizes::Profile { path: "/x.profile".into(), profile_files: 0, draw: None })
            .contains("not loaded"));
        assert!(plan().validate().is_ok());
    }

    #[test]
    fn sizes_cycle_through_the_list_and_counts_follow() {
        let p = plan();
        let sizes: Vec<u64> = (0..5).map(|i| p.file_size(2, i)).collect();
        assert_eq!(sizes, [4096, 10240, 1, 4096, 10240]);
        // Records: 1 + 3 + 1 + 1 + 3.
        let w = p.planned(0, Phase::Write);
        assert_eq!(w.ops, OpCounts { create: 5, open: 5, write: 9, read: 0, fsync: 0, close: 5 });
        assert_eq!(w.bytes, 4096 * 2 + 10240 * 2 + 1);
        assert_eq!(w.files, 5);
        let r = p.planned(1, Phase::Read);
        assert_eq!(r.ops, OpCounts { create: 0, open: 5, write: 0, read: 9, fsync: 0, close: 5 });
        let all = p.planned_total(Phase::Write);
        assert_eq!(all.ops.write, 27);
        assert_eq!(all.bytes, 3 * w.bytes);
        assert_eq!(p.total_bytes(), 3 * w.bytes);
        assert_eq!(p.largest_file(), 10240);
    }

    #[test]
    fn fsyncs_come_every_n_records_and_after_the_last() {
        let mut p = plan();
        p.fsync_every = Some(2);
        assert_eq!(p.fsyncs(1), 1);
        assert_eq!(p.fsyncs(2), 1);
        assert_eq!(p.fsyncs(3), 2);
        assert_eq!(p.fsyncs(0), 0);
        // Records 1, 3, 1, 1, 3 -> fsyncs 1, 2, 1, 1, 2.
        assert_eq!(p.planned(0, Phase::Write).ops.fsync, 7);
        p.fsync_every = None;
        assert_eq!(p.fsyncs(3), 0);
    }

    #[test]
    fn mixed_visits_see_every_file_once_and_repeat() {
        let mut p = plan();
        p.files_per_connection = 200;
        let visits: Vec<(u64, bool)> = MixVisits::new(&p, 1, 70).collect();
        let mut files: Vec<u64> = visits.iter().map(|v| v.0).collect();
        assert_ne!(files, (0..200).collect::<Vec<_>>(), "shuffled");
        files.sort_unstable();
        assert_eq!(files, (0..200).collect::<Vec<_>>());
        let reads = visits.iter().filter(|v| v.1).count();
        assert!((110..170).contains(&reads), "{reads} of 200 visits read at 70%");
        assert_eq!(visits, MixVisits::new(&p, 1, 70).collect::<Vec<_>>(), "seeded");
        assert_ne!(visits, MixVisits::new(&p, 2, 70).collect::<Vec<_>>(), "per connection");
        assert!(MixVisits::new(&p, 0, 100).all(|v| v.1));
        assert!(MixVisits::new(&p, 0, 0).all(|v| !v.1));
        let m = p.planned(1, Phase::Mix { read_percent: 70 });
        assert_eq!(m.files, 200);
        assert_eq!(m.ops.open, 200);
        assert_eq!(m.ops.create, 0);
        assert!(m.ops.read > 0 && m.ops.write > 0);
    }

    #[test]
    fn profile_sizes_are_seeded_per_connection_and_file() {
        let mut p = plan();
        p.sizes = FileSizes::Profile {
            path: "x.profile".into(),
            profile_files: 10,
            draw: Some(SizeDraw::new(|u| 1 + u % (1 << 20))),
        };
        assert!(p.validate().is_ok());
        let a: Vec<u64> = (0..5).map(|i| p.file_size(1, i)).collect();
        assert_eq!(a, (0..5).map(|i| p.file_size(1, i)).collect::<Vec<_>>());
        assert_ne!(a, (0..5).map(|i| p.file_size(2, i)).collect::<Vec<_>>());
        let total: u64 = (0..3).flat_map(|r| (0..5).map(move |i| (r, i))).map(|(r, i)| p.file_size(r, i)).sum();
        assert_eq!(p.total_bytes(), total);
        // The plan serialises without the loaded profile, and reads back without it.
        let json = serde_json::to_value(&p).unwrap();
        assert_eq!(json["sizes"]["profile"]["path"], "x.profile");
        let back: FileserverPlan = serde_json::from_value(json).unwrap();
        assert!(matches!(back.sizes, FileSizes::Profile { draw: None, profile_files: 10, .. }));
    }

    #[test]
    fn profiles_load_or_say_what_is_wrong() {
        use iomatrix_tree::{Profile, SizeClass};
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("good.profile");
        let classes = vec![
            SizeClass { min_bytes: 2048, max_bytes: 4095, files: 3, bytes: 3 * 3000 },
            SizeClass { min_bytes: 1 << 20, max_bytes: (2 << 20) - 1, files: 1, bytes: 1 << 20 },
        ];
        let profile = Profile { source: "/srv".into(), created_at: String::new(), classes };
        std::fs::write(&good, profile.to_json().unwrap()).unwrap();
        let mut p = plan();
        p.sizes = FileSizes::load_profile(&good).unwrap();
        assert!(matches!(p.sizes, FileSizes::Profile { profile_files: 4, .. }));
        assert!(p.validate().is_ok());
        let sizes: Vec<u64> = (0..200).map(|i| p.file_size(0, i)).collect();
        assert!(sizes.iter().all(|&s| (2048..4096).contains(&s) || ((1 << 20)..(2 << 20)).contains(&s)));
        let big = sizes.iter().filter(|&&s| s >= 1 << 20).count();
        assert!((20..90).contains(&big), "about a quarter of 200 files from the 1m class: {big}");

        let empty = dir.path().join("empty.profile");
        std::fs::write(&empty, "").unwrap();
        let e = FileSizes::load_profile(&empty).unwrap_err().to_string();
        assert!(e.starts_with("--profile: ") && e.contains("empty"), "{e}");
        let junk = dir.path().join("junk.profile");
        std::fs::write(&junk, "{ not json").unwrap();
        assert!(FileSizes::load_profile(&junk).unwrap_err().to_string().contains("not valid JSON"));
        let missing = dir.path().join("missing.profile");
        assert!(FileSizes::load_profile(&missing).unwrap_err().to_string().contains("cannot read"));
    }
}
