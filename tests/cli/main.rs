//! End-to-end tests of the `iomatrix` binary on real file systems: the
//! system's temporary folder, tmpfs/ramfs and loop-mounted ext4 (the last
//! ones need root and are skipped with a message otherwise).

mod access;
mod backup;
mod bad_input;
mod bonnie;
mod clean;
mod clients;
mod compare;
mod crash;
mod database;
mod examples;
mod faults;
mod fileserver;
mod harness;
mod helpers;
mod import;
mod iozone_front;
mod lab;
mod lab_fixture;
mod mounted;
mod mpi;
mod remote;
mod remote_access;
mod remote_backup;
mod remote_bonnie;
mod remote_fileserver;
mod remote_fs;
mod remote_smb_faults;
mod report;
mod scan;
mod signals;
mod suite;
mod verify;
