//! The file-server load through the harness (seed 003): many connections,
//! each in its own folder, write their files and read them back (or mix
//! reads and rewrites); every operation type is timed on its own. One cell
//! per phase. Each client runs its own connections in its own folder,
//! every phase started together. On an `nfs://` or `smb://` target every
//! connection is a session of iomatrix's own protocol client, its own TCP
//! connection to the server.

use crate::{
    ClientPhaseFigures, ConnectionRecord, FileserverCell, FileserverCellFigures, FileserverPlan, Live, LiveSnapshot,
    OpTimes, Phase, SetupFigures,
};
use iomatrix_analysis::{SuiteShape, SweptFields};
use iomatrix_backend::Place;
use iomatrix_coord::{Ending, Group, Setup};
use iomatrix_core::human::bytes as human;
use iomatrix_core::BackendKind;
use iomatrix_harness::limits::default_stack;
use iomatrix_harness::live::LiveSample;
use iomatrix_harness::{Cost, Demand, LiveView, Prepared, RunSpec, Suite, Target};
use iomatrix_report::text::clients::ClientColumns;
use iomatrix_store::{CellRow, CellState, StoredRun};
use serde_json::{json, Value};
use std::sync::Mutex;
use std::time::Instant;

/// Descriptors one connection holds through a protocol client: its socket
/// and its runtime's epoll and wake-up descriptors, with room to spare.
const REMOTE_FDS_PER_CONNECTION: u64 = 4;

/// What rank 0 keeps of a file-server run besides its plan.
pub struct Fileserver {
    /// What the stored cells name as their backend: the protocol client, or system calls.
    backend: &'static str,
}

impl Suite for Fileserver {
    const NAME: &'static str = "fileserver";
    const SHAPE: SuiteShape = SuiteShape {
        beside: crate::figures::BESIDE,
        swept_fields: &[
            SweptFields { by: "record", plan_fields: &["record"] },
            SweptFields { by: "file", plan_fields: &["sizes"] },
        ],
        ..SuiteShape::PLAIN
    };
    const CLIENT_COLUMNS: &'static ClientColumns = &iomatrix_report::text::connections::CLIENT_COLUMNS;
    type Args = super::args::RunFileserverArgs;
    type Plan = FileserverPlan;
    type Cell = FileserverCell;
    type Live = FileserverLive;
    /// Samples are compared per phase (write, read, mix).
    type Key = &'static str;

    fn prepare(args: Self::Args, mpi_ranks: Option<usize>, _db: &std::path::Path) -> anyhow::Result<Prepared<Self>> {
        let (plan, run) = args.validate(mpi_ranks)?;
        let backend = run.target.server().map_or(BackendKind::Sync.name(), |s| s.protocol());
        Ok(Prepared { suite: Fileserver { backend }, plan, run })
    }

    fn spec(&self, plan: &FileserverPlan, target: &Target, clients: usize) -> RunSpec {
        let total_bytes = plan.total_bytes() * clients as u64;
        let mut conditions = conditions(plan, target.server().is_some());
        iomatrix_harness::data::add_conditions(&mut conditions, &plan.content);
        RunSpec {
            peak_bytes: total_bytes,
            peak_detail: format!(
                "{clients} client(s) x {} connection(s) x {} files, {} in all",
                plan.connections,
                plan.files_per_connection,
                human(total_bytes)
            ),
            backend: BackendKind::Sync,
            direct: false,
            conditions,
            keep_cell_lines: true,
            quiet: false,
            uncached_hint: "use --drop-caches (reads then come from storage), or more data than RAM,",
            uncached_flags: |_| "--drop-caches".into(),
            cache_dropped: plan.drop_caches,
        }
    }

