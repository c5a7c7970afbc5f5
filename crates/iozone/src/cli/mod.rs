//! The IOzone suite as the binary's command table takes it: `iomatrix run iozone`
//! with iomatrix's flags ([`args`]), `iomatrix iozone` with IOzone's own
//! ([`front`]), and the [`Iozone`] suite the harness runs (its tables are
//! [`render`](crate::render): IOzone's matrices).

pub mod args;
pub mod front;
mod suite;

pub use suite::Iozone;
