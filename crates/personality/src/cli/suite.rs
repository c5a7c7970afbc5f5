//! A personality through the harness: one cell per phase (per repeat; with `--curve` one per
//! load of each phase's curve, with `--latency-target` the search's cells before each phase's);
//! every client runs its own connections in its own folder, every phase
//! started together. On an `nfs://` or `smb://` target every connection is
//! a session of iomatrix's own protocol client.

use crate::{CellFigures, ClientCell, Live, RunPlan, SizeDist};
use iomatrix_backend::Place;
use iomatrix_coord::{ClientFailure, Ending, Group, Setup, StartTimes};
use iomatrix_core::human::bytes as human;
use iomatrix_core::BackendKind;
use iomatrix_harness::clients::add_client_metrics;
use iomatrix_harness::limits::default_stack;
use iomatrix_harness::live::LiveSample;
use iomatrix_harness::{Cost, Demand, LiveView, Prepared, RunSpec, Suite, Target};
use iomatrix_report::text::clients::ClientColumns;
use iomatrix_stats::kib_per_sec;
use iomatrix_store::{CellRow, CellState, StoredRun};
use serde_json::{json, Map, Value};
use std::sync::atomic::Ordering;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// What rank 0 keeps of a personality run besides its plan.
pub struct Personality {
    backend: &'static str,
    /// A load-file replay's memory: once per process, and per connection.
    replay_footprint: Option<(u64, u64)>,
}

/// One phase over all clients.
pub struct PersonalityCell {
    /// Its position in the run (a curve's load, then phase, then repeat).
    pub index: usize,
    /// Its name: the phase's, with a curve's load after it ([`RunPlan::cell_name`]).
    pub name: String,
    pub merged: CellFigures,
    pub clients: Vec<ClientCell>,
    pub failures: Vec<ClientFailure>,
    pub starts: Vec<StartTimes>,
}

impl Suite for Personality {
    const NAME: &'static str = "personality";
    /// filebench's users read operations per second: compare leads with them.
    const SHAPE: iomatrix_analysis::SuiteShape =
        iomatrix_analysis::SuiteShape { leads_with_operations: true, ..iomatrix_analysis::SuiteShape::PLAIN };
    const CLIENT_COLUMNS: &'static ClientColumns = &iomatrix_report::text::connections::CLIENT_COLUMNS;
    type Args = super::args::RunPersonalityArgs;
    type Plan = RunPlan;
    type Cell = PersonalityCell;
    type Live = PersonalityLive;
    /// Samples are compared per phase.
    type Key = String;

    fn prepare(args: Self::Args, mpi_ranks: Option<usize>, _db: &std::path::Path) -> anyhow::Result<Prepared<Self>> {
        let (plan, run, replay_footprint) = args.validate(mpi_ranks)?;
        let backend = run.target.server().map_or(BackendKind::Sync.name(), |s| s.protocol());
        Ok(Prepared { suite: Personality { backend, replay_footprint }, plan, run })
    }