    /// Each client is two threads of the std's default stack (the
    /// coordinator's client thread, and the one that runs its connections)
    /// and a thread per connection (128 KiB stacks, 2 MiB through a
    /// protocol client, crates/fileserver's runner). A connection holds
    /// [`FileserverPlan::memory_per_connection`]; a client holds the record
    /// every write sends and a latency histogram per operation and phase.
    fn demand(&self, plan: &FileserverPlan, target: &Target, clients_here: usize) -> Demand {
        let stack = if target.server().is_some() { crate::REMOTE_STACK_SIZE } else { crate::STACK_SIZE };
        let connection = Cost::threads(1, stack as u64).plus(Cost::memory(plan.memory_per_connection()));
        let hists = (plan.phases().len() * crate::Op::ALL.len()) as u64 * iomatrix_stats::Latency::footprint();
        let client = Cost::threads(2, default_stack())
            .plus(Cost::memory(plan.record.bytes() + hists))
            .plus(connection.times(plan.connections as u64));
        Demand::of_clients(
            clients_here,
            client,
            format!(
                "{clients_here} client(s) x (2 threads + {} connection thread(s) of {} stack, each holding {})",
                plan.connections,
                human(stack as u64),
                human(plan.memory_per_connection())
            ),
        )
        .knob("--connections", plan.connections as u64, connection.times(clients_here as u64))
        .knob(
            "--files-per-connection",
            plan.files_per_connection,
            // What one more file adds: its place in the mixed phase's order (4 bytes), in every connection.
            Cost::memory(if matches!(plan.then, crate::Then::Mix { .. }) { 4 } else { 0 })
                .times(plan.connections as u64 * clients_here as u64),
        )
    }

    fn cells(plan: &FileserverPlan) -> Vec<String> {
        plan.phases().iter().map(|p| format!("the {} phase", p.name())).collect()
    }

    /// Each phase writes, reads or mixes the connections' files once.
    fn work(plan: &FileserverPlan) -> Vec<iomatrix_harness::progress::CellWork> {
        vec![iomatrix_harness::progress::CellWork::Bytes(plan.total_bytes()); plan.phases().len()]
    }

    /// Raises the open-file limit where the connections need more, and says
    /// so. Local clients share this process's descriptors; an MPI rank has its own.
    fn before_clients(plan: &FileserverPlan, clients_here: usize, on_server: bool) -> anyhow::Result<()> {
        // The connections' files (or sessions).
        let per_connection = if on_server { REMOTE_FDS_PER_CONNECTION } else { plan.fds_per_connection() };
        let connections_here = plan.connections as u64 * clients_here as u64;
        iomatrix_harness::limits::raise_open_files(connections_here, per_connection, Some(plan.connections));
        Ok(())
    }

    fn live(plan: &FileserverPlan, slots: usize) -> FileserverLive {
        FileserverLive {
            lives: (0..slots).map(|_| Live::new()).collect(),
            phases: plan.phases(),
            shown: Mutex::new(Rates::default()),
            sampled: Mutex::new(None),
        }
    }

    fn execute(
        plan: &FileserverPlan,
        group: &Group<'_>,
        setup: &Setup<'_>,
        place: &Place<'_>,
        live: &FileserverLive,
        on_cell: &mut dyn FnMut(&FileserverCell) -> Result<(), iomatrix_store::StoreError>,
    ) -> std::io::Result<Option<(usize, Ending)>> {
        iomatrix_harness::clients::needs_folder("the file-server load", place, setup)?;
        crate::execute_clients(plan, group, setup, place, &live.lives, on_cell)
    }

    fn row(&self, plan: &FileserverPlan, cell: &FileserverCell) -> CellRow {
        row(plan, cell, self.backend)
    }

    fn done_line(&self, cell: &FileserverCell) -> String {
        summary_line(cell)
    }

    /// Counted in connections: those that finished the phase, of every
    /// client's (a failed client's connections are lost with it); one that
    /// failed in this phase or sat it out after an earlier failure did not.
    fn parts(&self, plan: &FileserverPlan, cell: &FileserverCell, clients: usize) -> Option<CellState> {
        let planned = plan.connections as u64 * clients as u64;
        Some(CellState::counted(cell.merged.connections_ok as u64, planned, "connections"))
    }

