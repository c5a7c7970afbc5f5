//! `iomatrix run backup`: the backup walk of a tree, stored as one cell,
//! from one client or many at once (threads, or MPI ranks): with N > 1,
//! client r walks its own tree `TARGET/client-r`. The tree is a local
//! folder, or one on a server (`nfs://`, `smb://`) read through iomatrix's
//! own protocol client, each client in its own session.

use crate::cli::RunBackupArgs;
use crate::clients::ClientPlan;
use crate::job::{human, Job, JobSpec, JobTarget, Output};
use crate::ranks::{LiveBoard, LiveSample, Ranks, Shared};
use crate::remote::RemoteTarget;
use iomatrix_backend::{RemoteFs, RemoteKind};
use iomatrix_backup::{BackupCell, BackupPlan, LiveClients, Place};
use iomatrix_coord::{ClientFailure, Setup};
use iomatrix_core::{BackendKind, ByteSize, UsageError};
use iomatrix_iozone::Ending;
use iomatrix_store::CellRow;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The one cell's `test`.
pub const TEST: &str = "backup";

/// Clients as threads, or as MPI ranks when running under mpirun.
pub fn run(args: RunBackupArgs, db: &Path, ranks: &Ranks) -> anyhow::Result<ExitCode> {
    let read_size = args
        .read_size
        .parse::<ByteSize>()
        .map_err(|e| UsageError::new(format!("--read-size {}: {e}", args.read_size)))?;
    let mpi_size = ranks.mpi_size();
    let repeat = crate::repeat::Repeat::from_args(&args.repeat)?;
    if repeat.tolerance_pct.is_some() {
        return Err(UsageError::new(
            "--tolerance: `run backup` does not walk noisy trees again yet; use --repeat N (every walk stored)",
        )
        .into());
    }
    let clients = ClientPlan::from_args(&args.client, mpi_size)?;
    let remote = crate::remote::url_of(&args.target).map(RemoteTarget::parse).transpose()?;
    let (root, target) = match &remote {
        Some(remote) => {
            if args.warm {
                return Err(UsageError::new(format!(
                    "--warm: over iomatrix's own protocol client ({}) there is no client cache to warm or to drop: every read goes to the server, whose own cache is out of reach from here; leave --warm out",
                    remote.url()
                ))
                .into());
            }
            let fs = check_remote_trees(remote, clients.count)?;
            (PathBuf::from(remote.url()), JobTarget::RemoteTree(fs))
        }
        None => {
            let root = check_tree(&args.target, "--target")?;
            check_client_trees(&root, clients.count)?;
            (root.clone(), JobTarget::Tree(root))
        }
    };
    // Over a protocol client nothing can be made cold: see the conditions.
    let plan = BackupPlan { root: root.clone(), read_size: read_size.bytes(), cold: !args.warm && remote.is_none() };
    plan.validate().map_err(|e| UsageError::new(format!("--read-size {}: {e}", args.read_size)))?;
    let labels = crate::cmd::run_iozone::labels(&args.labels)?;
    let trees = match clients.count {
        1 => json!(null),
        n => json!(format!("{}/client-0 .. client-{}: one per client", root.display(), n - 1)),
    };
    let mut conditions = json!({
        "cache": plan.cache_condition(),
        // The tree's sizes are known only after the walk (see the cell's bytes).
        "files_vs_ram": null,
        "timing": "open + read + close of each file, summed; walk, stat and FIEMAP outside; a cold walk's \
                   syncfs and cache drop before the start",
        "read_size": plan.read_size,
        "trees": trees,
    });
    if remote.is_some() {
        add_remote_conditions(&mut conditions);
    }
    let mut job = Job::start(
        JobSpec {
            suite: TEST,
            target,
            labels,
            keep: false,
            space_check: false,
            peak_bytes: 0,
            peak_detail: String::new(),
            backend: BackendKind::Sync,
            direct: false,
            clients: clients.count,
            plan: serde_json::to_value(&plan)?,
            conditions,
            total_cells: repeat.count as usize,
            keep_cell_lines: true,
            uncached_hint: "read cold (the default), or a tree larger than RAM,",
        },
        db,
    )?;
    ranks.share(
        &Shared::Backup {
            plan: plan.clone(),
            clients: clients.clone(),
            walks: repeat.count as usize,
            remote: remote.clone(),
        },
        &clients,
    )?;
    // Each walk of the tree is a cell; --repeat walks it again (a cold walk drops the cache again first).
    let walks = repeat.count as usize;
    let setup =
        Setup { cells: walks, workdir: None, hooks: &clients.hooks, on_error: clients.on_error, stop: job.stop };
    let group = ranks.group(clients.count);
    // Under MPI, this rank's LiveClients holds its own client; the others' samples reach the board.
    let live = LiveClients::new(if mpi_size.is_some() { 1 } else { clients.count });
    let board = ranks.live_board();
    let (walk_done, interrupted) = (AtomicBool::new(false), AtomicBool::new(false));
    // Clients whose server stopped answering mid-walk: their figures are kept, the run fails.
    let mut server_lost: Vec<ClientFailure> = Vec::new();
    let connect = crate::remote::connector(remote.as_ref());
    let place = match &remote {
        Some(_) => Place::Remote { connect: &connect, folder: String::new() },
        None => Place::Local,
    };
    let backend = match &remote {
        Some(RemoteTarget::Nfs(_)) => "nfs",
        Some(RemoteTarget::Smb(_)) => "smb",
        None => BackendKind::Sync.name(),
    };
    let sample = || live_sample(&live);
    let outcome = ranks.relay_live(&sample, || {
        std::thread::scope(|scope| {
            if let Some(bar) = job.progress.live_line() {
                let (live, walk_done, board) = (&live, &walk_done, &board);
                scope.spawn(move || {
                    while !walk_done.load(Ordering::Relaxed) {
                        std::thread::sleep(Duration::from_millis(200));
                        bar.set_message(live_message(live, mpi_size.map(|n| (n, board))));
                    }
                });
            }
            let mut seq = 0;
            let outcome = iomatrix_backup::execute_clients(&plan, &group, &setup, &place, &live, |cell| {
                interrupted.store(cell.interrupted(), Ordering::Relaxed);
                for c in &cell.clients {
                    if let Some(why) = &c.result.server_lost {
                        server_lost.push(ClientFailure::error(c.rank, why.clone()));
                    }
                }
                let stored = job
                    .store_cell(&row(&plan, cell, seq, backend), &done_line(cell, seq, walks))
                    .map_err(|e| format!("storing the backup walk: {e}"));
                seq += 1;
                stored
            });
            walk_done.store(true, Ordering::Relaxed);
            outcome
        })
    });
    let outcome = outcome.map(|o| match o.unwrap_or((0, Ending::Completed)) {
        // The walk is kept (stored above); the run says the server was lost.
        (done, Ending::Completed) if !server_lost.is_empty() => {
            (done, Ending::ClientFailed { cell: done.saturating_sub(1), failures: server_lost })
        }
        (done, Ending::Completed) if interrupted.load(Ordering::Relaxed) => (done, Ending::Interrupted),
        other => other,
    });
    job.finish(outcome, |_| "the backup walk".to_string(), &Output { json: args.json, ..Output::default() })
}

