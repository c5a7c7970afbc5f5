//! `iomatrix db check|backup|merge`: the results database as a file. `check`
//! runs SQLite's integrity check, `backup` makes a consistent copy while runs
//! write, `merge` brings other machines' databases' runs into this one (once
//! each). docs/database.md says what is safe while runs write.

use anyhow::Context;
use clap::{Args, Subcommand};
use iomatrix_core::UsageError;
use iomatrix_store::{MergeMode, Store};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct DbArgs {
    #[command(subcommand)]
    command: DbCommand,
}

#[derive(Subcommand, Debug)]
enum DbCommand {
    /// SQLite's full integrity check of the database (every page, every index), every stored
    /// figure read back (JSON parsed, latency histograms decoded), its schema version, whether it
    /// is read-only, and the runs and cells it holds; exit 1 if it is damaged or a figure cannot
    /// be read. Reads only (also a database on a read-only mount)
    Check {
        /// Machine-readable output (schema "iomatrix.db-check/1")
        #[arg(long)]
        json: bool,
    },
    /// A consistent copy of the database in FILE through SQLite's online backup: safe while runs
    /// write (copying the file with cp while a run writes is not). FILE must not exist (unless
    /// --force); it is never the database itself or its -wal or -shm, by any name
    Backup {
        /// Where the copy goes
        #[arg(value_name = "FILE")]
        file: PathBuf,
        /// Replace FILE if it exists (the copy is made beside it and renamed over it once checked)
        #[arg(long)]
        force: bool,
    },
    /// Copy the runs of other databases (from other machines) into this one, with their cells,
    /// histograms, environment, labels and losses; each keeps its origin (file, host, id there).
    /// A run already here (merged before) is not copied again; runs still running there are left
    /// for a later merge; the other files are only read. Every run passes the gate every figure
    /// entering the database passes: if one holds a figure out of its bounds, nothing is merged
    /// (unless --skip-refused)
    Merge {
        /// Databases to merge from
        #[arg(value_name = "OTHER", required = true)]
        others: Vec<PathBuf>,
        /// Merge the runs the gate lets pass and leave out those it refuses, naming each
        #[arg(long)]
        skip_refused: bool,
        /// Machine-readable output (schema "iomatrix.db-merge/1")
        #[arg(long)]
        json: bool,
    },
}

pub fn run(args: DbArgs, db: &Path) -> anyhow::Result<ExitCode> {
    match args.command {
        DbCommand::Check { json } => check(db, json),
        DbCommand::Backup { file, force } => backup(db, &file, force),
        DbCommand::Merge { others, skip_refused, json } => merge(db, &others, skip_refused, json),
    }
}

fn existing(db: &Path) -> anyhow::Result<()> {
    if !db.is_file() {
        return Err(UsageError::new(format!(
            "no results database at {}: give the file with --db PATH (or IOMATRIX_DB)",
            db.display()
        ))
        .into());
    }
    Ok(())
}