    fn key(&self, cell: &FileserverCell) -> &'static str {
        cell.merged.phase.name()
    }

    /// The read phase reads what the write phase wrote: every phase runs again.
    fn again(plan: &FileserverPlan, _noisy: &[&'static str]) -> FileserverPlan {
        FileserverPlan { repeats: 1, ..plan.clone() }
    }

    fn stored_facts(record: &iomatrix_store::Records<'_>) -> iomatrix_store::reader::SuiteFacts {
        crate::stored::facts(record)
    }

    fn tables(run: &StoredRun) -> String {
        crate::render::report(run)
    }

    // The file-server load keeps its figures per connection: its clients table sums them per client.
    fn clients_of(run: &StoredRun) -> std::borrow::Cow<'_, StoredRun> {
        std::borrow::Cow::Owned(iomatrix_report::text::connections::connections_as_clients(run))
    }
}

/// The live figures of this process's clients, one [`Live`] each.
pub struct FileserverLive {
    lives: Vec<Live>,
    phases: Vec<Phase>,
    /// What the live line last saw, for its rates.
    shown: Mutex<Rates>,
    /// What the last sample sent to rank 0 saw: (phase, bytes, when).
    sampled: Mutex<Option<(usize, u64, Instant)>>,
}

/// Each client's bytes and phase at the last look, and when that was.
struct Rates {
    last: Vec<(u64, usize)>,
    at: Instant,
}

impl Default for Rates {
    fn default() -> Rates {
        Rates { last: Vec::new(), at: Instant::now() }
    }
}

impl LiveView for FileserverLive {
    /// This rank's bytes per second since its last sample.
    fn sample(&self) -> LiveSample {
        // Under MPI this rank's one client publishes in its rank's slot.
        let snaps: Vec<LiveSnapshot> = self.lives.iter().map(Live::snapshot).collect();
        let Some(now) = snaps.iter().find(|s| s.started).or(snaps.first()).copied() else {
            return LiveSample::default();
        };
        let mut last = self.sampled.lock().unwrap_or_else(|e| e.into_inner());
        let rate = match *last {
            Some((phase, bytes, at)) if phase == now.phase => {
                now.bytes.saturating_sub(bytes) as f64 / at.elapsed().as_secs_f64().max(1e-3)
            }
            _ => 0.0,
        };
        *last = Some((now.phase, now.bytes, Instant::now()));
        LiveSample { cell: now.phase, bytes_per_sec: rate, ops_per_sec: 0.0 }
    }

    /// The phase under way, files done, MiB/s since the last look summed
    /// over the clients, and the slowest client.
    fn line(&self, _cell: &dyn Fn(usize) -> String) -> Option<String> {
        let snaps: Vec<LiveSnapshot> = self.lives.iter().map(Live::snapshot).collect();
        let first = snaps.iter().find(|s| s.started)?;
        let mut shown = self.shown.lock().unwrap_or_else(|e| e.into_inner());
        let secs = shown.at.elapsed().as_secs_f64().max(1e-3);
        shown.at = Instant::now();
        shown.last.resize(snaps.len(), (0, usize::MAX));
        let rates: Vec<f64> = snaps
            .iter()
            .zip(&mut shown.last)
            .map(|(s, (bytes, phase))| {
                if s.phase != *phase {
                    (*bytes, *phase) = (0, s.phase);
                }
                let rate = s.bytes.saturating_sub(*bytes) as f64 / 1048576.0 / secs;
                *bytes = s.bytes;
                rate
            })
            .collect();
        let mut msg = format!(
            "{}: {}/{} files, {:.1} MiB/s, {} connection(s) failed",
            self.phases.get(first.phase).map_or("?", |p| p.name()),
            snaps.iter().map(|s| s.files_done).sum::<u64>(),
            snaps.iter().map(|s| s.files_total).sum::<u64>(),
            rates.iter().sum::<f64>(),
            snaps.iter().map(|s| s.failed).sum::<usize>()
        );
        if let Some((rank, rate)) =
            rates.iter().enumerate().min_by(|a, b| a.1.total_cmp(b.1)).filter(|_| rates.len() > 1)
        {
            msg += &format!(", slowest client {rank}: {rate:.1} MiB/s");
        }
        Some(msg)
    }

