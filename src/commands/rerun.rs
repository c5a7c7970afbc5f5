//! `iomatrix rerun RUN [--target T]`: a stored run's command line run
//! again as it was (the same flags, so the same plan), on its target or
//! another, labelled `rerun-of=RUN`. It runs as a process of its own, so
//! the new run stores its own command line, exactly what ran.
//!
//! A raw-device run's `--destroy-data-on` is never replayed: the user types it again on the rerun's
//! command line, and the device must be the one the run wrote, proven by the identity the run
//! stored (its WWN, serial, or loop backing file), not by its name, which another disk may take.

use crate::harness::args::{remove_flag, replace_flag};
use crate::harness::raw_device::{Expected, EXPECTED_IDENTITY};
use crate::harness::signals;
use anyhow::Context;
use clap::Args;
use iomatrix_core::UsageError;
use iomatrix_random::GENERATOR;
use iomatrix_store::Store;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// `iomatrix rerun`.
#[derive(Args, Debug)]
pub struct RerunArgs {
    /// The stored run (12 or #12; `iomatrix runs` lists them)
    run: String,

    /// Run it against this target instead: a folder, or a server URL as `--target` takes (for
    /// the IOzone front end the folder of -f, for the bonnie++ front end -d)
    #[arg(long, value_name = "DIR|URL")]
    target: Option<String>,

    /// A run on a raw device: confirms again that the data on its device may be destroyed (the
    /// stored run's confirmation is never replayed). The device must be the one the run wrote
    #[arg(long, value_name = "DEVICE")]
    destroy_data_on: Option<String>,
}

pub fn run(args: RerunArgs, db: &Path) -> anyhow::Result<ExitCode> {
    let id: i64 = args.run.trim_start_matches('#').parse().map_err(|_| {
        UsageError::new(format!("'{}': give a run id (12 or #12); `iomatrix runs` lists them", args.run))
    })?;
    let store = Store::open(db)?;
    // Only the command line and the target are needed: figures that cannot be read do not matter.
    let (run, unreadable) = store
        .load_run_as_stored(id)?
        .ok_or_else(|| UsageError::new(format!("no run #{id} in {}; `iomatrix runs` lists them", db.display())))?;
    if let Some(u) = unreadable.iter().find(|u| u.cell.is_none() && u.column == "conditions_json") {
        anyhow::bail!("cannot run #{id} again: its target cannot be read back ({u})");
    }
    let conditions = run.conditions_facts();
    let stored_target = conditions.target.text().map(PathBuf::from);
    let given = Given { target: args.target.as_deref(), destroy_data_on: args.destroy_data_on.as_deref() };
    let plan = Rerun::of(&run.summary.command_line, id, given, stored_target)?;
    let expected = match &plan.device {
        Some(device) => Some(expected_device(id, device, &run.environment_facts(), &plan.args)?),
        None => None,
    };
    if let Some(warning) = other_generator(id, conditions.generator.as_deref()) {
        eprintln!("{warning}");
    }
    let program = std::env::current_exe().context("cannot find iomatrix's own program file")?;
    eprintln!("iomatrix: run #{id} again: iomatrix {}", crate::harness::args::command_text(&plan.args));
    let mut cmd = Command::new(program);
    cmd.arg("--db").arg(db).args(&plan.args);
    let labels = match std::env::var("IOMATRIX_LABELS") {
        Ok(more) if !more.trim().is_empty() => format!("rerun-of={id},{more}"),
        _ => format!("rerun-of={id}"),
    };
    cmd.env("IOMATRIX_LABELS", labels);
    match &expected {
        Some(expected) => cmd.env(EXPECTED_IDENTITY, serde_json::to_string(expected)?),
        None => cmd.env_remove(EXPECTED_IDENTITY),
    };
    if let Some(dir) = &plan.cwd {
        cmd.current_dir(dir);
    }
    // A Ctrl-C reaches the new run too (one process group); this process waits for it to stop.
    signals::install()?;
    let status = cmd.status().context("cannot start the rerun")?;
    Ok(ExitCode::from(status.code().map_or(crate::exit::FAILED, |c| c as u8)))
}

