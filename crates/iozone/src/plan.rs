use crate::IozoneTest;
use iomatrix_backend::DIRECT_ALIGN;
use iomatrix_core::{BackendKind, ByteSize, UsageError, KIB, MIB};
use iomatrix_verify::ContentSpec;

/// IOzone's auto mode: files 64 KiB .. 512 MiB, records 4 KiB .. 16 MiB.
pub const AUTO_MIN_FILE: ByteSize = ByteSize(64 * KIB);
/// Auto mode's largest file: 512 MiB.
pub const AUTO_MAX_FILE: ByteSize = ByteSize(512 * MIB);
/// Auto mode's smallest record: 4 KiB.
pub const AUTO_MIN_RECORD: ByteSize = ByteSize(4 * KIB);
/// Auto mode's largest record: 16 MiB.
pub const AUTO_MAX_RECORD: ByteSize = ByteSize(16 * MIB);
/// In auto mode, files above this size skip records below [`AUTO_SMALL_RECORD_LIMIT`] (unless `-z`).
pub const AUTO_LARGE_FILE: ByteSize = ByteSize(32 * MIB);
pub const AUTO_SMALL_RECORD_LIMIT: ByteSize = ByteSize(64 * KIB);

/// Everything one IOzone run will do, resolved: no defaults left to guess.
/// Built by the native CLI and by the IOzone front end alike, then checked
/// by [`IozonePlan::validate`] before any file is touched. It is stored with
/// the run, so a run can be repeated exactly.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct IozonePlan {
    /// File sizes, ascending.
    pub file_sizes: Vec<ByteSize>,
    /// Record sizes, ascending. A pair runs only where record <= file.
    pub record_sizes: Vec<ByteSize>,
    /// IOzone's auto-mode rule: files above 32 MiB skip records below 64 KiB.
    /// Off with `-z` and for explicit size lists.
    pub skip_small_records_for_large_files: bool,
    /// Tests in IOzone's order.
    pub tests: Vec<IozoneTest>,
    /// fsync (fflush + fsync for stdio, msync for mmap) inside the write timing (`-e`).
    pub fsync: bool,
    /// close inside the timing (`-c`).
    pub close: bool,
    /// O_DIRECT (`-I`). fwrite/fread tests stay buffered by definition.
    pub direct: bool,
    /// How each client issues its I/O (fwrite/fread tests use stdio whatever this says).
    pub backend: BackendKind,
    /// Clients on this host, each with its own folder and file (`-t`).
    pub clients: usize,
    /// The temporary file's name inside each client's folder (`-f`).
    pub file_name: String,
    /// Seeds random orders; stored so a run can be repeated.
    pub seed: u64,
    /// Each pair's tests run this many times in a row (`--repeat`), every
    /// repeat on a fresh file.
    #[serde(default = "one")]
    pub repeats: u32,
    /// Only these pairs (re-measuring noisy cells); None: every pair.
    #[serde(default)]
    pub only_pairs: Option<Vec<(ByteSize, ByteSize)>>,
    /// Stamped blocks (`--verify`, `--compressible`) instead of one reused buffer.
    #[serde(default)]
    pub content: ContentSpec,
    /// The interval of each cell's figures over time (`--interval`), in ns.
    #[serde(
        default = "iomatrix_harness::series::default_interval_ns",
        skip_serializing_if = "iomatrix_harness::series::is_default_interval"
    )]
    pub series_interval_ns: u64,
}

fn one() -> u32 {
    1
}

/// One measured point: a test at one file and record size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CellSpec {
    /// Its place in the run's order of cells, from 0.
    pub index: usize,
    /// The test.
    pub test: IozoneTest,
    /// The file size.
    pub file_size: ByteSize,
    /// The record size: bytes per request.
    pub record_size: ByteSize,
    /// The backend this cell really uses (stdio for fwrite/fread tests).
    pub backend: BackendKind,
    /// Whether this cell really bypasses the page cache.
    pub direct: bool,
    /// Last test on this file in this repeat: the client removes its file afterwards.
    pub last_for_pair: bool,
    /// Which repeat of its pair, from 1.
    pub repeat: u32,
}

impl CellSpec {
    /// The cell's name in the run's lines: its test, file size and record size.
    pub fn describe(&self) -> String {
        format!("{} file {} record {}", self.test, self.file_size, self.record_size)
    }

    /// What tells the cell's samples apart from other cells' (its repeats share it).
    pub fn key(&self) -> (ByteSize, ByteSize, IozoneTest) {
        (self.file_size, self.record_size, self.test)
    }
}