/// With more than one client, each walks `root/client-r`: all must be there
/// before anything runs.
fn check_client_trees(root: &Path, clients: usize) -> Result<(), UsageError> {
    let missing: Vec<PathBuf> = iomatrix_backup::missing_client_trees(root, clients);
    if missing.is_empty() {
        return Ok(());
    }
    let names: Vec<String> = missing.iter().map(|p| p.display().to_string()).collect();
    Err(UsageError::new(format!(
        "{clients} clients, but {} {} missing (or not a folder): with more than one client, client r walks its own tree \
         TARGET/client-r, so {}/client-0 .. client-{} must each be a folder (the layout a kept run with --clients \
         {clients} leaves); make them, or walk {} itself with one client",
        names.join(", "),
        if names.len() == 1 { "is" } else { "are" },
        root.display(),
        clients - 1,
        root.display()
    )))
}

/// The live line: the files and bytes so far and, with many clients, the
/// sum of their rates and the slowest of them.
fn live_message(live: &LiveClients, mpi: Option<(usize, &LiveBoard)>) -> String {
    let t = live.total();
    let mut msg = format!("{} files, {}, {} errors", t.files, human(t.bytes), t.errors);
    if let Some((ranks, board)) = mpi {
        let rate = |s: &LiveSample| format!("{:.1} MiB/min", s.bytes_per_sec * 60.0 / 1048576.0);
        msg = format!("rank 0's client: {msg}; {}", board.summary(ranks, live_sample(live), rate));
    } else if let Some((rank, rate)) = live.slowest() {
        msg += &format!(", {:.1} MiB/min summed, slowest client {rank}: {rate:.1} MiB/min", live.mib_per_min_sum());
    }
    msg
}