/// The identity the device of raw-device run `id` had when the run wrote it, which the rerun's
/// device must have. A run that stored none, or one that names no device beyond its size, cannot
/// prove the device the same: refused, with the command to type instead.
fn expected_device(
    id: i64,
    device: &str,
    environment: &iomatrix_store::reader::StoredEnvironment,
    args: &[String],
) -> anyhow::Result<Expected> {
    let stored = environment.target.as_ref().and_then(|t| t.device_identity.clone());
    let identity: Option<iomatrix_environment::DeviceIdentity> = stored
        .transpose()
        .map_err(anyhow::Error::msg)
        .with_context(|| format!("run #{id}'s stored device identity does not read"))?;
    let why = match &identity {
        None => "stored no identity of its device (it was stored before runs kept one)".to_string(),
        Some(identity) if !identity.is_provable() => {
            format!("knows its device only by its size ([{identity}]: the kernel gave no WWN, serial or backing file)")
        }
        Some(_) => String::new(),
    };
    match identity {
        Some(identity) if why.is_empty() => Ok(Expected { run: id, identity }),
        _ => Err(UsageError::new(format!(
            "run #{id} {why}, so {device} cannot be proven to be the device it wrote; nothing was written. To run \
             it on what {device} is now, type its command again: iomatrix {}",
            crate::harness::args::command_text(args)
        ))
        .into()),
    }
}

/// What the user gave `rerun` besides the run.
#[derive(Clone, Copy, Default)]
struct Given<'a> {
    target: Option<&'a str>,
    destroy_data_on: Option<&'a str>,
}

/// What runs again: the command line (after the program, without any `--db`: the rerun stores
/// into the database it was given) and where.
#[derive(Debug, PartialEq)]
struct Rerun {
    args: Vec<String>,
    /// The folder it runs in: a front end's default target is the folder it ran in.
    cwd: Option<PathBuf>,
    /// The raw device the stored run wrote (its `--device`, as typed).
    device: Option<String>,
}

impl Rerun {
    fn of(command_line: &str, id: i64, given: Given<'_>, stored_target: Option<PathBuf>) -> Result<Rerun, UsageError> {
        let target = given.target;
        let words = shell_words::split(command_line).map_err(|e| {
            UsageError::new(format!("run #{id}'s stored command line does not split ({e}): {command_line}"))
        })?;
        // `--db` goes wherever it was typed (before the subcommand, among a run's flags, among a
        // front end's): the rerun's own database is used, never the one the run was stored in.
        let mut args: Vec<String> = Vec::with_capacity(words.len());
        let mut rest = words.into_iter().skip(1);
        while let Some(w) = rest.next() {
            if w == "--db" {
                rest.next();
            } else if !w.starts_with("--db=") {
                args.push(w);
            }
        }
        let not_a_run = || {
            UsageError::new(format!(
                "run #{id} was not run by {} (its command: {command_line}); an imported run has nothing of \
                 iomatrix's to run again",
                runners()
            ))
        };
        let mut cwd = None;
        let mut device = None;
        let subcommand = args.first().cloned();
        match subcommand.as_deref() {
            Some("run") if args.len() >= 2 => {
                drop_study_labels(&mut args);
                if let Some(t) = target {
                    replace_flag(&mut args, "--target", t);
                }
                device = confirm_device(&mut args, id, given.destroy_data_on)?;
            }
            // A suite's legacy front end moves its own flags (IOzone's -f, bonnie++'s -d).
            Some(front) => match crate::suites::rerun_front(front, &mut args, target, stored_target) {
                Some(folder) => cwd = folder,
                None => return Err(not_a_run()),
            },
            None => return Err(not_a_run()),
        }
        if device.is_none() {
            if let Some(d) = given.destroy_data_on {
                return Err(UsageError::new(format!(
                    "--destroy-data-on {d}: run #{id} wrote no raw device (its command: {command_line}); leave \
                     --destroy-data-on out"
                )));
            }
        }
        Ok(Rerun { args, cwd, device })
    }
}

/// A raw-device run's confirmation, never replayed: the stored `--destroy-data-on` is dropped and
/// the one the user gave `rerun` put in its place, or the rerun is refused. Returns the device the
/// stored run named.
fn confirm_device(args: &mut Vec<String>, id: i64, given: Option<&str>) -> Result<Option<String>, UsageError> {
    let device = flag_value(args, "--device");
    let stored = take_flag(args, "--destroy-data-on");
    let Some(device) = device.or(stored) else { return Ok(None) };
    let Some(given) = given else {
        return Err(UsageError::new(format!(
            "run #{id} wrote the raw device {device}, destroying its data; a rerun does not repeat that \
             confirmation. If the data now on {device} may be destroyed, give --destroy-data-on again: iomatrix \
             rerun {id} --destroy-data-on {device}"
        )));
    };
    args.extend(["--destroy-data-on".to_string(), given.to_string()]);
    Ok(Some(device))
}

