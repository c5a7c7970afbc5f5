//! `iomatrix clean TARGET`: removes the working folders crashed runs left
//! directly under TARGET. Only a folder with a valid marker whose maker is
//! proven gone is removed: the lock its run held on the marker is free, or
//! the pid is dead in the same boot and PID namespace
//! (`workdir::Marker::maker`). One still in use, one whose maker cannot be
//! proven gone (made on another host, or in another PID namespace without a
//! lock: `--force` removes those), one kept with `--keep` (unless `--kept`),
//! and anything without a marker are listed and left.
//! Locally it goes through the one remover: no symlink is followed and no
//! mount point crossed (a bind mount of the same file system included).
//!
//! Exit codes: 0 nothing left to do (or `--dry-run`), 1 a leftover could not
//! be removed (the others were), 2 the target cannot be read.

use crate::harness::server_workdir;
use crate::harness::workdir::{Found, Maker, MARKER};
use crate::harness::{Server, Target};
use clap::Args;
use iomatrix_core::UsageError;
use std::ffi::OsStr;
use std::path::Path;
use std::process::ExitCode;

#[derive(Args, Debug)]
#[command(after_help = "Exit codes: 0 done (also when folders were kept or left: each is listed with the reason), \
    1 a leftover could not be removed (the others were), 2 the target cannot be read.")]
pub struct CleanArgs {
    /// The folder (or nfs:// or smb:// target) given to the runs as --target
    #[arg(value_name = "TARGET", value_parser = Target::parse_folder)]
    pub target: Target,

    /// List what would be removed and what is kept, remove nothing
    #[arg(long)]
    pub dry_run: bool,

    /// Also remove the folders of finished runs that were made with --keep
    #[arg(long)]
    pub kept: bool,

    /// Also remove folders whose maker cannot be proven gone (made on another host, or in
    /// another PID namespace without a lock): only when you know that run has ended. A folder
    /// whose lock is held (its run is alive) is never removed
    #[arg(long)]
    pub force: bool,
}

pub fn run(args: CleanArgs) -> anyhow::Result<ExitCode> {
    let target = match &args.target {
        Target::Server(server) => return clean_remote(server, &args),
        Target::Folder(folder) => folder,
        // `Target::parse_folder` gives one of the two.
        other => anyhow::bail!("clean {}: not a folder a run writes in", other.shown()),
    };
    let meta = std::fs::metadata(target).map_err(|e| {
        UsageError::new(format!("clean {}: {e}; give the folder the runs had as --target", target.display()))
    })?;
    if !meta.is_dir() {
        return Err(UsageError::new(format!(
            "clean {}: not a folder; give the folder the runs had as --target",
            target.display()
        ))
        .into());
    }
    let found = crate::harness::workdir::survey(target)
        .map_err(|e| UsageError::new(format!("clean {}: cannot list it: {e}", target.display())))?;
    let shown = target.display().to_string();
    clean(&shown, found, &args, |name| remove_local(target, name))
}

fn clean_remote(server: &Server, args: &CleanArgs) -> anyhow::Result<ExitCode> {
    let url = server.url();
    let mut fs = server.connect().map_err(|e| UsageError::new(format!("clean {url}: {e}")))?;
    let found = server_workdir::survey(fs.as_mut())
        .map_err(|e| UsageError::new(format!("clean {url}: cannot list it: {e}")))?;
    clean(&url, found, args, |name| server_workdir::remove_working_folder(fs.as_mut(), name))
}

/// Prints what was found and removes the leftovers through `remove`.
fn clean(
    target: &str,
    found: Vec<Found>,
    args: &CleanArgs,
    mut remove: impl FnMut(&str) -> std::io::Result<()>,
) -> anyhow::Result<ExitCode> {
    let (mut removed, mut failed, mut left) = (0, 0, 0);
    let mut out = String::new();
    let dry_run = args.dry_run;
    for entry in &found {
        let gone = |maker: &Maker| match maker {
            Maker::Gone => true,
            Maker::Kept => args.kept,
            Maker::OtherHost | Maker::Unproven => args.force,
            Maker::Running => false,
        };
        match entry {
            Found::Marked { name, marker, maker } if gone(maker) && dry_run => {
                out += &format!("would remove {name}: {}\n", marker.describe());
                removed += 1;
            }
            Found::Marked { name, marker, maker } if gone(maker) => match remove(name) {
                Ok(()) => {
                    out += &format!("removed {name}: {}\n", marker.describe());
                    removed += 1;
                }
                Err(e) => {
                    eprintln!("iomatrix: error: cannot remove {target}/{name}: {e}");
                    failed += 1;
                }
            },
            Found::Marked { name, marker, maker: Maker::Running } => {
                out += &format!("kept {name}: in use by a running iomatrix ({})\n", marker.describe());
                left += 1;
            }
            Found::Marked { name, marker, maker: Maker::Kept } => {
                out += &format!(
                    "kept {name}: its run asked to keep it (--keep; {}); add --kept to remove it\n",
                    marker.describe()
                );
                left += 1;
            }
            Found::Marked { name, marker, maker: Maker::Unproven } => {
                out += &format!(
                    "kept {name}: whether its run still goes cannot be proven: {} ({}); add --force to remove it if \
                     you know that run ended\n",
                    marker.unproven_why(),
                    marker.describe()
                );
                left += 1;
            }
            // Made on another host (a gone maker's folder was removed above).
            Found::Marked { name, marker, .. } => {
                out += &format!(
                    "kept {name}: made on another host ({}); whether it still runs cannot be told from here: run \
                     `iomatrix clean` on {} (or add --force if you know that run ended)\n",
                    marker.describe(),
                    marker.host
                );
                left += 1;
            }
            Found::Unmarked { name, why } => {
                out +=
                    &format!("left {name}: {why}; not made by iomatrix as far as can be proven, remove it by hand\n");
                left += 1;
            }
        }
    }
    let verb = if dry_run { "would be removed" } else { "removed" };
    out += &format!("{target}: {removed} leftover working folder(s) {verb}, {left} left");
    if failed > 0 {
        out += &format!(", {failed} could not be removed");
    }
    out += "\n";
    crate::out::print(&out)?;
    Ok(if failed > 0 { ExitCode::from(crate::exit::FAILED) } else { ExitCode::SUCCESS })
}

/// Removes the working folder `name` in `target` through the one remover: never following a
/// symlink (it is removed as a name), never crossing a mount point (one inside is left, with
/// the folders above it, and named). The marker goes last: a folder only partly removed is
/// still recognised next time.
fn remove_local(target: &Path, name: &str) -> std::io::Result<()> {
    let removal = iomatrix_guard::remove_tree(target, OsStr::new(name), Some(OsStr::new(MARKER)))?;
    if removal.complete() {
        Ok(())
    } else {
        Err(std::io::Error::other(format!("left in place with its marker: {}", removal.describe_left())))
    }
}
