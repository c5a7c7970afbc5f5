use crate::BonnieTest;
use iomatrix_backend::DIRECT_ALIGN;
use iomatrix_core::human::bytes_prose;
use iomatrix_core::{ByteSize, UsageError, GIB, KIB, MIB};
use iomatrix_verify::ContentSpec;

/// bonnie++'s chunk (`-s SIZE:CHUNK`) when none is given: 8 KiB.
pub const DEFAULT_CHUNK: ByteSize = ByteSize(8 * KIB);
/// Seeker threads sharing the seek test under `run bonnie`: the original
/// Bonnie's and bonnie++ 1.03's SeekProcCount.
pub const DEFAULT_SEEKERS: usize = 3;
/// bonnie++ 2.00a's SeekProcCount, which its front end (`iomatrix bonnie`) uses.
pub const BONNIE_PLUS_SEEKERS: usize = 5;
/// bonnie++'s Seeks: lseek+read operations in the seek test, over all seekers.
pub const DEFAULT_SEEKS: u64 = 8192;
/// bonnie++'s `-n` unit: `-n 16` means 16 * 1024 files.
pub const FILES_UNIT: u64 = 1024;
/// bonnie++'s `-n` default (16, i.e. 16 * 1024 files).
pub const DEFAULT_FILES: u64 = 16 * FILES_UNIT;
/// bonnie++'s UpdateSeek: one seek in this many writes its chunk back.
pub const UPDATE_EVERY: u64 = 10;
/// The largest chunk accepted. bonnie++ stops at 1 MiB; iomatrix allows more,
/// but every seeker holds a chunk in memory, so there is a limit.
pub const MAX_CHUNK: ByteSize = ByteSize(64 * MIB);
/// Runs of the whole set (`-x`), at most: as `--repeat` of every suite.
pub const MAX_REPEATS: u32 = 1000;
/// The most files a file test may create: every name is kept in memory,
/// as bonnie++ does (it refuses more than 1 GiB of names).
pub const MAX_FILES: u64 = 16 * 1024 * FILES_UNIT;
/// bonnie++ 2.00a's DefaultByteIO: its per-char tests write and read the
/// first 3 MiB of the file (at most the file), whatever `-s` says.
pub const BONNIE_PLUS_PER_CHAR: ByteSize = ByteSize(3 * MIB);

/// What the per-char tests (putc, getc) do: two legitimate tests that
/// measure different things, so every plan says which it ran.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum PerChar {
    /// The original Bonnie's (and bonnie++ 1.03's): `putc`/`getc` through a
    /// user-space buffer of the file's st_blksize, one write(2)/read(2) per
    /// buffer, over the whole file; fsync only under `-b`. It measures the
    /// C library's per-byte path plus buffered I/O. Stored plans from before
    /// the choice existed ran this one.
    #[default]
    #[serde(rename = "bonnie")]
    Bonnie,
    /// bonnie++ 2.00a's: one write(2)/read(2) system call per byte (byte
    /// `i & 0x7f` of each chunk), over the first 3 MiB of the file
    /// ([`BONNIE_PLUS_PER_CHAR`], `-fN` for N MiB), and fsync before the
    /// close, inside the timing, as bonnie++ closes every file. It measures
    /// the cost of a system call.
    #[serde(rename = "bonnie++")]
    BonniePlus,
}

impl PerChar {
    /// The name on the command line (`--per-char bonnie++|bonnie`) and in the plan.
    pub fn name(self) -> &'static str {
        match self {
            PerChar::Bonnie => "bonnie",
            PerChar::BonniePlus => "bonnie++",
        }
    }

    /// What the per-char tests do, for the run's conditions.
    pub fn describe(self, bytes: u64) -> String {
        match self {
            PerChar::Bonnie => format!(
                "bonnie: putc/getc one byte per call through a stdio-like buffer of st_blksize (one write(2)/read(2) \
                 per buffer), {} per test, fsync only with -b",
                bytes_prose(bytes)
            ),
            PerChar::BonniePlus => format!(
                "bonnie++: one write(2)/read(2) system call per byte, {} per test (bonnie++ 2.00a's 3 MiB unless -fN), \
                 fsync before close inside the timing",
                bytes_prose(bytes)
            ),
        }
    }
}

