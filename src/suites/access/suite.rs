//! The access suite through the harness: one cell per setting of the
//! sweep (block size x read % x random % x queue depth); noisy settings
//! measured again.

use super::render::human_ns;
use crate::harness::live::LiveSample;
use crate::harness::limits::default_stack;
use crate::harness::{Cost, Demand, LiveView, Prepared, RunSpec, Server, Suite, Target};
use iomatrix_core::human::bytes as human;
use iomatrix_report::text::clients::ClientColumns;
use iomatrix_access::{AccessCellFigures, AccessPlan, AccessResult, CellSetting, Live};
use iomatrix_backend::Place;
use iomatrix_coord::{Ending, Group, Setup};
use iomatrix_core::BackendKind;
use iomatrix_stats::LatencySummary;
use iomatrix_store::{CellRow, StoredRun};
use serde_json::json;

/// The access suite: everything it runs is in its plan.
pub struct Access;

impl Suite for Access {
    const NAME: &'static str = "access";
    const CLIENT_COLUMNS: &'static ClientColumns = &super::render::CLIENT_COLUMNS;
    type Args = super::args::RunAccessArgs;
    type Plan = AccessPlan;
    type Cell = AccessResult;
    type Live = AccessLive;
    type Key = CellSetting;

    fn prepare(args: Self::Args, mpi_ranks: Option<usize>, _db: &std::path::Path) -> anyhow::Result<Prepared<Self>> {
        let (plan, run) = args.validate(mpi_ranks)?;
        Ok(Prepared { suite: Access, plan, run })
    }

    fn spec(&self, plan: &AccessPlan, target: &Target, _clients: usize) -> RunSpec {
        let mut conditions = json!({
            "limit": plan.limit,
            "rate_iops": plan.rate_iops,
            "completions": match plan.poll_completions_us {
                Some(us) => format!("polled for up to {us} us before each wait (the client thread spins: its CPU% counts it)"),
                None => "waited for (the thread sleeps until the kernel wakes it)".to_string(),
            },
            "latency_clock": iomatrix_access::latency_clock_source(),
        });
        if plan.backend == BackendKind::IoUring && target.server().is_none() {
            conditions["submissions"] = json!(match plan.submit_batch {
                Some(n) => format!(
                    "handed to the kernel in groups of up to {n} as they are prepared (--submit-batch); the group \
                     that fills the queue goes in with the wait, in one io_uring_enter"
                ),
                None => "handed to the kernel in groups of up to depth/8 (1 to 8) as they are prepared; the group \
                         that fills the queue goes in with the wait, in one io_uring_enter"
                    .to_string(),
            });
        }
        crate::harness::data::add_conditions(&mut conditions, &plan.content);
        if let Some(server) = target.server() {
            conditions["requests"] =
                json!(plan.queue_depths.iter().map(|&qd| requests_on(server, qd)).collect::<Vec<_>>());
        }
        RunSpec {
            // Clients share a device's working set; files are one per client.
            peak_bytes: plan.file_size.bytes() * if plan.device.is_some() { 1 } else { plan.clients as u64 },
            peak_detail: format!("{} client(s) x file {}", plan.clients, plan.file_size),
            backend: plan.backend,
            direct: plan.direct,
            conditions,
            keep_cell_lines: true,
            quiet: false,
            uncached_hint: "use --direct, or files larger than RAM,",
        }
    }