    /// Each client is one thread of the std's default stack and a thread
    /// per connection, started for every phase and joined at its end
    /// (256 KiB stacks, 2 MiB through a protocol client or in a load-file
    /// replay). The memory of the flows is [`RunPlan::footprint`]'s, of a
    /// replay [`crate::dbench::LoadFile::footprint`]'s (the parsed file once).
    fn demand(&self, plan: &RunPlan, target: &Target, clients_here: usize) -> Demand {
        let p = &plan.personality;
        let n = clients_here as u64;
        let conns = p.connections as u64;
        if let Some((once, per_connection)) = self.replay_footprint {
            let connection =
                Cost::threads(1, crate::dbench::clients::STACK_SIZE as u64).plus(Cost::memory(per_connection));
            let client = Cost::threads(1, default_stack()).plus(connection.times(conns));
            return Demand::of_clients(
                clients_here,
                client,
                format!(
                    "{clients_here} client(s) x {conns} connection thread(s), each holding {}",
                    human(per_connection)
                ),
            )
            .knob("--connections", conns, connection.times(n))
            .and(Cost::memory(once), &format!("the load file's operations ({}), once", human(once)));
        }
        let stack = match target.server() {
            Some(_) => crate::engine::REMOTE_STACK_SIZE,
            None => crate::engine::STACK_SIZE,
        } as u64;
        let f = plan.footprint();
        let connection = Cost::threads(1, stack).plus(Cost::memory(f.per_connection));
        let client = Cost::threads(1, default_stack()).plus(Cost::memory(f.per_client)).plus(connection.times(conns));
        // `--files` sets every fileset of more than one file: each such file is a record in every connection.
        let scaled = p.filesets.iter().filter(|s| s.files > 1).count() as u64;
        let per_file = f.per_file.saturating_mul(scaled).saturating_mul(conns).saturating_mul(n);
        let files = p.filesets.iter().filter(|s| s.files > 1).map(|s| s.files).max().unwrap_or(1);
        Demand::of_clients(
            clients_here,
            client,
            format!(
                "{clients_here} client(s) x {conns} connection(s), each a thread holding {} (its records and a \
                 {}-byte record per file of {} file(s) in all)",
                human(f.per_connection),
                f.per_file,
                p.filesets.iter().map(|s| s.files).fold(0u64, u64::saturating_add)
            ),
        )
        .knob("--connections", conns, connection.times(n))
        .knob("--files", files, Cost::memory(per_file))
    }

    fn spec(&self, plan: &RunPlan, target: &Target, clients: usize) -> RunSpec {
        let p = &plan.personality;
        let set_bytes = |shared: bool| -> u64 {
            p.filesets.iter().filter(|f| f.shared == shared).map(|f| f.files.saturating_mul(mean_size(&f.size))).sum()
        };
        let (per_connection, shared) = (set_bytes(false), set_bytes(true));
        let total =
            per_connection.saturating_mul(p.connections as u64).saturating_add(shared).saturating_mul(clients as u64);
        if let Some(r) = &plan.replay {
            let total = r.peak_bytes_per_connection.saturating_mul(p.connections as u64).saturating_mul(clients as u64);
            let mut conditions = conditions(plan, target.server().is_some());
            if r.lock_ops > 0 && target.server().is_some_and(|s| s.protocol() == "nfs") {
                conditions["known_limits"] = json!(format!(
                    "the load file's {} LockX/UnlockX lines fail over nfs:// and count as mismatches: NFSv3 has no \
                     byte-range locks (NLM is a separate protocol)",
                    r.lock_ops
                ));
            }
            return RunSpec {
                peak_bytes: total,
                peak_detail: format!(
                    "{clients} client(s) x {} connection(s) x {} per connection (the furthest WriteX end of every \
                     file the load file writes, summed), {} in all",
                    p.connections,
                    human(r.peak_bytes_per_connection),
                    human(total)
                ),
                backend: BackendKind::Sync,
                direct: false,
                conditions,
                keep_cell_lines: true,
                quiet: false,
                uncached_hint: "replay on a server (nfs:// or smb://, no client cache),",
                uncached_flags: |_| "--target nfs://SERVER/EXPORT or --target smb://SERVER/SHARE".into(),
                cache_dropped: false,
            };
        }
        RunSpec {
            peak_bytes: total,
            peak_detail: match shared {
                0 => format!(
                    "{clients} client(s) x {} connection(s) x {} per connection (files x their mean size), {} in all",
                    p.connections,
                    human(per_connection),
                    human(total)
                ),
                _ => format!(
                    "{clients} client(s) x ({} connection(s) x {} per connection + {} shared by them) (files x \
                     their mean size), {} in all",
                    p.connections,
                    human(per_connection),
                    human(shared),
                    human(total)
                ),
            },
            backend: BackendKind::Sync,
            direct: false,
            conditions: conditions(plan, target.server().is_some()),
            keep_cell_lines: true,
            quiet: false,
            uncached_hint: "use more data than RAM (--files),",
            uncached_flags: |_| "--files N, with N x the mean file size above twice the RAM".into(),
            cache_dropped: false,
        }
    }