impl IozonePlan {
    /// A plan with IOzone's defaults for everything but the sizes.
    pub fn new(file_sizes: Vec<ByteSize>, record_sizes: Vec<ByteSize>) -> Self {
        IozonePlan {
            file_sizes,
            record_sizes,
            skip_small_records_for_large_files: false,
            tests: IozoneTest::default_set(),
            fsync: false,
            close: false,
            direct: false,
            backend: BackendKind::Psync,
            clients: 1,
            file_name: "iozone.tmp".to_string(),
            seed: 0x10_2006,
            repeats: 1,
            only_pairs: None,
            content: ContentSpec::default(),
            series_interval_ns: iomatrix_stats::series::DEFAULT_INTERVAL_NS,
        }
    }

    /// IOzone's auto mode between the given bounds, with its large-file rule.
    pub fn auto(min_file: ByteSize, max_file: ByteSize, min_record: ByteSize, max_record: ByteSize) -> Self {
        let mut plan = IozonePlan::new(powers_of_two(min_file, max_file), powers_of_two(min_record, max_record));
        plan.skip_small_records_for_large_files = true;
        plan
    }

    /// The (file, record) pairs that run, in order: file sizes ascending,
    /// then record sizes ascending, as IOzone walks its matrix.
    pub fn pairs(&self) -> Vec<(ByteSize, ByteSize)> {
        let mut out = Vec::new();
        for &file in &self.file_sizes {
            for &record in &self.record_sizes {
                if record > file {
                    continue;
                }
                if self.skip_small_records_for_large_files && file > AUTO_LARGE_FILE && record < AUTO_SMALL_RECORD_LIMIT
                {
                    continue;
                }
                if self.only_pairs.as_ref().is_some_and(|only| !only.contains(&(file, record))) {
                    continue;
                }
                out.push((file, record));
            }
        }
        out
    }

    /// Every cell in execution order.
    pub fn cells(&self) -> Vec<CellSpec> {
        let mut tests = self.tests.clone();
        tests.sort();
        tests.dedup();
        let mut cells = Vec::new();
        for (file_size, record_size) in self.pairs() {
            for repeat in 1..=self.repeats.max(1) {
                for (i, &test) in tests.iter().enumerate() {
                    let (backend, direct) =
                        if test.is_stdio() { (BackendKind::Stdio, false) } else { (self.backend, self.direct) };
                    cells.push(CellSpec {
                        index: cells.len(),
                        test,
                        file_size,
                        record_size,
                        backend,
                        direct,
                        last_for_pair: i + 1 == tests.len(),
                        repeat,
                    });
                }
            }
        }
        cells
    }

    /// The most any one moment of the run keeps on the target: every
    /// client's file at the largest file size (files are removed between pairs).
    pub fn peak_bytes(&self) -> u64 {
        let largest = self.pairs().iter().map(|(f, _)| f.bytes()).max().unwrap_or(0);
        largest.saturating_mul(self.clients as u64)
    }

    /// The largest record that runs, in bytes (0 for an empty plan): each client's one buffer
    /// is this size.
    pub fn largest_record(&self) -> u64 {
        self.record_sizes.iter().map(|r| r.bytes()).max().unwrap_or(0)
    }

    /// The largest file that runs (zero for an empty plan): what `--backend mmap` maps per client.
    pub fn largest_file(&self) -> ByteSize {
        self.pairs().iter().map(|(f, _)| *f).max().unwrap_or_default()
    }

    /// The record sizes in KiB, as IOzone's report and workbook list them in their header.
    pub fn record_sizes_kib(&self) -> Vec<u64> {
        self.record_sizes.iter().map(|r| r.kib()).collect()
    }

    /// The plan again for the file/record pairs of the noisy `(file, record, test)` cells, every
    /// test of each (IOzone's tests of a pair share one file: a read needs the write before it),
    /// once.
    #[must_use]
    pub fn again(&self, noisy: &[(ByteSize, ByteSize, IozoneTest)]) -> IozonePlan {
        let mut pairs: Vec<(ByteSize, ByteSize)> = noisy.iter().map(|(f, r, _)| (*f, *r)).collect();
        pairs.dedup();
        IozonePlan { only_pairs: Some(pairs), repeats: 1, ..self.clone() }
    }

