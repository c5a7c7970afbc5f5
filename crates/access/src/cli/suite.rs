//! The access suite through the harness: one cell per setting of the
//! sweep (block size x read % x random % x queue depth); noisy settings
//! measured again.

use crate::render::human_ns;
use crate::{AccessPlan, AccessResult, CellSetting, Live, Protocol};
use iomatrix_analysis::{SuiteShape, SweptFields};
use iomatrix_backend::Place;
use iomatrix_coord::{Ending, Group, Setup};
use iomatrix_core::human::bytes as human;
use iomatrix_harness::clients::{failed_note, slowest_note};
use iomatrix_harness::limits::default_stack;
use iomatrix_harness::live::LiveSample;
use iomatrix_harness::{Cost, Demand, LiveView, Prepared, RunSpec, Server, Suite, Target};
use iomatrix_report::text::clients::ClientColumns;

/// Below this `--rate` (requests a second per client) a whole second without a completion is
/// not taken for a stall ([`iomatrix_harness::disturbance::idle_seconds`]).
const SLOWEST_RATE_JUDGED_PER_SECOND: u64 = 10;
use iomatrix_core::BackendKind;
use iomatrix_stats::LatencySummary;
use iomatrix_store::{CellRow, StoredRun};
use serde_json::json;
use std::sync::{Arc, Mutex};

/// The access suite: everything it runs is in its plan. Run by `iomatrix fio`, it keeps each
/// stored run for fio's outputs, which own standard output.
#[derive(Default)]
pub struct Access {
    pub(super) fio: Option<Kept>,
}

impl Suite for Access {
    const NAME: &'static str = "access";
    const SHAPE: SuiteShape = SuiteShape {
        beside: crate::figures::BESIDE,
        swept_fields: &[
            SweptFields { by: "qd", plan_fields: &["queue_depths"] },
            SweptFields { by: "record", plan_fields: &["block_sizes"] },
            SweptFields { by: "file", plan_fields: &["file_size"] },
            SweptFields { by: "read", plan_fields: &["read_percents"] },
            SweptFields { by: "random", plan_fields: &["random_percents"] },
        ],
        ..SuiteShape::PLAIN
    };
    const CLIENT_COLUMNS: &'static ClientColumns = &crate::render::CLIENT_COLUMNS;
    type Args = super::args::RunAccessArgs;
    type Plan = AccessPlan;
    type Cell = AccessResult;
    type Live = AccessLive;
    /// A setting, and its load where it is a point of a curve (a curve's points are no samples
    /// of one cell).
    type Key = (CellSetting, Option<iomatrix_core::CurveLoad>);

    fn prepare(args: Self::Args, mpi_ranks: Option<usize>, db: &std::path::Path) -> anyhow::Result<Prepared<Self>> {
        let (plan, run) = args.validate(mpi_ranks, db)?;
        Ok(Prepared { suite: Access::default(), plan, run })
    }

