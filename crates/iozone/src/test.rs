use std::fmt;
use std::str::FromStr;

/// IOzone's tests, in IOzone's own order (the order of its output columns).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IozoneTest {
    /// Writes a new file (IOzone test 0's first half).
    Write,
    /// Writes the file again in place.
    Rewrite,
    /// Reads the file sequentially (test 1's first half).
    Read,
    /// Reads it again, as just read.
    Reread,
    /// Reads records in a random order (test 2).
    RandomRead,
    /// Writes records in a random order (test 2).
    RandomWrite,
    /// Reads records from the last to the first (test 3).
    BackwardRead,
    /// Writes the same record over and over (test 4).
    RecordRewrite,
    /// Reads every 17th record, wrapping around (test 5).
    StrideRead,
    /// Writes a new file through stdio's fwrite (test 6's first half).
    Fwrite,
    /// Writes it again through fwrite.
    Frewrite,
    /// Reads the file through stdio's fread (test 7's first half).
    Fread,
    /// Reads it again through fread.
    Freread,
    /// Reads or writes each record by a seeded coin (test 8, the mixed workload).
    Mixed,
}

impl IozoneTest {
    /// Every test, in IOzone's order.
    pub const ALL: [IozoneTest; 14] = [
        Self::Write,
        Self::Rewrite,
        Self::Read,
        Self::Reread,
        Self::RandomRead,
        Self::RandomWrite,
        Self::BackwardRead,
        Self::RecordRewrite,
        Self::StrideRead,
        Self::Fwrite,
        Self::Frewrite,
        Self::Fread,
        Self::Freread,
        Self::Mixed,
    ];

    /// The tests IOzone runs when no `-i` is given (all but the mixed workload).
    pub fn default_set() -> Vec<IozoneTest> {
        Self::ALL.into_iter().filter(|t| *t != Self::Mixed).collect()
    }