impl std::str::FromStr for PerChar {
    type Err = UsageError;
    fn from_str(s: &str) -> Result<Self, UsageError> {
        match s {
            "bonnie++" | "bonnie++-2.00a" => Ok(PerChar::BonniePlus),
            "bonnie" => Ok(PerChar::Bonnie),
            other => Err(UsageError::new(format!(
                "--per-char {other}: choose bonnie++ (one system call per byte, bonnie++ 2.00a's test) or bonnie \
                 (putc/getc through a stdio-like buffer, the original Bonnie's)"
            ))),
        }
    }
}

/// Everything one Bonnie run will do, resolved: no defaults left to guess.
/// Built by the Bonnie front end ([`crate::front::parse`]) or by hand, checked
/// by [`BonniePlan::validate`] before any file is touched, and stored with
/// the run so that it can be repeated exactly.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BonniePlan {
    /// The test file's size (`-s`). Zero skips the data tests (putc .. seeks),
    /// as `bonnie++ -s 0` does.
    pub size: ByteSize,
    /// Bytes per read(2)/write(2) in the block, rewrite and seek tests.
    pub chunk: ByteSize,
    /// Files in each file test, as a plain count (the front end turns
    /// bonnie++'s `-n 16` into 16 * 1024). Zero skips the file tests.
    pub files: u64,
    /// Largest size of a created file (`-n N:MAX`); 0 makes empty files.
    pub file_max: ByteSize,
    /// Smallest size of a created file (`-n N:MAX:MIN`).
    pub file_min: ByteSize,
    /// Threads in the seek test, each with its own descriptor on the file.
    pub seekers: usize,
    /// Seeks in the seek test, over all seekers together.
    pub seeks: u64,
    /// O_DIRECT for the block write, rewrite, block read and seek tests
    /// (`-D`). The per-char tests and the file tests stay buffered.
    pub direct: bool,
    /// The RAM size to assume for the twice-the-RAM rule (`-r`), instead of
    /// the machine's. Zero turns the rule off, as `bonnie++ -r 0` does.
    pub ram: Option<ByteSize>,
    /// Run even if the file is smaller than twice the RAM (`--allow-cache`).
    pub allow_cache: bool,
    /// Runs of the whole set (`-x N`).
    pub repeats: u32,
    /// Seeds seek offsets, the one-in-ten rewrite choice, file names, file
    /// sizes and random orders (`-z`); stored so a run can be repeated.
    pub seed: u64,
    /// Skip the per-char tests (`-f`, bonnie++'s "fast" mode).
    pub skip_per_char: bool,
    /// bonnie++'s `-b` ("no write buffering"): fsync before every close of
    /// the test file (inside the timing), after every chunk the seek test
    /// writes back, and after every file created (file and folder) or
    /// deleted (folder) in the file tests.
    pub sync: bool,
    /// Stamped blocks (`--verify`, `--compressible`): putc, block write and
    /// rewrite write them, rewrite and block read check them when verifying.
    #[serde(default)]
    pub content: ContentSpec,
    /// What the per-char tests do (`--per-char`). Plans stored before the
    /// choice existed ran Bonnie's.
    #[serde(default)]
    pub per_char: PerChar,
    /// bonnie++ 2.00a's close: the data file is fsynced before every close,
    /// inside the timing (putc, block write, rewrite, getc, block read, and
    /// each seeker at its end), whatever `-b` says. Without it (and without
    /// `-b`) a test ends with its data in the page cache, and the next test
    /// runs while the kernel writes it out. `iomatrix bonnie` sets it, as
    /// bonnie++ has no way to leave it out; older plans did not.
    #[serde(default)]
    pub fsync_close: bool,
    /// Bytes the per-char tests write and read, at most the file: None is
    /// the whole file (Bonnie's way, and plans stored before this field);
    /// bonnie++'s way always sets it (3 MiB, or bonnie++'s `-fN`).
    #[serde(default)]
    pub per_char_size: Option<ByteSize>,
    /// The interval of each test's figures over time (`--interval`), in ns.
    #[serde(
        default = "iomatrix_harness::series::default_interval_ns",
        skip_serializing_if = "iomatrix_harness::series::is_default_interval"
    )]
    pub series_interval_ns: u64,
}

