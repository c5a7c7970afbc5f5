//! The IOzone suite: `iomatrix run iozone` with iomatrix's flags ([`args`]),
//! `iomatrix iozone` with IOzone's own ([`front`]), the [`Iozone`] suite the
//! harness runs, and its tables ([`render`](iomatrix_iozone::render): IOzone's matrices).

pub mod args;
pub mod front;
mod suite;

pub use suite::Iozone;