    fn spec(&self, plan: &AccessPlan, target: &Target, _clients: usize) -> RunSpec {
        let mut conditions = json!({
            "limit": plan.limit,
            "rate_iops": plan.rate_iops,
            "completions": match plan.poll_completions_us {
                Some(us) => format!("polled for up to {us} us before each wait (the client thread spins: its CPU% counts it)"),
                None => "waited for (the thread sleeps until the kernel wakes it)".to_string(),
            },
            "latency_clock": crate::latency_clock_source(),
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
        if plan.ramp_ms > 0 {
            conditions["ramp"] = json!(format!(
                "each cell first warms up for {} (its own requests, counted in no figure; those in flight complete \
                 before the timed part)",
                match plan.ramp_ms {
                    ms if ms % 1000 == 0 => format!("{}s", ms / 1000),
                    ms => format!("{ms}ms"),
                }
            ));
        }
        if let Some(rule) = &plan.steady {
            conditions["steady_state"] = json!(crate::steady::describe(rule, plan.series_interval_ns));
        }
        if !plan.distribution.is_uniform() {
            conditions["distribution"] = json!(format!(
                "random offsets drawn by fio's {} (random_distribution), hot blocks scattered over each client's file \
                 and the same in every cell",
                plan.distribution
            ));
        }
        if let Some(loop_said) = open_loop_condition(plan) {
            conditions["open_loop"] = json!(loop_said);
        }
        iomatrix_harness::data::add_conditions(&mut conditions, &plan.content);
        add_latency_target(plan, &mut conditions);
        conditions["pin"] = json!(plan.pin.describe());
        if !plan.shared_file.is_per_client() {
            conditions["shared_file"] = json!(plan.shared_file.describe());
        }
        conditions["prepare"] = json!(if target.server().is_some() {
            "on the server: each client's file laid out through iomatrix's own client in 1 MiB writes and made \
             durable (NFS COMMIT, SMB FLUSH); the server's page cache is neither seen nor dropped from here"
        } else if plan.device.is_some() {
            match plan.prepare {
                crate::Prepare::Dropped => {
                    "dropped: nothing laid out (the device's data is used where it is); before every cell the \
                     device's cached pages are written and dropped (fdatasync, posix_fadvise DONTNEED)"
                }
                _ => "cached: nothing laid out (the device's data is used where it is); its cached pages are kept",
            }
        } else {
            plan.prepare.describe()
        });
        if plan.shared_file == crate::SharedFile::Interleaved {
            // Not 1 MiB writes: each client lays out its own transfers of the one file.
            conditions["prepare"] = json!(format!(
                "{}: the shared file laid out by each client in its own transfers (zeros, in the cell's block size) \
                 and fsynced; before every cell {}",
                plan.prepare.name(),
                match plan.prepare {
                    crate::Prepare::Dropped => {
                        "its dirty pages written and the file dropped from the page cache (fdatasync, posix_fadvise \
                         DONTNEED)"
                    }
                    _ => "it is kept in the page cache",
                }
            ));
        }
        if let Some(server) = target.server() {
            let protocol = match server {
                Server::Nfs(_) => Protocol::Nfs,
                Server::Smb(_) => Protocol::Smb,
            };
            conditions["requests"] = json!(plan.requests_on(protocol));
        }
        RunSpec {
            // Clients share a device's working set; files are one per client.
            peak_bytes: plan.file_size.bytes() * if plan.device.is_some() { 1 } else { plan.clients as u64 },
            peak_detail: format!("{} client(s) x file {}", plan.clients, plan.file_size),
            backend: plan.backend,
            direct: plan.direct,
            conditions,
            keep_cell_lines: true,
            quiet: self.fio.is_some(),
            uncached_hint: "use --direct, or files larger than RAM,",
            uncached_flags: |twice_ram| format!("--direct, or --file-size {twice_ram}"),
            cache_dropped: false,
        }
    }

    /// Each client is one thread (the std's default stack) holding the
    /// request buffers of its deepest cell (queue depth x block size with
    /// io_uring or on a server, one block otherwise), the 1 MiB chunk that
    /// lays its file out (a local file smaller than that: its size), three latency histograms (reads, writes, the
    /// second under way), a count per second of a timed cell and its figures over time (at most
    /// 3,600 intervals, `SeriesRecorder::footprint`). On an NFS
    /// server each request in flight beyond the first is a session driven
    /// by a thread of its own (the std's default stack). With mmap the file
    /// is mapped: address space. The cell's figures are small: not counted.
    fn demand(&self, plan: &AccessPlan, target: &Target, clients_here: usize) -> Demand {
        // Jobs at once: every job's clients together.
        if !plan.together.is_empty() {
            let total = plan
                .together
                .iter()
                .fold(Cost::default(), |sum, job| sum.plus(self.demand(&job.plan, target, job.plan.clients).total));
            let counted = format!(
                "{} jobs run at once, {} client(s) in all, each with its job's request buffers and histograms",
                plan.together.len(),
                plan.clients
            );
            return Demand { total, knobs: Vec::new(), counted };
        }
        let queued = plan.backend.is_queued() || target.server().is_some();
        let needs = plan.request_needs(queued, matches!(target.server(), Some(Server::Nfs(_))));
        let helpers = needs.helper_threads;
        let seconds = match plan.limit {
            crate::Limit::DurationMs(ms) => ms.div_ceil(1000),
            crate::Limit::Bytes(_) => 0,
        };
        let intervals = match plan.limit {
            crate::Limit::DurationMs(ms) => ms.saturating_mul(1_000_000).div_ceil(plan.series_interval_ns.max(1)),
            // A cell of bytes takes as long as it takes: unknown here, its histogram counted only
            // (a cell of an hour or more keeps up to 3,600 intervals, some 4 MiB a client).
            crate::Limit::Bytes(_) => 0,
        };
        let series = seconds.saturating_mul(std::mem::size_of::<crate::Second>() as u64)
            + iomatrix_stats::SeriesRecorder::footprint(intervals);
        // Every request's, the live second's, and a queue's completion latencies apart (reads, writes).
        let histograms = if queued { 5 } else { 3 };
        let mapped = if plan.backend == BackendKind::Mmap { plan.file_size.bytes() } else { 0 };
        // The chunk a file is laid out in: 1 MiB, or a local file's size where it is smaller.
        let lay_out = match target.server() {
            Some(_) => crate::LAY_OUT_PIECE,
            None => crate::LAY_OUT_PIECE.min(plan.file_size.bytes().max(1)),
        };
        let client = Cost::threads(1 + helpers, default_stack())
            .plus(Cost::memory(needs.buffers + lay_out + histograms * iomatrix_stats::Latency::footprint() + series))
            .plus(Cost::mapped(mapped));
        Demand::of_clients(
            clients_here,
            client,
            format!(
                "{clients_here} client(s), each {} thread(s) with {} of request buffers and its histograms",
                1 + helpers,
                human(needs.buffers)
            ),
        )
        .knob(
            "--qd",
            needs.deepest,
            Cost::memory(needs.buffers_per_request)
                .plus(Cost::threads(u64::from(helpers > 0), default_stack()))
                .times(clients_here as u64),
        )
    }

    fn cells(plan: &AccessPlan) -> Vec<String> {
        let job = |i: usize| plan.together.get(i).map_or(String::new(), |j| format!(" (job {})", j.name));
        plan.cells().iter().map(|c| c.describe() + &job(c.index)).collect()
    }

    /// Each cell lasts `--duration`, or moves `--bytes` per client.
    fn work(plan: &AccessPlan) -> Vec<iomatrix_harness::progress::CellWork> {
        use iomatrix_harness::progress::CellWork;
        let work = |plan: &AccessPlan| match plan.limit {
            crate::Limit::DurationMs(ms) => CellWork::Timed(std::time::Duration::from_millis(ms)),
            crate::Limit::Bytes(bytes) => CellWork::Bytes(bytes),
        };
        plan.cells().iter().map(|c| work(plan.plan_of_cell(c.index))).collect()
    }

    /// Jobs run at once are one cell of the clients' stored as a cell per job: the harness
    /// judges the machine's load and stops over all of them together, as one run of cells.
    fn cells_back_to_back(plan: &AccessPlan) -> usize {
        plan.together.len().max(1)
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
        crate::execute_at(plan, group, setup, place, &live.0, on_cell)
    }

    fn row(&self, plan: &AccessPlan, r: &AccessResult) -> CellRow {
        let job = plan.together.get(r.cell.index).map(|j| j.name.as_str());
        r.row_of_job(plan.plan_of_cell(r.cell.index), job)
    }

    fn pace(&self, plan: &AccessPlan, r: &AccessResult) -> iomatrix_harness::disturbance::Pace {
        let plan = plan.plan_of_cell(r.cell.index);
        let duration = match plan.limit {
            crate::Limit::DurationMs(ms) => Some(std::time::Duration::from_millis(ms)),
            crate::Limit::Bytes(_) => None,
        };
        // Under a rate of a few requests a second, a second without one is the plan, not a stall.
        let per_client = |per_sec: f64| per_sec / r.clients.len().max(1) as f64;
        let paced_slowly = plan.rate_iops.is_some_and(|rate| rate < SLOWEST_RATE_JUDGED_PER_SECOND)
            || r.open.is_some_and(|o| per_client(o.offered_per_sec) < SLOWEST_RATE_JUDGED_PER_SECOND as f64);
        let ops_per_second = if paced_slowly { Vec::new() } else { r.series.iter().map(|s| s.ops).collect() };
        iomatrix_harness::disturbance::Pace { duration, ops_per_second }
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
        if let Some(open) = &result.open {
            line += &format!(
                ", open loop: offered {:.0}/s, {} late, backlog {}",
                open.offered_per_sec, open.late, open.backlog
            );
        }
        if let Some(slowest) = result.slowest() {
            line += &slowest_note(result.clients.len(), slowest.rank, &format!("{:.0} IOPS", slowest.iops()));
        }
        line += &failed_note(result.failures.len());
        if let Some(ended) = result.curve.as_ref().and_then(|c| c.ended.as_ref()) {
            line += &format!("; {ended}");
        }
        if let Some(searched) = result.latency_target.first() {
            line += &format!("; latency target: {}", searched.describe());
        }
        if let Some(steady) = &result.steady {
            line += &match steady.attained_at_ns {
                Some(at) => format!(", steady state attained after {}", crate::render::seconds(at)),
                None => ", steady state not attained".to_string(),
            };
        }
        let ranks = &result.steady_by_rank;
        if !ranks.is_empty() {
            let attained = ranks.iter().filter(|v| v.attained).count();
            line += &format!(", steady state attained on {attained} of {} ranks (each judged apart)", ranks.len());
        }
        line
    }

    fn key(&self, result: &AccessResult) -> Self::Key {
        (result.cell.setting(), result.cell.load)
    }

    /// Curves are refused with `--tolerance`, so the noisy keys are plain settings.
    fn again(plan: &AccessPlan, noisy: &[Self::Key]) -> AccessPlan {
        let settings: Vec<CellSetting> = noisy.iter().map(|(setting, _)| *setting).collect();
        AccessPlan { only: Some(settings), repeats: 1, ..plan.clone() }
    }

    fn cells_left_out(live: &AccessLive) -> usize {
        live.0.cells_left_out()
    }

    fn stored_facts(record: &iomatrix_store::Records<'_>) -> iomatrix_store::reader::SuiteFacts {
        crate::stored::facts(record)
    }

    fn tables(run: &StoredRun) -> String {
        crate::render::table(run)
    }

    fn after_tables(&self, run: &StoredRun) -> anyhow::Result<()> {
        if let Some(kept) = &self.fio {
            kept.keep(run);
        }
        Ok(())
    }
}

/// Under `--latency-target`: the run's condition saying what each cell searched for and how.
fn add_latency_target(plan: &AccessPlan, conditions: &mut serde_json::Value) {
    let Some(t) = plan.latency_target else { return };
    let then = if t.keep_adjusting {
        "the search goes on through the whole cell (fio's latency_run), the depth stored the one at its end"
    } else {
        "then the cell measured at the depth found for its duration (the search untimed, as a warm-up)"
    };
    conditions["latency_target"] = json!(format!(
        "each client searched the deepest queue, up to the cell's qd, whose requests meet {} (fio's latency_target \
         rule: from depth 1, doubling while a window meets it, halfway back toward the last depth that met it when \
         one does not); {then}",
        t.describe()
    ));
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

/// The run's open loop, in words: what is offered, how arrivals are spaced, where latency counts
/// from; None for a closed loop.
fn open_loop_condition(plan: &AccessPlan) -> Option<String> {
    let arrivals = plan.arrivals.unwrap_or_default().describe();
    let timed = "each request issued at its arrival or as soon after as a slot is free, its latency counted from \
                 its arrival (no coordinated omission); requests issued over 1 ms late counted as late, arrivals due \
                 before a cell's end never issued counted as its backlog";
    match (&plan.curve, plan.arrivals, plan.rate_iops) {
        (Some(curve), _, _) => Some(format!(
            "curves: each setting's maximum first (closed loop at its queue depth, latency from each request's \
             issue), then open-loop points at {} ({}): arrivals {arrivals}; {timed}; {}",
            curve.points.iter().map(|p| p.to_string()).collect::<Vec<_>>().join(", "),
            if curve.points.iter().any(|p| matches!(p, iomatrix_core::CurveLoad::Rate(_))) {
                "all clients' requests a second, split evenly over the clients"
            } else {
                "of the maximum, each client offering that share of its own rate at the maximum"
            },
            match curve.stop {
                Some(bound) => format!("a curve ends at its first open-loop point past {bound}"),
                None => "every point runs (no --stop-curve)".to_string(),
            }
        )),
        (None, Some(_), Some(rate)) => {
            Some(format!("open loop at {rate} requests a second per client: arrivals {arrivals}; {timed}"))
        }
        _ => None,
    }
}

fn p99(s: &LatencySummary) -> String {
    if s.count == 0 {
        "-".into()
    } else {
        human_ns(s.p99_ns as f64)
    }
}

/// The stored runs of a fio invocation, kept by the access suite as each job ends.
#[derive(Clone, Default)]
pub struct Kept(Arc<Mutex<Vec<StoredRun>>>);

impl Kept {
    pub fn keep(&self, run: &StoredRun) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).push(run.clone());
    }

    pub(super) fn last(&self) -> Option<StoredRun> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).last().cloned()
    }
}
