//! `iomatrix run metadata`: its flags ([`args`]) and the [`Metadata`] suite the harness runs;
//! [`front`]: `iomatrix mdtest`, mdtest's command line.

pub mod args;
pub mod front;
mod suite;

pub use suite::Metadata;
