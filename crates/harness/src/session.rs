//! What a command that stores many runs one after another (`iomatrix fio`: a stored run per
//! job) opens and reads once, and hands to each run ([`super::run_in`]). A single `run` uses
//! a fresh [`Session`], so it opens and reads everything itself, as before.
//!
//! Honest within one command, because it is one process on one machine against one target:
//! - the database is opened, and checked whole (`PRAGMA quick_check`), once: as one run of
//!   many cells checks it once before its first cell. The store's own watch (a file removed or
//!   replaced under it refuses every later commit) holds for every run that uses it.
//! - the target folder's environment (machine, mount, block device) is read once; its free
//!   and total bytes are read again for every run, since runs write and remove files. The
//!   leftovers of crashed runs in the folder are named once.
//! - the machine's limits (threads, memory, address space) are read once, as the fio front
//!   already does for its plan-time check of every job.
//!
//! Without this, each of 10,000 small jobs read the whole database (quick_check and the scan
//! for abandoned runs, growing with every run stored) and /proc, /sys and mountinfo again.

use iomatrix_environment::{Environment, SystemLimits};
use iomatrix_store::Store;
use std::path::{Path, PathBuf};

#[derive(Default)]
pub struct Session {
    /// The database opened for writing, kept between runs.
    store: Option<Store>,
    /// The canonical target folder and its environment, read for the first run.
    folder: Option<(PathBuf, Environment)>,
    limits: Option<SystemLimits>,
}

impl Session {
    /// The database at `db` opened for writing (and checked), or the one kept from the run before.
    pub(super) fn take_store(&mut self, db: &Path) -> Result<Store, iomatrix_store::StoreError> {
        match self.store.take() {
            Some(store) if store.path() == db && !store.is_damaged() => Ok(store),
            _ => Store::open_for_writing(db),
        }
    }

    /// Keeps the database open for the next run of this command.
    pub(super) fn keep_store(&mut self, store: Store) {
        self.store = Some(store);
    }

    /// `folder`'s environment, kept from an earlier run of this command with its space read
    /// now; None the first time (the caller captures it and [`Session::keep_folder`]s it).
    pub(super) fn folder(&self, folder: &Path) -> Option<std::io::Result<Environment>> {
        let (kept, env) = self.folder.as_ref().filter(|(kept, _)| kept == folder)?;
        Some(iomatrix_environment::space(kept).map(|space| {
            let mut env = env.clone();
            env.target.free_bytes = space.free_bytes;
            env.target.total_bytes = space.total_bytes;
            env
        }))
    }

    pub(super) fn keep_folder(&mut self, folder: &Path, env: &Environment) {
        self.folder = Some((folder.to_path_buf(), env.clone()));
    }

    /// The machine's limits, read once per command.
    pub(super) fn limits(&mut self) -> &SystemLimits {
        self.limits.get_or_insert_with(SystemLimits::read)
    }
}
