//! What `iomatrix import` reads of the backup suite: no other tool's results, but a published
//! table's figures ([`PUBLISHED`]), registered through the command table.

use iomatrix_harness::Suite;
use iomatrix_import::PublishedMetric::{CompletionTime, Extents, Files};
use iomatrix_import::{Importer, PublishedSuite};

/// The backup suite's importers of other tools' results: none.
pub const IMPORTERS: &[&dyn Importer] = &[];

/// What a published table may give of a backup walk's cells: throughput (also in MiB/min), its elapsed time as completion time, the files read and their extents, CPU.
pub const PUBLISHED: PublishedSuite = PublishedSuite {
    name: <crate::cli::Backup as Suite>::NAME,
    metrics: &[CompletionTime, Files, Extents],
    walk: true,
};