    fn show(&self, s: &LiveSample) -> String {
        format!("{:.1} MiB/s", s.bytes_per_sec / 1048576.0)
    }
}

fn conditions(plan: &FileserverPlan, on_server: bool) -> Value {
    let mut conditions = json!({
        "drop_caches": plan.drop_caches,
        "largest_file_bytes": plan.largest_file(),
        "connections": plan.connections,
        "files_per_connection": plan.files_per_connection,
        "record_bytes": plan.record.bytes(),
        "interleave": plan.interleave,
        "fsync_every": plan.fsync_every,
    });
    if on_server {
        conditions["cache"] = json!(
            "no client cache: iomatrix's own protocol client sends every request to the server (whose own cache \
             may serve it)"
        );
        conditions["sessions"] = json!(
            "one session (TCP connection) per connection, connected and its folder made before the write phase, \
             untimed (stored per connection as setup_ns)"
        );
        conditions["timing"] = json!(
            "each request timed on its own: create = exclusive create (NFS CREATE GUARDED, SMB CREATE \
             FILE_CREATE) + close (SMB CLOSE; nothing to send on NFSv3), open = NFS LOOKUP / SMB CREATE, one WRITE \
             or READ per record (split at the negotiated maximum), fsync = NFS COMMIT / SMB FLUSH (only with \
             --fsync-every), close = SMB CLOSE (nothing on NFSv3); all connections start each phase together; a \
             connection's KB/s is its bytes over the common start to its last operation, the total is all bytes \
             over the phase's completion time"
        );
    } else {
        conditions["cache"] = json!(if plan.drop_caches {
            "page cache in use for writes; synced and dropped (drop_caches=3) before the read phase, so reads come \
             from the storage"
        } else {
            "page cache in use; the read phase may be served by the page cache (no --drop-caches)"
        });
        conditions["timing"] = json!(
            "each operation timed on its own (create = open(O_CREAT|O_EXCL) + close; fsync only with \
             --fsync-every); all connections start each phase together; a connection's KB/s is its bytes over the \
             common start to its last operation, the total is all bytes over the phase's completion time"
        );
    }
    conditions
}

/// The progress line of a finished phase.
fn summary_line(cell: &FileserverCell) -> String {
    let r = &cell.merged;
    let mut line = format!(
        "{}: {} files, {} in {:.2} s, {:.0} KB/s per connection, {:.0} KB/s in all",
        r.phase.name(),
        r.done.files,
        human(r.done.bytes),
        r.wall_ns as f64 / 1e9,
        r.avg_connection_kib_per_sec,
        r.total_kib_per_sec
    );
    if r.connections_failed + r.connections_skipped > 0 {
        let errors: Vec<String> = r.errors.iter().map(|(k, n)| format!("{k} {n}")).collect();
        line.push_str(&format!(
            "; {} connection(s) failed ({}), {} out since an earlier phase, {} operations lost",
            r.connections_failed,
            if errors.is_empty() { "-".into() } else { errors.join(", ") },
            r.connections_skipped,
            r.lost.ops.total()
        ));
    }
    if let Some(slowest) = cell.slowest() {
        line += &format!(
            "; {} clients, {:.0} KB/s summed (slowest: client {} at {:.0} KB/s)",
            cell.clients.len(),
            cell.kib_per_sec_sum,
            slowest.rank,
            slowest.result.total_kib_per_sec
        );
    }
    line += &iomatrix_harness::clients::failed_note(cell.failures.len());
    line
}

