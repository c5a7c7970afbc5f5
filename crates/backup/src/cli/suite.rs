//! The backup walk through the harness: each walk of the tree is one cell,
//! from one client or many at once (threads, or MPI ranks): with N > 1,
//! client r walks its own tree `TARGET/client-r`. The tree is a local
//! folder, or one on a server (`nfs://`, `smb://`) read through iomatrix's
//! own protocol client, each client in its own session.

use super::args::BackupWalks;
use crate::{BackupCell, LiveClients};
use iomatrix_backend::Place;
use iomatrix_coord::{ClientFailure, Ending, Group, Setup};
use iomatrix_core::human::bytes as human;
use iomatrix_core::BackendKind;
use iomatrix_harness::clients::{add_client_metrics, failed_note, figures_with_rank, summed_note};
use iomatrix_harness::limits::default_stack;
use iomatrix_harness::live::LiveSample;
use iomatrix_harness::{Cost, Demand, LiveView, NotStored, Prepared, RunSpec, Suite, Target, Verdict};
use iomatrix_report::text::clients::ClientColumns;
use iomatrix_store::{CellRow, CellState, StoredRun};
use serde_json::json;
use std::time::Duration;

/// The one cell's `test`, and the suite's name.
pub const TEST: &str = "backup";

/// What rank 0 keeps of a backup run besides its plan.
pub struct Backup {
    /// What the stored cells name as their backend: the protocol client, or system calls.
    backend: &'static str,
}

impl Suite for Backup {
    const NAME: &'static str = TEST;
    const CLIENT_COLUMNS: &'static ClientColumns = &crate::render::CLIENT_COLUMNS;
    type Args = super::args::RunBackupArgs;
    type Plan = BackupWalks;
    type Cell = BackupCell;
    type Live = BackupLive;
    /// One cell: every walk is a sample of it.
    type Key = ();

    fn prepare(args: Self::Args, mpi_ranks: Option<usize>, _db: &std::path::Path) -> anyhow::Result<Prepared<Self>> {
        let (plan, run) = args.validate(mpi_ranks)?;
        let backend = run.target.server().map_or(BackendKind::Sync.name(), |s| s.protocol());
        Ok(Prepared { suite: Backup { backend }, plan, run })
    }

    /// Each client is one thread (the std's default stack) with one read
    /// buffer of `--read-size`. What the walk keeps of the tree's folders
    /// grows with the tree, not with a count of the plan: not counted.
    fn demand(&self, plan: &BackupWalks, _target: &Target, clients_here: usize) -> Demand {
        let client = Cost::threads(1, default_stack()).plus(Cost::memory(plan.walk.read_size));
        Demand::of_clients(
            clients_here,
            client,
            format!("{clients_here} client thread(s), each with a read buffer of {}", human(plan.walk.read_size)),
        )
        .knob_bytes("--read-size", plan.walk.read_size, Cost::memory(clients_here as u64))
    }

    fn spec(&self, plan: &BackupWalks, target: &Target, clients: usize) -> RunSpec {
        let walk = &plan.walk;
        let trees = match clients {
            1 => json!(null),
            n => json!(format!("{}/client-0 .. client-{}: one per client", walk.root.display(), n - 1)),
        };
        let mut conditions = json!({
            "cache": walk.cache_condition(),
            // The tree's sizes are known only after the walk (see the cell's bytes).
            "files_vs_ram": null,
            "timing": "open + read + close of each file, summed; walk, stat and FIEMAP outside; a cold walk's \
                       syncfs and cache drop before the start",
            "read_size": walk.read_size,
            "trees": trees,
        });
        if target.server().is_some() {
            add_remote_conditions(&mut conditions);
        }
        RunSpec {
            peak_bytes: 0,
            peak_detail: String::new(),
            backend: BackendKind::Sync,
            direct: false,
            conditions,
            keep_cell_lines: true,
            quiet: false,
            uncached_hint: "read cold (the default), or a tree larger than RAM,",
            uncached_flags: |_| "no --warm (a cold walk drops the tree's cached pages first)".into(),
            cache_dropped: plan.walk.cold,
        }
    }

    fn cells(plan: &BackupWalks) -> Vec<String> {
        vec!["the backup walk".to_string(); plan.walks as usize]
    }

    fn live(_plan: &BackupWalks, slots: usize) -> BackupLive {
        BackupLive(LiveClients::new(slots))
    }

    fn execute(
        plan: &BackupWalks,
        group: &Group<'_>,
        setup: &Setup<'_>,
        place: &Place<'_>,
        live: &BackupLive,
        on_cell: &mut dyn FnMut(&BackupCell) -> Result<(), iomatrix_store::StoreError>,
    ) -> std::io::Result<Option<(usize, Ending)>> {
        crate::execute_clients(&plan.walk, group, setup, place, &live.0, |cell| {
            on_cell(cell).map_err(|e| NotStored { cell: "storing the backup walk".into(), refused: Box::new(e) })
        })
    }