    /// Each client is one thread (the std's default stack) holding the
    /// request buffers of its deepest cell (queue depth x block size with
    /// io_uring or on a server, one block otherwise), the 1 MiB chunk that
    /// lays its file out, three latency histograms (reads, writes, the
    /// second under way) and a count per second of a timed cell. On an NFS
    /// server each request in flight beyond the first is a session driven
    /// by a thread of its own (the std's default stack). With mmap the file
    /// is mapped: address space. The cell's figures are small: not counted.
    fn demand(&self, plan: &AccessPlan, target: &Target, clients_here: usize) -> Demand {
        let queued = plan.backend.is_queued() || target.server().is_some();
        let cells = plan.cells();
        let buffers = cells
            .iter()
            .map(|c| c.block_size.bytes().saturating_mul(if queued { u64::from(c.queue_depth) } else { 1 }))
            .max()
            .unwrap_or(0);
        let depth = cells.iter().map(|c| u64::from(c.queue_depth)).max().unwrap_or(1);
        let helpers = match target.server() {
            Some(Server::Nfs(_)) if depth > 1 => depth,
            _ => 0,
        };
        let seconds = match plan.limit {
            iomatrix_access::Limit::DurationMs(ms) => ms.div_ceil(1000),
            iomatrix_access::Limit::Bytes(_) => 0,
        };
        let series = seconds.saturating_mul(std::mem::size_of::<iomatrix_access::Second>() as u64);
        let mapped = if plan.backend == BackendKind::Mmap { plan.file_size.bytes() } else { 0 };
        let client = Cost::threads(1 + helpers, default_stack())
            .plus(Cost::memory(buffers + (1 << 20) + 3 * iomatrix_stats::Latency::footprint() + series))
            .plus(Cost::mapped(mapped));
        Demand::of_clients(
            clients_here,
            client,
            format!(
                "{clients_here} client(s), each {} thread(s) with {} of request buffers and its histograms",
                1 + helpers,
                human(buffers)
            ),
        )
        .knob("--qd", depth, Cost::memory(buffers / depth.max(1)).plus(Cost::threads(u64::from(helpers > 0), default_stack())).times(clients_here as u64))
    }

    fn cells(plan: &AccessPlan) -> Vec<String> {
        plan.cells().iter().map(|c| c.describe()).collect()
    }

    fn live(_plan: &AccessPlan, slots: usize) -> AccessLive {
        AccessLive(Live::new(slots))
    }

    fn execute(
        plan: &AccessPlan,
        group: &Group<'_>,
        setup: &Setup<'_>,
        place: &Place<'_>,
        live: &AccessLive,
        on_cell: &mut dyn FnMut(&AccessResult) -> Result<(), iomatrix_store::StoreError>,
    ) -> std::io::Result<Option<(usize, Ending)>> {
        iomatrix_access::execute_at(plan, group, setup, place, &live.0, on_cell)
    }

    fn row(&self, plan: &AccessPlan, r: &AccessResult) -> CellRow {
        let clients: Vec<_> = r
            .clients
            .iter()
            .map(|c| {
                json!({
                    "rank": c.rank,
                    "read_bytes": c.read_bytes,
                    "write_bytes": c.write_bytes,
                    "ops": c.ops(),
                    "iops": c.iops(),
                    "mib_per_sec": c.mib_per_sec(),
                    "measured": c.measured,
                    "read": c.reads.summary(),
                    "write": c.writes.summary(),
                })
            })
            .collect();
        CellRow {
            seq: 0,
            test: "access".into(),
            file_size: Some(plan.file_size.bytes()),
            record_size: Some(r.cell.block_size.bytes()),
            backend: plan.backend.name().into(),
            direct: plan.direct,
            clients: r.clients.len(),
            bytes: r.read_bytes + r.write_bytes,
            ops: r.ops(),
            wall_ns: r.wall_ns,
            user_ns: r.user_ns,
            sys_ns: r.sys_ns,
            kib_per_sec: r.mib_per_sec * 1024.0,
            cpu_percent: Some(r.cpu_percent),
            metrics: json!(AccessCellFigures {
                block_size: Some(r.cell.block_size.bytes()),
                mix: r.cell.mix(),
                repeat: r.cell.repeat,
                iops: r.iops,
                mib_per_sec: r.mib_per_sec,
                mib_per_sec_sum_of_clients: r.mib_per_sec_sum(),
                failed_clients: r.failures.clone(),
                start_barrier: r.starts.clone(),
                read_bytes: r.read_bytes,
                write_bytes: r.write_bytes,
                read: r.reads.summary(),
                write: r.writes.summary(),
                per_second: r.series.clone(),
                requests: issued(r),
                verify: r.verify.clone(),
            }),
            client_figures: json!(clients),
            state: Default::default(),
            blobs: vec![("latency.read".into(), r.reads.to_bytes()), ("latency.write".into(), r.writes.to_bytes())],
        }
    }