/// This process's clients' rate so far, as sent to rank 0 under MPI.
pub fn live_sample(live: &LiveClients) -> LiveSample {
    let t = live.total();
    let secs = t.read_ns as f64 / 1e9;
    LiveSample {
        cell: 0,
        bytes_per_sec: live.mib_per_min_sum() * 1048576.0 / 60.0,
        ops_per_sec: if secs > 0.0 { t.files as f64 / secs } else { 0.0 },
    }
}

/// The line kept for the finished walk.
fn done_line(cell: &BackupCell, seq: usize, walks: usize) -> String {
    let r = &cell.total;
    let which = if walks > 1 { format!(" {} of {walks}", seq + 1) } else { String::new() };
    let mut line = format!("backup walk{which}: {} files, {}, {:.1} MiB/min", r.files, human(r.bytes), r.mib_per_min);
    if let Some(slowest) = cell.slowest() {
        line += &format!(
            " summed over {} clients, overall {:.1} MiB/min (slowest: client {} at {:.1} MiB/min)",
            cell.clients.len(),
            cell.mib_per_min_overall,
            slowest.rank,
            slowest.result.mib_per_min
        );
    }
    if !cell.failures.is_empty() {
        line += &format!(", {} client(s) failed", cell.failures.len());
    }
    if r.interrupted {
        line += " (interrupted)";
    }
    line
}

/// The cell: the merged walk in `metrics` (the clients' counts added up,
/// `mib_per_min` the sum of their own rates) with the many-client figures
/// beside it, and each client's own walk in `client_figures`. `kib_per_sec`
/// is the sum of the clients' rates, `wall_ns` the longest client's open +
/// read + close time (with one client, exactly its walk's figures).
fn row(plan: &BackupPlan, cell: &BackupCell, seq: usize, backend: &str) -> CellRow {
    let r = &cell.total;
    let mut metrics = serde_json::to_value(r).unwrap_or_default();
    if let Some(m) = metrics.as_object_mut() {
        m.insert("mib_per_min_sum_of_clients".into(), json!(r.mib_per_min));
        m.insert("mib_per_min_overall".into(), json!(cell.mib_per_min_overall));
        m.insert("overall_ns".into(), json!(r.wall_ns));
    }
    crate::clients::add_client_metrics(&mut metrics, &cell.failures, &cell.starts);
    let client_figures: Vec<serde_json::Value> = cell
        .clients
        .iter()
        .map(|c| {
            let mut v = crate::clients::figures_with_rank(c.rank, &c.result);
            v["root"] = json!(c.root);
            v
        })
        .collect();
    CellRow {
        seq,
        test: TEST.into(),
        file_size: None,
        record_size: Some(plan.read_size),
        backend: backend.into(),
        direct: false,
        clients: cell.clients.len(),
        bytes: r.bytes,
        ops: r.files,
        wall_ns: cell.clients.iter().map(|c| c.result.read_ns).max().unwrap_or(0),
        user_ns: r.user_ns,
        sys_ns: r.sys_ns,
        kib_per_sec: cell
            .clients
            .iter()
            .map(|c| iomatrix_stats::kib_per_sec(c.result.bytes, Duration::from_nanos(c.result.read_ns)))
            .sum(),
        cpu_percent: r.cpu_percent,
        metrics,
        client_figures: json!(client_figures),
        blobs: Vec::new(),
    }
}