    fn cells(plan: &RunPlan) -> Vec<String> {
        (0..plan.cells())
            .map(|i| match plan.load(i) {
                Some(load) => format!("the {} phase at {load}", plan.cell(i).0.name),
                None => format!("the {} phase", plan.cell_name(i)),
            })
            .collect()
    }

    /// A phase that ends after a duration lasts it; one that ends after iterations is of
    /// unknown length until the run shows one.
    fn work(plan: &RunPlan) -> Vec<iomatrix_harness::progress::CellWork> {
        use iomatrix_harness::progress::CellWork;
        (0..plan.cells())
            // A latency target's search runs its maximum and windows one window each.
            .map(|i| match plan.phase_at(i, None).end {
                crate::PhaseEnd::Duration { ns } => CellWork::Timed(Duration::from_nanos(ns)),
                _ => CellWork::Unknown,
            })
            .collect()
    }

    fn before_clients(plan: &RunPlan, clients_here: usize, on_server: bool) -> anyhow::Result<()> {
        let per_connection = if on_server { 4 } else { 2 };
        let connections_here = plan.personality.connections as u64 * clients_here as u64;
        iomatrix_harness::limits::raise_open_files(connections_here, per_connection, None);
        Ok(())
    }

    fn live(plan: &RunPlan, slots: usize) -> PersonalityLive {
        PersonalityLive {
            lives: (0..slots).map(|_| Live::new()).collect(),
            steering: crate::Steering::default(),
            phases: (0..plan.cells()).map(|i| plan.cell(i).0.name.clone()).collect(),
            shown: Mutex::new((0, 0, Instant::now())),
            sampled: Mutex::new((0, 0, Instant::now())),
        }
    }

    fn execute(
        plan: &RunPlan,
        group: &Group<'_>,
        setup: &Setup<'_>,
        place: &Place<'_>,
        live: &PersonalityLive,
        on_cell: &mut dyn FnMut(&PersonalityCell) -> Result<(), iomatrix_store::StoreError>,
    ) -> std::io::Result<Option<(usize, Ending)>> {
        iomatrix_harness::clients::needs_folder("a personality", place, setup)?;
        let mut index = 0;
        let mut each =
            |merged: &CellFigures, clients: &[ClientCell], gathered: &iomatrix_coord::Gathered<ClientCell>| {
                index += 1;
                // A point of a curve its bound ended (every client left it out), or a cell of a
                // latency target's search (folded into the measured cell): nothing to store.
                let searched = plan.target_stage(index - 1).is_some_and(|s| s != crate::TargetStage::Measured);
                if searched || (!clients.is_empty() && clients.iter().all(|c| c.skipped)) {
                    return Ok(());
                }
                let cell = PersonalityCell {
                    index: index - 1,
                    name: plan.cell_name(index - 1),
                    merged: merged.clone(),
                    clients: clients.to_vec(),
                    failures: gathered.failures.clone(),
                    starts: gathered.starts.clone(),
                };
                on_cell(&cell)
            };
        match &plan.replay {
            // A dbench load file: read by every client process (the same file at the same path).
            Some(replay) => {
                let load = crate::dbench::load_for(replay).map_err(std::io::Error::other)?;
                crate::dbench::execute_clients(plan, &load, group, setup, place, &live.lives, &mut each)
            }
            None => crate::execute_clients(plan, group, setup, place, (&live.lives, &live.steering), &mut each),
        }
    }

    fn cells_left_out(live: &PersonalityLive) -> usize {
        live.steering.cells_left_out()
    }

    fn row(&self, plan: &RunPlan, cell: &PersonalityCell) -> CellRow {
        row(plan, cell, self.backend)
    }

