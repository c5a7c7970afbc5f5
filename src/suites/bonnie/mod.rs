//! The Bonnie suite: `iomatrix run bonnie` with iomatrix's flags ([`args`]),
//! `iomatrix bonnie` with bonnie++'s own ([`front`]), the [`Bonnie`] suite
//! the harness runs, its tables ([`render`]: bonnie++'s layout), and
//! bonnie++'s `-u`/`-g` ([`user`]).

pub mod args;
pub mod front;
pub mod render;
mod suite;
pub mod user;

pub use suite::Bonnie;
