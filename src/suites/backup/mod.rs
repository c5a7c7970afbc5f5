//! The backup walk: `iomatrix run backup` ([`args`]), the [`Backup`] suite
//! the harness runs, and its tables ([`render`]: counts, MiB/min, size
//! classes and extents).

pub mod args;
pub mod render;
mod suite;

pub use suite::Backup;