/// The value of the last `FLAG VALUE` or `FLAG=VALUE` in `args`.
fn flag_value(args: &[String], flag: &str) -> Option<String> {
    let eq = format!("{flag}=");
    let mut found = None;
    for (i, a) in args.iter().enumerate() {
        if a == flag {
            found = args.get(i + 1).cloned();
        } else if let Some(v) = a.strip_prefix(&eq) {
            found = Some(v.to_string());
        }
    }
    found
}

/// Removes every `FLAG VALUE` and `FLAG=VALUE` from `args`, returning the last value.
fn take_flag(args: &mut Vec<String>, flag: &str) -> Option<String> {
    let found = flag_value(args, flag);
    remove_flag(args, flag);
    found
}

/// The warning a rerun gives when the run drew from another generator than this binary's: the
/// same seed then draws other offsets, sizes, orders and data, so the rerun does not repeat the
/// original's work byte for byte (its plan is the same).
fn other_generator(id: i64, generator: Option<&str>) -> Option<String> {
    let was = match generator {
        Some(GENERATOR) => return None,
        Some(other) => format!("drew from the generator {other}"),
        None => "was stored before runs named their generator (it drew from iomatrix's own, since replaced)".into(),
    };
    Some(format!(
        "iomatrix: warning: run #{id} {was}; this rerun draws from {GENERATOR}, so its random offsets, file \
         sizes, orders and written data will differ from the original's (the same seeds, other draws)"
    ))
}

/// "`iomatrix run`, `iomatrix iozone` or `iomatrix bonnie`": what makes a run that can run again.
fn runners() -> String {
    let mut names: Vec<String> =
        std::iter::once("run").chain(crate::suites::front_ends()).map(|c| format!("`iomatrix {c}`")).collect();
    let last = names.pop().unwrap_or_default();
    if names.is_empty() {
        last
    } else {
        format!("{} or {last}", names.join(", "))
    }
}

