//! The one layer that writes what `show`, `compare`, `sweep` and `report` print: the binary
//! chooses what to print, these modules write it.

pub mod connections;