impl BonniePlan {
    /// A plan with bonnie++'s defaults for everything but the file size:
    /// 8 KiB chunks, 16 * 1024 empty files, 3 seekers doing 8192 seeks.
    pub fn new(size: ByteSize) -> Self {
        BonniePlan {
            size,
            chunk: DEFAULT_CHUNK,
            files: DEFAULT_FILES,
            file_max: ByteSize(0),
            file_min: ByteSize(0),
            seekers: DEFAULT_SEEKERS,
            seeks: DEFAULT_SEEKS,
            direct: false,
            ram: None,
            allow_cache: false,
            repeats: 1,
            seed: 0xB0_4417E,
            skip_per_char: false,
            sync: false,
            content: ContentSpec::default(),
            per_char: PerChar::Bonnie,
            fsync_close: false,
            per_char_size: None,
            series_interval_ns: iomatrix_stats::series::DEFAULT_INTERVAL_NS,
        }
    }

    /// Chooses the per-char tests' style; bonnie++'s covers its 3 MiB
    /// unless a size was set (`-fN`, `--per-char-size`).
    pub fn set_per_char(&mut self, style: PerChar) {
        self.per_char = style;
        if style == PerChar::BonniePlus && self.per_char_size.is_none() {
            self.per_char_size = Some(BONNIE_PLUS_PER_CHAR);
        }
    }

    /// Bytes each per-char test writes or reads: its size, at most the file.
    pub fn per_char_bytes(&self) -> u64 {
        self.per_char_size.map_or(self.size.bytes(), |s| s.bytes().min(self.size.bytes()))
    }

    /// The tests of one repeat, in bonnie++'s order.
    pub fn tests(&self) -> Vec<BonnieTest> {
        let mut out = Vec::new();
        if self.size.bytes() > 0 {
            for test in BonnieTest::DATA {
                if !(test.is_per_char() && (self.skip_per_char || self.per_char_bytes() == 0)) {
                    out.push(test);
                }
            }
        }
        if self.files > 0 {
            out.extend(BonnieTest::FILES);
        }
        out
    }

    /// The most the run keeps on the target at any moment: the test file
    /// (removed after the seek test) or the files at their largest size
    /// (before metadata), whichever is more. For a free-space check.
    pub fn peak_bytes(&self) -> u64 {
        self.size.bytes().max(self.files.saturating_mul(self.file_max.bytes()))
    }

    /// Chunks in the test file.
    pub fn chunks(&self) -> u64 {
        self.size.bytes().checked_div(self.chunk.bytes()).unwrap_or(0)
    }

    /// Checks that the plan can run, before anything runs. `machine_ram_bytes`
    /// is the machine's RAM (0 if unknown: the RAM rule is then skipped
    /// unless the plan states a RAM of its own).
    pub fn validate(&self, machine_ram_bytes: u64) -> Result<(), UsageError> {
        if self.repeats == 0 {
            return Err(UsageError::new("-x 0: the tests must run at least once; use -x 1 or more"));
        }
        if self.repeats > MAX_REPEATS {
            return Err(UsageError::new(format!(
                "-x {} (--repeats): at most {MAX_REPEATS} runs of the set (each test of each is a stored cell)",
                self.repeats
            )));
        }
        if self.size.bytes() == 0 && self.files == 0 {
            return Err(UsageError::new(
                "nothing to run: a file size of 0 (-s 0) skips the data tests and -n 0 skips the file tests; \
                 give a size with -s or a number of files with -n",
            ));
        }
        if self.content.compressible > 100 {
            return Err(UsageError::new(format!(
                "--compressible {}: give a percentage from 0 (incompressible) to 100",
                self.content.compressible
            )));
        }
        if self.size.bytes() > 0 {
            self.validate_data_tests(machine_ram_bytes)?;
        }
        if self.files > 0 {
            self.validate_file_tests()?;
        }
        Ok(())
    }

