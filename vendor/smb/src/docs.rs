//! Additional crate docs are submodules.

#[doc = include_str!("../docs/parallelize.md")]
pub mod parallelize {}

#[doc = include_str!("../docs/threading_models.md")]
pub mod threading_models {}