fn check(db: &Path, as_json: bool) -> anyhow::Result<ExitCode> {
    existing(db)?;
    let r = iomatrix_store::check(db)?;
    let count = |n: Option<i64>| n.map_or("unreadable".to_string(), |n| n.to_string());
    if as_json {
        let doc = json!({ "schema": "iomatrix.db-check/1", "sound": r.sound(), "check": r });
        crate::out::print(&format!("{}\n", serde_json::to_string_pretty(&doc)?))?;
    } else {
        let version = match r.schema_version {
            Some(v) if v > r.known_version => format!("{v} (newer than this iomatrix's {})", r.known_version),
            Some(v) => format!("{v} (this iomatrix writes {})", r.known_version),
            None => "unreadable".into(),
        };
        let access = match &r.read_only {
            Some(why) => {
                format!("read-only ({why}): runs, show, compare, sweep and report read it; nothing is stored in it")
            }
            None => "read-write".into(),
        };
        let mut out = format!(
            "database: {}\nsize: {} bytes\naccess: {access}\nschema version: {version}\nruns: {}\ncells: {}\n",
            r.path.display(),
            r.bytes,
            count(r.runs),
            count(r.cells)
        );
        if r.problems.is_empty() {
            out += "integrity: ok\n";
        } else {
            out += &format!("integrity: DAMAGED ({} problem(s))\n", r.problems.len());
            for p in r.problems.iter().take(20) {
                out += &format!("  {p}\n");
            }
        }
        match r.unreadable_count {
            _ if !r.problems.is_empty() => out += "figures: not read (the file is damaged)\n",
            0 => out += "figures: ok (every stored figure reads back)\n",
            n => {
                out += &format!("figures: UNREADABLE ({n} stored figure(s) cannot be read back)\n");
                for u in r.unreadable.iter().take(20) {
                    out += &format!("  {u}\n");
                }
                if n > 20 {
                    out += &format!("  ... and {} more (--json lists {})\n", n - 20, r.unreadable.len());
                }
            }
        }
        crate::out::print(&out)?;
    }
    if r.sound() {
        return Ok(ExitCode::SUCCESS);
    }
    if r.problems.is_empty() {
        eprintln!(
            "iomatrix: error: results database {} holds {} stored figure(s) that cannot be read back (named \
             above; `iomatrix show RUN` names a run's): compare, sweep and report refuse those runs; restore the \
             database from a copy (`iomatrix db backup` makes one)",
            db.display(),
            r.unreadable_count
        );
    } else {
        eprintln!(
            "iomatrix: error: results database {} is damaged: restore it from a copy (`iomatrix db backup` makes \
             one); the sqlite3 shell's `.recover` may save what is left",
            db.display()
        );
    }
    Ok(ExitCode::from(crate::exit::FAILED))
}

fn backup(db: &Path, file: &Path, force: bool) -> anyhow::Result<ExitCode> {
    existing(db)?;
    // An existing database is never "a previous copy" to replace unasked: it may be another machine's.
    let kind = iomatrix_guard::Never("a file db backup may replace: it never overwrites a file without --force");
    let out =
        iomatrix_guard::Output { path: file, flag: "db backup", kind: &kind, force, database: Some(db) }.check()?;
    let temp = out.temp_path();
    let kept =
        if out.replaces() { format!("{} is left as it was", file.display()) } else { "nothing was written".into() };
    let r = iomatrix_store::backup(db, &temp)
        .with_context(|| format!("db backup {}: the copy could not be made; {kept}", file.display()))?;
    if !r.problems.is_empty() {
        let _ = std::fs::remove_file(&temp);
        eprintln!(
            "iomatrix: error: the copy of {} is damaged ({}): so is the database, most likely; check it with \
             `iomatrix db check`; {kept}",
            db.display(),
            r.problems[0],
        );
        return Ok(ExitCode::from(crate::exit::FAILED));
    }
    out.place_file(&temp)?;
    crate::out::print(&format!(
        "copied {} to {} ({} pages, {} bytes; checked: ok)\n",
        db.display(),
        file.display(),
        r.pages,
        r.bytes
    ))?;
    Ok(ExitCode::SUCCESS)
}

fn merge(db: &Path, others: &[PathBuf], skip_refused: bool, as_json: bool) -> anyhow::Result<ExitCode> {
    // Every source is looked at before anything is copied: a wrong file merges nothing.
    for other in others {
        check_source(db, other)?;
    }
    let store = Store::open_for_writing(db)?;
    // The gate, before anything is copied: a run with a figure out of its bounds merges nothing.
    if !skip_refused {
        check_refused(&store, db, others)?;
    }
    let mut reports = Vec::new();
    for other in others {
        let r = store.merge_from(other, MergeMode::Copy).with_context(|| {
            format!(
                "cannot merge {} into {} ({} database(s) merged before it)",
                other.display(),
                db.display(),
                reports.len()
            )
        })?;
        reports.push(r);
    }
    if as_json {
        let doc = json!({ "schema": "iomatrix.db-merge/1", "db": store.path(), "merged": reports });
        crate::out::print(&format!("{}\n", serde_json::to_string_pretty(&doc)?))?;
    } else {
        crate::out::print(&merged_text(&reports))?;
    }
    let refused: Vec<String> = reports
        .iter()
        .flat_map(|r| r.refused.iter().map(move |run| format!("  {}: {run}", r.source.display())))
        .collect();
    if refused.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    if skip_refused {
        eprintln!("iomatrix: {} run(s) refused and left out (--skip-refused):\n{}", refused.len(), refused.join("\n"));
        return Ok(ExitCode::SUCCESS);
    }
    // Checked before the copy, yet refused in it: a run that finished there meanwhile.
    Err(UsageError::new(format!(
        "{} run(s) that finished in the databases merged while they were checked hold figures the store's gate \
         refuses; they were left out, the other runs merged:\n{}",
        refused.len(),
        refused.join("\n")
    ))
    .into())
}

