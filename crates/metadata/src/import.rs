//! What `iomatrix import` reads of the metadata suite, registered through the command table:
//! mdtest's output (its importer lives here once written) and a published table's figures.

use iomatrix_harness::Suite;
use iomatrix_import::{Importer, PublishedSuite};

/// The metadata suite's importers of other tools' results.
pub const IMPORTERS: &[&dyn Importer] = &[];

/// What a published table may give of a metadata run's cells: the phases' rates and CPU.
pub const PUBLISHED: PublishedSuite =
    PublishedSuite { name: <crate::cli::Metadata as Suite>::NAME, metrics: &[], walk: false };
