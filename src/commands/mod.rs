//! The subcommands that are not suites, one file each: they read and
//! explain the results database (`runs`, `show`, `compare`, `sweep`,
//! `report`, `import`) or help around runs (`clean`, `extents`, `scan`).

pub mod clean;
pub mod compare;
pub mod extents;
pub mod import;
pub mod report;
pub mod runs;
pub mod scan;
mod select;
pub mod show;
pub mod sweep;
