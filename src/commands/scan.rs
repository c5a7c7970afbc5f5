//! `iomatrix scan PATH`: what a tree holds, by file size (read only; nothing is
//! stored in the results database). `--save-profile FILE` keeps the size classes
//! for `run fileserver --profile`.

use clap::Args;
use iomatrix_core::{human, parse_size_list, UsageError};
use iomatrix_report::table::{Column, Table};
use iomatrix_tree::{class_label, scan, Inventory, ScanError, ScanOptions, Tally};
use serde_json::{json, Value};
use std::fmt::Write as _;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// `iomatrix scan PATH`.
#[derive(Args, Debug)]
pub struct ScanArgs {
    /// The tree to scan (read only). Symlinks are counted, never followed (a symlinked PATH is
    /// followed itself); a hard-linked file counts once; a file as PATH is scanned alone
    #[arg(value_name = "PATH")]
    pub path: PathBuf,

    /// Report the share of files and of bytes at or below these sizes
    #[arg(long, default_value = "64k,1m,32m", value_name = "SIZES", allow_hyphen_values = true)]
    pub at: String,

    /// List this many of the largest files
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub top: usize,

    /// Descend into folders on other file systems (default: stay on PATH's, like `du -x`)
    #[arg(long)]
    pub cross_mounts: bool,

    /// Save the size classes as a file-size profile (schema "iomatrix.profile/1") for
    /// `run fileserver --profile FILE`. A previous profile there is replaced; another file only
    /// with --force; the results database never
    #[arg(long, value_name = "FILE")]
    pub save_profile: Option<PathBuf>,

    /// Let --save-profile replace an existing file that is not a size profile
    #[arg(long, requires = "save_profile")]
    pub force: bool,

    /// Machine-readable output (schema: docs/json.md, "iomatrix.scan/1")
    #[arg(long)]
    pub json: bool,
}

/// `database`: the results database (if it has a place), which the profile never replaces.
pub fn run(args: ScanArgs, database: Option<&Path>) -> anyhow::Result<ExitCode> {
    let thresholds: Vec<u64> =
        parse_size_list(&args.at, 1).map_err(|e| UsageError::new(format!("--at: {e}")))?.iter().map(|s| s.0).collect();
    // Judged before a long scan, and again when written.
    let profile_out = args
        .save_profile
        .as_deref()
        .map(|path| {
            iomatrix_guard::Output {
                path,
                flag: "--save-profile",
                kind: &iomatrix_tree::ProfileKind,
                force: args.force,
                database,
            }
            .check()
        })
        .transpose()?;
    let opts = ScanOptions { cross_mounts: args.cross_mounts, top: args.top, thresholds };
    let started_at = iomatrix_store::format_utc(
        SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0),
    );
    let started = Instant::now();
    let bar = std::io::stderr().is_terminal().then(|| {
        let bar = indicatif::ProgressBar::new_spinner();
        if let Ok(style) = indicatif::ProgressStyle::with_template("{spinner} scanning {elapsed}: {msg}") {
            bar.set_style(style);
        }
        bar
    });
    let mut show = |t: &Tally| {
        if let Some(bar) = &bar {
            bar.set_message(format!("{} files, {} dirs, {}", t.files, t.dirs, human::bytes(t.bytes)));
        }
    };
    let result = scan(&args.path, &opts, &mut show);
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    let inventory = result.map_err(|e| match e {
        ScanError::RootMissing(_) | ScanError::RootUnreadable(..) => UsageError::new(e.to_string()),
    })?;
    let elapsed = started.elapsed().as_secs_f64();

    // A profile needs files; say so after showing what the scan found.
    let mut refused = None;
    if let Some(path) = &args.save_profile {
        if inventory.tally.files == 0 {
            refused = Some(UsageError::new(format!(
                "--save-profile {}: {} holds no regular files, and a profile needs at least one; scan a tree with files",
                path.display(),
                args.path.display()
            )));
        } else {
            let text = inventory.profile(started_at.clone()).to_json()?;
            if let Some(out) = &profile_out {
                out.write(text.as_bytes())?;
            }
        }
    }
    let saved = args.save_profile.as_ref().filter(|_| refused.is_none()).map(|p| p.display().to_string());

    if args.json {
        // iomatrix.scan/1 (docs/json.md): the inventory's fields plus these.
        let mut doc = serde_json::Map::new();
        doc.insert("schema".into(), json!("iomatrix.scan/1"));
        if let Value::Object(fields) = serde_json::to_value(&inventory)? {
            doc.extend(fields);
        }
        doc.insert("cross_mounts".into(), json!(args.cross_mounts));
        doc.insert("started_at".into(), json!(started_at));
        doc.insert("elapsed_seconds".into(), json!(elapsed));
        doc.insert("profile".into(), json!(saved));
        crate::out::print(&format!("{}\n", serde_json::to_string_pretty(&doc)?))?;
    } else {
        let mut text = report(&inventory, elapsed);
        if let Some(p) = saved {
            let _ = writeln!(text, "\nprofile saved to {p} (for `run fileserver --profile {p}`)");
        }
        crate::out::print(&text)?;
    }
    match refused {
        Some(err) => Err(err.into()),
        None => Ok(ExitCode::SUCCESS),
    }
}

