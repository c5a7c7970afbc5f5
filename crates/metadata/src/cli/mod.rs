//! `iomatrix run metadata`: its flags ([`args`]) and the [`Metadata`] suite the harness runs.

pub mod args;
mod suite;

pub use suite::Metadata;