/// Removes `--label KEY=...` for the labels a study sets: a rerun is not part of the study.
fn drop_study_labels(args: &mut Vec<String>) {
    let study =
        |v: &str| iomatrix_study::STUDY_LABELS.iter().any(|k| v.split_once('=').is_some_and(|(key, _)| key == *k));
    let mut i = 0;
    while i < args.len() {
        if args[i] == "--label" && args.get(i + 1).is_some_and(|v| study(v)) {
            args.drain(i..i + 2);
        } else if args[i].strip_prefix("--label=").is_some_and(study) {
            args.remove(i);
        } else {
            i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(line: &str, target: Option<&str>) -> Result<Rerun, UsageError> {
        Rerun::of(line, 7, Given { target, destroy_data_on: None }, Some(PathBuf::from("/was/here")))
    }

    fn confirming(line: &str, device: &str) -> Result<Rerun, UsageError> {
        Rerun::of(line, 7, Given { target: None, destroy_data_on: Some(device) }, None)
    }

    #[test]
    fn a_raw_device_runs_again_only_when_the_user_confirms_it_again() {
        for line in [
            "iomatrix run access --device /dev/loop2 --destroy-data-on /dev/loop2 --read 0",
            "iomatrix run access --device=/dev/loop2 --destroy-data-on=/dev/loop2 --read 0",
            "iomatrix run access --device /dev/loop2 --read 0 --destroy-data-on=/dev/loop2 --destroy-data-on /dev/loop2",
        ] {
            let e = of(line, None).unwrap_err().to_string();
            assert!(e.contains("a rerun does not repeat that confirmation"), "{line}: {e}");
            assert!(e.contains("iomatrix rerun 7 --destroy-data-on /dev/loop2"), "{line}: {e}");
            let r = confirming(line, "/dev/loop9").unwrap();
            assert_eq!(r.device.as_deref(), Some("/dev/loop2"), "{line}");
            let confirmations: Vec<&String> = r.args.iter().filter(|a| a.starts_with("--destroy-data-on")).collect();
            assert_eq!(confirmations, ["--destroy-data-on"], "{line}: {:?}", r.args);
            assert_eq!(r.args.last().map(String::as_str), Some("/dev/loop9"), "only the user's word: {:?}", r.args);
        }
    }

    #[test]
    fn a_confirmation_for_a_run_without_a_device_is_refused() {
        let e = confirming("iomatrix run access --target /mnt/a --read 0", "/dev/sdb").unwrap_err().to_string();
        assert!(e.contains("wrote no raw device") && e.contains("leave --destroy-data-on out"), "{e}");
        let e = confirming("iomatrix iozone -s 64k -i 0", "/dev/sdb").unwrap_err().to_string();
        assert!(e.contains("wrote no raw device"), "{e}");
    }

    #[test]
    fn a_run_command_runs_again_with_its_flags_and_another_target() {
        let line = "/usr/bin/iomatrix --db /x.sqlite run iozone --target /mnt/a --files 1m --label study=s --label study-id=3 --label config=a --label step=iozone --label disk=ssd";
        let r = of(line, None).unwrap();
        assert_eq!(r.args, shell_words::split("run iozone --target /mnt/a --files 1m --label disk=ssd").unwrap());
        let r = of(line, Some("/mnt/b")).unwrap();
        assert_eq!(r.args, shell_words::split("run iozone --files 1m --label disk=ssd --target /mnt/b").unwrap());
        assert_eq!(r.cwd, None);
    }

    #[test]
    fn front_ends_run_in_their_folder_or_move_their_file_or_folder() {
        let r = of("iomatrix iozone -s 64k -r 4k -i 0", None).unwrap();
        assert_eq!(r.cwd, Some(PathBuf::from("/was/here")));
        let r = of("iomatrix iozone -s 64k -f /mnt/a/f.tmp -i 0", Some("/mnt/b/")).unwrap();
        assert_eq!(r.args, shell_words::split("iozone -s 64k -i 0 -f /mnt/b/f.tmp").unwrap());
        let r = of("iomatrix bonnie -d /mnt/a -s 512 -r 256 -u root", Some("/mnt/b")).unwrap();
        assert_eq!(r.args, shell_words::split("bonnie -s 512 -r 256 -u root -d /mnt/b").unwrap());
    }

    #[test]
    fn a_db_typed_anywhere_is_left_out() {
        for line in [
            "iomatrix --db /y1.sqlite run iozone --files 1m",
            "iomatrix run iozone --db /y1.sqlite --files 1m",
            "iomatrix run iozone --files 1m --db=/y1.sqlite",
        ] {
            assert_eq!(of(line, None).unwrap().args, shell_words::split("run iozone --files 1m").unwrap(), "{line}");
        }
        let r = of("iomatrix iozone --db /y1.sqlite -s 64k -i 0 -f /mnt/a/f", None).unwrap();
        assert_eq!(r.args, shell_words::split("iozone -s 64k -i 0 -f /mnt/a/f").unwrap());
        let r = of("iomatrix bonnie -d /mnt/a --db=/y1.sqlite -s 512", None).unwrap();
        assert_eq!(r.args, shell_words::split("bonnie -d /mnt/a -s 512").unwrap());
    }

    #[test]
    fn a_run_of_another_generator_or_none_is_warned_about() {
        assert_eq!(other_generator(3, Some(GENERATOR)), None);
        let old = other_generator(3, None).unwrap();
        assert!(old.contains("run #3 was stored before runs named their generator"), "{old}");
        assert!(old.contains("will differ from the original's"), "{old}");
        let other = other_generator(4, Some("pcg64")).unwrap();
        assert!(other.contains("run #4 drew from the generator pcg64; this rerun draws from xoshiro256++"), "{other}");
    }

    #[test]
    fn imported_runs_and_broken_lines_are_refused() {
        let e = of("iomatrix import fio.json", None).unwrap_err();
        assert!(e.to_string().contains("imported run"), "{e}");
        // The front ends come from the suite table, in its order.
        let runners = "run #7 was not run by `iomatrix run`, `iomatrix iozone`, `iomatrix fio`, `iomatrix bonnie` or \
                       `iomatrix mdtest` (its command:";
        assert!(e.to_string().starts_with(runners), "{e}");
        assert!(of("iomatrix run 'iozone", None).is_err());
    }
}