/// The human report: totals, the class table, shares, percentiles, largest files,
/// what was skipped.
fn report(inv: &Inventory, elapsed: f64) -> String {
    let t = &inv.tally;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{}: {} files, {} ({} bytes), {} allocated",
        inv.root,
        t.files,
        human::bytes(t.bytes),
        t.bytes,
        human::bytes(t.allocated_bytes)
    );
    let _ = writeln!(
        s,
        "{} folders, {} symlinks (counted, not followed), {} other (fifos, sockets, devices); scanned in {elapsed:.2} s",
        t.dirs, t.symlinks, t.other
    );
    let _ = writeln!(
        s,
        "skipped: {} unreadable, {} hard-link duplicates (each file counted once), {} folders on other file systems{}",
        t.unreadable,
        t.hardlink_duplicates,
        t.mounts_skipped,
        if t.mounts_skipped > 0 { " (--cross-mounts enters them)" } else { "" }
    );
    if t.files == 0 {
        let _ = writeln!(s, "\nno regular files");
    } else {
        s.push('\n');
        s.push_str(&classes_table(inv));
        if !inv.shares.is_empty() {
            s.push('\n');
            s.push_str(&shares_table(inv));
        }
        if let Some(p) = &inv.percentiles {
            let _ = writeln!(
                s,
                "\nfile size: min {}, p50 {}, p90 {}, p99 {}, p99.9 {}, max {}, mean {}",
                human::bytes(p.min_bytes),
                human::bytes(p.p50_bytes),
                human::bytes(p.p90_bytes),
                human::bytes(p.p99_bytes),
                human::bytes(p.p99_9_bytes),
                human::bytes(p.max_bytes),
                human::bytes(p.mean_bytes.round() as u64)
            );
            let _ = writeln!(s, "half of all bytes are in files of {} or smaller", human::bytes(p.byte_median_bytes));
        }
        if !inv.largest.is_empty() {
            let _ = writeln!(s, "\nlargest files:");
            let mut largest = Table::new(vec![Column::right("", 11), Column::free("").gap("  ")]).without_header();
            for f in &inv.largest {
                largest.row([human::bytes(f.bytes), f.path.clone()]);
            }
            s.push_str(&largest.render());
        }
    }
    if !inv.problems.is_empty() {
        let _ = writeln!(s, "\nunreadable ({} of {} listed):", inv.problems.len(), t.unreadable);
        for p in &inv.problems {
            let _ = writeln!(s, "  {}: {}", p.path, p.error);
        }
    }
    s
}

/// The size classes from the smallest file's up: files and bytes in each, their shares and
/// cumulative shares.
fn classes_table(inv: &Inventory) -> String {
    let t = &inv.tally;
    let pct = |part: u64, whole: u64| if whole == 0 { 0.0 } else { part as f64 * 100.0 / whole as f64 };
    let mut classes = Table::new(vec![
        Column::right("from", 6),
        Column::right("below", 6),
        Column::right("files", 12),
        Column::right("% files", 8),
        Column::right("cum %", 8),
        Column::right("bytes", 11),
        Column::right("% bytes", 8),
        Column::right("cum %", 8),
    ]);
    let (mut cum_files, mut cum_bytes) = (0u64, 0u64);
    // Empty classes below the smallest file say nothing; those between files stay.
    for c in inv.classes.iter().skip_while(|c| c.files == 0) {
        cum_files += c.files;
        cum_bytes = cum_bytes.saturating_add(c.bytes);
        let (from, below) = class_label(c.class);
        classes.row([
            from,
            below,
            c.files.to_string(),
            human::fixed(pct(c.files, t.files), 2),
            human::fixed(pct(cum_files, t.files), 2),
            human::bytes(c.bytes),
            human::fixed(pct(c.bytes, t.bytes), 2),
            human::fixed(pct(cum_bytes, t.bytes), 2),
        ]);
    }
    classes.render()
}

/// The shares of files and bytes at or below each size.
fn shares_table(inv: &Inventory) -> String {
    let mut shares = Table::new(vec![
        Column::right("at or below", 12),
        Column::right("files", 12),
        Column::right("% files", 8),
        Column::right("bytes", 11),
        Column::right("% bytes", 8),
    ]);
    for sh in &inv.shares {
        shares.row([
            iomatrix_core::ByteSize(sh.at_bytes).to_string(),
            sh.files.to_string(),
            human::fixed(sh.share_of_files * 100.0, 2),
            human::bytes(sh.bytes),
            human::fixed(sh.share_of_bytes * 100.0, 2),
        ]);
    }
    shares.render()
}
