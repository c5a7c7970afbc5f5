//! The bonnie suite's importers: bonnie++'s CSV line and the original Bonnie's text table, each
//! read into runs of this suite, registered with `iomatrix import` through the command table.

mod csv;
mod text;

use iomatrix_harness::Suite;
use iomatrix_import::{Format, ImportError, ImportedRun, Importer, Options, PublishedSuite};

/// The suite whose runs these importers make.
const SUITE: &str = <crate::cli::Bonnie as Suite>::NAME;

/// bonnie++'s CSV line(s).
pub const BONNIE: Format = Format {
    name: "bonnie",
    aliases: &["bonnie++"],
    tool: "bonnie++",
    suite: SUITE,
    describe: "bonnie++'s CSV line (format 1.96, 1.97 or 1.98)",
    json_name: "bonnie",
    place: 3,
    takes_chunk: true,
    listed: "bonnie (bonnie++'s CSV)",
    becomes: "bonnie++ tests -> bonnie cells (K/sec, /sec, %CPU, latency)",
};

/// The original Bonnie's text table (Tim Bray's Bonnie 1.x).
pub const BONNIE_TEXT: Format = Format {
    name: "bonnie-text",
    aliases: &[],
    tool: "bonnie",
    suite: SUITE,
    describe: "the original Bonnie's text table (Tim Bray's Bonnie 1.x)",
    json_name: "bonnietext",
    place: 4,
    takes_chunk: false,
    listed: "bonnie-text (the original Bonnie's table)",
    becomes: "the original Bonnie's table (Tim Bray's Bonnie 1.x) -> a bonnie run per row",
};

/// Reads bonnie++'s CSV lines: a run per setup, its `-x` repeats together.
struct BonnieCsv;

impl Importer for BonnieCsv {
    fn format(&self) -> Format {
        BONNIE
    }

    /// A line that starts like a bonnie++ CSV record, in a text that is not Bonnie's table
    /// (which [`BonnieText`] reads).
    fn recognises(&self, text: &str) -> bool {
        !text::looks_like_report(text) && text.lines().any(csv::looks_like_record)
    }

    fn read(&self, text: &str, options: &Options) -> Result<Vec<ImportedRun>, ImportError> {
        csv::parse(text, options)
    }
}

/// Reads the original Bonnie's text table: a run per row.
struct BonnieText;

impl Importer for BonnieText {
    fn format(&self) -> Format {
        BONNIE_TEXT
    }

    fn recognises(&self, text: &str) -> bool {
        text::looks_like_report(text)
    }

    fn read(&self, text: &str, options: &Options) -> Result<Vec<ImportedRun>, ImportError> {
        text::parse(text, options)
    }
}

/// The bonnie suite's importers, as the command table registers them.
pub const IMPORTERS: &[&dyn Importer] = &[&BonnieCsv, &BonnieText];

/// What a published table may give of a bonnie run's cells: throughput and CPU.
pub const PUBLISHED: PublishedSuite = PublishedSuite { name: SUITE, metrics: &[], walk: false };

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bonnie_csv_is_recognised_by_content() {
        let csv = "1.98,2.00a,vm,1,1795365941,16M,,8192,5,3167,86,+++++,+++,+++++,+++,4312,78,+++++,+++,+++++,+++,1,,,,,+++++,+++,+++++,+++,+++++,+++,+++++,+++,+++++,+++,+++++,+++\n";
        assert!(BonnieCsv.recognises(csv));
        assert!(!BonnieText.recognises(csv));
        assert!(!BonnieCsv.recognises("hello, world\n"));
    }
}
