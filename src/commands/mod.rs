//! The subcommands that are not suites, one file each: they read and
//! explain the results database (`runs`, `show`, `compare`, `sweep`,
//! `report`, `import`, `watch`), look after it (`db`), run whole studies (`study`), or help around runs
//! (`clean`, `extents`, `scan`).

pub mod clean;
pub mod compare;
mod compare_many;
pub mod db;
pub mod extents;
pub mod import;
mod numbers;
pub mod personalities;
pub mod report;
pub mod rerun;
pub mod runs;
pub mod scan;
mod select;
pub mod serve;
pub mod show;
pub mod study;
pub mod sweep;
pub mod watch;
