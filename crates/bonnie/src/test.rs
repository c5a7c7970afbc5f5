use std::fmt;
use std::str::FromStr;

/// bonnie++'s tests, in the order it runs them (and prints their columns).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BonnieTest {
    /// Sequential output per character: one byte per call into a buffered writer.
    PutcWrite,
    /// Sequential output per block: the file written anew in chunk-sized write(2) calls.
    BlockWrite,
    /// Every chunk read, one byte changed, written back in place.
    Rewrite,
    /// Sequential input per character: one byte per call from a buffered reader.
    GetcRead,
    /// Sequential input per block: chunk-sized read(2) calls.
    BlockRead,
    /// Seeker threads: lseek to a random chunk, read it, every tenth written back.
    RandomSeeks,
    /// Creates the files, each name a sequence number first, so they come in order in a sorted
    /// folder (bonnie++'s "Sequential Create").
    SeqCreate,
    /// stat(2)s every file in readdir order, reading its data when it has any (bonnie++'s
    /// sequential "Read").
    SeqStat,
    /// Deletes every file in readdir order.
    SeqDelete,
    /// Creates the files, each name random letters first, so they land at random places in a
    /// sorted folder (bonnie++'s "Random Create").
    RandomCreate,
    /// stat(2)s every file in a random order of the names, reading its data when it has any.
    RandomStat,
    /// Deletes every file in a new random order of the names, then the folder.
    RandomDelete,
}

impl BonnieTest {
    /// Every test, in the order bonnie++ runs and prints them.
    pub const ALL: [BonnieTest; 12] = [
        Self::PutcWrite,
        Self::BlockWrite,
        Self::Rewrite,
        Self::GetcRead,
        Self::BlockRead,
        Self::RandomSeeks,
        Self::SeqCreate,
        Self::SeqStat,
        Self::SeqDelete,
        Self::RandomCreate,
        Self::RandomStat,
        Self::RandomDelete,
    ];
    /// The tests on the one big file (skipped by `-s 0`).
    pub const DATA: [BonnieTest; 6] =
        [Self::PutcWrite, Self::BlockWrite, Self::Rewrite, Self::GetcRead, Self::BlockRead, Self::RandomSeeks];
    /// The tests on many small files (skipped by `-n 0`).
    pub const FILES: [BonnieTest; 6] =
        [Self::SeqCreate, Self::SeqStat, Self::SeqDelete, Self::RandomCreate, Self::RandomStat, Self::RandomDelete];

    /// The name used on iomatrix's command line, in the database and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Self::PutcWrite => "putc",
            Self::BlockWrite => "write",
            Self::Rewrite => "rewrite",
            Self::GetcRead => "getc",
            Self::BlockRead => "read",
            Self::RandomSeeks => "seeks",
            Self::SeqCreate => "seq-create",
            Self::SeqStat => "seq-stat",
            Self::SeqDelete => "seq-delete",
            Self::RandomCreate => "random-create",
            Self::RandomStat => "random-stat",
            Self::RandomDelete => "random-delete",
        }
    }

    /// Bonnie's column: its group heading and the column below it.
    pub fn heading(self) -> &'static str {
        match self {
            Self::PutcWrite => "Sequential Output Per Chr",
            Self::BlockWrite => "Sequential Output Block",
            Self::Rewrite => "Sequential Output Rewrite",
            Self::GetcRead => "Sequential Input Per Chr",
            Self::BlockRead => "Sequential Input Block",
            Self::RandomSeeks => "Random Seeks",
            Self::SeqCreate => "Sequential Create Create",
            Self::SeqStat => "Sequential Create Read",
            Self::SeqDelete => "Sequential Create Delete",
            Self::RandomCreate => "Random Create Create",
            Self::RandomStat => "Random Create Read",
            Self::RandomDelete => "Random Create Delete",
        }
    }

    /// The unit of [`crate::BonnieResult::per_sec`].
    pub fn unit(self) -> &'static str {
        match self {
            Self::RandomSeeks => "seeks/s",
            t if t.is_file_test() => "files/s",
            _ => "KB/s",
        }
    }

    /// Whether the test moves one byte per call (putc, getc): what `-f` skips.
    pub fn is_per_char(self) -> bool {
        matches!(self, Self::PutcWrite | Self::GetcRead)
    }

    /// Whether the test works on many small files (create, stat, delete) rather than one big file.
    pub fn is_file_test(self) -> bool {
        Self::FILES.contains(&self)
    }
}