/// `other`, a database to merge into `db`: a file, not `db` itself, of a schema this iomatrix
/// reads, and sound.
fn check_source(db: &Path, other: &Path) -> anyhow::Result<()> {
    if !other.is_file() {
        return Err(UsageError::new(format!("{}: no such file (a results database to merge)", other.display())).into());
    }
    // By device and inode: a hard link, a symlink or a bind mount of this database is it.
    if let Some(what) = iomatrix_guard::database_file(db, other) {
        return Err(UsageError::new(format!(
            "{}: that is this database ({what}, the same device and inode): give the other machines' databases",
            other.display()
        ))
        .into());
    }
    let version = iomatrix_store::schema_version_of(other)
        .map_err(|e| UsageError::new(format!("{}: not a results database iomatrix can read: {e}", other.display())))?;
    let known = iomatrix_store::known_schema_version();
    if version == 0 {
        return Err(UsageError::new(format!(
            "{}: not an iomatrix results database (it has no runs table)",
            other.display()
        ))
        .into());
    }
    if version > known {
        return Err(UsageError::new(format!(
            "{}: schema version {version} is newer than this iomatrix knows ({known}): merge with a newer iomatrix",
            other.display()
        ))
        .into());
    }
    let problems = iomatrix_store::quick_check(other)?;
    if let Some(first) = problems.first() {
        anyhow::bail!(
            "cannot merge {0}: {0} (the database to merge from) is damaged: {first}{1}; nothing was merged into \
             {2}, which is left as it was. Check it with `iomatrix db check --db {0}`, and merge a sound copy",
            other.display(),
            if problems.len() > 1 { format!(" (and {} more problems)", problems.len() - 1) } else { String::new() },
            db.display()
        );
    }
    Ok(())
}

/// The store's gate over every run to merge, before anything is copied: a run with a figure out
/// of its bounds merges nothing.
fn check_refused(store: &Store, db: &Path, others: &[PathBuf]) -> anyhow::Result<()> {
    let mut refused = Vec::new();
    for other in others {
        let r = store.merge_from(other, MergeMode::CheckOnly).with_context(|| {
            format!("cannot check the runs of {} before merging them into {}", other.display(), db.display())
        })?;
        refused.extend(r.refused.into_iter().map(|run| format!("  {}: {run}", other.display())));
    }
    if !refused.is_empty() {
        return Err(UsageError::new(format!(
            "{} run(s) to merge hold figures the store's gate refuses (outside their physical bounds, or \
             unreadable):\n{}\nnothing was merged into {}, which is left as it was; --skip-refused merges the \
             other runs and leaves these out",
            refused.len(),
            refused.join("\n"),
            db.display()
        ))
        .into());
    }
    Ok(())
}

/// What each merge did, a line per database and one per run merged.
fn merged_text(reports: &[iomatrix_store::MergeReport]) -> String {
    let mut out = String::new();
    for r in reports {
        out += &format!(
            "{}: {} run(s) merged, {} already here{}\n",
            r.source.display(),
            r.merged.len(),
            r.already_here,
            if r.still_running > 0 {
                format!(", {} still running there (merge again once they end)", r.still_running)
            } else {
                String::new()
            }
        );
        for iomatrix_store::MergedRun { there, here } in &r.merged {
            out += &format!("  run #{there} there is #{here} here\n");
        }
    }
    out
}