    /// The merged walk in `metrics` (the clients' counts added up,
    /// `mib_per_min` the sum of their own rates) with the many-client
    /// figures beside it, and each client's own walk in `client_figures`.
    /// `kib_per_sec` is the sum of the clients' rates, `wall_ns` the longest
    /// client's open + read + close time (with one client, exactly its walk's figures).
    fn row(&self, plan: &BackupWalks, cell: &BackupCell) -> CellRow {
        let r = &cell.total;
        let mut metrics = json!(crate::BackupCellFigures {
            walk: r.clone(),
            mib_per_min_sum_of_clients: r.mib_per_min,
            mib_per_min_overall: cell.mib_per_min_overall,
            overall_ns: r.wall_ns,
            series: cell.series.clone(),
        });
        add_client_metrics(&mut metrics, &cell.failures, &cell.starts);
        let client_figures: Vec<serde_json::Value> = cell
            .clients
            .iter()
            .map(|c| {
                let mut v = figures_with_rank(c.rank, &c.result);
                v["root"] = json!(c.root);
                v
            })
            .collect();
        CellRow {
            seq: 0,
            test: TEST.into(),
            file_size: None,
            record_size: Some(plan.walk.read_size),
            backend: self.backend.into(),
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
            cpu_percent: Some(r.cpu_percent),
            metrics,
            client_figures: json!(client_figures),
            state: Default::default(),
            blobs: Vec::new(),
        }
    }

    fn done_line(&self, cell: &BackupCell) -> String {
        let r = &cell.total;
        let mut line = format!("backup walk: {} files, {}, {:.1} MiB/min", r.files, human(r.bytes), r.mib_per_min);
        if let Some(slowest) = cell.slowest() {
            let overall = format!("{:.1} MiB/min", cell.mib_per_min_overall);
            let rate = format!("{:.1} MiB/min", slowest.result.mib_per_min);
            line += &summed_note(cell.clients.len(), &overall, slowest.rank, &rate);
        }
        line += &failed_note(cell.failures.len());
        if r.interrupted {
            line += " (interrupted)";
        }
        line
    }

    /// A walk whose server stopped answering is kept, and the run fails; one
    /// cut short by a stop is kept, and the run ends as interrupted.
    fn verdict(&self, cell: &BackupCell) -> Verdict {
        let lost: Vec<ClientFailure> = cell
            .clients
            .iter()
            .filter_map(|c| c.result.server_lost.as_ref().map(|why| ClientFailure::error(c.rank, why.clone())))
            .collect();
        if !lost.is_empty() {
            Verdict::Failed(lost)
        } else if cell.interrupted() {
            Verdict::Interrupted
        } else {
            Verdict::Fine
        }
    }

    /// Counted in clients: a client whose server stopped answering read only part of its tree.
    fn parts(&self, _plan: &BackupWalks, cell: &BackupCell, clients: usize) -> Option<CellState> {
        let ok = cell.clients.iter().filter(|c| c.result.server_lost.is_none()).count() as u64;
        Some(CellState::counted(ok, clients as u64, "clients"))
    }

    fn key(&self, _cell: &BackupCell) {}

    fn again(plan: &BackupWalks, _noisy: &[()]) -> BackupWalks {
        BackupWalks { walks: 1, ..plan.clone() }
    }

    fn tables(run: &StoredRun) -> String {
        crate::render::report(run)
    }
}

/// The files and bytes read so far by this process's clients.
pub struct BackupLive(LiveClients);

impl LiveView for BackupLive {
    /// This process's clients' rate so far, as sent to rank 0 under MPI.
    fn sample(&self) -> LiveSample {
        let t = self.0.total();
        let secs = t.read_ns as f64 / 1e9;
        LiveSample {
            cell: 0,
            bytes_per_sec: self.0.mib_per_min_sum() * 1048576.0 / 60.0,
            ops_per_sec: if secs > 0.0 { t.files as f64 / secs } else { 0.0 },
        }
    }

    /// The files and bytes so far and, with many clients, the sum of their
    /// rates and the slowest of them.
    fn line(&self, _cell: &dyn Fn(usize) -> String) -> Option<String> {
        let t = self.0.total();
        let mut msg = format!("{} files, {}, {} errors", t.files, human(t.bytes), t.errors);
        if let Some((rank, rate)) = self.0.slowest() {
            msg +=
                &format!(", {:.1} MiB/min summed, slowest client {rank}: {rate:.1} MiB/min", self.0.mib_per_min_sum());
        }
        Some(msg)
    }

    fn show(&self, s: &LiveSample) -> String {
        format!("{:.1} MiB/min", s.bytes_per_sec * 60.0 / 1048576.0)
    }
}

/// What a walk over a protocol client cannot do as a local walk does, and
/// what it does instead: stored with the run, shown above its tables.
fn add_remote_conditions(conditions: &mut serde_json::Value) {
    conditions["cache"] = json!(
        "no client cache: iomatrix's own protocol client sends every read to the server; the server's own cache \
         cannot be dropped from here (files it holds in RAM are served from there), so this is not a cold walk"
    );
    conditions["files_vs_ram"] =
        json!("unknown: the server's RAM (its cache) is what counts, and a client cannot see it");
    conditions["timing"] = json!(
        "open + read + close of each file, summed (NFS: LOOKUP + READs, closing sends nothing; SMB: CREATE + READs \
         + CLOSE); the folder listings (NFS READDIRPLUS, SMB QUERY_DIRECTORY) outside"
    );
    conditions["extents"] = json!(crate::NO_EXTENT_MAP);
    conditions["remote_walk"] = json!([
        "each file is read up to the size the server's listing gave (a file that grew meanwhile is read to that size)",
        "hard links are not detected: the listing carries no link count or file id here, so a file with several \
         names is read once per name",
        "symlinks are what the server shows: NFS lists them (counted, never followed); Samba shows a link inside \
         the share as what it points to (read as a file, walked as a folder) and hides links leading out of it",
        "access times on the server may change (no O_NOATIME over the protocol)",
    ]);
}
