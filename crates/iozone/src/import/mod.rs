//! The iozone suite's importer: IOzone's text output with its `-R` report, read into a run of
//! this suite, registered with `iomatrix import` through the command table.
//!
//! [`excel`]: the parsers of IOzone's `-R` report: its matrix blocks
//! ([`excel::parse_excel_report`] into [`iomatrix_core::Matrix`]es, each row's values under the
//! record sizes its block's header gives, [`excel::row_records`]) and `-t` mode's throughput
//! reports ([`excel::parse_throughput_reports`]), or an [`excel::ParseError`] with the line.

pub mod excel;
mod text;

use iomatrix_harness::Suite;
use iomatrix_import::{Format, ImportError, ImportedRun, Importer, Options, PublishedSuite};

/// The suite whose runs the importer makes.
const SUITE: &str = <crate::cli::Iozone as Suite>::NAME;

/// IOzone's text output with its `-R` report (or the report alone).
pub const IOZONE: Format = Format {
    name: "iozone",
    aliases: &[],
    tool: "iozone",
    suite: SUITE,
    describe: "IOzone's -R report (\"Excel output is below:\")",
    json_name: "iozone",
    place: 2,
    takes_chunk: false,
    listed: "iozone",
    becomes: "IOzone -R matrices -> iozone cells (KB/s)",
};

/// Reads IOzone's output: one run, a cell per test, file size and record size of its report.
struct Iozone;

impl Importer for Iozone {
    fn format(&self) -> Format {
        IOZONE
    }

    /// IOzone's banner, its `-R` report's heading, or a `"... report"` block of it.
    fn recognises(&self, text: &str) -> bool {
        text.contains("Excel output is below")
            || text.contains("Iozone: Performance Test of File I/O")
            || text::has_report_block(text)
    }

    fn read(&self, text: &str, options: &Options) -> Result<Vec<ImportedRun>, ImportError> {
        text::parse(text, options).map(|r| vec![r])
    }
}

/// The iozone suite's importers, as the command table registers them.
pub const IMPORTERS: &[&dyn Importer] = &[&Iozone];

/// What a published table may give of an iozone run's cells: throughput and CPU.
pub const PUBLISHED: PublishedSuite = PublishedSuite { name: SUITE, metrics: &[], walk: false };

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iozone_output_is_recognised_by_content() {
        assert!(Iozone.recognises("\nExcel output is below:\n\n\"Writer report\"\n"));
        assert!(Iozone.recognises("\"Reader report\"\n        \"4\"  \"8\"\n\"64\"   1  2 \n"));
        assert!(!Iozone.recognises("hello, world\n"));
    }
}