    fn validate_data_tests(&self, machine_ram_bytes: u64) -> Result<(), UsageError> {
        let (size, chunk) = (self.size, self.chunk);
        if chunk.bytes() == 0 {
            return Err(UsageError::new("chunk size 0: a chunk must be at least 1 byte; bonnie++'s default is 8k"));
        }
        if chunk > size {
            return Err(UsageError::new(format!(
                "chunk size {chunk} is larger than the file size {size}: a chunk must fit in the file; \
                 use a smaller chunk (-s {size}:8k) or a larger file"
            )));
        }
        if chunk > MAX_CHUNK {
            return Err(UsageError::new(format!(
                "chunk size {chunk} is larger than {MAX_CHUNK}, the most iomatrix accepts \
                 (every seeker holds one chunk in memory; bonnie++ itself stops at 1m)"
            )));
        }
        if size.bytes() % chunk.bytes() != 0 {
            return Err(UsageError::new(format!(
                "file size {size} is not a whole number of {chunk} chunks: choose a size that {chunk} divides"
            )));
        }
        if self.content.stamped() && iomatrix_verify::check_record(chunk.bytes()).is_err() {
            let unit = iomatrix_verify::UNIT as u64 / KIB;
            return Err(UsageError::new(format!(
                "chunk size {chunk} is not a multiple of the {unit}k verify block: --verify and --compressible \
                 need chunks of {unit}k or a multiple; use --chunk 8k (bonnie++'s -s {size}:8k)"
            )));
        }
        if self.seekers == 0 {
            return Err(UsageError::new("0 seekers: the seek test needs at least one seeker thread"));
        }
        if self.seekers > 1024 {
            return Err(UsageError::new(format!(
                "{} seekers: at most 1024 seeker threads are supported (bonnie++ 2.00a uses 5)",
                self.seekers
            )));
        }
        if self.seeks == 0 {
            return Err(UsageError::new("0 seeks: the seek test needs at least one seek (bonnie++ does 8192)"));
        }
        if self.direct && chunk.bytes() % DIRECT_ALIGN as u64 != 0 {
            return Err(UsageError::new(format!(
                "chunk size {chunk} is not a multiple of {}k, which O_DIRECT (-D) needs; use -s {size}:8k or similar",
                DIRECT_ALIGN as u64 / KIB
            )));
        }
        let (ram, stated) = match self.ram {
            Some(r) => (r.bytes(), true),
            None => (machine_ram_bytes, false),
        };
        let twice = ram.saturating_mul(2);
        if !self.allow_cache && ram > 0 && size.bytes() < twice {
            let whose = if stated { "as stated with -r" } else { "of this machine" };
            return Err(UsageError::new(format!(
                "file size {} is less than twice the RAM ({} {whose}): the page cache would serve the reads and \
                 the figures would measure memory, not storage; use -s {} or more, or -r RAM_MB to state a \
                 smaller RAM, or --allow-cache",
                bytes_prose(size.bytes()),
                bytes_prose(ram),
                size_suggestion(twice)
            )));
        }
        Ok(())
    }

    fn validate_file_tests(&self) -> Result<(), UsageError> {
        if self.files > MAX_FILES {
            return Err(UsageError::new(format!(
                "{} files per file test is more than the {} (-n {}) iomatrix supports: every name is kept in memory",
                self.files,
                MAX_FILES,
                MAX_FILES / FILES_UNIT
            )));
        }
        if self.file_min > self.file_max {
            return Err(UsageError::new(format!(
                "smallest file size {} is larger than the largest {}: write -n N:MAX:MIN with MIN <= MAX",
                self.file_min, self.file_max
            )));
        }
        Ok(())
    }
}