    fn done_line(&self, cell: &PersonalityCell) -> String {
        let m = &cell.merged;
        let secs = m.wall_ns as f64 / 1e9;
        let mut line = format!(
            "{}: {} operations, {} in {:.2} s, {:.0} ops/s",
            cell.name,
            m.ops_done(),
            human(m.bytes()),
            secs,
            m.ops_done() as f64 / secs.max(1e-9)
        );
        if let Some(f) = m.fairness() {
            line += &format!(", Jain's index {:.3}", f.jain);
        }
        if m.failed() > 0 {
            line += &format!("; {} connection(s) failed, {} operations lost", m.failed(), m.lost_ops);
        }
        if m.backlog > 0 {
            line += &format!("; {} arrivals never issued (the connections fell behind)", m.backlog);
        }
        if let Some(offered) = m.offered_per_sec {
            line += &format!(" of {offered:.0} offered");
        }
        if let Some(ended) = m.curve.as_ref().and_then(|c| c.ended.as_deref()) {
            line += &format!("; {ended}");
        }
        if let Some(found) = &m.latency_target {
            line += &format!("; latency target: {}", found.describe());
        }
        if m.phase == "replay" {
            let mismatches: u64 = m.ops.iter().map(|o| o.mismatches).sum();
            line += &format!(", {:.2} MB/s as dbench counts, {mismatches} status mismatch(es)", dbench_mb_per_s(m));
        }
        line
    }

    fn key(&self, cell: &PersonalityCell) -> String {
        cell.name.clone()
    }

    /// Counted in connections: those that finished the phase without an
    /// error, of every client's (a failed client's connections are lost with it).
    fn parts(&self, plan: &RunPlan, cell: &PersonalityCell, clients: usize) -> Option<CellState> {
        let ok = cell.merged.connections.iter().filter(|c| c.failed.is_none()).count() as u64;
        Some(CellState::counted(ok, plan.personality.connections as u64 * clients as u64, "connections"))
    }

    /// Later phases work on the files earlier ones made: every phase runs again.
    fn again(plan: &RunPlan, _noisy: &[String]) -> RunPlan {
        // Fresh files for the new pass: its own folders beside the first pass's.
        RunPlan { repeats: 1, pass: u64::from((iomatrix_verify::new_run_stamp() as u32).max(1)), ..plan.clone() }
    }

    fn stored_facts(record: &iomatrix_store::Records<'_>) -> iomatrix_store::reader::SuiteFacts {
        crate::stored::facts(record)
    }

    fn tables(run: &StoredRun) -> String {
        crate::render::report(run)
    }

    // A phase keeps its figures per connection: its clients table sums them per client.
    fn clients_of(run: &StoredRun) -> std::borrow::Cow<'_, StoredRun> {
        std::borrow::Cow::Owned(iomatrix_report::text::connections::connections_as_clients(run))
    }
}

/// The mean of the finished connections' own KB/s; None without one.
fn avg_connection_kib_per_sec(connections: &[crate::ConnectionOps]) -> Option<f64> {
    let rates: Vec<f64> = connections
        .iter()
        .filter(|c| c.failed.is_none() && c.ns > 0)
        .map(|c| kib_per_sec(c.bytes, Duration::from_nanos(c.ns)))
        .collect();
    (!rates.is_empty()).then(|| rates.iter().sum::<f64>() / rates.len() as f64)
}

/// dbench's throughput: bytes read and written per second, 10^6 a MB.
fn dbench_mb_per_s(m: &CellFigures) -> f64 {
    m.bytes() as f64 / 1e6 / (m.wall_ns as f64 / 1e9).max(1e-9)
}

/// Mean bytes of a size distribution (for the free-space check).
fn mean_size(d: &SizeDist) -> u64 {
    match d {
        SizeDist::Fixed { size } => *size,
        SizeDist::Uniform { min, max } => (min + max) / 2,
        SizeDist::Lognormal { median, sigma, max } => (*max).min((*median as f64 * (sigma * sigma / 2.0).exp()) as u64),
        SizeDist::Gamma { mean, max, .. } => (*mean).min(*max),
        SizeDist::Cycle { sizes } => sizes.iter().sum::<u64>() / sizes.len().max(1) as u64,
        SizeDist::Scan { .. } => 0,
    }
}