    /// Checks that the plan can run, before anything runs.
    pub fn validate(&self) -> Result<(), UsageError> {
        if self.clients == 0 {
            return Err(UsageError::new("--clients 0: at least one client is needed"));
        }
        if self.tests.is_empty() {
            return Err(UsageError::new("no tests selected: name at least one with --tests"));
        }
        if self.repeats == 0 {
            return Err(UsageError::new("--repeat 0: measure each cell at least once"));
        }
        if self.file_sizes.is_empty() || self.record_sizes.is_empty() {
            return Err(UsageError::new("no file or record sizes: give --files and --records (or --auto)"));
        }
        if let Some(zero) = self.file_sizes.iter().chain(&self.record_sizes).find(|s| s.bytes() == 0) {
            return Err(UsageError::new(format!("size {zero} is zero: file and record sizes must be at least 1 byte")));
        }
        let smallest_record = self.record_sizes.iter().min().copied().unwrap_or_default();
        for &file in &self.file_sizes {
            if smallest_record > file {
                return Err(UsageError::new(format!(
                    "record size {smallest_record} is larger than file size {file}: a record must fit in the file; \
                     choose records of at most {file} or a larger file"
                )));
            }
        }
        if self.pairs().is_empty() {
            return Err(UsageError::new(
                "no file/record pair is left to run: every record is larger than its file or skipped by auto mode's \
                 large-file rule (add -z / --all-records)",
            ));
        }
        for (file, record) in self.pairs() {
            if file.bytes() % record.bytes() != 0 {
                return Err(UsageError::new(format!(
                    "file size {file} is not a whole number of {record} records: choose sizes that divide evenly"
                )));
            }
        }
        if self.backend.is_queued() {
            return Err(UsageError::new(format!(
                "the iozone suite issues one request at a time, so the {} backend has nothing to queue; \
                 use psync, sync, mmap or stdio (io_uring serves access specs with outstanding I/O)",
                self.backend
            )));
        }
        if self.direct {
            if !self.backend.supports_direct() {
                return Err(UsageError::new(format!(
                    "--direct cannot be used with the {} backend (it buffers in memory); use psync or sync",
                    self.backend
                )));
            }
            if let Some(r) = self.record_sizes.iter().find(|r| r.bytes() % DIRECT_ALIGN as u64 != 0) {
                return Err(UsageError::new(format!(
                    "record size {r} is not a multiple of {}k, which --direct (O_DIRECT) needs",
                    DIRECT_ALIGN / 1024
                )));
            }
        }
        if self.content.compressible > 100 {
            return Err(UsageError::new(format!(
                "--compressible {}: give a percentage from 0 (incompressible) to 100",
                self.content.compressible
            )));
        }
        if self.content.stamped() {
            if let Some(r) = self.record_sizes.iter().find(|r| iomatrix_verify::check_record(r.bytes()).is_err()) {
                return Err(UsageError::new(format!(
                    "record size {r} is smaller than or not a multiple of the {}k verify block: --verify and \
                     --compressible write {}k stamped blocks; choose records of 4k or a multiple",
                    iomatrix_verify::UNIT / 1024,
                    iomatrix_verify::UNIT / 1024
                )));
            }
        }
        if self.file_name.is_empty() || self.file_name.contains('/') || self.file_name == "." || self.file_name == ".."
        {
            return Err(UsageError::new(format!("file name '{}' must be a plain name without '/'", self.file_name)));
        }
        Ok(())
    }
}

/// Every power of two from `from` to `to` (both rounded to powers of two).
pub fn powers_of_two(from: ByteSize, to: ByteSize) -> Vec<ByteSize> {
    let mut out = Vec::new();
    // checked: a bound near u64::MAX (`-q 9999999999999999`, found by fuzz/) would overflow, and a
    // wrapped 0 doubles forever (the loop then never ends, and the list eats all memory).
    let mut next = from.bytes().max(1).checked_next_power_of_two();
    while let Some(v) = next.filter(|&v| v <= to.bytes()) {
        out.push(ByteSize(v));
        next = v.checked_mul(2);
    }
    out
}

#[cfg(test)]
mod tests {

    #[test]
    fn powers_of_two_stop_at_the_top_of_u64() {
        // fuzz/artifacts/iozone_front/oom-...: `-a -q 9999999999999999` never ended before.
        let all = powers_of_two(ByteSize(1), ByteSize(u64::MAX));
        assert_eq!((all.len(), all.last().copied()), (64, Some(ByteSize(1 << 63))));
        assert!(powers_of_two(ByteSize(u64::MAX), ByteSize(u64::MAX)).is_empty());
    }
    use super::*;

    fn k(n: u64) -> ByteSize {
        ByteSize(n * KIB)
    }

