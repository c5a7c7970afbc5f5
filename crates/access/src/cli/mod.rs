//! The access suite: `iomatrix run access` ([`args`]: Iometer/fio-style
//! access specs with outstanding I/O), the [`Access`] suite the harness
//! runs, and its table ([`render`](crate::render): a line per setting with IOPS, MiB/s and
//! latency percentiles).

pub mod args;
mod fio_words;
pub mod front;
mod suite;

pub use suite::Access;
