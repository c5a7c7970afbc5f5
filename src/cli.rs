//! The command line's top level, as clap derive types: the global flags
//! and one variant per subcommand. Each subcommand's own flags live with
//! it (`crate::commands::*`, `crate::suites::*`); raw arguments only: each
//! turns them into a validated plan before anything runs.

use crate::commands::clean::CleanArgs;
use crate::commands::compare::CompareArgs;
use crate::commands::db::DbArgs;
use crate::commands::extents::ExtentsArgs;
use crate::commands::history::HistoryArgs;
use crate::commands::import::ImportArgs;
use crate::commands::personalities::PersonalitiesArgs;
use crate::commands::report::ReportArgs;
use crate::commands::rerun::RerunArgs;
use crate::commands::runs::RunsQuery;
use crate::commands::scan::ScanArgs;
use crate::commands::serve::ServeArgs;
use crate::commands::study::StudyArgs;
use crate::commands::sweep::SweepArgs;
use crate::commands::watch::WatchArgs;
use crate::suites::{FrontCommand, RunCommand};
use clap::{Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "iomatrix",
    version,
    about = "Benchmark file systems and file servers; keep every run; compare them.",
    long_about = "Benchmark file systems and file servers; keep every run; compare them.\n\n\
        Suites: the IOzone matrix (`run iozone`, and `iozone` with IOzone's own flags), access specs \
        with outstanding I/O (`run access`, which also takes fio's option names), Bonnie (`run bonnie`, and \
        `bonnie` with bonnie++'s flags), the file-server load (`run fileserver`), workload personalities \
        (`run personality`; `personalities list`), the backup walk (`run backup`) and mdtest's metadata phases \
        (`run metadata`); every suite on local \
        folders, mounted shares, and nfs:// and smb:// servers through iomatrix's own protocol client \
        (access also on raw devices), from many clients (`--clients N` threads, or MPI ranks under \
        mpirun in a build with `--features mpi`), with `--repeat`, `--tolerance` and `--verify`. \
        Every run is kept in the results database (`runs`, `show`, `import` of fio, IOzone, \
        bonnie++, Bonnie and Iometer results); `compare`, `sweep` and `report` (HTML, XLSX, CSV, Markdown, JSON) explain \
        them; a whole comparison is one resumable study file (`study run`, docs/studies.md), and \
        `rerun` runs a stored run's flags again; `extents`, `scan` and `clean` help around them.",
    after_help = "Exit codes: 0 done, 1 failed for a cause of iomatrix's own (its database, its working folder), \
        2 bad input, 3 clients (threads, MPI ranks or connections) failed: the run is stored partial (every \
        cell ran, --on-client-error continue) or failed (stopped at the first, under abort), 4 every cell ran but \
        --verify found blocks that were not what was written, 5 compare --fail-if-slower found slower figures, 6 \
        compare --fail-if-slower could not check every figure it was asked about (not checked), 130 interrupted by \
        Ctrl-C, 143 by SIGTERM, 129 by SIGHUP."
)]
pub struct Cli {
    /// Results database; its folder must exist (only the default's is made) [default:
    /// $XDG_DATA_HOME/iomatrix/results.sqlite, or ~/.local/share/...]
    #[arg(long, global = true, env = "IOMATRIX_DB", value_name = "PATH", help_heading = "Results")]
    pub db: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Command,
}

