//! The Bonnie suite: `iomatrix run bonnie` with iomatrix's flags ([`args`]),
//! `iomatrix bonnie` with bonnie++'s own ([`front`]), the [`Bonnie`] suite
//! the harness runs, and its tables ([`render`]: bonnie++'s layout).

pub mod args;
pub mod front;
pub mod render;
mod suite;

pub use suite::Bonnie;