/// The live figures of this process's clients.
pub struct PersonalityLive {
    lives: Vec<Live>,
    /// What the leader tells this process's clients between cells (curves' bounds, searches).
    steering: crate::Steering,
    phases: Vec<String>,
    /// (ops, bytes, when) at the last live line.
    shown: Mutex<(u64, u64, Instant)>,
    /// (ops, bytes, when) at the last sample sent to rank 0.
    sampled: Mutex<(u64, u64, Instant)>,
}

impl PersonalityLive {
    fn totals(&self) -> (usize, bool, u64, u64, usize) {
        let started = self.lives.iter().any(|l| l.started.load(Ordering::Relaxed));
        let phase = self.lives.iter().map(|l| l.phase.load(Ordering::Relaxed)).max().unwrap_or(0);
        let ops = self.lives.iter().map(|l| l.ops.load(Ordering::Relaxed)).sum();
        let bytes = self.lives.iter().map(|l| l.bytes.load(Ordering::Relaxed)).sum();
        let failed = self.lives.iter().map(|l| l.failed.load(Ordering::Relaxed)).sum();
        (phase, started, ops, bytes, failed)
    }
}

fn rates(last: &Mutex<(u64, u64, Instant)>, ops: u64, bytes: u64) -> (f64, f64) {
    let mut l = last.lock().unwrap_or_else(|e| e.into_inner());
    let secs = l.2.elapsed().as_secs_f64().max(1e-3);
    let r = (ops.saturating_sub(l.0) as f64 / secs, bytes.saturating_sub(l.1) as f64 / secs);
    *l = (ops, bytes, Instant::now());
    r
}

impl LiveView for PersonalityLive {
    fn sample(&self) -> LiveSample {
        let (phase, _, ops, bytes, _) = self.totals();
        let (ops_per_sec, bytes_per_sec) = rates(&self.sampled, ops, bytes);
        LiveSample { cell: phase, bytes_per_sec, ops_per_sec }
    }

    fn line(&self, _cell: &dyn Fn(usize) -> String) -> Option<String> {
        let (phase, started, ops, bytes, failed) = self.totals();
        if !started {
            return None;
        }
        let (ops_per_sec, bytes_per_sec) = rates(&self.shown, ops, bytes);
        Some(format!(
            "{}: {ops} operations, {ops_per_sec:.0} ops/s, {:.1} MiB/s, {failed} connection(s) failed",
            self.phases.get(phase).map_or("?", String::as_str),
            bytes_per_sec / 1048576.0
        ))
    }

    fn show(&self, s: &LiveSample) -> String {
        format!("{:.0} ops/s, {:.1} MiB/s", s.ops_per_sec, s.bytes_per_sec / 1048576.0)
    }
}

/// The run's conditions: the personality, its loop, and how it was timed.
fn conditions(plan: &RunPlan, on_server: bool) -> Value {
    let p = &plan.personality;
    let rates: Vec<f64> = p.phases.iter().flat_map(|ph| ph.flows.iter().filter_map(|f| f.rate)).collect();
    if let Some(r) = &plan.replay {
        return json!({
            "personality": p.name,
            "source": plan.source,
            "dbench_loadfile": r.path,
            "operations_in_file": r.ops,
            "connections": p.connections,
            "loop": "replay",
            "pacing": if r.as_fast_as_possible || r.timed_ops == 0 {
                "as fast as possible: each operation right after the one before"
            } else {
                "the load file's timestamps: each operation waits for its second after the pass began (late ones counted)"
            },
            "duration_ns": r.duration_ns,
            "timing": "each operation timed alone, from its start to its completion; connection N's paths are the file's with client1 made clientN (from 0), below the client's folder; looped until the duration as dbench's -t, or once through; clients/clientN removed after the cell, untimed",
            "status_check": "every line's status (NT_STATUS_OK, NT_STATUS_OBJECT_NAME_NOT_FOUND...) compared with what the operation returned; departures counted per operation as mismatches, never fatal",
            "cache": if on_server {
                "no client cache: iomatrix's own protocol client, one session per connection"
            } else {
                "page cache in use"
            },
        });
    }
    let mut c = json!({
        "personality": p.name,
        "source": plan.source,
        "connections": p.connections,
        "record_bytes": p.record,
        "loop": if rates.is_empty() { "closed" } else { "open" },
        "target_rate_per_connection": rates.iter().copied().fold(None, |m: Option<f64>, r| Some(m.map_or(r, |m| m.max(r)))),
        "filesets": p.filesets.iter().map(|f| json!({"name": f.name, "files_per_connection": f.files, "size": f.size})).collect::<Vec<_>>(),
        "timing": if rates.is_empty() {
            "closed loop: each operation timed from its start to its completion; a whole-file read or write is one timed request per record; think time untimed"
        } else {
            "open loop: Poisson arrivals at the target rate per connection; each operation's latency runs from its intended start (coordinated omission avoided); late operations are still issued and counted, arrivals never issued by the end are the backlog"
        },
    });
    c["cache"] = json!(if on_server {
        "no client cache: iomatrix's own protocol client sends every request to the server (whose own cache may serve it); one session (TCP connection) per connection, connected untimed before the first phase"
    } else {
        "page cache in use (files made before the first phase and written in earlier phases may be read from it)"
    });
    iomatrix_harness::data::add_conditions(&mut c, &plan.content);
    c
}