// Built once per process: the size difference between variants costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
pub enum Command {
    /// Run a suite against a target and store the results
    Run {
        #[command(subcommand)]
        suite: RunCommand,
    },
    // The suites' legacy front ends (`iomatrix iozone` with IOzone's own flags), from the suite table.
    #[command(flatten)]
    Front(FrontCommand),
    /// List the stored runs: every one, oldest first; with a filter (--suite, --label, --target,
    /// --host, --fs, --state, --since, --until, --search) or --page, one page of those it matches,
    /// newest first
    Runs(RunsQuery),
    /// Count the extents of every file in a tree through FIEMAP, as filefrag counts them
    /// (no data read, nothing stored)
    Extents(ExtentsArgs),
    /// Inventory a tree by file size: files and bytes per power-of-two class, shares at chosen
    /// sizes, percentiles, largest files (read only, nothing stored); --save-profile keeps the
    /// classes for `run fileserver --profile`
    Scan(ScanArgs),
    /// The built-in workload personalities (`list`) and what one runs (`show NAME|FILE`): run
    /// one with `iomatrix run personality NAME|FILE`
    Personalities(PersonalitiesArgs),
    /// Compare B against A (or N sides against a baseline, in one table with the sides as
    /// columns): every plan, environment and condition difference first; ratio matrices with
    /// record-size and file-size views, % change tables, per-operation tables; each change
    /// faster, slower or within noise; --fail-if-slower exits 5 for CI
    Compare(CompareArgs),
    /// Values per level of a swept setting (a label, or record/file size, queue depth), the %
    /// change between levels and the Total, averages and totals per direction, read/write ratios
    /// per level and per block size; --unit, --split, --derive
    Sweep(SweepArgs),
    /// One figure over time for the runs of one setup on one target: groups of consecutive runs
    /// with the same labels, each one's median and band, and compare's verdict against the group
    /// before (faster, slower, within noise); notes (--label note=...) listed
    History(HistoryArgs),
    /// Read results of other tools into the database as runs: fio's JSON output, IOzone's -R
    /// report, bonnie++'s CSV line, the original Bonnie's table, Iometer's results CSV (compare
    /// them with native runs afterwards)
    Import(ImportArgs),
    /// Write a report of stored runs: .html (one self-contained file with SVG charts), .xlsx (a
    /// sheet per test with native charts), .csv, .md or .json, chosen by the extension of -o
    Report(ReportArgs),
    /// Remove the working folders crashed runs left in TARGET: only folders directly under it
    /// that carry iomatrix's marker and whose process is gone; symlinks are not followed and no
    /// other file system is entered
    Clean(CleanArgs),
    /// A whole comparison from one study file (TOML): configurations, the suites each runs,
    /// comparisons, sweeps and a report; resumable (`study run`), stored (`study show`, `study list`)
    Study(StudyArgs),
    /// Run a stored run's command line again (the same flags, so the same plan), on its target
    /// or another (--target), labelled rerun-of=RUN
    Rerun(RerunArgs),
    /// The results database as a file: `check` (integrity, counts, schema version), `backup FILE`
    /// (a consistent copy, safe while runs write), `merge OTHER...` (other machines' runs, once
    /// each); docs/database.md
    Db(DbArgs),
    /// The results database in a browser, read only: runs (filtered, picked), a run with its
    /// charts, compare of N runs, a figure's history, a running run live; each page shows the
    /// command that prints the same in a terminal (docs/viewer.md)
    ///
    /// Prints its address (`iomatrix serve: http://127.0.0.1:PORT/`) and serves until Ctrl-C or
    /// SIGTERM (exit 130 or 143). The database is opened for reading only and never written. Not
    /// built: editing labels and notes from the browser, and TLS (beyond a trusted network, put
    /// it behind a TLS proxy or an ssh tunnel)
    Serve(ServeArgs),
    /// Follow a run as it goes (read only): its status, cells so far and live line, until it ends
    ///
    /// Prints the run's status, its live line (what the run's progress bar shows, from the live
    /// state the run publishes beside the database, <DB>.live/RUN.json) and the cells stored so
    /// far as `show` prints them; then each new cell and the live line every second until the run
    /// ends, and its final status and tables. Exits 0 when the run ended complete, 1 when it ended
    /// otherwise (partial, failed, interrupted, incomplete); --once prints once and exits 0. It
    /// opens the database read-only and writes nothing (what watching costs the run watched:
    /// bench/live-watched.sh)
    Watch(WatchArgs),
    /// Print one stored run again
    Show {
        /// The run's id (see `iomatrix runs`)
        run: i64,
        /// Machine-readable output (schema: docs/json.md, "iomatrix.run/1"; each cell's figures
        /// over time are in its metrics' `series`)
        #[arg(long)]
        json: bool,
        /// Each cell's figures over time instead of the run's tables: per interval its start,
        /// length, ops/s, MiB/s, reads, writes, mean and p99 latency (with --json: the JSON, which
        /// carries them; docs/measuring.md)
        #[arg(long)]
        series: bool,
    },
}