/// The smallest `-s` value (whole GiB, or whole MiB below 1 GiB) of at least `bytes`.
fn size_suggestion(bytes: u64) -> String {
    if bytes >= GIB {
        format!("{}g", bytes.div_ceil(GIB))
    } else {
        format!("{}m", bytes.div_ceil(MIB).max(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(size: u64) -> BonniePlan {
        BonniePlan::new(ByteSize(size))
    }

    #[test]
    fn ram_rule_names_the_reason_and_the_fixes() {
        let ram = 47 * GIB / 2; // 23.5 GiB
        let msg = plan(GIB).validate(ram).unwrap_err().to_string();
        assert_eq!(
            msg,
            "file size 1 GiB is less than twice the RAM (23.5 GiB of this machine): the page cache would serve \
             the reads and the figures would measure memory, not storage; use -s 47g or more, or -r RAM_MB to \
             state a smaller RAM, or --allow-cache"
        );
        // Exactly twice is enough, as in bonnie++ (it refuses size < 2 * RAM).
        assert!(plan(47 * GIB).validate(ram).is_ok());
        let mut p = plan(GIB);
        p.allow_cache = true;
        assert!(p.validate(ram).is_ok());
        // -r states the RAM instead of the machine's.
        p.allow_cache = false;
        p.ram = Some(ByteSize(512 * MIB));
        assert!(p.validate(ram).is_ok());
        p.ram = Some(ByteSize(600 * MIB));
        let msg = p.validate(ram).unwrap_err().to_string();
        assert!(msg.contains("(600 MiB as stated with -r)") && msg.contains("-s 2g"), "{msg}");
        // -r 0 and an unknown machine RAM turn the rule off, as in bonnie++.
        p.ram = Some(ByteSize(0));
        assert!(p.validate(ram).is_ok());
        assert!(plan(GIB).validate(0).is_ok());
        // Small RAM: the suggestion is in MiB.
        let msg = plan(8 * MIB).validate(100 * MIB).unwrap_err().to_string();
        assert!(msg.contains("use -s 200m or more") && msg.contains("(100 MiB of this machine)"), "{msg}");
    }

    #[test]
    fn chunk_seek_and_file_rules() {
        let err = |p: &BonniePlan| p.validate(0).unwrap_err().to_string();
        let mut p = plan(8 * MIB);
        p.chunk = ByteSize(0);
        assert!(err(&p).contains("chunk size 0"));
        p.chunk = ByteSize(16 * MIB);
        assert!(err(&p).contains("larger than the file size 8m"));
        p.chunk = ByteSize(3000);
        assert!(err(&p).contains("not a whole number of 3000 chunks"));
        p.chunk = ByteSize(2 * KIB);
        p.direct = true;
        assert!(err(&p).contains("multiple of 4k"));
        p.direct = false;
        assert!(p.validate(0).is_ok());
        p.seekers = 0;
        assert!(err(&p).contains("0 seekers"));
        p.seekers = 3;
        p.seeks = 0;
        assert!(err(&p).contains("0 seeks"));
        p.seeks = 10;
        p.file_max = ByteSize(KIB);
        p.file_min = ByteSize(2 * KIB);
        assert!(err(&p).contains("MIN <= MAX"));
        p.file_min = ByteSize(0);
        p.chunk = ByteSize(2 * KIB);
        p.content.verify = true;
        assert!(err(&p).contains("not a multiple of the 4k verify block"), "{}", err(&p));
        p.chunk = ByteSize(8 * KIB);
        assert!(p.validate(0).is_ok());
        p.content = ContentSpec { compressible: 101, ..ContentSpec::default() };
        assert!(err(&p).contains("--compressible 101"));
        p.content = ContentSpec::default();
        p.repeats = 0;
        assert!(err(&p).contains("-x 0"));
        p.repeats = 1;
        p.size = ByteSize(0);
        p.files = 0;
        assert!(err(&p).contains("nothing to run"));
        // -s 0 with files: no data-test rules apply.
        p.files = 1;
        p.chunk = ByteSize(0);
        assert!(p.validate(u64::MAX).is_ok());
        assert_eq!(p.tests(), BonnieTest::FILES);
    }

    #[test]
    fn tests_follow_bonnie_order() {
        let mut p = plan(8 * MIB);
        assert_eq!(p.tests().len(), 12);
        assert_eq!(p.tests()[0], BonnieTest::PutcWrite);
        p.skip_per_char = true;
        p.files = 0;
        assert_eq!(
            p.tests(),
            [BonnieTest::BlockWrite, BonnieTest::Rewrite, BonnieTest::BlockRead, BonnieTest::RandomSeeks]
        );
        assert_eq!(p.chunks(), 1024);
        p.files = 1024;
        p.file_max = ByteSize(64 * KIB);
        assert_eq!(p.peak_bytes(), 64 * MIB);
        p.file_max = ByteSize(0);
        assert_eq!(p.peak_bytes(), 8 * MIB);
    }

    #[test]
    fn size_suggestions() {
        assert_eq!(size_suggestion(47 * GIB), "47g");
        assert_eq!(size_suggestion(47 * GIB + 1), "48g");
        assert_eq!(size_suggestion(200 * MIB), "200m");
    }
}