    /// The name used on iomatrix's command line, in the database and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Self::Write => "write",
            Self::Rewrite => "rewrite",
            Self::Read => "read",
            Self::Reread => "reread",
            Self::RandomRead => "random-read",
            Self::RandomWrite => "random-write",
            Self::BackwardRead => "backward-read",
            Self::RecordRewrite => "record-rewrite",
            Self::StrideRead => "stride-read",
            Self::Fwrite => "fwrite",
            Self::Frewrite => "frewrite",
            Self::Fread => "fread",
            Self::Freread => "freread",
            Self::Mixed => "mixed",
        }
    }

    /// IOzone's column heading (two words become two header lines).
    pub fn column(self) -> &'static str {
        match self {
            Self::RandomRead => "random read",
            Self::RandomWrite => "random write",
            Self::BackwardRead => "bkwd read",
            Self::RecordRewrite => "record rewrite",
            Self::StrideRead => "stride read",
            Self::Mixed => "mixed workload",
            other => other.name(),
        }
    }

    /// IOzone's `-R` report title.
    pub fn report_title(self) -> &'static str {
        match self {
            Self::Write => "Writer report",
            Self::Rewrite => "Re-writer report",
            Self::Read => "Reader report",
            Self::Reread => "Re-Reader report",
            Self::RandomRead => "Random read report",
            Self::RandomWrite => "Random write report",
            Self::BackwardRead => "Backward read report",
            Self::RecordRewrite => "Record rewrite report",
            Self::StrideRead => "Stride read report",
            Self::Fwrite => "Fwrite report",
            Self::Frewrite => "Re-Fwrite report",
            Self::Fread => "Fread report",
            Self::Freread => "Re-Fread report",
            Self::Mixed => "Mixed workload report",
        }
    }

    /// The order of IOzone's `-t` throughput report: "Initial write",
    /// "Rewrite", "Read", "Re-read", "Reverse Read", "Stride read", "Random
    /// read", "Mixed workload", "Random write", "Fwrite", "Fread" as IOzone
    /// 3.471 prints them, with the three tests its throughput mode does not
    /// run (record rewrite, frewrite, freread) after their kin.
    pub const THROUGHPUT_ORDER: [IozoneTest; 14] = [
        Self::Write,
        Self::Rewrite,
        Self::Read,
        Self::Reread,
        Self::BackwardRead,
        Self::StrideRead,
        Self::RandomRead,
        Self::Mixed,
        Self::RandomWrite,
        Self::RecordRewrite,
        Self::Fwrite,
        Self::Frewrite,
        Self::Fread,
        Self::Freread,
    ];

    /// The test's name in IOzone's `-t` throughput report ("Initial write",
    /// "Re-read", "Reverse Read"...). IOzone's throughput mode has no record
    /// rewrite, frewrite or freread; iomatrix, which runs them with clients
    /// too, names them as IOzone's `-R` titles do: "Record rewrite",
    /// "Re-fwrite", "Re-fread".
    pub fn throughput_name(self) -> &'static str {
        match self {
            Self::Write => "Initial write",
            Self::Rewrite => "Rewrite",
            Self::Read => "Read",
            Self::Reread => "Re-read",
            Self::RandomRead => "Random read",
            Self::RandomWrite => "Random write",
            Self::BackwardRead => "Reverse Read",
            Self::RecordRewrite => "Record rewrite",
            Self::StrideRead => "Stride read",
            Self::Fwrite => "Fwrite",
            Self::Frewrite => "Re-fwrite",
            Self::Fread => "Fread",
            Self::Freread => "Re-fread",
            Self::Mixed => "Mixed workload",
        }
    }

    /// IOzone's `-i` number and the tests it selects.
    pub fn by_iozone_number(n: u32) -> Option<&'static [IozoneTest]> {
        Some(match n {
            0 => &[Self::Write, Self::Rewrite],
            1 => &[Self::Read, Self::Reread],
            2 => &[Self::RandomRead, Self::RandomWrite],
            3 => &[Self::BackwardRead],
            4 => &[Self::RecordRewrite],
            5 => &[Self::StrideRead],
            6 => &[Self::Fwrite, Self::Frewrite],
            7 => &[Self::Fread, Self::Freread],
            8 => &[Self::Mixed],
            _ => return None,
        })
    }

    /// A second pass over data just touched; IOzone's `-+n` drops these.
    pub fn is_retest(self) -> bool {
        matches!(self, Self::Rewrite | Self::Reread | Self::Frewrite | Self::Freread)
    }

    /// Whether the test needs the file to exist with its full size first.
    pub fn needs_existing_file(self) -> bool {
        !matches!(self, Self::Write | Self::Fwrite)
    }

    /// Whether the test writes (so `--fsync` applies to it).
    pub fn writes(self) -> bool {
        matches!(
            self,
            Self::Write
                | Self::Rewrite
                | Self::RandomWrite
                | Self::RecordRewrite
                | Self::Fwrite
                | Self::Frewrite
                | Self::Mixed
        )
    }

    /// fwrite/frewrite/fread/freread go through buffered library I/O by
    /// definition, whatever backend the other tests use.
    pub fn is_stdio(self) -> bool {
        matches!(self, Self::Fwrite | Self::Frewrite | Self::Fread | Self::Freread)
    }
}

impl fmt::Display for IozoneTest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for IozoneTest {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let wanted = s.trim().to_ascii_lowercase().replace(['_', ' '], "-");
        let alias = match wanted.as_str() {
            "randread" | "random-reads" => "random-read",
            "randwrite" | "random-writes" => "random-write",
            "bkwd-read" | "backward" | "backwards-read" => "backward-read",
            "recrewrite" | "record-re-write" => "record-rewrite",
            "strideread" | "stride" => "stride-read",
            "re-write" => "rewrite",
            "re-read" => "reread",
            "mix" | "mixed-workload" => "mixed",
            other => other,
        };
        Self::ALL.into_iter().find(|t| t.name() == alias).ok_or_else(|| {
            let names: Vec<&str> = Self::ALL.iter().map(|t| t.name()).collect();
            format!("unknown test '{s}': choose from {}", names.join(", "))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throughput_order_holds_every_test_once_with_a_name_of_at_most_15_characters() {
        let mut sorted = IozoneTest::THROUGHPUT_ORDER;
        sorted.sort();
        assert_eq!(sorted, IozoneTest::ALL);
        for t in IozoneTest::ALL {
            assert!(t.throughput_name().len() <= 15, "{t}");
            let others = IozoneTest::ALL.iter().filter(|o| o.throughput_name() == t.throughput_name()).count();
            assert_eq!(others, 1, "{t}");
        }
    }
}