    #[test]
    fn the_plan_names_its_largest_record_and_file_and_its_noisy_pairs() {
        let plan = IozonePlan::new(vec![k(64), k(1024)], vec![k(4), k(256), k(16)]);
        assert_eq!((plan.largest_record(), plan.largest_file()), (256 * KIB, k(1024)));
        assert_eq!(plan.record_sizes_kib(), [4, 256, 16]);
        let empty = IozonePlan::new(vec![], vec![]);
        assert_eq!((empty.largest_record(), empty.largest_file()), (0, ByteSize(0)));
        let noisy = [(k(64), k(4), IozoneTest::Write), (k(64), k(4), IozoneTest::Read)];
        let again = plan.again(&noisy);
        assert_eq!((again.pairs(), again.repeats), (vec![(k(64), k(4))], 1));
        let cell = &again.cells()[0];
        assert_eq!(cell.key(), (k(64), k(4), cell.test));
        assert_eq!(cell.describe(), format!("{} file 64k record 4k", cell.test));
    }

    #[test]
    fn auto_mode_follows_iozone_rules() {
        let plan = IozonePlan::auto(AUTO_MIN_FILE, AUTO_MAX_FILE, AUTO_MIN_RECORD, AUTO_MAX_RECORD);
        let pairs = plan.pairs();
        assert!(pairs.iter().all(|(f, r)| r <= f));
        // 32 MiB still has 4 KiB records; 64 MiB starts at 64 KiB.
        assert!(pairs.contains(&(k(32 * 1024), k(4))));
        assert!(!pairs.iter().any(|(f, r)| f.kib() == 64 * 1024 && r.kib() < 64));
        assert!(pairs.contains(&(k(64 * 1024), k(64))));
        assert!(pairs.contains(&(k(512 * 1024), k(16 * 1024))));
        // The fixture's run (-a -n 64k -g 1m) has 5+6+7+8+9 = 35 pairs.
        let small = IozonePlan::auto(k(64), k(1024), AUTO_MIN_RECORD, AUTO_MAX_RECORD);
        assert_eq!(small.pairs().len(), 35);
        let mut dense = plan.clone();
        dense.skip_small_records_for_large_files = false;
        assert!(dense.pairs().contains(&(k(512 * 1024), k(4))));
    }

    #[test]
    fn cells_follow_iozone_order_and_pick_stdio_for_f_tests() {
        let mut plan = IozonePlan::new(vec![k(64)], vec![k(4), k(64)]);
        plan.tests = vec![IozoneTest::Fread, IozoneTest::Write, IozoneTest::Read];
        plan.direct = true;
        let cells = plan.cells();
        let names: Vec<_> = cells.iter().map(|c| (c.test.name(), c.record_size.kib())).collect();
        assert_eq!(names, [("write", 4), ("read", 4), ("fread", 4), ("write", 64), ("read", 64), ("fread", 64)]);
        assert!(cells[0].direct && !cells[2].direct);
        assert_eq!(cells[2].backend, BackendKind::Stdio);
        assert!(cells[2].last_for_pair && !cells[1].last_for_pair);
        assert_eq!(cells.iter().map(|c| c.index).collect::<Vec<_>>(), [0, 1, 2, 3, 4, 5]);
    }

    #[test]
    fn bad_plans_are_refused_with_the_reason() {
        let err = |p: IozonePlan| p.validate().unwrap_err().to_string();
        assert!(err(IozonePlan::new(vec![k(64)], vec![k(1024)])).contains("larger than file size 64k"));
        let mut p = IozonePlan::new(vec![k(100)], vec![k(64)]);
        assert!(err(p.clone()).contains("not a whole number"));
        p.file_sizes = vec![k(128)];
        p.clients = 0;
        assert!(err(p.clone()).contains("--clients 0"));
        p.clients = 1;
        p.direct = true;
        p.backend = BackendKind::Mmap;
        assert!(err(p.clone()).contains("mmap"));
        p.backend = BackendKind::Psync;
        p.record_sizes = vec![ByteSize(512 * 2)];
        assert!(err(p.clone()).contains("multiple of 4k"));
        p.direct = false;
        assert!(p.validate().is_ok());
        p.content.verify = true;
        assert!(err(p.clone()).contains("verify block"));
        p.record_sizes = vec![k(8)];
        assert!(p.validate().is_ok());
    }

    #[test]
    fn peak_is_largest_file_times_clients() {
        let mut p = IozonePlan::new(vec![k(64), k(1024)], vec![k(4)]);
        p.clients = 3;
        assert_eq!(p.peak_bytes(), 3 * 1024 * KIB);
    }
}
