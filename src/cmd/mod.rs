//! One file per subcommand.
pub mod bonnie;
pub mod clean;
pub mod compare;
pub mod extents;
pub mod import;
pub mod iozone;
pub mod report;
pub mod run_access;
pub mod run_backup;
pub mod run_bonnie;
pub mod run_fileserver;
pub mod run_iozone;
pub mod runs;
pub mod scan;
pub mod show;
pub mod sweep;
