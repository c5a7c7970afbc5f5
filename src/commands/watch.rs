//! `iomatrix watch RUN`: a run as it goes, read from beside it. Its status, the cells stored so
//! far (as `show` prints them) and its live line (the run's published live state,
//! [`iomatrix_store::LiveState`]); then, unless `--once`, each new cell and the live line once a
//! second until the run ends. It opens the database read-only and never writes anything: the run
//! watched does not know it is watched (bench/live-watched.sh measures that).
//!
//! [`watch_snapshot`] is the one answer `watch --once` prints and the viewer's live page shows.

use clap::Args;
use iomatrix_store::{LiveState, RunStatus, RunSummary, Store};
use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

/// `iomatrix watch RUN`.
#[derive(Args, Debug)]
pub struct WatchArgs {
    /// The run's id (see `iomatrix runs`)
    pub run: i64,
    /// Print the run's state once (status, live line, cells so far) and exit 0, without following
    #[arg(long)]
    pub once: bool,
    /// One JSON object per line ("iomatrix.watch/1": status, cells stored and planned, the live
    /// state), a new line whenever one of them changes; the cells' figures are `show --json`'s
    #[arg(long)]
    pub json: bool,
}

/// A run at one moment, as `watch` shows it; [`WatchSnapshot::text`] is what `watch --once` prints.
#[derive(Debug, Clone, PartialEq)]
pub struct WatchSnapshot {
    pub run_id: i64,
    /// The run's status word: running, complete, partial, failed, interrupted, incomplete.
    pub status: String,
    /// It has ended: nothing more will come.
    pub ended: bool,
    /// It ended other than complete (watch exits 1).
    pub failed: bool,
    pub cells_stored: usize,
    pub cells_total: usize,
    /// The run's published live state, while it runs and publishes one.
    pub live: Option<LiveState>,
    /// The live line as `watch` prints it after "live: " ("" once the run has ended).
    pub live_line: String,
    /// The run's header and the cells stored so far, as `show RUN` prints them.
    pub cells_text: String,
    /// One line per stored cell, in stored order: "cell 3: access 8m/4k qd=1 read=100%
    /// random=100%: 1,234 IOPS" (what following prints as each cell comes).
    pub cell_lines: Vec<String>,
}

impl WatchSnapshot {
    /// The status line, the live line while the run runs, then the cells text.
    pub fn text(&self) -> String {
        let mut out = format!("{}\n", self.status_line());
        if !self.ended {
            let _ = writeln!(out, "live: {}", self.live_line);
        }
        out.push('\n');
        out.push_str(&self.cells_text);
        out
    }

    /// "run #12: running, 3 of 8 cells stored".
    pub fn status_line(&self) -> String {
        format!("run #{}: {}, {} of {} cells stored", self.run_id, self.status, self.cells_stored, self.cells_total)
    }

    /// The same run a moment later, read as cheaply as can be: its row and its live state; the
    /// whole run (its cells' figures, decoded, and its tables) only when a cell was stored or the
    /// run ended. For a reader that asks every second (`watch`, the viewer's event stream).
    pub fn refresh(&self, store: &Store, db_path: &Path) -> anyhow::Result<WatchSnapshot> {
        let summary = store.load_run_summary(self.run_id)?.ok_or_else(|| no_run(db_path, self.run_id))?;
        let (status, ended) = status_of(&summary);
        if ended || summary.cells != self.cells_stored || summary.total_cells != self.cells_total {
            return watch_snapshot(store, db_path, self.run_id);
        }
        let live = LiveState::read(db_path, self.run_id);
        Ok(WatchSnapshot { status, live_line: live_line(live.as_ref()), live, ..self.clone() })
    }

    fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "schema": "iomatrix.watch/1",
            "run": self.run_id,
            "status": self.status,
            "ended": self.ended,
            "cells_stored": self.cells_stored,
            "cells_total": self.cells_total,
            "live_line": self.live_line,
            "live": self.live,
        })
    }
}

/// Run `run` of the database `store` (opened from `db_path`) as it stands: its status, its live
/// state (read beside `db_path`, bounded and never written) and its cells so far.
pub fn watch_snapshot(store: &Store, db_path: &Path, run: i64) -> anyhow::Result<WatchSnapshot> {
    let (stored, unreadable) = store.load_run_as_stored(run)?.ok_or_else(|| no_run(db_path, run))?;
    let (status, ended) = status_of(&stored.summary);
    // An ended run's live state is none, even where its killed process left a file.
    let live = if ended { None } else { LiveState::read(db_path, run) };
    Ok(WatchSnapshot {
        run_id: run,
        failed: ended && status != RunStatus::Complete.as_str(),
        live_line: if ended { String::new() } else { live_line(live.as_ref()) },
        status,
        ended,
        cells_stored: stored.summary.cells,
        cells_total: stored.summary.total_cells,
        live,
        cells_text: super::show::show_text(&stored, &unreadable),
        cell_lines: stored.cell_results.iter().map(cell_line).collect(),
    })
}