/// What a walk over a protocol client cannot do as a local walk does, and
/// what it does instead: stored with the run, shown above its tables.
fn add_remote_conditions(conditions: &mut serde_json::Value) {
    conditions["cache"] = json!(
        "no client cache: iomatrix's own protocol client sends every read to the server; the server's own cache \
         cannot be dropped from here (files it holds in RAM are served from there), so this is not a cold walk"
    );
    conditions["backend"] = json!("iomatrix protocol client");
    conditions["files_vs_ram"] =
        json!("unknown: the server's RAM (its cache) is what counts, and a client cannot see it");
    conditions["timing"] = json!(
        "open + read + close of each file, summed (NFS: LOOKUP + READs, closing sends nothing; SMB: CREATE + READs \
         + CLOSE); the folder listings (NFS READDIRPLUS, SMB QUERY_DIRECTORY) outside"
    );
    conditions["extents"] = json!(iomatrix_backup::NO_EXTENT_MAP);
    conditions["remote_walk"] = json!([
        "each file is read up to the size the server's listing gave (a file that grew meanwhile is read to that size)",
        "hard links are not detected: the listing carries no link count or file id here, so a file with several \
         names is read once per name",
        "symlinks are what the server shows: NFS lists them (counted, never followed); Samba shows a link inside \
         the share as what it points to (read as a file, walked as a folder) and hides links leading out of it",
        "access times on the server may change (no O_NOATIME over the protocol)",
    ]);
}

/// Connects to the server and checks the tree(s) to walk there: the
/// target's folder, or with N > 1 clients its `client-0 .. client-N-1`.
/// Returns the session, for the run's environment record.
fn check_remote_trees(target: &RemoteTarget, clients: usize) -> Result<Box<dyn RemoteFs>, UsageError> {
    let url = target.url();
    let mut fs = target
        .connect()
        .map_err(|e| UsageError::new(format!("--target: {e}; give an existing folder on the server to walk")))?;
    let trees: Vec<String> =
        if clients < 2 { vec![String::new()] } else { (0..clients).map(|r| format!("client-{r}")).collect() };
    let mut missing = Vec::new();
    for below in &trees {
        let shown = if below.is_empty() { url.clone() } else { format!("{url}/{below}") };
        match fs.stat(below) {
            Ok(entry) if entry.kind == RemoteKind::Folder => {}
            Ok(_) => missing.push(format!("{shown} (not a folder)")),
            Err(e) => missing.push(format!("{shown} ({e})")),
        }
    }
    if missing.is_empty() {
        return Ok(fs);
    }
    if clients < 2 {
        return Err(UsageError::new(format!(
            "--target {}: give an existing folder on the server to walk",
            missing.join(", ")
        )));
    }
    Err(UsageError::new(format!(
        "{clients} clients, but {} missing: with more than one client, client r walks its own tree TARGET/client-r, \
         so {url}/client-0 .. client-{} must each be a folder on the server; make them, or walk {url} itself with \
         one client",
        missing.join(", "),
        clients - 1
    )))
}

/// An existing folder, canonical; anything else is the user's mistake (exit 2).
pub fn check_tree(dir: &Path, what: &str) -> Result<std::path::PathBuf, UsageError> {
    if let Some(url) = crate::remote::url_of(dir) {
        return Err(UsageError::new(format!(
            "{what} {url}: {}; `iomatrix run backup --target {url}` walks and reads such a tree",
            iomatrix_backup::NO_EXTENT_MAP
        )));
    }
    let meta = std::fs::metadata(dir)
        .map_err(|e| UsageError::new(format!("{what} {}: {e}; give an existing folder to walk", dir.display())))?;
    if !meta.is_dir() {
        return Err(UsageError::new(format!(
            "{what} {} is not a folder; give the root of the tree to walk",
            dir.display()
        )));
    }
    dir.canonicalize().map_err(|e| UsageError::new(format!("{what} {}: {e}", dir.display())))
}