fn row(plan: &RunPlan, cell: &PersonalityCell, backend: &str) -> CellRow {
    let m = &cell.merged;
    let secs = (m.wall_ns as f64 / 1e9).max(1e-9);
    // A replay's operations are its load file's lines, not flow steps: it has no flowops.
    let flow_steps = plan.replay.is_none();
    let ops = op_metrics(m, secs, flow_steps);
    let (phase, repeat) = plan.cell(cell.index);
    let load = plan.load(cell.index);
    // A curve's maximum runs closed loop, its points at the rate each client offered.
    let flows_rate: Option<f64> = match (load, plan.target_stage(cell.index)) {
        (None, None) => phase.flows.iter().filter_map(|f| f.rate).reduce(f64::max),
        _ => m.offered_per_sec.map(|r| r / m.connections.len().max(1) as f64),
    };
    let total_kib_per_sec = kib_per_sec(m.bytes(), Duration::from_nanos(m.wall_ns));
    let clients = client_metrics(&cell.clients);
    let connections = connection_figures(&m.connections);
    let mut metrics = json!({
        "phase": m.phase,
        "personality": plan.personality.name,
        "loop": if flows_rate.is_some() { "open" } else { "closed" },
        "target_rate_per_connection": flows_rate,
        "repeat": repeat + 1,
        "ops": ops,
        "per_sec": m.ops_done() as f64 / secs,
        "unit": "ops/s",
        "fairness": m.fairness(),
        "lost_ops": m.lost_ops,
        "lost_samples": m.lost_ops,
        "backlog": m.backlog,
        "idle_iterations": m.idle_iterations,
        "lock_conflicts": m.ops.iter().map(|o| o.conflicts).sum::<u64>(),
        "connections_failed": m.failed(),
        "errors": m.connections_failed,
        "total_kib_per_sec": total_kib_per_sec,
        "kib_per_sec_sum_of_clients": clients.iter().filter_map(|c| c["total_kib_per_sec"].as_f64()).sum::<f64>(),
        "completion_ns": m.wall_ns,
        // Seed 003's "throughput per connection": the mean of the connections' own KB/s, of those
        // that finished (the file-server load's figure, kept the same way).
        "avg_connection_kib_per_sec": avg_connection_kib_per_sec(&m.connections),
        "clients": clients,
    });
    if let Some(load) = load {
        metrics["load"] = json!(load);
        metrics["offered_per_sec"] = json!(m.offered_per_sec);
        metrics["curve"] = json!(m.curve);
    }
    if let Some(found) = &m.latency_target {
        metrics["offered_per_sec"] = json!(m.offered_per_sec);
        metrics["latency_target"] = json!(found);
    }
    if flow_steps {
        metrics["flowops"] = json!(m.flowops());
        metrics["flowops_per_sec"] = json!(m.flowops() as f64 / secs);
    }
    if let Some(r) = &plan.replay {
        metrics["loop"] = json!("replay");
        metrics["pacing"] =
            json!(if r.as_fast_as_possible || r.timed_ops == 0 { "as fast as possible" } else { "timestamps" });
        metrics["dbench"] = json!({
            "mb_per_s": dbench_mb_per_s(m),
            "mismatches": m.ops.iter().map(|o| o.mismatches).sum::<u64>(),
            "examples": m.examples,
        });
    }
    add_client_metrics(&mut metrics, &cell.failures, &cell.starts);
    if plan.content.stamped() {
        metrics["verify"] = json!(m.verify);
    }
    if !m.series.intervals.is_empty() {
        metrics["series"] = json!(iomatrix_stats::Series::of(&m.series, m.connections.len()));
    }
    CellRow {
        seq: 0,
        test: plan.cell_name(cell.index),
        file_size: None,
        record_size: Some(plan.personality.record),
        backend: backend.into(),
        direct: false,
        clients: m.connections.len(),
        bytes: m.bytes(),
        ops: m.ops_done(),
        wall_ns: m.wall_ns,
        user_ns: m.user_ns,
        sys_ns: m.sys_ns,
        kib_per_sec: total_kib_per_sec,
        cpu_percent: Some(m.cpu_percent()),
        metrics,
        client_figures: json!(connections),
        state: Default::default(),
        blobs: m
            .ops
            .iter()
            .filter(|o| o.count > 0)
            .map(|o| (format!("latency.{}", o.name), o.latency.to_bytes()))
            .collect(),
    }
}

