//! End-to-end tests of the `iomatrix` binary on real file systems: the
//! system's temporary folder, tmpfs/ramfs and loop-mounted ext4, and on the
//! lab's real servers. Cases that need root or a package this machine lacks
//! are skipped: each is listed, with its reason, at the end of this binary's
//! run, and with `CI=true` the run fails (see `helpers`).

mod access;
mod backup;
mod bad_input;
mod bonnie;
mod cell_names;
mod clean;
mod clients;
mod compare;
mod compare_hints;
mod crash;
mod database;
mod database_safety;
mod dbench;
mod error_types;
mod examples;
mod faults;
mod figures;
mod fileserver;
mod fio_command;
mod fio_distribution;
mod fio_words;
mod generator;
mod golden;
mod harness;
mod help;
mod helpers;
mod hostile_inputs;
mod human_numbers;
mod import;
mod iozone_front;
mod iozone_report;
mod lab;
mod lab_fixture;
mod mounted;
mod mpi;
mod multihost;
mod personality;
mod remote;
mod remote_access;
mod remote_backup;
mod remote_bonnie;
mod remote_fileserver;
mod remote_fs;
mod remote_personality;
mod remote_smb_faults;
mod report;
mod scan;
mod seam;
mod signals;
mod stored;
mod study;
mod suite;
mod summary;
mod sweep;
mod text_layer;
mod trust_database;
mod trust_failures;
mod trust_figures;
mod trust_files;
mod trust_limits;
mod trust_mpi;
mod verify;
