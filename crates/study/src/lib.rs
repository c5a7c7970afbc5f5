//! Study files: a whole comparison (configurations, the suites each runs,
//! what to conclude) in one TOML file.
//!
//! - [`StudyFile`] ([`file`](mod@file)): the schema, version 1, as written; [`parse`]
//!   refuses unknown keys with their line and the nearest valid name.
//! - [`Plan`] ([`plan()`]): the file checked against the suites' own command
//!   lines ([`SuiteFlags`], answered by the binary's parser) and ordered
//!   (configurations interleaved per step, or one after another); each
//!   [`PlannedStep`] carries its `run SUITE` flags and a key that hashes
//!   everything it runs with, so a resumed study knows a finished step.
//! - [`changes`]: what differs from a stored plan; [`expand`]: `${VAR}`.
//! - [`io500`]: IO500's score over a study's runs of IO500's phases (examples/io500.toml).
//!
//! Running a plan is the binary's (`iomatrix study run`); storing it, the
//! store's (`StudyRecord`).
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod file;
pub mod io500;
pub mod plan;

pub use file::{parse, FileError, Order, Slurm, StudyFile};
pub use plan::{
    changes, duration, expand, plan, Across, Plan, PlannedStep, Scale, StudyError, SuiteFlags, STUDY_FLAGS,
};

/// Labels a study puts on each of its runs (a configuration may not set them).
pub const STUDY_LABELS: [&str; 4] = ["study", "study-id", "config", "step"];