/// Each operation's figures, by name: its latency summary, counts and rates over the phase.
fn op_metrics(m: &CellFigures, secs: f64, flow_steps: bool) -> Map<String, Value> {
    let mut ops = Map::new();
    for o in &m.ops {
        let summary = o.latency.summary();
        let mean_ns = summary.mean_ns;
        let mut v = serde_json::to_value(summary).unwrap_or_default();
        v["count"] = json!(o.count);
        if flow_steps {
            // filebench's count and mean: one per flow step, its requests' time over the steps.
            v["flowops"] = json!(o.flowops);
            v["flowops_per_sec"] = json!(o.flowops as f64 / secs);
            v["flowop_mean_ns"] = json!(if o.flowops > 0 { mean_ns * o.count as f64 / o.flowops as f64 } else { 0.0 });
        }
        v["bytes"] = json!(o.bytes);
        v["per_sec"] = json!(o.count as f64 / secs);
        v["errors"] = json!(o.errors_by_kind);
        v["mismatches"] = json!(o.mismatches);
        v["late"] = json!(o.late);
        if o.conflicts > 0 {
            v["conflicts"] = json!(o.conflicts);
        }
        ops.insert(o.name.clone(), v);
    }
    ops
}

/// Each client's own totals, for the cell's clients table.
fn client_metrics(clients: &[ClientCell]) -> Vec<Value> {
    clients
        .iter()
        .map(|c| {
            let f = &c.figures;
            json!({
                "rank": c.rank,
                "ops": f.ops_done(),
                "bytes": f.bytes(),
                "completion_ns": f.wall_ns,
                "ops_per_sec": f.ops_done() as f64 / (f.wall_ns as f64 / 1e9).max(1e-9),
                "total_kib_per_sec": kib_per_sec(f.bytes(), Duration::from_nanos(f.wall_ns)),
                "connections_failed": f.failed(),
            })
        })
        .collect()
}

/// Each connection's figures, with its error when it failed: the cell's client figures.
fn connection_figures(connections: &[crate::ConnectionOps]) -> Vec<Value> {
    connections
        .iter()
        .map(|c| {
            let mut v = json!({
                "rank": c.rank,
                "ops": c.ops,
                "bytes": c.bytes,
                "ns": c.ns,
                "ops_per_sec": c.ops as f64 / (c.ns as f64 / 1e9).max(1e-9),
                "kib_per_sec": kib_per_sec(c.bytes, Duration::from_nanos(c.ns)),
            });
            if let Some(e) = &c.failed {
                v["error"] = json!({ "message": e });
            }
            v
        })
        .collect()
}
