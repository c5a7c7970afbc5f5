//! The Bonnie suite: `iomatrix run bonnie` with iomatrix's flags ([`args`]),
//! `iomatrix bonnie` with bonnie++'s own ([`front`]), the [`Bonnie`] suite
//! the harness runs, its tables ([`render`](crate::render): bonnie++'s layout), and
//! bonnie++'s `-u`/`-g` ([`user`]).

pub mod args;
pub mod front;
mod suite;
pub mod user;

pub use suite::Bonnie;
