//! The one layer that writes what `show`, `compare`, `sweep` and `report` print: each subject's
//! lines and tables (through [`crate::table::Table`], numbers through `iomatrix_core::human`),
//! returned as text. The binary chooses what to print and prints it.
//!
//! - [`compare`]: `compare`'s text: the conditions, the B/A matrices and their verdicts, the
//!   scalar and per-operation tables, noise, caching, and `--fail-if-slower`'s findings.
//! - [`sweep`]: `sweep`'s text: the levels' tables and rates of change, the summaries, the
//!   read/write ratios, the cells left out and the derived figures.

pub mod compare;
pub mod sweep;