/// "cell 3: write 64m/4k: 512000 KB/s", with its state where it is not complete.
fn cell_line(cell: &iomatrix_store::CellRow) -> String {
    let figure = iomatrix_analysis::Figure::of(cell)
        .map_or_else(|| "no figure".into(), |f| format!("{} {}", iomatrix_core::human::significant(f.value), f.unit));
    let state = if cell.state.is_complete() { String::new() } else { format!(" [{}]", cell.state.describe()) };
    format!("cell {}: {}: {figure}{state}", cell.seq, iomatrix_analysis::CellKey::of(cell).describe())
}

fn no_run(db_path: &Path, run: i64) -> anyhow::Error {
    iomatrix_core::UsageError::new(format!(
        "no run #{run} in {}; `iomatrix runs` lists the stored runs",
        db_path.display()
    ))
    .into()
}

/// The status word and whether the run has ended. A run stored as running whose process on this
/// host is gone ended without storing how: incomplete (as the next writer to open the database
/// will store it; this reader stores nothing), whatever live state its process left.
fn status_of(summary: &RunSummary) -> (String, bool) {
    match summary.status {
        RunStatus::Running if summary.host == iomatrix_store::ProcessId::this_host() && !summary.process_alive() => {
            (RunStatus::Incomplete.as_str().into(), true)
        }
        RunStatus::Running => (RunStatus::Running.as_str().into(), false),
        other => (other.as_str().into(), true),
    }
}

/// "3/8 cells, ETA 12s  cell 3: 8k qd=1 ...: 1234 IOPS, ..." (the suite's live line); what is known of it.
fn live_line(live: Option<&LiveState>) -> String {
    let Some(live) = live else {
        return "- (no live state published: the run's process is starting, or on another host)".into();
    };
    let eta = match live.eta_seconds {
        Some(s) if s.is_finite() && s >= 0.0 => crate::harness::progress::short(Duration::from_secs_f64(s)),
        _ => "not known yet".into(),
    };
    let mut text = format!("{}/{} cells, ETA {eta}", live.cells_done, live.cells_total);
    if let Some(index) = live.cell_index {
        let _ = write!(text, "  cell {index}");
    }
    // The suite's live line names the running cell itself; without one, its name alone.
    match (&live.cell_name, live.line.is_empty()) {
        (_, false) => {
            let _ = write!(text, ": {}", live.line);
        }
        (Some(name), true) => {
            let _ = write!(text, " ({name})");
        }
        (None, true) => {}
    }
    text
}

pub fn run(args: WatchArgs, db: &Path) -> anyhow::Result<ExitCode> {
    let store = Store::open_read_only(db)?;
    let first = watch_snapshot(&store, db, args.run)?;
    show(&first, args.json, None)?;
    if args.once {
        return Ok(ExitCode::SUCCESS);
    }
    let mut last = first;
    while !last.ended {
        std::thread::sleep(Duration::from_secs(1));
        let now = last.refresh(&store, db)?;
        show(&now, args.json, Some(&last))?;
        last = now;
    }
    Ok(if last.failed { ExitCode::from(crate::exit::FAILED) } else { ExitCode::SUCCESS })
}

/// Prints `now`: whole the first time (`before` None); then what changed since `before`: each
/// new cell, the live line, and at the end the final status and the run as `show` prints it.
fn show(now: &WatchSnapshot, json: bool, before: Option<&WatchSnapshot>) -> anyhow::Result<()> {
    if json {
        if before.is_none_or(|b| b.json() != now.json()) {
            crate::out::print(&format!("{}\n", serde_json::to_string(&now.json())?))?;
        }
        return Ok(());
    }
    let Some(before) = before else { return crate::out::print(&now.text()) };
    let mut out = String::new();
    for line in now.cell_lines.iter().skip(before.cell_lines.len()) {
        let _ = writeln!(out, "{line}");
    }
    if now.ended {
        let _ = write!(out, "\n{}\n\n{}", now.status_line(), now.cells_text);
    } else if now.live_line != before.live_line {
        let _ = writeln!(out, "live: {}", now.live_line);
    }
    crate::out::print(&out)
}
