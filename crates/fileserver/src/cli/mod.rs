//! The file-server load (seed 003): `iomatrix run fileserver` ([`args`]),
//! the [`Fileserver`] suite the harness runs, and its tables ([`render`](crate::render):
//! per-operation response times and throughput per phase).

pub mod args;
mod suite;

pub use suite::Fileserver;
