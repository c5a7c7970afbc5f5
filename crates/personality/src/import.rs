//! What `iomatrix import` reads of the personality suite: no other tool's results, but a published
//! table's figures ([`PUBLISHED`]), registered through the command table.

use iomatrix_harness::Suite;
use iomatrix_import::PublishedMetric::{CompletionTime, ResponseTime, ThroughputPerConnection};
use iomatrix_import::{Importer, PublishedSuite};

/// The personality suite's importers of other tools' results: none.
pub const IMPORTERS: &[&dyn Importer] = &[];

/// What a published table may give of a personality run's cells: throughput, the connections' mean throughput, each operation's response time, completion time, CPU.
pub const PUBLISHED: PublishedSuite = PublishedSuite {
    name: <crate::cli::Personality as Suite>::NAME,
    metrics: &[ThroughputPerConnection, ResponseTime, CompletionTime],
    walk: false,
};
