//! The access suite's importers: fio's JSON output and Iometer's results file, each read into
//! runs of this suite, registered with `iomatrix import` through the command table.

mod fio;
mod fio_rules;
mod iometer;

use iomatrix_harness::Suite;
use iomatrix_import::{Format, ImportError, ImportedRun, Importer, Options, PublishedSuite};
use iomatrix_store::CellRow;
use serde_json::{Map, Value};

/// The suite whose runs these importers make.
const SUITE: &str = <crate::cli::Access as Suite>::NAME;

/// fio's `--output-format=json` document.
pub const FIO: Format = Format {
    name: "fio",
    aliases: &[],
    tool: "fio",
    suite: SUITE,
    describe: "fio's JSON output (--output-format=json)",
    json_name: "fio",
    place: 1,
    takes_chunk: false,
    listed: "fio",
    becomes:
        "fio jobs -> access cells (block size, size, queue depth, read %, random %, IOPS, MiB/s, clat percentiles)",
};

/// Iometer's results file (2006.07.27, 1.1.0).
pub const IOMETER: Format = Format {
    name: "iometer",
    aliases: &[],
    tool: "iometer",
    suite: SUITE,
    describe: "Iometer's results file (2006.07.27 or 1.1.0 CSV)",
    json_name: "iometer",
    place: 5,
    takes_chunk: false,
    listed: "iometer",
    becomes: "Iometer's results CSV (2006.07.27, 1.1.0) -> an access cell per access spec (its ALL row: IOPS, MB/s, \
              response times, CPU %, outstanding I/O)",
};

/// Reads fio's JSON output: one run, a cell per job entry.
struct Fio;

impl Importer for Fio {
    fn format(&self) -> Format {
        FIO
    }

    /// A JSON document with `"fio version"`.
    fn recognises(&self, text: &str) -> bool {
        text.contains("\"fio version\"") && text.lines().any(|l| l.trim_start().starts_with('{'))
    }

    fn read(&self, text: &str, _options: &Options) -> Result<Vec<ImportedRun>, ImportError> {
        fio::parse(text).map(|r| vec![r])
    }

    fn native_plan_fields(&self, plan: &Value, cells: &[CellRow]) -> Option<Map<String, Value>> {
        fio::stored_native_fields(plan, cells)
    }
}

/// Reads Iometer's results file: one run, a cell per access spec.
struct Iometer;

impl Importer for Iometer {
    fn format(&self) -> Format {
        IOMETER
    }

    fn recognises(&self, text: &str) -> bool {
        iometer::looks_like_results(text)
    }

    fn read(&self, text: &str, options: &Options) -> Result<Vec<ImportedRun>, ImportError> {
        iometer::parse(text, options).map(|r| vec![r])
    }
}

/// The access suite's importers, as the command table registers them.
pub const IMPORTERS: &[&dyn Importer] = &[&Fio, &Iometer];

/// What a published table may give of an access run's cells: throughput and CPU.
pub const PUBLISHED: PublishedSuite = PublishedSuite { name: SUITE, metrics: &[], walk: false };

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fio_json_is_recognised_by_content() {
        assert!(Fio.recognises("{\n  \"fio version\" : \"fio-3.33\",\n \"jobs\": []\n}\n"));
        assert!(Fio.recognises("note: x\n{\n  \"fio version\" : \"fio-3.33\"}"));
        assert!(!Fio.recognises("{\"a\": 1}"));
        assert!(!Iometer.recognises("{\n  \"fio version\" : \"fio-3.33\"}"));
    }
}