impl fmt::Display for BonnieTest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for BonnieTest {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL.into_iter().find(|t| t.name() == s).ok_or_else(|| {
            let names: Vec<&str> = Self::ALL.iter().map(|t| t.name()).collect();
            format!("unknown Bonnie test '{s}': choose one of {}", names.join(", "))
        })
    }
}

/// One Bonnie test's figures.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct BonnieResult {
    /// The test these figures are of.
    pub test: BonnieTest,
    /// Which run of the set (`-x`), counting from 1.
    pub repeat: u32,
    /// Bytes moved: the file size for putc, write, rewrite, getc and read
    /// (rewrite reads and writes each byte once but counts it once, as
    /// bonnie++ does); chunks read plus chunks written back for seeks; file
    /// data written (create) or read (stat) for the file tests.
    pub bytes: u64,
    /// Calls into the buffered writer/reader (putc, getc), write(2)/read(2)
    /// calls (write, read), chunks rewritten (rewrite), seeks, or files.
    pub ops: u64,
    /// Chunks the seek test wrote back (about one seek in ten); 0 elsewhere.
    pub writes: u64,
    /// From the first thread's start to the last thread's end.
    pub wall_ns: u64,
    /// CPU of every thread doing the test. The total is exact (thread CPU
    /// clock); the user/system split is as good as the kernel's tick sampling.
    pub user_ns: u64,
    /// CPU time in the kernel (ns), of the same threads; see `user_ns`.
    pub sys_ns: u64,
    /// KiB/s for the data tests, seeks/s, or files/s.
    pub per_sec: f64,
    /// "KB/s", "seeks/s" or "files/s".
    pub unit: String,
    /// (user + sys) / wall * 100; above 100 when several threads were busy.
    pub cpu_percent: f64,
    /// When the last thread finished, from the clients' common start (with
    /// one client, from the moment the test's clock started).
    #[serde(default)]
    pub end_ns: u64,
    /// The slowest single operation, bonnie++'s latency column: a chunk
    /// of the per-char tests, one chunk's write(2) or read(2), one chunk
    /// rewritten, one seek (with its write-back), one file created,
    /// stat'ed or deleted. With many clients, the slowest of any client.
    /// 0: not measured (runs stored before it was).
    #[serde(default)]
    pub max_latency_ns: u64,
    /// The client's operations over time, on their way from the test to its client's figures
    /// ([`crate::ClientBonnie::series`]): never stored with the result.
    #[serde(skip)]
    pub series: iomatrix_stats::ClientSeries,
}

impl BonnieResult {
    /// The wall time in seconds.
    pub fn wall_secs(&self) -> f64 {
        self.wall_ns as f64 / 1e9
    }
}

/// A result with only what the report and CSV tests read: figure, time, CPU.
#[cfg(test)]
pub(crate) fn sample_result(test: BonnieTest, repeat: u32, per_sec: f64, wall_s: f64, cpu: f64) -> BonnieResult {
    BonnieResult {
        test,
        repeat,
        bytes: 0,
        ops: 0,
        writes: 0,
        wall_ns: (wall_s * 1e9) as u64,
        user_ns: 0,
        sys_ns: 0,
        per_sec,
        unit: test.unit().to_string(),
        cpu_percent: cpu,
        end_ns: 0,
        max_latency_ns: 0,
        series: Default::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_units_follow_the_test() {
        for t in BonnieTest::ALL {
            assert_eq!(t.name().parse::<BonnieTest>().unwrap(), t);
        }
        assert!("nope".parse::<BonnieTest>().unwrap_err().contains("seq-create"));
        assert_eq!(BonnieTest::RandomSeeks.unit(), "seeks/s");
        assert_eq!(BonnieTest::SeqStat.unit(), "files/s");
        assert_eq!(BonnieTest::Rewrite.unit(), "KB/s");
        assert_eq!(BonnieTest::PutcWrite.heading(), "Sequential Output Per Chr");
    }
}