fn row(plan: &FileserverPlan, cell: &FileserverCell, backend: &str) -> CellRow {
    let r = &cell.merged;
    let ops = r.phase.ops(plan.fsync_every.is_some());
    let connections: Vec<ConnectionRecord> = r
        .connections
        .iter()
        .map(|c| ConnectionRecord {
            rank: c.rank,
            files: c.done.files,
            bytes: c.done.bytes,
            ns: c.ns(),
            start_delay_ns: c.start_delay_ns(),
            kib_per_sec: (c.kib_per_sec() * 10.0).round() / 10.0,
            error: c.error.clone(),
            skipped: c.skipped,
            setup_ns: c.setup_ns,
        })
        .collect();
    // The untimed setup before the first phase: sessions connected, folders made.
    let setups: Vec<u64> = r.connections.iter().map(|c| c.setup_ns).filter(|&ns| ns > 0).collect();
    let metrics = FileserverCellFigures {
        phase: Some(r.phase.name().into()),
        read_percent: match r.phase {
            Phase::Mix { read_percent } => Some(read_percent.into()),
            _ => None,
        },
        ops: ops.iter().map(|&op| (op, OpTimes::from(r.latency(op).summary()))).collect(),
        planned: r.planned,
        done: r.done,
        lost: r.lost,
        lost_samples: r.lost.ops.total(),
        avg_connection_kib_per_sec: r.avg_connection_kib_per_sec,
        total_kib_per_sec: r.total_kib_per_sec,
        completion_ns: r.wall_ns,
        connections_ok: r.connections_ok as u64,
        connections_failed: r.connections_failed as u64,
        connections_skipped: r.connections_skipped as u64,
        errors: r.errors.clone(),
        caches_dropped: r.caches_dropped,
        repeat: (r.index / 2 + 1) as u64,
        kib_per_sec_sum_of_clients: cell.kib_per_sec_sum,
        // Each client's operations per type: over the clients they add up to the merged histograms' counts.
        clients: cell
            .clients
            .iter()
            .map(|c| ClientPhaseFigures {
                rank: c.rank,
                files: c.result.done.files,
                bytes: c.result.done.bytes,
                ops: ops.iter().map(|&op| (op, c.result.latency(op).count())).collect(),
                completion_ns: c.result.wall_ns,
                total_kib_per_sec: c.result.total_kib_per_sec,
                connections_failed: c.result.connections_failed,
            })
            .collect(),
        failed_clients: cell.failures.clone(),
        start_barrier: cell.starts.clone(),
        setup: (!setups.is_empty()).then(|| SetupFigures {
            connections: setups.len() as u64,
            mean_ns: setups.iter().sum::<u64>() / setups.len() as u64,
            max_ns: setups.iter().copied().max().unwrap_or(0),
        }),
        verify: plan
            .content
            .stamped()
            .then(|| iomatrix_verify::Tally::sum(r.connections.iter().filter_map(|c| c.verify.as_ref()))),
        series: (!r.series.intervals.is_empty()).then(|| iomatrix_stats::Series::of(&r.series, r.connections.len())),
    };
    CellRow {
        seq: 0,
        test: r.phase.name().into(),
        file_size: Some(plan.largest_file()),
        record_size: Some(plan.record.bytes()),
        backend: backend.into(),
        direct: false,
        clients: r.connections.len(),
        bytes: r.done.bytes,
        ops: r.done.ops.total(),
        wall_ns: r.wall_ns,
        user_ns: r.user_ns,
        sys_ns: r.sys_ns,
        kib_per_sec: r.total_kib_per_sec,
        cpu_percent: Some(r.cpu_percent()),
        metrics: metrics.to_json(),
        client_figures: json!(connections),
        state: Default::default(),
        blobs: ops
            .iter()
            .filter(|&&op| r.latency(op).count() > 0)
            .map(|&op| (format!("latency.{}", op.name()), r.latency(op).to_bytes()))
            .collect(),
    }
}
