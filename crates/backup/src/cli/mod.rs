//! The backup walk: `iomatrix run backup` ([`args`]), the [`Backup`] suite
//! the harness runs, and its tables ([`render`](crate::render): counts, MiB/min, size
//! classes and extents).

pub mod args;
mod suite;

pub use suite::Backup;