    fn done_line(&self, result: &AccessResult) -> String {
        let mut line = format!(
            "{}: {:.0} IOPS, {:.1} MiB/s, read p99 {}, write p99 {}, CPU {:.0}%",
            result.cell.describe(),
            result.iops,
            result.mib_per_sec,
            p99(&result.reads.summary()),
            p99(&result.writes.summary()),
            result.cpu_percent
        );
        if let Some(slowest) = result.slowest() {
            line += &format!(
                " ({} clients; slowest: client {} at {:.0} IOPS)",
                result.clients.len(),
                slowest.rank,
                slowest.iops()
            );
        }
        if !result.failures.is_empty() {
            line += &format!(", {} client(s) failed", result.failures.len());
        }
        line
    }

    fn key(&self, result: &AccessResult) -> CellSetting {
        result.cell.setting()
    }

    fn again(plan: &AccessPlan, noisy: &[CellSetting]) -> AccessPlan {
        AccessPlan { only: Some(noisy.to_vec()), repeats: 1, ..plan.clone() }
    }

    fn tables(run: &StoredRun) -> String {
        super::render::table(run)
    }
}

/// The running cell's last second: requests, bytes and the worst p99 of this process's clients.
pub struct AccessLive(Live);

impl LiveView for AccessLive {
    fn sample(&self) -> LiveSample {
        let (cell, ops, bytes, _) = self.0.snapshot();
        LiveSample { cell, bytes_per_sec: bytes as f64, ops_per_sec: ops as f64 }
    }

    fn line(&self, cell: &dyn Fn(usize) -> String) -> Option<String> {
        let (index, ops, bytes, p99) = self.0.snapshot();
        if ops == 0 {
            return None;
        }
        let slowest =
            self.0.slowest().map(|(rank, ops)| format!(", slowest client {rank}: {ops} IOPS")).unwrap_or_default();
        Some(format!(
            "{}: {ops} IOPS, {:.1} MiB/s{slowest}, p99 {} (last second)",
            cell(index),
            bytes as f64 / 1048576.0,
            human_ns(p99 as f64)
        ))
    }

    fn show(&self, s: &LiveSample) -> String {
        format!("{:.0} IOPS, {:.1} MiB/s", s.ops_per_sec, s.bytes_per_sec / 1048576.0)
    }
}

/// How each client's requests reach a server at queue depth `qd`, for the
/// run's conditions. It states what the runner does (iomatrix_access::execute_at
/// at a remote place): SMB keeps the requests in flight on the client's one
/// session; nfs3_client carries one request per connection, so depth N takes
/// N connections.
fn requests_on(server: &Server, qd: u32) -> String {
    let how = match (server, qd) {
        (Server::Smb(_), 1) => "one request at a time on one SMB session".to_string(),
        (Server::Smb(_), _) => format!("up to {qd} requests in flight at once on one SMB session"),
        (Server::Nfs(_), 1) => "one request at a time on one NFS connection".to_string(),
        (Server::Nfs(_), _) => format!(
            "{qd} NFS connections, one request in flight on each (nfs3_client carries one request per \
             connection), each driven by a thread of its own whose CPU time the cell's CPU% leaves out"
        ),
    };
    format!("queue depth {qd}: {how}; for each client")
}

fn p99(s: &LatencySummary) -> String {
    if s.count == 0 {
        "-".into()
    } else {
        human_ns(s.p99_ns as f64)
    }
}

/// How the clients issued their requests, each account once.
fn issued(r: &AccessResult) -> Vec<String> {
    let mut said: Vec<String> = r.clients.iter().map(|c| c.issued.clone()).collect();
    said.sort_unstable();
    said.dedup();
    said
}
